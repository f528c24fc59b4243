package controllers_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/buildcontroller"
	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// history is the pool's recorded images, newest first.
func (h *harness) history(pool string) []string {
	var out []string
	for _, e := range osbuild.ParseHistory(h.getPool(pool).Annotations[osbuild.ImageHistoryAnnotation]) {
		out = append(out, e.Image)
	}
	return out
}

// noBuild checks that pool gets no build object for a while.
func (h *harness) noBuild(pool string) {
	h.t.Helper()
	h.g.Consistently(func() []string { return h.buildNames(pool) }, 1500*time.Millisecond, 100*time.Millisecond).Should(BeEmpty())
}

// TestRebuildRules: a new rendered config builds only when something baked
// into the image changes (kernel arguments here); going back to an earlier
// config reuses its image; the rebuild annotation forces a build.
func TestRebuildRules(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		h.inputs()
		a := h.machineConfigWith("a", []string{"quiet"})
		a2 := h.machineConfigWith("a2", []string{"quiet"}) // other files, same image fields
		b := h.machineConfigWith("b", []string{"quiet", "nosmt"})
		pool := h.pool("worker", a, true).Name
		h.start()

		h.setSucceeded(h.waitBuildFor(pool, a), digest('a'))
		h.waitCondition(pool, osbuild.ConditionBuildSuccess, osbuild.ReasonBuildSucceeded)
		imgA := repo + "@" + digest('a')
		h.g.Eventually(func() []string { return h.buildNames(pool) }).Should(BeEmpty())

		// A change that does not touch the image: no build, the pool keeps its image.
		h.setPoolConfig(pool, a2)
		h.g.Eventually(func() string { return h.getPool(pool).Annotations[osbuild.NewestImageEquivalentConfigAnnotation] }).Should(Equal(a2))
		h.noBuild(pool)
		h.g.Expect(h.image(pool)).To(Equal(imgA))
		h.waitCondition(pool, osbuild.ConditionBuildSuccess, osbuild.ReasonBuildSucceeded)

		// A kernel-argument change: one build.
		h.setPoolConfig(pool, b)
		h.setSucceeded(h.waitBuildFor(pool, b), digest('b'))
		imgB := repo + "@" + digest('b')
		h.g.Eventually(func() string { return h.image(pool) }).Should(Equal(imgB))
		h.g.Expect(h.history(pool)).To(Equal([]string{imgB, imgA}))

		// Back to a: its earlier image is published again, without a build.
		h.setPoolConfig(pool, a)
		h.g.Eventually(func() string { return h.image(pool) }).Should(Equal(imgA))
		h.noBuild(pool)
		h.g.Expect(h.getPool(pool).Annotations).To(HaveKeyWithValue(osbuild.NewestImageEquivalentConfigAnnotation, a))
		h.g.Expect(h.history(pool)).To(Equal([]string{imgA, imgB}))

		// An image gone from the registry is built again.
		h.g.Expect(h.registry.Delete(h.ctx, mustRef(h, imgB), buildcontroller.RegistryAuth{})).To(Succeed())
		h.setPoolConfig(pool, b)
		h.setSucceeded(h.waitBuildFor(pool, b), digest('c'))
		h.g.Eventually(func() string { return h.image(pool) }).Should(Equal(repo + "@" + digest('c')))

		// The rebuild annotation forces a build of the current config, and is removed.
		h.patchPool(pool, func(p *mcfgv1.MachineConfigPool) { p.Annotations[osbuild.RebuildAnnotation] = "" })
		h.setSucceeded(h.waitBuildFor(pool, b), digest('d'))
		h.g.Eventually(func() string { return h.image(pool) }).Should(Equal(repo + "@" + digest('d')))
		h.g.Eventually(func() map[string]string { return h.getPool(pool).Annotations }).ShouldNot(HaveKey(osbuild.RebuildAnnotation))
		h.g.Expect(h.ctrl.failures()).To(BeEmpty())
	})
}

func mustRef(h *harness, image string) osbuild.ImageRef {
	ref, err := osbuild.ParseDigestedImage(image)
	h.g.Expect(err).NotTo(HaveOccurred())
	return ref
}

// TestImagePruning: with --build-image-retention=1 a superseded image is
// deleted from the registry once published over, unless another pool
// refers to it; opting out deletes the pool's images.
func TestImagePruning(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		h.opts.ImageRetention = 1
		h.inputs()
		a, b, c := h.machineConfig("a"), h.machineConfig("b"), h.machineConfig("c")
		pool := h.pool("worker", a, true).Name
		h.start()

		h.setSucceeded(h.waitBuildFor(pool, a), digest('a'))
		h.g.Eventually(func() string { return h.image(pool) }).Should(Equal(repo + "@" + digest('a')))
		h.setPoolConfig(pool, b)
		h.setSucceeded(h.waitBuildFor(pool, b), digest('b'))
		h.g.Eventually(func() string { return h.image(pool) }).Should(Equal(repo + "@" + digest('b')))
		h.g.Eventually(h.registry.deletedImages).Should(Equal([]string{repo + "@" + digest('a')}))
		h.g.Expect(h.history(pool)).To(Equal([]string{repo + "@" + digest('b')}))

		// Another pool whose build pushed the same image keeps it in the
		// registry.
		other := h.pool("infra", b, true).Name
		h.setSucceeded(h.waitBuildFor(other, b), digest('b'))
		h.g.Eventually(func() string { return h.image(other) }).Should(Equal(repo + "@" + digest('b')))
		h.setPoolConfig(pool, c)
		h.setSucceeded(h.waitBuildFor(pool, c), digest('c'))
		h.g.Eventually(func() string { return h.image(pool) }).Should(Equal(repo + "@" + digest('c')))
		h.g.Consistently(h.registry.deletedImages, time.Second).Should(Equal([]string{repo + "@" + digest('a')}))

		// Opting out deletes the pool's images.
		h.patchPool(pool, func(p *mcfgv1.MachineConfigPool) { delete(p.Labels, osbuild.LayeringEnabledLabel) })
		h.g.Eventually(h.registry.deletedImages).Should(Equal([]string{repo + "@" + digest('a'), repo + "@" + digest('c')}))
		h.g.Eventually(func() map[string]string { return h.getPool(pool).Annotations }).ShouldNot(HaveKey(osbuild.ImageHistoryAnnotation))
		h.g.Expect(h.ctrl.failures()).To(BeEmpty())
	})
}

// TestTwentyChanges: 20 rendered configs in a row, 3 of which change a
// kernel argument, make exactly 3 builds (the figure in
// docs/addon/build-controller.md).
func TestTwentyChanges(t *testing.T) {
	h := newHarness(t, osbuild.BackendJob)
	h.inputs()
	kargs := []string{"quiet"}
	first := h.machineConfigWith("c00", kargs)
	pool := h.pool("worker", first, true).Name
	h.start()
	h.setSucceeded(h.waitBuildFor(pool, first), digest('0'))
	h.g.Eventually(func() string { return h.image(pool) }).ShouldNot(BeEmpty())

	builds := 0
	for i := 1; i <= 20; i++ {
		touchesImage := i == 5 || i == 12 || i == 19
		if touchesImage {
			kargs = append(append([]string(nil), kargs...), fmt.Sprintf("x%d", i))
		}
		cfg := h.machineConfigWith(fmt.Sprintf("c%02d", i), kargs)
		// MachineConfig changes come minutes apart; a quarter of a
		// second keeps the loop guard's window meaningful.
		time.Sleep(250 * time.Millisecond)
		h.setPoolConfig(pool, cfg)
		if touchesImage {
			builds++
			h.setSucceeded(h.waitBuildFor(pool, cfg), digest("abc"[builds-1]))
		}
		h.g.Eventually(func() string {
			return h.getPool(pool).Annotations[osbuild.NewestImageEquivalentConfigAnnotation]
		}).Should(Equal(cfg))
	}
	h.g.Expect(builds).To(Equal(3))
	// One build object per image-changing config, none for the others: the
	// controller created 1 + 3 builds (the first config's and the three).
	t.Logf("20 MachineConfig changes, 3 touching the image: %d builds (plus the first image)", builds)
	// Objects made, not creates sent: under load a reconcile can run before
	// the cache holds the ConfigMap it just made, and its create is answered
	// AlreadyExists (adopted, nothing made).
	h.g.Expect(h.ctrl.made()).To(BeNumerically("==", 2*(1+3)), "ConfigMap + build object per build (writes: %v)", h.ctrl.writeCounter.Breakdown())
}
