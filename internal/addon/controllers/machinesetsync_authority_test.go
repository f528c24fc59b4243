package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesetsync"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// The sync follows the authority: MAPI to CAPI while the Machine API is
// authoritative, nothing while Migrating, CAPI to MAPI while Cluster API
// is (docs/addon/machineset-sync.md, "When it acts").
func TestAuthoritativeAPI(t *testing.T) {
	t.Run("spec ClusterAPI at creation: the CAPI MachineSet is made unpaused, then mirrored back", func(t *testing.T) {
		g := NewWithT(t)
		ms := newMachineSet(t, testName(t), openStackSpec())
		ms.Spec.AuthoritativeAPI = mapiv1beta1.MachineAuthorityClusterAPI
		create(t, ms)
		g.Eventually(func(g Gomega) {
			m := getMirror(g, ms.Name)
			g.Expect(m.Annotations).NotTo(HaveKey(clusterv1.PausedAnnotation), "upstream bug #299: Cluster API runs it from the start")
			c := synchronized(getMS(g, ms.Name))
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
			g.Expect(getMS(g, ms.Name).Status.SynchronizedAPI).To(Equal(mapiv1beta1.SynchronizedAPIClusterAPI))
		}).WithTimeout(timeout).Should(Succeed())
	})

	// "status MachineAPI wins over spec ClusterAPI" is machinesetsync's
	// TestAuthority: with the migration controllers running, such a status
	// does not last.

	t.Run("status Migrating: the mirror is not changed", func(t *testing.T) {
		g := NewWithT(t)
		ms := newMachineSet(t, testName(t), openStackSpec())
		create(t, ms)
		waitSynced(t, ms.Name)
		// The CAPI stand-in has said Paused: nothing else writes the mirror.
		g.Eventually(func(g Gomega) { g.Expect(capiPausedConditionTrue(getMirror(g, ms.Name))).To(BeTrue()) }).WithTimeout(timeout).Should(Succeed())
		// The Machine API operator does not acknowledge the pause: the
		// switch stays in Migrating.
		standMAO.hold(ms.Name, true)
		defer standMAO.hold(ms.Name, false)
		setSpecAuthority(t, ms.Name, capiAPI)
		c := waitCondition(t, ms.Name, corev1.ConditionUnknown, machinesetsync.ReasonMigrating)
		g.Expect(c.Message).To(ContainSubstring("status.authoritativeAPI is Migrating"))
		// What the sync had made when the switch began (it mirrored the
		// spec change that asked for it).
		mirror := getMirror(g, ms.Name)
		gen := getMS(g, ms.Name).Status.SynchronizedGeneration
		update(t, ms, func(ms *mapiv1beta1.MachineSet) { ms.Spec.Replicas = ptr.To[int32](9) })
		g.Consistently(func(g Gomega) {
			m := getMirror(g, ms.Name)
			g.Expect(m.ResourceVersion).To(Equal(mirror.ResourceVersion))
			g.Expect(getMS(g, ms.Name).Status.SynchronizedGeneration).To(Equal(gen))
		}).Should(Succeed())
	})

	t.Run("status ClusterAPI: the MAPI MachineSet mirrors the CAPI one", func(t *testing.T) {
		g := NewWithT(t)
		ms, mirror := newFromCAPI(t)
		// A change of the MAPI MachineSet, which is not authoritative, is
		// undone; the CAPI one is not touched.
		update(t, ms, func(ms *mapiv1beta1.MachineSet) { ms.Spec.Replicas = ptr.To[int32](9) })
		g.Eventually(func(g Gomega) { g.Expect(*getMS(g, ms.Name).Spec.Replicas).To(BeEquivalentTo(2)) }).WithTimeout(timeout).Should(Succeed())
		g.Expect(*getMirror(g, ms.Name).Spec.Replicas).To(BeEquivalentTo(2))
		// A change of the CAPI one shows, with its status.
		update(t, mirror, func(m *clusterv1.MachineSet) { m.Spec.Replicas = ptr.To[int32](4) })
		g.Eventually(func(g Gomega) { g.Expect(*getMS(g, ms.Name).Spec.Replicas).To(BeEquivalentTo(4)) }).WithTimeout(timeout).Should(Succeed())
		g.Expect(env.Client.Get(context.Background(), objectKey(capiNS, ms.Name), mirror)).To(Succeed())
		mirror.Status.Replicas, mirror.Status.ReadyReplicas = ptr.To[int32](4), ptr.To[int32](3)
		mirror.Status.ObservedGeneration = mirror.Generation
		g.Expect(env.Client.Status().Update(context.Background(), mirror)).To(Succeed())
		g.Eventually(func(g Gomega) {
			st := getMS(g, ms.Name).Status
			g.Expect(st.Replicas).To(BeEquivalentTo(4))
			g.Expect(st.ReadyReplicas).To(BeEquivalentTo(3))
			g.Expect(st.ObservedGeneration).To(Equal(getMS(g, ms.Name).Generation))
		}).WithTimeout(timeout).Should(Succeed())
	})

	t.Run("status ClusterAPI: what MAPI cannot express stops the sync, with the CAPI field's path, until it is fixed", func(t *testing.T) {
		g := NewWithT(t)
		ms, mirror := newFromCAPI(t)
		update(t, mirror, func(m *clusterv1.MachineSet) { m.Spec.Template.Spec.Version = "v1.36.0" })
		c := waitCondition(t, ms.Name, corev1.ConditionFalse, machinesetsync.ReasonReverseConversionFailed)
		g.Expect(c.Message).To(ContainSubstring("spec.template.spec.version"))
		waitEvents(t, mapiNS, ms.Name, ContainElement(And(HaveField("Type", corev1.EventTypeWarning),
			HaveField("Reason", machinesetsync.ReasonReverseConversionFailed))))
		update(t, mirror, func(m *clusterv1.MachineSet) { m.Spec.Template.Spec.Version = "" })
		waitCondition(t, ms.Name, corev1.ConditionTrue, machinesetsync.ReasonSynchronized)
		g.Expect(reconcileErrorsOf("machinesetsync", ms.Name)).To(BeEmpty())
	})
}

// newFromCAPI creates a MAPI MachineSet, waits until the sync has mirrored
// it, and has the migration controllers switch it to Cluster API (the
// mirror unpaused, the MAPI MachineSet synchronized from it).
func newFromCAPI(t *testing.T) (*mapiv1beta1.MachineSet, *clusterv1.MachineSet) {
	t.Helper()
	ms := newMachineSet(t, testName(t), openStackSpec())
	create(t, ms)
	ms, mirror := waitSynced(t, ms.Name)
	switchToCAPI(t, ms.Name)
	waitFromCAPI(t, ms.Name)
	return ms, mirror
}

// waitFromCAPI waits until the MAPI MachineSet is synchronized from the
// CAPI one.
func waitFromCAPI(t *testing.T, name string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		ms := getMS(g, name)
		c := synchronized(ms)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "condition %+v", c)
		g.Expect(ms.Status.SynchronizedAPI).To(Equal(mapiv1beta1.SynchronizedAPIClusterAPI))
	}).WithTimeout(timeout).Should(Succeed())
}

// Deleting a MachineSet that Cluster API is authoritative for leaves the
// mirror running and only drops the sync finalizers.
func TestDeletionNotAuthoritative(t *testing.T) {
	g := NewWithT(t)
	ms, mirror := newFromCAPI(t)

	g.Expect(env.Client.Delete(context.Background(), ms)).To(Succeed())
	g.Eventually(func(g Gomega) {
		gone(g, ms.DeepCopy())
		m := getMirror(g, ms.Name)
		g.Expect(m.Finalizers).NotTo(ContainElement(machinesetsync.SyncFinalizer))
		g.Expect(m.DeletionTimestamp).To(BeNil())
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(getTemplate(g, mirror.Spec.Template.Spec.InfrastructureRef.Name).DeletionTimestamp).To(BeNil())
}
