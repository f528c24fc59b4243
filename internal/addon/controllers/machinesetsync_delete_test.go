package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesetsync"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// Deleting the MAPI MachineSet deletes its mirror and the templates the
// controller created, then lets the MachineSet go.
func TestDeletion(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	create(t, ms)
	_, mirror := waitSynced(t, ms.Name)
	tmpl := getTemplate(g, mirror.Spec.Template.Spec.InfrastructureRef.Name)

	g.Expect(env.Client.Delete(context.Background(), ms)).To(Succeed())
	g.Eventually(func(g Gomega) {
		gone(g, mirror.DeepCopy())
		gone(g, tmpl.DeepCopy())
		gone(g, ms.DeepCopy())
	}).WithTimeout(timeout).Should(Succeed())
	waitEvents(t, mapiNS, ms.Name, ContainElement(HaveField("Reason", machinesetsync.EventMirrorDeleted)))
}

// A template the controller did not create is never deleted: not when it
// serves as the MachineSet's template, not when the spec moves away from
// it, not when the MachineSet is deleted.
func TestForeignTemplateNeverDeleted(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	name := expectedTemplateName(t, ms)
	want := convertTemplate(t, ms)
	foreign := want.DeepCopy()
	foreign.Labels = map[string]string{machinesetsync.MachineSetLabel: ms.Name} // labelled, yet not the controller's
	create(t, foreign)
	create(t, ms)
	_, mirror := waitSynced(t, ms.Name)
	g.Expect(mirror.Spec.Template.Spec.InfrastructureRef.Name).To(Equal(name))
	got := getTemplate(g, name)
	g.Expect(got.Annotations).NotTo(HaveKey(machinesetsync.CreatedForAnnotation))
	g.Expect(got.OwnerReferences).To(BeEmpty(), "the controller must not take ownership of a template it did not create")

	ps := openStackSpec()
	ps.Flavor = "m1.2xlarge"
	setProviderSpec(t, ms, ps)
	g.Eventually(func(g Gomega) {
		g.Expect(getMirror(g, ms.Name).Spec.Template.Spec.InfrastructureRef.Name).NotTo(Equal(name))
	}).WithTimeout(timeout).Should(Succeed())
	waitSynced(t, ms.Name)

	g.Expect(env.Client.Delete(context.Background(), ms)).To(Succeed())
	g.Eventually(func(g Gomega) { gone(g, ms.DeepCopy()) }).WithTimeout(timeout).Should(Succeed())
	g.Expect(getTemplate(g, name).DeletionTimestamp).To(BeNil())
}

// A template of the wanted name with another spec, not created by the
// controller, is a conflict: Synchronized False, nothing deleted.
func TestForeignTemplateConflict(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	want := convertTemplate(t, ms)
	foreign := want.DeepCopy()
	foreign.Spec.Template.Spec.SSHKeyName = "someone-elses"
	create(t, foreign)
	create(t, ms)
	c := waitCondition(t, ms.Name, "False", machinesetsync.ReasonTemplateConflict)
	g.Expect(c.Message).To(ContainSubstring(foreign.Name))
	g.Expect(getTemplate(g, foreign.Name).Spec.Template.Spec.SSHKeyName).To(Equal("someone-elses"))
}

// Upstream bug #626: a missing partner never leaves anything stuck.
func TestMissingPartner(t *testing.T) {
	t.Run("the mirror is deleted while MAPI is authoritative: it goes and comes back", func(t *testing.T) {
		g := NewWithT(t)
		ms := newMachineSet(t, testName(t), openStackSpec())
		create(t, ms)
		_, mirror := waitSynced(t, ms.Name)
		// CAPI's finalizer, which a paused CAPI controller would never remove.
		update(t, mirror, func(m *clusterv1.MachineSet) { controllerutil.AddFinalizer(m, clusterv1.MachineSetFinalizer) })
		g.Expect(env.Client.Delete(context.Background(), mirror)).To(Succeed())
		g.Eventually(func(g Gomega) {
			m := getMirror(g, ms.Name)
			g.Expect(m.UID).NotTo(Equal(mirror.UID))
			g.Expect(m.DeletionTimestamp).To(BeNil())
			g.Expect(hasMirrorRef(getTemplate(g, m.Spec.Template.Spec.InfrastructureRef.Name).OwnerReferences, m)).To(BeTrue())
		}).WithTimeout(timeout).Should(Succeed())
		waitSynced(t, ms.Name)
	})

	t.Run("the MAPI MachineSet vanished: its paused mirror and templates go", func(t *testing.T) {
		g := NewWithT(t)
		ms := newMachineSet(t, testName(t), openStackSpec())
		create(t, ms)
		_, mirror := waitSynced(t, ms.Name)
		tmpl := getTemplate(g, mirror.Spec.Template.Spec.InfrastructureRef.Name)
		// Force the MAPI MachineSet away without the controller: drop its
		// finalizer, then delete it.
		update(t, ms, func(ms *mapiv1beta1.MachineSet) { controllerutil.RemoveFinalizer(ms, machinesetsync.SyncFinalizer) })
		g.Expect(env.Client.Delete(context.Background(), ms)).To(Succeed())
		g.Eventually(func(g Gomega) {
			gone(g, mirror.DeepCopy())
			gone(g, tmpl.DeepCopy())
		}).WithTimeout(timeout).Should(Succeed())
	})

	t.Run("the MAPI MachineSet vanished while CAPI is authoritative: the mirror stays, without the finalizer", func(t *testing.T) {
		g := NewWithT(t)
		// The migration handed the mirror over: Cluster API is
		// authoritative and the mirror unpaused.
		ms, mirror := newFromCAPI(t)
		update(t, mirror, func(m *clusterv1.MachineSet) { delete(m.Annotations, clusterv1.PausedAnnotation) })
		update(t, ms, func(ms *mapiv1beta1.MachineSet) { controllerutil.RemoveFinalizer(ms, machinesetsync.SyncFinalizer) })
		g.Expect(env.Client.Delete(context.Background(), ms)).To(Succeed())
		g.Eventually(func(g Gomega) {
			m := getMirror(g, ms.Name)
			g.Expect(m.Finalizers).NotTo(ContainElement(machinesetsync.SyncFinalizer))
			g.Expect(m.DeletionTimestamp).To(BeNil())
		}).WithTimeout(timeout).Should(Succeed())
		g.Expect(getTemplate(g, mirror.Spec.Template.Spec.InfrastructureRef.Name).DeletionTimestamp).To(BeNil())
	})

	t.Run("the mirror is deleted after the MAPI MachineSet vanished: nothing blocks it", func(t *testing.T) {
		g := NewWithT(t)
		mirror := &clusterv1.MachineSet{ObjectMeta: capiMeta(testName(t))}
		mirror.Finalizers = []string{machinesetsync.SyncFinalizer}
		mirror.Spec.ClusterName = clusterName
		mirror.Spec.Selector.MatchLabels = map[string]string{"a": "b"}
		mirror.Spec.Template.Labels = map[string]string{"a": "b"}
		mirror.Spec.Template.Spec.ClusterName = clusterName
		mirror.Spec.Template.Spec.Bootstrap.DataSecretName = ptr.To("data")
		mirror.Spec.Template.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackMachineTemplate", Name: "absent",
		}
		create(t, mirror)
		g.Expect(env.Client.Delete(context.Background(), mirror)).To(Succeed())
		g.Eventually(func(g Gomega) { gone(g, mirror.DeepCopy()) }).WithTimeout(timeout).Should(Succeed())
	})

	t.Run("templates left with no MachineSet at all are removed", func(t *testing.T) {
		g := NewWithT(t)
		ms := newMachineSet(t, testName(t), openStackSpec())
		want := convertTemplate(t, ms)
		left := want.DeepCopy()
		left.Labels = map[string]string{machinesetsync.MachineSetLabel: ms.Name}
		left.Annotations = map[string]string{machinesetsync.CreatedForAnnotation: ms.Name}
		create(t, left)
		g.Eventually(func(g Gomega) { gone(g, left.DeepCopy()) }).WithTimeout(timeout).Should(Succeed())
	})
}

// convertTemplate runs the conversion the controller runs, with the test
// cluster's context, and returns the template.
func convertTemplate(t testing.TB, ms *mapiv1beta1.MachineSet) *infrav1.OpenStackMachineTemplate {
	t.Helper()
	_, tmpl, _, errs := mapi2capiMachineSet(ms)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return tmpl.(*infrav1.OpenStackMachineTemplate)
}
