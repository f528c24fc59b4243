package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesetsync"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	bmv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetal/v1alpha1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// A full resync of MachineSets in sync writes nothing: a fresh add-on
// manager (every object reconciled afresh, by every controller) sends no
// write, and no object's resourceVersion moves. The MachineSets live in
// namespaces of their own, with an add-on manager of their own, so that
// the other flows' objects (some left failing on purpose) stay out of the
// count.
func TestSteadyStateWritesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	base := testName(t)
	opts := addon.NewOptions()
	opts.MAPINamespace, opts.CAPINamespace = base+"-mapi", base+"-capi"
	for _, ns := range []string{opts.MAPINamespace, opts.CAPINamespace} {
		create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	stop, err := startAddon(ctx, addonConfig(env.ControllerConfig()), opts, 4)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(stop()).To(Succeed()) }()

	withWarnings := openStackSpec()
	withWarnings.SSHUserName = "core"
	bm := bmv1alpha1.BareMetalMachineProviderSpec{
		Image:    bmv1alpha1.Image{URL: "http://example.com/rhcos.qcow2", Checksum: "http://example.com/rhcos.qcow2.md5sum"},
		UserData: &corev1.SecretReference{Name: "worker-user-data-managed"},
	}
	bm.Kind = mapi2capi.BareMetalProviderSpecKind
	names := []string{base + "-plain", base + "-warnings", base + "-status", base + "-baremetal"}
	for i, ps := range []any{openStackSpec(), withWarnings, openStackSpec(), bm} {
		ms := newMachineSet(t, names[i], ps)
		ms.Namespace = opts.MAPINamespace
		create(t, ms)
	}
	// One MachineSet has a current status, so the status mirror runs too.
	g.Eventually(func() error {
		ms := get(g, opts.MAPINamespace, names[2], &mapiv1beta1.MachineSet{})
		ms.Status.Replicas, ms.Status.ReadyReplicas, ms.Status.ObservedGeneration = 2, 2, ms.Generation
		return env.Client.Status().Update(ctx, ms)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		for _, n := range names {
			ms := get(g, opts.MAPINamespace, n, &mapiv1beta1.MachineSet{})
			c := synchronized(ms)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "condition %+v", c)
			g.Expect(c.Reason).To(Equal(machinesetsync.ReasonSynchronized), "condition %+v", c)
			// The migration controller has set the authority.
			g.Expect(ms.Status.AuthoritativeAPI).To(Equal(mapiAPI))
		}
		g.Expect(*get(g, opts.CAPINamespace, names[2], &clusterv1.MachineSet{}).Status.ReadyReplicas).To(Equal(int32(2)))
	}).WithTimeout(timeout).Should(Succeed())

	// The running controllers may still be busy for a moment, and the
	// stand-ins too; retry until one whole resync writes nothing.
	attempts := 0
	g.Eventually(func(g Gomega) {
		attempts++
		before := versions(g, opts, names)
		var w *envtest.WriteCounter
		w, stop = resync(t, g, stop, opts, len(names))
		g.Expect(controllerWrites(w)).To(BeZero(), "writes in a full resync: %v %v", w.Breakdown(), w.Seen())
		g.Expect(versions(g, opts, names)).To(Equal(before), "resourceVersions changed by a full resync")
	}).WithTimeout(2 * timeout).Should(Succeed())
	t.Logf("a full resync wrote nothing (attempt %d)", attempts)
}

// addonControllers are the names of the add-on's controllers (their
// metrics' label).
var addonControllers = []string{"machinesetsync", "machinesync", "secretsync", "machinesetmigration", "machinemigration", "build"}

// resync stops the add-on manager of opts (stop) and starts a fresh one
// whose writes are counted; it waits until the new one has reconciled n
// MachineSets and is idle, and returns the counter and the new manager's
// stop. The suite's manager is stopped meanwhile, so that the controllers'
// metrics are the new manager's alone.
func resync(t *testing.T, g Gomega, stop func() error, opts *addon.Options, n int) (*envtest.WriteCounter, func() error) {
	t.Helper()
	w := &envtest.WriteCounter{}
	restartAddon(t, func() {
		g.Expect(stop()).To(Succeed())
		cfg := addonConfig(env.ControllerConfig())
		cfg.Wrap(w.Wrap)
		before, idle := envtest.ReconcileCounts(), envtest.Busy(addonControllers...)
		var err error
		stop, err = startAddon(suiteCtx, cfg, opts, 4)
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(func(g Gomega) {
			now := envtest.ReconcileCounts()
			g.Expect(now["machinesetsync"] - before["machinesetsync"]).To(BeNumerically(">=", n))
			g.Expect(envtest.Busy(addonControllers...)).To(Equal(idle), "queued or running reconciles")
		}).WithTimeout(timeout).Should(Succeed())
	})
	return w, stop
}

// controllerWrites are w's writes but events (the recorder's, which the
// MachineSet sync's in-package tests did not count either); a refused
// write counts, once.
func controllerWrites(w *envtest.WriteCounter) int {
	n := 0
	for k, v := range w.Breakdown() {
		if !strings.HasPrefix(k, "409 ") && !strings.HasSuffix(k, " events") {
			n += v
		}
	}
	return n
}

// versions maps every object of the given MachineSets (the MAPI
// MachineSet, the mirror, the templates) to its resourceVersion, read from
// the API server.
func versions(g Gomega, opts *addon.Options, names []string) map[string]string {
	out := map[string]string{}
	ctx := context.Background()
	for _, n := range names {
		ms := &mapiv1beta1.MachineSet{}
		g.Expect(env.Client.Get(ctx, objectKey(opts.MAPINamespace, n), ms)).To(Succeed())
		out["mapi/"+n] = ms.ResourceVersion
		m := &clusterv1.MachineSet{}
		g.Expect(env.Client.Get(ctx, objectKey(opts.CAPINamespace, n), m)).To(Succeed())
		out["capi/"+n] = m.ResourceVersion
		for _, list := range []client.ObjectList{&infrav1.OpenStackMachineTemplateList{}, &metal3v1.Metal3MachineTemplateList{}} {
			g.Expect(env.Client.List(ctx, list, client.InNamespace(opts.CAPINamespace), client.MatchingLabels{machinesetsync.MachineSetLabel: mapi2capi.LabelValue(n)})).To(Succeed())
			switch l := list.(type) {
			case *infrav1.OpenStackMachineTemplateList:
				for _, i := range l.Items {
					out[fmt.Sprintf("osmt/%s", i.Name)] = i.ResourceVersion
				}
			case *metal3v1.Metal3MachineTemplateList:
				for _, i := range l.Items {
					out[fmt.Sprintf("m3mt/%s", i.Name)] = i.ResourceVersion
				}
			}
		}
	}
	return out
}
