package machinesetsync

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

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

	t.Run("status MachineAPI wins over spec ClusterAPI", func(t *testing.T) {
		ms := newMachineSet(t, testName(t), openStackSpec())
		ms.Spec.AuthoritativeAPI = mapiv1beta1.MachineAuthorityClusterAPI
		create(t, ms)
		setAuthority(t, ms, mapiv1beta1.MachineAuthorityMachineAPI)
		waitSynced(t, ms.Name)
	})

	t.Run("status Migrating: the mirror is not changed", func(t *testing.T) {
		g := NewWithT(t)
		ms := newMachineSet(t, testName(t), openStackSpec())
		create(t, ms)
		ms, mirror := waitSynced(t, ms.Name)
		gen := ms.Status.SynchronizedGeneration
		setAuthority(t, ms, mapiv1beta1.MachineAuthorityMigrating)
		c := waitCondition(t, ms.Name, corev1.ConditionUnknown, ReasonMigrating)
		g.Expect(c.Message).To(ContainSubstring("status.authoritativeAPI is Migrating"))
		update(t, ms, func(ms *mapiv1beta1.MachineSet) { ms.Spec.Replicas = ptr.To[int32](9) })
		g.Consistently(func(g Gomega) {
			m := getMirror(g, ms.Name)
			g.Expect(m.ResourceVersion).To(Equal(mirror.ResourceVersion))
			g.Expect(getMS(g, ms.Name).Status.SynchronizedGeneration).To(Equal(gen))
		}).Should(Succeed())
	})

	t.Run("status ClusterAPI: the MAPI MachineSet mirrors the CAPI one", func(t *testing.T) {
		g := NewWithT(t)
		ms := newMachineSet(t, testName(t), openStackSpec())
		create(t, ms)
		ms, mirror := waitSynced(t, ms.Name)
		setAuthority(t, ms, mapiv1beta1.MachineAuthorityMigrating)
		setAuthority(t, ms, mapiv1beta1.MachineAuthorityClusterAPI)
		waitFromCAPI(t, ms.Name)
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

	t.Run("status ClusterAPI: what MAPI cannot express stops the sync, with the CAPI field's path", func(t *testing.T) {
		ms := newMachineSet(t, testName(t), openStackSpec())
		create(t, ms)
		_, mirror := waitSynced(t, ms.Name)
		setAuthority(t, ms, mapiv1beta1.MachineAuthorityMigrating)
		setAuthority(t, ms, mapiv1beta1.MachineAuthorityClusterAPI)
		waitFromCAPI(t, ms.Name)
		update(t, mirror, func(m *clusterv1.MachineSet) { m.Spec.Template.Spec.Version = "v1.36.0" })
		c := waitCondition(t, ms.Name, corev1.ConditionFalse, ReasonReverseConversionFailed)
		NewWithT(t).Expect(c.Message).To(ContainSubstring("spec.template.spec.version"))
	})
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
	ms := newMachineSet(t, testName(t), openStackSpec())
	create(t, ms)
	ms, mirror := waitSynced(t, ms.Name)
	setAuthority(t, ms, mapiv1beta1.MachineAuthorityMigrating)
	setAuthority(t, ms, mapiv1beta1.MachineAuthorityClusterAPI)
	waitFromCAPI(t, ms.Name)

	g.Expect(env.Client.Delete(context.Background(), ms)).To(Succeed())
	g.Eventually(func(g Gomega) {
		gone(g, ms.DeepCopy())
		m := getMirror(g, ms.Name)
		g.Expect(m.Finalizers).NotTo(ContainElement(SyncFinalizer))
		g.Expect(m.DeletionTimestamp).To(BeNil())
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(getTemplate(g, mirror.Spec.Template.Spec.InfrastructureRef.Name).DeletionTimestamp).To(BeNil())
}

// setAuthority sets status.authoritativeAPI, as the migration controller does.
func setAuthority(t *testing.T, ms *mapiv1beta1.MachineSet, a mapiv1beta1.MachineAuthority) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		cur := &mapiv1beta1.MachineSet{}
		if err := env.Client.Get(context.Background(), objectKey(mapiNS, ms.Name), cur); err != nil {
			return err
		}
		cur.Status.AuthoritativeAPI = a
		return env.Client.Status().Update(context.Background(), cur)
	}).WithTimeout(timeout).Should(Succeed())
}
