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

// Only a MAPI-authoritative MachineSet is synced. In every other state the
// controller leaves the CAPI side alone and says so in Synchronized.
func TestAuthoritativeAPI(t *testing.T) {
	t.Run("spec ClusterAPI, status not set: no mirror", func(t *testing.T) {
		g := NewWithT(t)
		ms := newMachineSet(t, testName(t), openStackSpec())
		ms.Spec.AuthoritativeAPI = mapiv1beta1.MachineAuthorityClusterAPI
		create(t, ms)
		c := waitCondition(t, ms.Name, corev1.ConditionUnknown, ReasonNotAuthoritative)
		g.Expect(c.Severity).To(Equal(mapiv1beta1.ConditionSeverityInfo))
		g.Expect(c.Message).To(ContainSubstring("spec.authoritativeAPI is ClusterAPI"))
		g.Consistently(func(g Gomega) { gone(g, &clusterv1.MachineSet{ObjectMeta: capiMeta(ms.Name)}) }).Should(Succeed())
		g.Expect(getMS(g, ms.Name).Finalizers).NotTo(ContainElement(SyncFinalizer))
	})

	t.Run("status MachineAPI wins over spec ClusterAPI", func(t *testing.T) {
		ms := newMachineSet(t, testName(t), openStackSpec())
		ms.Spec.AuthoritativeAPI = mapiv1beta1.MachineAuthorityClusterAPI
		create(t, ms)
		setAuthority(t, ms, mapiv1beta1.MachineAuthorityMachineAPI)
		waitSynced(t, ms.Name)
	})

	for _, tc := range []struct {
		authority mapiv1beta1.MachineAuthority
		reason    string
	}{
		{mapiv1beta1.MachineAuthorityMigrating, ReasonMigrating},
		{mapiv1beta1.MachineAuthorityClusterAPI, ReasonNotAuthoritative},
	} {
		t.Run("status "+string(tc.authority)+": the mirror is not changed", func(t *testing.T) {
			g := NewWithT(t)
			ms := newMachineSet(t, testName(t), openStackSpec())
			create(t, ms)
			ms, mirror := waitSynced(t, ms.Name)
			gen := ms.Status.SynchronizedGeneration
			// MachineAPI -> Migrating [-> ClusterAPI], as the CRD requires.
			setAuthority(t, ms, mapiv1beta1.MachineAuthorityMigrating)
			if tc.authority != mapiv1beta1.MachineAuthorityMigrating {
				setAuthority(t, ms, tc.authority)
			}
			c := waitCondition(t, ms.Name, corev1.ConditionUnknown, tc.reason)
			g.Expect(c.Message).To(ContainSubstring("status.authoritativeAPI is " + string(tc.authority)))

			update(t, ms, func(ms *mapiv1beta1.MachineSet) { ms.Spec.Replicas = ptr.To[int32](9) })
			g.Consistently(func(g Gomega) {
				m := getMirror(g, ms.Name)
				g.Expect(m.ResourceVersion).To(Equal(mirror.ResourceVersion))
				g.Expect(getMS(g, ms.Name).Status.SynchronizedGeneration).To(Equal(gen))
			}).Should(Succeed())
		})
	}
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
	waitCondition(t, ms.Name, corev1.ConditionUnknown, ReasonNotAuthoritative)

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
