package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesync"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
)

// laggingReads is a client whose reads of one object return an older copy
// of it, as a cache whose informer has not seen the latest writes yet does;
// every other read, and every write, goes to the API server.
type laggingReads struct {
	client.Client
	key client.ObjectKey
	old *mapiv1beta1.Machine
}

func (c laggingReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if m, ok := obj.(*mapiv1beta1.Machine); ok && key == c.key && c.old != nil {
		c.old.DeepCopyInto(m)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestMachineSyncSkipsStaleCopy: a cached MAPI Machine from before the
// migration controller's writes (here still MAPI-authoritative, while the
// API server says Cluster API is, and the CAPI Machine runs unpaused) is
// not acted on: the Machine sync shares the add-on's stale-cache guard.
// Without it, the sync would pause the CAPI Machine again: a write that
// its lock does not stop, since the CAPI Machine's own copy is current.
// The sync runs in namespaces of its own, which the suite's controllers do
// not watch, and is called directly, so that the test decides what its
// reads return.
func TestMachineSyncSkipsStaleCopy(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	mapiNS2, err := env.NewNamespace(ctx, "stale-mapi")
	g.Expect(err).NotTo(HaveOccurred())
	capiNS2, err := env.NewNamespace(ctx, "stale-capi")
	g.Expect(err).NotTo(HaveOccurred())

	tracker := freshness.New()
	lagging := &laggingReads{Client: tracker.Client(env.Client)}
	mgr, err := ctrl.NewManager(env.Config, env.ManagerOptions())
	g.Expect(err).NotTo(HaveOccurred())
	r := &machinesync.Reconciler{
		Client: lagging, Freshness: tracker, Recorder: mgr.GetEventRecorder("machine-sync-controller"),
		MAPINamespace: mapiNS2.Name, CAPINamespace: capiNS2.Name,
	}
	g.Expect(r.SetupWithManager(ctx, mgr, controller.Options{})).To(Succeed()) // never started

	name := testName(t)
	lagging.key = client.ObjectKey{Namespace: mapiNS2.Name, Name: name}
	m := &mapiv1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mapiNS2.Name},
		Spec:       mapiv1beta1.MachineSpec{ProviderSpec: mapiv1beta1.ProviderSpec{Value: rawSpec(t, openStackSpec())}},
	}
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	setMachineAuthority(t, env.Client, m, mapiv1beta1.MachineAuthorityMachineAPI, nil)
	req := ctrl.Request{NamespacedName: lagging.key}
	g.Eventually(func(g Gomega) {
		_, err := r.Reconcile(ctx, req)
		g.Expect(err).NotTo(HaveOccurred())
		m = get(g, mapiNS2.Name, name, &mapiv1beta1.Machine{})
		c := authority.FindCondition(m.Status.Conditions, authority.SynchronizedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "Synchronized %+v", c)
	}).WithTimeout(timeout).Should(Succeed())
	capi := get(g, capiNS2.Name, name, &clusterv1.Machine{})
	g.Expect(annotations.HasPaused(capi)).To(BeTrue())

	// The migration controller's writes, through the shared guard: the
	// MAPI Machine goes to Cluster API, then the CAPI Machine runs.
	var old *mapiv1beta1.Machine
	migration := tracker.Client(env.Client)
	setMachineAuthority(t, migration, m, mapiv1beta1.MachineAuthorityMigrating, func(m *mapiv1beta1.Machine) { old = m.DeepCopy() })
	setMachineAuthority(t, migration, m, mapiv1beta1.MachineAuthorityClusterAPI, nil)
	unpause(t, capi)

	lagging.old = old
	res, err := r.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(annotations.HasPaused(get(g, capiNS2.Name, name, &clusterv1.Machine{}))).To(BeFalse(), "the CAPI Machine was paused again from the stale copy")
	g.Expect(res.RequeueAfter).To(Equal(freshness.Retry))
}

// setMachineAuthority writes status.authoritativeAPI of m with c, as the
// migration controller does (a locked status patch). before, if set, sees
// the copy the write replaces.
func setMachineAuthority(t *testing.T, c client.Client, m *mapiv1beta1.Machine, a mapiv1beta1.MachineAuthority, before func(*mapiv1beta1.Machine)) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(m), m); err != nil {
			return err
		}
		if before != nil {
			before(m)
		}
		base := m.DeepCopy()
		m.Status.AuthoritativeAPI = a
		return c.Status().Patch(context.Background(), m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	}).WithTimeout(timeout).Should(Succeed())
}
