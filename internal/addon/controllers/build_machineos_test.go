package controllers_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// moscRepo is where the MachineOSConfigs of these tests push: another
// repository than the builder ConfigMap's, so a test sees which flow built.
const moscRepo = "registry.example.com:5000/mco/mosc-image"

// machineOSConfig creates the MachineOSConfig of pool (named after it, as
// the API requires) with a NoArch Containerfile.
func (h *harness) machineOSConfig(pool, containerfile string) *mcfgv1.MachineOSConfig {
	h.t.Helper()
	m := &mcfgv1.MachineOSConfig{
		ObjectMeta: metav1.ObjectMeta{Name: pool},
		Spec: mcfgv1.MachineOSConfigSpec{
			MachineConfigPool:       mcfgv1.MachineConfigPoolReference{Name: pool},
			ImageBuilder:            mcfgv1.MachineOSImageBuilder{ImageBuilderType: "Job"},
			BaseImagePullSecret:     &mcfgv1.ImageSecretObjectReference{Name: pullSecret},
			RenderedImagePushSecret: mcfgv1.ImageSecretObjectReference{Name: pushSecret},
			RenderedImagePushSpec:   moscRepo + ":latest",
			ContainerFile:           []mcfgv1.MachineOSContainerfile{{ContainerfileArch: "NoArch", Content: containerfile}},
		},
	}
	h.create(m)
	h.t.Cleanup(func() { _ = env.Client.Delete(context.Background(), m) })
	return m
}

func (h *harness) getMOSC(name string) *mcfgv1.MachineOSConfig {
	h.t.Helper()
	m := &mcfgv1.MachineOSConfig{}
	h.g.Expect(env.Client.Get(h.ctx, client.ObjectKey{Name: name}, m)).To(Succeed())
	return m
}

// mosbs are the pool's MachineOSBuilds by name.
func (h *harness) mosbs(pool string) map[string]*mcfgv1.MachineOSBuild {
	h.t.Helper()
	list := &mcfgv1.MachineOSBuildList{}
	h.g.Expect(env.Client.List(h.ctx, list, client.MatchingLabels{osbuild.TargetPoolLabel: pool})).To(Succeed())
	out := map[string]*mcfgv1.MachineOSBuild{}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out
}

// mosbFor waits for the pool's MachineOSBuild of rendered config mc and
// returns it.
func (h *harness) mosbFor(pool, mc string) *mcfgv1.MachineOSBuild {
	h.t.Helper()
	var found *mcfgv1.MachineOSBuild
	h.g.Eventually(func() bool {
		for _, b := range h.mosbs(pool) {
			if b.Spec.MachineConfig.Name == mc {
				found = b
				return true
			}
		}
		return false
	}).Should(BeTrue(), "a MachineOSBuild for %s", mc)
	return found
}

// mosbState waits until the MachineOSBuild named name shows state (its
// condition True) and returns it.
func (h *harness) mosbState(name string, state osbuild.BuildState) *mcfgv1.MachineOSBuild {
	h.t.Helper()
	b := &mcfgv1.MachineOSBuild{}
	h.g.Eventually(func() osbuild.BuildState {
		if err := env.Client.Get(h.ctx, client.ObjectKey{Name: name}, b); err != nil {
			return ""
		}
		return osbuild.StateOf(&b.Status)
	}).Should(Equal(state), "MachineOSBuild %s", name)
	// As upstream writes them: all five, each with its fixed reason.
	reasons := map[string]string{}
	for _, c := range b.Status.Conditions {
		reasons[c.Type] = c.Reason
		h.g.Expect(c.Status == metav1.ConditionTrue).To(Equal(c.Type == string(state)), "condition %s", c.Type)
	}
	h.g.Expect(reasons).To(Equal(map[string]string{
		"Prepared": "Prepared", "Building": "Building", "Failed": "Failed", "Interrupted": "Interrupted", "Succeeded": "Ready",
	}))
	return b
}

func names(m map[string]*mcfgv1.MachineOSBuild) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TestMachineOSConfigStatus: a pool with a MachineOSConfig (and no label)
// is built from it; each build is a MachineOSBuild whose status goes
// Prepared, Building, Succeeded (or Failed) as upstream writes it, with the
// builder's Job, the build's times and the digested image; the
// MachineOSConfig's status names the image and the build. A layer-only
// change gets a MachineOSBuild of its own that reuses the image; the
// rebuild annotation on the MachineOSConfig forces a build; a failed build
// is Failed, and its retry makes the MachineOSBuild again; deleting the
// MachineOSConfig removes everything.
func TestMachineOSConfigStatus(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		h.inputs()
		a := h.machineConfigWith("a", []string{"quiet"})
		a2 := h.machineConfigWith("a2", []string{"quiet"})
		b := h.machineConfigWith("b", []string{"quiet", "nosmt"})
		pool := h.pool("worker", a, false).Name
		mosc := h.machineOSConfig(pool, "RUN echo from-the-machineosconfig")
		h.start()

		// Prepared: the build's MachineOSBuild, the MachineOSConfig names it.
		obj := h.waitBuildFor(pool, a)
		mosbA := h.mosbFor(pool, a)
		h.g.Expect(mosbA.Spec.MachineOSConfig.Name).To(Equal(pool))
		h.g.Expect(mosbA.Spec.RenderedImagePushSpec).To(Equal(moscRepo + ":" + mosbA.Name))
		h.g.Expect(mosbA.Name).To(HavePrefix(pool + "-"))
		h.g.Expect(metav1.GetControllerOf(mosbA).UID).To(Equal(mosc.UID))
		prepared := h.mosbState(mosbA.Name, osbuild.BuildStatePrepared)
		h.g.Expect(prepared.Status.BuildStart).NotTo(BeNil())
		h.g.Expect(prepared.Status.BuildEnd).To(BeNil())
		if job, ok := obj.(*batchv1.Job); ok {
			h.g.Expect(prepared.Status.Builder).To(Equal(&mcfgv1.MachineOSBuilderReference{ImageBuilderType: "Job", Job: &mcfgv1.ObjectReference{
				Group: "batch", Resource: "jobs", Namespace: h.ns, Name: job.Name,
			}}))
			h.g.Expect(job.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "TAG", Value: moscRepo + ":" + mosbA.Name}))
		} else {
			h.g.Expect(prepared.Status.Builder).To(BeNil(), "the Build API is no imageBuilderType")
		}
		h.g.Eventually(func() map[string]string { return h.getMOSC(pool).Annotations }).
			Should(HaveKeyWithValue(osbuild.CurrentMachineOSBuildAnnotation, mosbA.Name))
		// The MachineOSConfig's Containerfile, not the ConfigMaps'.
		cm := &corev1.ConfigMap{}
		h.g.Expect(env.Client.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "mc-" + strings.TrimPrefix(obj.GetName(), "build-")}, cm)).To(Succeed())
		h.g.Expect(cm.Data[osbuild.ContainerfileKey]).To(ContainSubstring("RUN echo from-the-machineosconfig"))

		h.setRunning(obj)
		h.mosbState(mosbA.Name, osbuild.BuildStateBuilding)
		h.setSucceeded(obj, digest('a'))
		imgA := moscRepo + "@" + digest('a')
		done := h.mosbState(mosbA.Name, osbuild.BuildStateSucceeded)
		h.g.Expect(done.Status.DigestedImagePushSpec).To(Equal(imgA))
		h.g.Expect(done.Status.BuildEnd).NotTo(BeNil())
		h.g.Expect(done.Status.BuildStart.Before(done.Status.BuildEnd)).To(BeTrue())
		h.g.Eventually(func() mcfgv1.MachineOSConfigStatus { return h.getMOSC(pool).Status }).Should(Equal(mcfgv1.MachineOSConfigStatus{
			ObservedGeneration:   mosc.Generation,
			CurrentImagePullSpec: imgA,
			MachineOSBuild:       &mcfgv1.ObjectReference{Group: "machineconfiguration.openshift.io", Resource: "machineosbuilds", Name: mosbA.Name},
		}))
		h.waitCondition(pool, osbuild.ConditionBuildSuccess, osbuild.ReasonBuildSucceeded)
		h.g.Expect(h.image(pool)).To(Equal(imgA))
		h.g.Eventually(func() []string { return h.buildNames(pool) }).Should(BeEmpty())
		h.g.Eventually(func() []string { return h.configMapNames(pool) }).Should(BeEmpty())

		// A layer-only change: no build; a MachineOSBuild of its own that
		// reuses the image, and the MachineOSConfig points at it.
		h.setPoolConfig(pool, a2)
		mosbA2 := h.mosbFor(pool, a2)
		h.g.Expect(h.mosbState(mosbA2.Name, osbuild.BuildStateSucceeded).Status.DigestedImagePushSpec).To(Equal(imgA))
		h.g.Eventually(func() string { return h.getMOSC(pool).Status.MachineOSBuild.Name }).Should(Equal(mosbA2.Name))
		h.noBuild(pool)
		h.g.Expect(names(h.mosbs(pool))).To(ConsistOf(mosbA.Name, mosbA2.Name), "the image is in the history")

		// The rebuild annotation on the MachineOSConfig forces a build of a2;
		// the image it replaces (a, the same inputs) is pruned, with the
		// MachineOSBuild of a; the annotation goes.
		h.g.Eventually(func() error {
			m := h.getMOSC(pool)
			base := m.DeepCopy()
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[osbuild.RebuildAnnotation] = ""
			return env.Client.Patch(h.ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		}).Should(Succeed())
		obj = h.waitBuildFor(pool, a2)
		h.mosbState(mosbA2.Name, osbuild.BuildStatePrepared)
		h.setSucceeded(obj, digest('c'))
		imgC := moscRepo + "@" + digest('c')
		h.g.Expect(h.mosbState(mosbA2.Name, osbuild.BuildStateSucceeded).Status.DigestedImagePushSpec).To(Equal(imgC))
		h.g.Eventually(func() string { return h.getMOSC(pool).Status.CurrentImagePullSpec }).Should(Equal(imgC))
		h.g.Eventually(func() map[string]string { return h.getMOSC(pool).Annotations }).ShouldNot(HaveKey(osbuild.RebuildAnnotation))
		h.g.Eventually(h.registry.deletedImages).Should(ContainElement(imgA))
		h.g.Eventually(func() []string { return names(h.mosbs(pool)) }).Should(ConsistOf(mosbA2.Name))

		// A failed build: Failed, with its end; the pool says so too.
		h.setPoolConfig(pool, b)
		obj = h.waitBuildFor(pool, b)
		mosbB := h.mosbFor(pool, b)
		h.setFailed(obj)
		failed := h.mosbState(mosbB.Name, osbuild.BuildStateFailed)
		h.g.Expect(failed.Status.BuildEnd).NotTo(BeNil())
		h.g.Expect(failed.Status.DigestedImagePushSpec).To(BeEmpty())
		h.waitCondition(pool, osbuild.ConditionBuildFailed, osbuild.ReasonBuildFailed)
		h.g.Expect(h.getMOSC(pool).Status.CurrentImagePullSpec).To(Equal(imgC), "the MachineOSConfig keeps the last image")

		// Retrying (the failed build object deleted): the final conditions
		// cannot change, so the MachineOSBuild is made again, Prepared.
		time.Sleep(time.Second) // creation timestamps have a resolution of one second
		h.g.Expect(env.Client.Delete(h.ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		h.g.Eventually(func() bool {
			o := h.waitBuildFor(pool, b)
			return o.GetUID() != obj.GetUID()
		}).Should(BeTrue())
		retried := h.mosbState(mosbB.Name, osbuild.BuildStatePrepared)
		h.g.Expect(retried.UID).NotTo(Equal(failed.UID))
		h.g.Expect(retried.Status.BuildEnd).To(BeNil())
		h.setSucceeded(h.waitBuildFor(pool, b), digest('d'))
		imgD := moscRepo + "@" + digest('d')
		h.g.Expect(h.mosbState(mosbB.Name, osbuild.BuildStateSucceeded).Status.DigestedImagePushSpec).To(Equal(imgD))
		h.g.Eventually(func() string { return h.getMOSC(pool).Status.CurrentImagePullSpec }).Should(Equal(imgD))

		// Deleting the MachineOSConfig of a pool without the label opts it
		// out: builds, MachineOSBuilds, annotations, conditions, images.
		h.g.Expect(env.Client.Delete(h.ctx, mosc)).To(Succeed())
		h.g.Eventually(func() []string { return names(h.mosbs(pool)) }).Should(BeEmpty())
		h.g.Eventually(func() []string { return h.buildNames(pool) }).Should(BeEmpty())
		h.g.Eventually(func() map[string]string { return h.getPool(pool).Annotations }).ShouldNot(HaveKey(osbuild.DesiredOSImageAnnotation))
		h.g.Eventually(func() []mcfgv1.MachineConfigPoolCondition { return h.getPool(pool).Status.Conditions }).Should(BeEmpty())
		h.g.Eventually(h.registry.deletedImages).Should(ContainElements(imgC, imgD))
		h.g.Expect(h.ctrl.failures()).To(BeEmpty(), "last failure: %v", h.ctrl.lastFailure())
	})
}

// TestMachineOSConfigWinsOverLabel: a labelled pool with a MachineOSConfig
// is built from the MachineOSConfig only (one build, its repository);
// removing the label changes nothing while the MachineOSConfig exists;
// once it is deleted the label drives the pool again, from the ConfigMaps,
// and the MachineOSBuilds go.
func TestMachineOSConfigWinsOverLabel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		h.inputs()
		a := h.machineConfig("a")
		pool := h.pool("worker", a, true).Name
		mosc := h.machineOSConfig(pool, "")
		h.start()

		obj := h.waitBuildFor(pool, a)
		h.g.Consistently(func() []string { return h.buildNames(pool) }, "1s").Should(HaveLen(1), "one flow, one build")
		h.setSucceeded(obj, digest('a'))
		imgA := moscRepo + "@" + digest('a')
		h.g.Eventually(func() string { return h.image(pool) }).Should(Equal(imgA))
		h.g.Eventually(func() string { return h.getMOSC(pool).Status.CurrentImagePullSpec }).Should(Equal(imgA))

		// Without the label the MachineOSConfig still drives the pool.
		h.patchPool(pool, func(p *mcfgv1.MachineConfigPool) { delete(p.Labels, osbuild.LayeringEnabledLabel) })
		h.g.Consistently(func() string { return h.image(pool) }, "1500ms").Should(Equal(imgA))
		h.g.Expect(h.mosbs(pool)).To(HaveLen(1))
		h.noBuild(pool)

		// The label back, the MachineOSConfig gone: the label flow builds
		// into the ConfigMap's repository; the MachineOSBuilds go.
		h.patchPool(pool, func(p *mcfgv1.MachineConfigPool) { p.Labels[osbuild.LayeringEnabledLabel] = "" })
		h.g.Expect(env.Client.Delete(h.ctx, mosc)).To(Succeed())
		obj = h.waitBuildFor(pool, a)
		h.g.Eventually(func() []string { return names(h.mosbs(pool)) }).Should(BeEmpty())
		h.setSucceeded(obj, digest('b'))
		h.g.Eventually(func() string { return h.image(pool) }).Should(Equal(repo + "@" + digest('b')))
		h.g.Expect(h.ctrl.failures()).To(BeEmpty(), "last failure: %v", h.ctrl.lastFailure())
	})
}
