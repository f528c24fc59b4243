package controllers_test

// The authority switch of MachineSets (internal/addon/controllers/migration)
// with the syncs, and the Machine API operator and CAPI played by the
// stand-ins.

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/migration"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// startMAPI creates a MAPI MachineSet and waits until its CAPI mirror is
// synchronized and the migration controller has set the status.
func startMAPI(t *testing.T) string {
	t.Helper()
	name := testName(t)
	create(t, newMachineSet(t, name, openStackSpec()))
	waitMachineSetSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
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
	waitMachineSetSynced(t, name, mapiv1beta1.SynchronizedAPIClusterAPI)
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
	waitEvents(t, mapiNS, name, ContainElements(HaveField("Reason", migration.EventMigrationStarted), HaveField("Reason", migration.EventAuthoritativeAPIChanged), HaveField("Reason", migration.EventCAPIUnpaused)))

	// Cluster API is authoritative: a change of the CAPI MachineSet shows
	// on the MAPI one.
	update(t, &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: name}}, func(ms *clusterv1.MachineSet) {
		ms.Spec.Replicas = ptr.To[int32](3)
	})
	g.Eventually(func(g Gomega) {
		ms := getMS(g, name)
		g.Expect(*ms.Spec.Replicas).To(BeEquivalentTo(3))
	}).WithTimeout(timeout).Should(Succeed())
	waitMachineSetSynced(t, name, mapiv1beta1.SynchronizedAPIClusterAPI)

	// Steady state: nothing is written.
	expectSteady(t, getMS(g, name), getCAPIMS(g, name))
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
	expectWaitingForSync(t, name, "providerSpec.value.flavor", mapiAPI)

	update(t, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}}, func(ms *mapiv1beta1.MachineSet) {
		ms.Spec.Template.Spec.ProviderSpec.Value.Raw = newMachineSet(t, name, openStackSpec()).Spec.Template.Spec.ProviderSpec.Value.Raw
	})
	waitAuthority(t, name, capiAPI, authority.ReasonReached)
	g.Eventually(func(g Gomega) { g.Expect(capiPaused(g, name)).To(BeFalse()) }).WithTimeout(timeout).Should(Succeed())
	h.checkNeverBothActive(t)
}

// expectWaitingForSync waits until a switch asked for is held with Migrated
// WaitingForSynchronization (a warning naming field), then checks that it
// changes nothing for a while: authority stays current, and the CAPI side
// stays paused exactly when the Machine API is authoritative.
func expectWaitingForSync(t testing.TB, name, field string, current mapiv1beta1.MachineAuthority) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		c := authority.FindCondition(getMS(g, name).Status.Conditions, authority.MigratedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(authority.ReasonWaitingForSync))
		g.Expect(c.Severity).To(Equal(mapiv1beta1.ConditionSeverityWarning))
		g.Expect(c.Message).To(ContainSubstring(field))
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(getMS(g, name).Status.AuthoritativeAPI).To(Equal(current))
		g.Expect(capiPaused(g, name)).To(Equal(current == mapiAPI))
	}).WithTimeout(2 * time.Second).Should(Succeed())
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
	g.Expect(capiPausedConditionTrue(getCAPIMS(g, name))).To(BeTrue(), "CAPI said Paused before the handover")
	waitMachineSetSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	h.checkNeverBothActive(t)
	waitEvents(t, mapiNS, name, ContainElements(HaveField("Reason", migration.EventCAPIPaused)))
}

// TestRollbackOutOfSync: a rollback requested while the MAPI side does not
// mirror the CAPI one's current generation (the reverse conversion refuses
// readiness gates, which MAPI machines do not have) waits with
// WaitingForSynchronization and the conversion's field path, and changes
// nothing: Cluster API stays authoritative and unpaused. Once the CAPI
// MachineSet can be mirrored again, the rollback runs.
func TestRollbackOutOfSync(t *testing.T) {
	g := NewWithT(t)
	name := startMAPI(t)
	switchToCAPI(t, name)
	h := watchHistory(t, name)
	update(t, &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: name}}, func(ms *clusterv1.MachineSet) {
		ms.Spec.Template.Spec.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "Example"}}
	})
	setSpecAuthority(t, name, mapiAPI)
	expectWaitingForSync(t, name, "readinessGates", capiAPI)

	update(t, &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: name}}, func(ms *clusterv1.MachineSet) {
		ms.Spec.Template.Spec.ReadinessGates = nil
	})
	waitAuthority(t, name, mapiAPI, authority.ReasonReached)
	g.Expect(capiPaused(g, name)).To(BeTrue())
	h.checkNeverBothActive(t)
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
	restartAddon(t, func() {
		standMAO.hold(name, false)
		// Poke the MAPI object so the stand-in acknowledges now.
		update(t, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}}, func(ms *mapiv1beta1.MachineSet) {
			ms.Labels["poke"] = "1"
		})
		g.Eventually(func(g Gomega) {
			c := authority.FindCondition(getMS(g, name).Status.Conditions, mapiv1beta1.PausedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
		}).WithTimeout(timeout).Should(Succeed())
		g.Expect(getMS(g, name).Status.AuthoritativeAPI).To(Equal(authority.Migrating), "nothing moves while the controllers are down")
	})
	waitAuthority(t, name, capiAPI, authority.ReasonReached)
	g.Eventually(func(g Gomega) { g.Expect(capiPaused(g, name)).To(BeFalse()) }).WithTimeout(timeout).Should(Succeed())
	h.checkNeverBothActive(t)

	restartAddon(t, func() {
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
	waitEvents(t, mapiNS, name, ContainElement(HaveField("Note", ContainSubstring("deleted during the switch"))))
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
	waitMachineSetSynced(t, name, mapiv1beta1.SynchronizedAPIClusterAPI)
	waitEvents(t, mapiNS, name, ContainElement(HaveField("Reason", migration.EventAuthoritativeAPISet)))

	// Deleting the authoritative CAPI MachineSet deletes its mirror.
	capi := getCAPIMS(g, name)
	g.Expect(env.Client.Delete(context.Background(), capi)).To(Succeed())
	g.Eventually(func(g Gomega) {
		gone(g, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}})
		gone(g, &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: name}})
	}).WithTimeout(timeout).Should(Succeed())
}

// setSpecAuthority sets spec.authoritativeAPI of the MAPI MachineSet.
func setSpecAuthority(t testing.TB, name string, a mapiv1beta1.MachineAuthority) {
	t.Helper()
	update(t, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}},
		func(ms *mapiv1beta1.MachineSet) { ms.Spec.AuthoritativeAPI = a })
}

// waitMachineSetSynced waits until the MachineSet is Synchronized from side at the
// current generation of that side.
func waitMachineSetSynced(t testing.TB, name string, side mapiv1beta1.SynchronizedAPI) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		ms := getMS(g, name)
		c := authority.FindCondition(ms.Status.Conditions, authority.SynchronizedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "Synchronized %+v", c)
		g.Expect(ms.Status.SynchronizedAPI).To(Equal(side))
		gen := ms.Generation
		if side == mapiv1beta1.SynchronizedAPIClusterAPI {
			gen = getCAPIMS(g, name).Generation
		}
		g.Expect(ms.Status.SynchronizedGeneration).To(Equal(gen))
	}).WithTimeout(timeout).Should(Succeed())
}

// waitAuthority waits until status.authoritativeAPI is a, and Migrated has
// the reason.
func waitAuthority(t testing.TB, name string, a mapiv1beta1.MachineAuthority, reason string) *mapiv1beta1.MachineSet {
	t.Helper()
	var ms *mapiv1beta1.MachineSet
	NewWithT(t).Eventually(func(g Gomega) {
		ms = getMS(g, name)
		g.Expect(ms.Status.AuthoritativeAPI).To(Equal(a))
		c := authority.FindCondition(ms.Status.Conditions, authority.MigratedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(reason), "Migrated %+v", c)
	}).WithTimeout(timeout).Should(Succeed())
	return ms
}

func capiPaused(g Gomega, name string) bool { return annotations.HasPaused(getCAPIMS(g, name)) }

// history records, through watches, every version of the MAPI and CAPI
// MachineSets called name, to check an invariant over all of them in the
// API server's order (resourceVersions of one etcd increase).
type history struct {
	mu      sync.Mutex
	entries []entry
	stop    []func()
}

type entry struct {
	rv   int64
	mapi bool
	// active: the side acts on the object (not paused).
	active bool
	exists bool
}

// watchHistory starts recording the two MachineSets called name.
func watchHistory(t *testing.T, name string) *history {
	return watchKinds(t, name, &mapiv1beta1.MachineSetList{}, &clusterv1.MachineSetList{})
}

// watchMachineHistory starts recording the two Machines called name.
func watchMachineHistory(t *testing.T, name string) *history {
	return watchKinds(t, name, &mapiv1beta1.MachineList{}, &clusterv1.MachineList{})
}

func watchKinds(t *testing.T, name string, lists ...client.ObjectList) *history {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	h := &history{}
	for _, l := range lists {
		ns := capiNS
		switch l.(type) {
		case *mapiv1beta1.MachineSetList, *mapiv1beta1.MachineList:
			ns = mapiNS
		}
		w, err := wc.Watch(suiteCtx, l, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
		if err != nil {
			t.Fatal(err)
		}
		h.stop = append(h.stop, w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				h.record(ev)
			}
		}()
	}
	t.Cleanup(func() {
		for _, s := range h.stop {
			s()
		}
	})
	return h
}

func (h *history) record(ev watch.Event) {
	o, ok := ev.Object.(client.Object)
	if !ok {
		return
	}
	rv, err := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	e := entry{rv: rv, exists: ev.Type != watch.Deleted}
	switch t := o.(type) {
	case *mapiv1beta1.MachineSet:
		e.mapi = true
		e.active = mapiActive(t.Status.AuthoritativeAPI, t.Spec.AuthoritativeAPI, t.Status.Conditions)
	case *mapiv1beta1.Machine:
		e.mapi = true
		e.active = mapiActive(t.Status.AuthoritativeAPI, t.Spec.AuthoritativeAPI, t.Status.Conditions)
	case *clusterv1.MachineSet:
		e.active = !annotations.HasPaused(t) && t.DeletionTimestamp.IsZero()
	case *clusterv1.Machine:
		e.active = !annotations.HasPaused(t) && t.DeletionTimestamp.IsZero()
	default:
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = append(h.entries, e)
}

// mapiActive: the Machine API operator acts while the authority is
// MachineAPI, until it has said Paused.
func mapiActive(status, spec mapiv1beta1.MachineAuthority, cs []mapiv1beta1.Condition) bool {
	a := status
	if a == "" {
		a = spec
	}
	paused := authority.FindCondition(cs, mapiv1beta1.PausedCondition)
	return (a == "" || a == mapiv1beta1.MachineAuthorityMachineAPI) && (paused == nil || paused.Status != corev1.ConditionTrue)
}

// checkNeverBothActive replays the history in the API server's order.
func (h *history) checkNeverBothActive(t *testing.T) {
	t.Helper()
	time.Sleep(500 * time.Millisecond) // the last watch events
	h.mu.Lock()
	defer h.mu.Unlock()
	es := slices.Clone(h.entries)
	slices.SortFunc(es, func(a, b entry) int { return int(a.rv - b.rv) })
	var mapiActive, capiActive bool
	for _, e := range es {
		if e.mapi {
			mapiActive = e.exists && e.active
		} else {
			capiActive = e.exists && e.active
		}
		if mapiActive && capiActive {
			t.Errorf("at resourceVersion %d both the MAPI and the CAPI MachineSet were unpaused (history of %d versions)", e.rv, len(es))
			return
		}
	}
	if len(es) == 0 {
		t.Errorf("no history recorded")
	}
}
