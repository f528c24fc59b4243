package migration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

var (
	mapiAPI = mapiv1beta1.MachineAuthorityMachineAPI
	capiAPI = mapiv1beta1.MachineAuthorityClusterAPI
)

// startMAPI creates a MAPI MachineSet and waits until its CAPI mirror is
// synchronized and the migration controller has set the status.
func startMAPI(t *testing.T) string {
	t.Helper()
	name := testName(t)
	create(t, newMachineSet(t, name, openStackSpec()))
	waitSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	waitAuthority(t, name, mapiAPI, authority.ReasonReached)
	return name
}

// switchToCAPI switches name to Cluster API and waits until it is done:
// status ClusterAPI, the CAPI MachineSet unpaused, the MAPI one paused and
// synchronized from CAPI.
func switchToCAPI(t *testing.T, name string) {
	t.Helper()
	setSpecAuthority(t, name, capiAPI)
	waitAuthority(t, name, capiAPI, authority.ReasonReached)
	NewWithT(t).Eventually(func(g Gomega) { g.Expect(capiPaused(g, name)).To(BeFalse()) }).WithTimeout(timeout).Should(Succeed())
	waitSynced(t, name, mapiv1beta1.SynchronizedAPIClusterAPI)
}

// TestSwitchToClusterAPI: once the CAPI side mirrors the current
// generation, the MAPI side is paused (and says so), status goes through
// Migrating to ClusterAPI, then the CAPI side is unpaused; at no version of
// the two objects are both unpaused. Afterwards the MAPI MachineSet mirrors
// the CAPI one, and nothing more is written.
func TestSwitchToClusterAPI(t *testing.T) {
	g := NewWithT(t)
	name := startMAPI(t)
	h := watchHistory(t, name)
	switchToCAPI(t, name)
	h.checkNeverBothActive(t)
	g.Expect(rec.reasonsFor(mapiNS, name)).To(ContainElements(EventMigrationStarted, EventAuthoritativeAPIChanged, EventCAPIUnpaused))

	// Cluster API is authoritative: a change of the CAPI MachineSet shows
	// on the MAPI one.
	update(t, &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: name}}, func(ms *clusterv1.MachineSet) {
		ms.Spec.Replicas = ptrInt32(3)
	})
	g.Eventually(func(g Gomega) {
		ms := getMS(g, name)
		g.Expect(*ms.Spec.Replicas).To(BeEquivalentTo(3))
	}).WithTimeout(timeout).Should(Succeed())
	waitSynced(t, name, mapiv1beta1.SynchronizedAPIClusterAPI)

	// Steady state: nothing is written.
	ms, capi := getMS(g, name), getCAPIMS(g, name)
	g.Consistently(func(g Gomega) {
		g.Expect(getMS(g, name).ResourceVersion).To(Equal(ms.ResourceVersion))
		g.Expect(getCAPIMS(g, name).ResourceVersion).To(Equal(capi.ResourceVersion))
	}).WithTimeout(3 * time.Second).Should(Succeed())
}

// TestSwitchOutOfSync: a switch requested while the CAPI side does not
// mirror the current generation waits (Migrated False,
// WaitingForSynchronization, with the sync's reason) and changes nothing;
// once the sync catches up, it runs.
func TestSwitchOutOfSync(t *testing.T) {
	g := NewWithT(t)
	name := startMAPI(t)
	h := watchHistory(t, name)
	// A providerSpec the conversion refuses: the sync stops.
	update(t, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}}, func(ms *mapiv1beta1.MachineSet) {
		ms.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(`{"kind":"OpenstackProviderSpec","flavor":3}`)
		ms.Spec.AuthoritativeAPI = capiAPI
	})
	g.Eventually(func(g Gomega) {
		ms := getMS(g, name)
		c := condition(ms.Status.Conditions, authority.MigratedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(authority.ReasonWaitingForSync))
		g.Expect(c.Severity).To(Equal(mapiv1beta1.ConditionSeverityWarning))
		g.Expect(c.Message).To(ContainSubstring("providerSpec.value.flavor"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(getMS(g, name).Status.AuthoritativeAPI).To(Equal(mapiAPI))
		g.Expect(capiPaused(g, name)).To(BeTrue())
	}).WithTimeout(2 * time.Second).Should(Succeed())

	update(t, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}}, func(ms *mapiv1beta1.MachineSet) {
		ms.Spec.Template.Spec.ProviderSpec.Value.Raw = newMachineSet(t, name, openStackSpec()).Spec.Template.Spec.ProviderSpec.Value.Raw
	})
	waitAuthority(t, name, capiAPI, authority.ReasonReached)
	g.Eventually(func(g Gomega) { g.Expect(capiPaused(g, name)).To(BeFalse()) }).WithTimeout(timeout).Should(Succeed())
	h.checkNeverBothActive(t)
}

// TestRollback: ClusterAPI back to MachineAPI. Once the MAPI side mirrors
// the CAPI one, the CAPI side is paused and must say so before status goes
// through Migrating to MachineAPI; the forward sync then runs again.
func TestRollback(t *testing.T) {
	g := NewWithT(t)
	name := startMAPI(t)
	switchToCAPI(t, name)
	h := watchHistory(t, name)
	setSpecAuthority(t, name, mapiAPI)
	waitAuthority(t, name, mapiAPI, authority.ReasonReached)
	g.Expect(capiPaused(g, name)).To(BeTrue())
	g.Expect(capiconditionTrue(getCAPIMS(g, name), clusterv1.PausedCondition)).To(BeTrue(), "CAPI said Paused before the handover")
	waitSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	h.checkNeverBothActive(t)
	g.Expect(rec.reasonsFor(mapiNS, name)).To(ContainElements(EventCAPIPaused))
}

// TestCancel: while Migrating (the MAPI side has not said Paused yet), spec
// set back to MachineAPI goes straight back; the CAPI side was never
// unpaused.
func TestCancel(t *testing.T) {
	g := NewWithT(t)
	name := startMAPI(t)
	h := watchHistory(t, name)
	standMAO.hold(name, true)
	defer standMAO.hold(name, false)
	setSpecAuthority(t, name, capiAPI)
	waitAuthority(t, name, authority.Migrating, authority.ReasonMigrating)
	setSpecAuthority(t, name, mapiAPI)
	waitAuthority(t, name, mapiAPI, authority.ReasonReached)
	g.Expect(capiPaused(g, name)).To(BeTrue())
	h.checkNeverBothActive(t)
}

// TestCancelRollback: a rollback cancelled before the handover goes back
// to ClusterAPI and unpauses the CAPI side again.
func TestCancelRollback(t *testing.T) {
	g := NewWithT(t)
	name := startMAPI(t)
	switchToCAPI(t, name)
	h := watchHistory(t, name)
	setSpecAuthority(t, name, mapiAPI)
	g.Eventually(func(g Gomega) { g.Expect(capiPaused(g, name)).To(BeTrue()) }).WithTimeout(timeout).Should(Succeed())
	setSpecAuthority(t, name, capiAPI)
	waitAuthority(t, name, capiAPI, authority.ReasonReached)
	g.Eventually(func(g Gomega) { g.Expect(capiPaused(g, name)).To(BeFalse()) }).WithTimeout(timeout).Should(Succeed())
	h.checkNeverBothActive(t)
}

// TestRestartMidSwitch: the migration controllers stop in the middle of a
// switch (status Migrating, waiting for the pause) and start again: the
// switch completes. And a stop after the handover but before the unpause
// (status ClusterAPI, CAPI still paused): the new controllers unpause.
func TestRestartMidSwitch(t *testing.T) {
	g := NewWithT(t)
	name := startMAPI(t)
	h := watchHistory(t, name)
	standMAO.hold(name, true)
	setSpecAuthority(t, name, capiAPI)
	waitAuthority(t, name, authority.Migrating, authority.ReasonMigrating)
	restartMigration(t, func() {
		standMAO.hold(name, false)
		// Poke the MAPI object so the stand-in acknowledges now.
		update(t, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}}, func(ms *mapiv1beta1.MachineSet) {
			ms.Labels["poke"] = "1"
		})
		g.Eventually(func(g Gomega) {
			c := condition(getMS(g, name).Status.Conditions, mapiv1beta1.PausedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
		}).WithTimeout(timeout).Should(Succeed())
		g.Expect(getMS(g, name).Status.AuthoritativeAPI).To(Equal(authority.Migrating), "nothing moves while the controllers are down")
	})
	waitAuthority(t, name, capiAPI, authority.ReasonReached)
	g.Eventually(func(g Gomega) { g.Expect(capiPaused(g, name)).To(BeFalse()) }).WithTimeout(timeout).Should(Succeed())
	h.checkNeverBothActive(t)

	restartMigration(t, func() {
		// The state a crash between the handover and the unpause leaves.
		update(t, &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: name}}, func(ms *clusterv1.MachineSet) {
			annotations.AddAnnotations(ms, map[string]string{clusterv1.PausedAnnotation: ""})
		})
	})
	g.Eventually(func(g Gomega) { g.Expect(capiPaused(g, name)).To(BeFalse()) }).WithTimeout(timeout).Should(Succeed())
}

// TestDeletedPartner: the CAPI MachineSet is deleted in the middle of a
// switch to Cluster API. Authority goes back to the Machine API (nothing
// was unpaused), the sync makes the CAPI MachineSet again, and the switch,
// still asked for, then completes.
func TestDeletedPartner(t *testing.T) {
	g := NewWithT(t)
	name := startMAPI(t)
	h := watchHistory(t, name)
	standMAO.hold(name, true)
	setSpecAuthority(t, name, capiAPI)
	waitAuthority(t, name, authority.Migrating, authority.ReasonMigrating)
	old := getCAPIMS(g, name)
	g.Expect(env.Client.Delete(context.Background(), old)).To(Succeed())
	waitAuthority(t, name, mapiAPI, authority.ReasonWaitingForPartner)
	g.Expect(rec.notesFor(mapiNS, name)).To(ContainElement(ContainSubstring("deleted during the switch")))
	standMAO.hold(name, false)
	waitAuthority(t, name, capiAPI, authority.ReasonReached)
	g.Eventually(func(g Gomega) {
		capi := getCAPIMS(g, name)
		g.Expect(capi.UID).NotTo(Equal(old.UID), "made again")
		g.Expect(annotations.HasPaused(capi)).To(BeFalse())
	}).WithTimeout(timeout).Should(Succeed())
	h.checkNeverBothActive(t)
}

// TestCreatedWithClusterAPI: a MAPI MachineSet created with spec ClusterAPI
// gets status ClusterAPI at once, and its CAPI MachineSet is made without
// the pause (upstream bug #299); the MAPI one mirrors it.
func TestCreatedWithClusterAPI(t *testing.T) {
	g := NewWithT(t)
	name := testName(t)
	ms := newMachineSet(t, name, openStackSpec())
	ms.Spec.AuthoritativeAPI = capiAPI
	create(t, ms)
	waitAuthority(t, name, capiAPI, authority.ReasonReached)
	g.Eventually(func(g Gomega) { g.Expect(capiPaused(g, name)).To(BeFalse()) }).WithTimeout(timeout).Should(Succeed())
	waitSynced(t, name, mapiv1beta1.SynchronizedAPIClusterAPI)
	g.Expect(rec.reasonsFor(mapiNS, name)).To(ContainElement(EventAuthoritativeAPISet))

	// Deleting the authoritative CAPI MachineSet deletes its mirror.
	capi := getCAPIMS(g, name)
	g.Expect(env.Client.Delete(context.Background(), capi)).To(Succeed())
	g.Eventually(func(g Gomega) {
		gone(g, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}})
		gone(g, &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: name}})
	}).WithTimeout(timeout).Should(Succeed())
}

// TestStandIns checks the table of standin_test.go.
func TestStandIns(t *testing.T) {
	for status, want := range map[mapiv1beta1.MachineAuthority]corev1.ConditionStatus{
		mapiAPI: corev1.ConditionFalse, capiAPI: corev1.ConditionTrue, authority.Migrating: corev1.ConditionTrue,
	} {
		c, ok := maoPaused(status)
		if !ok || c.Status != want || c.Type != mapiv1beta1.PausedCondition {
			t.Errorf("MAO Paused for %s: %+v", status, c)
		}
	}
	if _, ok := maoPaused(""); ok {
		t.Errorf("MAO sets Paused with no status")
	}
	paused := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.PausedAnnotation: ""}}}
	if c := capiPausedCondition(paused); c.Status != metav1.ConditionTrue || c.Reason != clusterv1.PausedReason {
		t.Errorf("CAPI Paused with the annotation: %+v", c)
	}
	if c := capiPausedCondition(&clusterv1.MachineSet{}); c.Status != metav1.ConditionFalse || c.Reason != clusterv1.NotPausedReason {
		t.Errorf("CAPI Paused without it: %+v", c)
	}
}

func ptrInt32(v int32) *int32 { return &v }

func capiconditionTrue(o *clusterv1.MachineSet, t string) bool {
	for _, c := range o.Status.Conditions {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

var _ client.Object = &clusterv1.MachineSet{}
