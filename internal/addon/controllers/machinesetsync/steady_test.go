package machinesetsync

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	bmv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetal/v1alpha1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// A full resync of MachineSets in sync writes nothing: the controller's
// client sees no write, and no object's resourceVersion moves.
func TestSteadyStateWritesNothing(t *testing.T) {
	g := NewWithT(t)
	base := testName(t)
	withWarnings := openStackSpec()
	withWarnings.SSHUserName = "core"
	bm := bmv1alpha1.BareMetalMachineProviderSpec{
		Image:    bmv1alpha1.Image{URL: "http://example.com/rhcos.qcow2", Checksum: "http://example.com/rhcos.qcow2.md5sum"},
		UserData: &corev1.SecretReference{Name: "worker-user-data-managed"},
	}
	bm.Kind = mapi2capi.BareMetalProviderSpecKind
	names := []string{base + "-plain", base + "-warnings", base + "-status", base + "-baremetal"}
	for i, ps := range []any{openStackSpec(), withWarnings, openStackSpec(), bm} {
		create(t, newMachineSet(t, names[i], ps))
	}
	// One MachineSet has a current status, so the status mirror runs too.
	g.Eventually(func() error {
		ms := getMS(g, names[2])
		ms.Status.Replicas, ms.Status.ReadyReplicas, ms.Status.ObservedGeneration = 2, 2, ms.Generation
		return env.Client.Status().Update(context.Background(), ms)
	}).WithTimeout(timeout).Should(Succeed())
	for _, n := range names {
		waitCondition(t, n, corev1.ConditionTrue, ReasonSynchronized)
	}
	g.Eventually(func(g Gomega) {
		g.Expect(*getMirror(g, names[2]).Status.ReadyReplicas).To(Equal(int32(2)))
	}).WithTimeout(timeout).Should(Succeed())

	// The running controller may still be busy for a moment, and the cache
	// a moment behind; retry until one whole resync writes nothing.
	attempts := 0
	g.Eventually(func(g Gomega) {
		attempts++
		before := versions(g, names)
		n := resync(g, names)
		g.Expect(n).To(BeZero(), "writes in a full resync")
		g.Expect(versions(g, names)).To(Equal(before), "resourceVersions changed by a full resync")
	}).WithTimeout(timeout).Should(Succeed())
	t.Logf("a full resync wrote nothing (attempt %d)", attempts)
}

// resync reconciles names once each, directly, with a fresh reconciler
// whose writes are counted, and returns how many it made.
func resync(g Gomega, names []string) int64 {
	c := &countingClient{Client: mgrClient}
	r := &Reconciler{Client: c, Recorder: &recorder{}, MAPINamespace: mapiNS, CAPINamespace: capiNS, templateKinds: allTemplateKinds}
	for _, n := range names {
		_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: objectKey(mapiNS, n)})
		g.Expect(err).NotTo(HaveOccurred())
	}
	return c.Writes()
}

// versions maps every object of the given MachineSets (the MAPI
// MachineSet, the mirror, the templates) to its resourceVersion, read from
// the API server.
func versions(g Gomega, names []string) map[string]string {
	out := map[string]string{}
	ctx := context.Background()
	for _, n := range names {
		ms := &mapiv1beta1.MachineSet{}
		g.Expect(env.Client.Get(ctx, objectKey(mapiNS, n), ms)).To(Succeed())
		out["mapi/"+n] = ms.ResourceVersion
		m := &clusterv1.MachineSet{}
		g.Expect(env.Client.Get(ctx, objectKey(capiNS, n), m)).To(Succeed())
		out["capi/"+n] = m.ResourceVersion
		for _, list := range []client.ObjectList{&infrav1.OpenStackMachineTemplateList{}, &metal3v1.Metal3MachineTemplateList{}} {
			g.Expect(env.Client.List(ctx, list, client.InNamespace(capiNS), client.MatchingLabels{MachineSetLabel: mapi2capi.LabelValue(n)})).To(Succeed())
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
