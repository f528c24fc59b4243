package skeleton

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
)

func TestRunPhases(t *testing.T) {
	g := NewWithT(t)
	var ran []string
	phase := func(name string, res ctrl.Result, err error) Phase[*[]string] {
		return func(_ context.Context, s *[]string) (ctrl.Result, error) {
			*s = append(*s, name)
			return res, err
		}
	}
	ctx := context.Background()

	res, err := RunPhases(ctx, &ran, phase("a", ctrl.Result{RequeueAfter: time.Minute}, nil), phase("b", ctrl.Result{RequeueAfter: time.Second}, nil))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ran).To(Equal([]string{"a", "b"}), "all phases run, in order")
	g.Expect(res.RequeueAfter).To(Equal(time.Second), "the soonest requeue")

	ran = nil
	res, err = RunPhases(ctx, &ran, phase("a", ctrl.Result{}, nil), phase("b", ctrl.Result{RequeueAfter: time.Minute}, ErrStop), phase("c", ctrl.Result{}, nil))
	g.Expect(err).NotTo(HaveOccurred(), "ErrStop is no error")
	g.Expect(ran).To(Equal([]string{"a", "b"}), "ErrStop ends the flow")
	g.Expect(res.RequeueAfter).To(Equal(time.Minute), "with the stopping phase's requeue")

	ran = nil
	boom := errors.New("boom")
	res, err = RunPhases(ctx, &ran, phase("a", ctrl.Result{RequeueAfter: time.Second}, nil), phase("b", ctrl.Result{RequeueAfter: time.Minute}, boom), phase("c", ctrl.Result{}, nil))
	g.Expect(err).To(MatchError(boom))
	g.Expect(ran).To(Equal([]string{"a", "b"}), "an error ends the flow")
	g.Expect(res).To(Equal(ctrl.Result{}), "no requeue with an error: controller-runtime backs off")

	// Stop: ErrStop without an error, the error with one; the requeue kept.
	res, err = Stop(ctrl.Result{RequeueAfter: time.Second}, nil)
	g.Expect(err).To(MatchError(ErrStop))
	g.Expect(res.RequeueAfter).To(Equal(time.Second))
	res, err = Stop(ctrl.Result{RequeueAfter: time.Second}, boom)
	g.Expect(err).To(MatchError(boom))
	g.Expect(res.RequeueAfter).To(Equal(time.Second))
}

// world is a fake API server with a Cluster and a config, and a count of
// the writes made to it.
type world struct {
	client  client.Client
	tracker *freshness.Tracker
	writes  int
	key     types.NamespacedName
}

const (
	condA     = "A"
	condB     = "B"
	finalizer = "test.example.com/finalizer"
)

func newWorld(t *testing.T, objs ...client.Object) *world {
	t.Helper()
	s := runtime.NewScheme()
	if err := clusterv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := bootstrapv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	w := &world{tracker: freshness.New(), key: types.NamespacedName{Namespace: "ns", Name: "c"}}
	count := func() { w.writes++ }
	w.client = fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&bootstrapv1.OpenshiftAssistedConfig{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				count()
				return c.Patch(ctx, obj, p, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				count()
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		}).Build()
	return w
}

func config(paused bool) *bootstrapv1.OpenshiftAssistedConfig {
	c := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Generation: 1,
		Labels: map[string]string{clusterv1.ClusterNameLabel: "cl"}}}
	if paused {
		c.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	}
	return c
}

// flows records which flow ran and sets condition A the way a flow would.
type flows struct{ normal, deleted, gone int }

func (w *world) spec(f *flows) Spec[*bootstrapv1.OpenshiftAssistedConfig, *bootstrapv1.OpenshiftAssistedConfig] {
	return Spec[*bootstrapv1.OpenshiftAssistedConfig, *bootstrapv1.OpenshiftAssistedConfig]{
		Client: w.client, Freshness: w.tracker, Kind: "OpenshiftAssistedConfig", Finalizer: finalizer,
		Owned:   []string{clusterv1.ReadyCondition, condA, condB, clusterv1.PausedCondition},
		Summary: []string{condA},
		Scope: func(ctx context.Context, c *bootstrapv1.OpenshiftAssistedConfig) (*bootstrapv1.OpenshiftAssistedConfig, *clusterv1.Cluster, error) {
			cl := &clusterv1.Cluster{}
			err := w.client.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: "cl"}, cl)
			return c, cl, err
		},
		Normal: func(_ context.Context, c *bootstrapv1.OpenshiftAssistedConfig) (ctrl.Result, error) {
			f.normal++
			conditions.MarkTrue(c, condA, "")
			return ctrl.Result{}, nil
		},
		Delete: func(_ context.Context, c *bootstrapv1.OpenshiftAssistedConfig) (ctrl.Result, error) {
			f.deleted++
			conditions.MarkFalse(c, condA, "Deleting", "")
			c.Finalizers = nil
			return ctrl.Result{}, nil
		},
		Gone: func(context.Context, types.NamespacedName) error { f.gone++; return nil },
	}
}

func (w *world) get(g Gomega) *bootstrapv1.OpenshiftAssistedConfig {
	c := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(w.client.Get(context.Background(), w.key, c)).To(Succeed())
	return c
}

// TestFirstAndSteadyState: the first pass writes the finalizer on its own,
// then every owned condition and observedGeneration; Ready summarises A. The
// versions those writes replaced are stale to the guard. A second pass writes
// nothing.
func TestFirstAndSteadyState(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t, config(false), &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cl"}})
	read := w.get(g)
	f := &flows{}

	_, err := Reconcile(ctx, ctrl.Request{NamespacedName: w.key}, w.spec(f))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(f.normal).To(Equal(1))
	c := w.get(g)
	g.Expect(c.Finalizers).To(ConsistOf(finalizer))
	for _, ct := range []string{clusterv1.ReadyCondition, condA, condB, clusterv1.PausedCondition} {
		g.Expect(capiconditions.Get(c, ct)).NotTo(BeNil(), "owned condition %s is set on the first write", ct)
	}
	g.Expect(capiconditions.Get(c, condB).Reason).To(Equal(conditions.PendingReason))
	g.Expect(capiconditions.IsTrue(c, clusterv1.ReadyCondition)).To(BeTrue(), "Ready summarises A")
	g.Expect(capiconditions.IsFalse(c, clusterv1.PausedCondition)).To(BeTrue())
	g.Expect(c.Status.ObservedGeneration).To(Equal(int64(1)))
	g.Expect(w.writes).To(BeNumerically(">=", 2), "the finalizer, then the status")
	g.Expect(w.tracker.Stale(read)).To(BeTrue(), "the version the writes replaced is stale")

	w.writes = 0
	_, err = Reconcile(ctx, ctrl.Request{NamespacedName: w.key}, w.spec(f))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w.writes).To(BeZero(), "a steady-state pass writes nothing")
	g.Expect(f.normal).To(Equal(2))
}

// TestPaused: a paused object gets Paused=True, no finalizer and no flow.
func TestPaused(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, config(true), &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cl"}})
	f := &flows{}
	_, err := Reconcile(context.Background(), ctrl.Request{NamespacedName: w.key}, w.spec(f))
	g.Expect(err).NotTo(HaveOccurred())
	c := w.get(g)
	g.Expect(f.normal).To(BeZero())
	g.Expect(c.Finalizers).To(BeEmpty())
	g.Expect(capiconditions.IsTrue(c, clusterv1.PausedCondition)).To(BeTrue())
}

// TestDeletionAndGone: an object being deleted runs the deletion flow, whose
// removed finalizer lets it go (the final patch's NotFound is no error); a
// missing object runs Gone.
func TestDeletionAndGone(t *testing.T) {
	g := NewWithT(t)
	c := config(false)
	c.Finalizers = []string{finalizer}
	c.DeletionTimestamp = ptr.To(metav1.Now())
	w := newWorld(t, c, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cl"}})
	f := &flows{}
	_, err := Reconcile(context.Background(), ctrl.Request{NamespacedName: w.key}, w.spec(f))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(f.deleted).To(Equal(1))
	g.Expect(w.client.Get(context.Background(), w.key, &bootstrapv1.OpenshiftAssistedConfig{})).NotTo(Succeed(), "gone with its finalizer")

	_, err = Reconcile(context.Background(), ctrl.Request{NamespacedName: w.key}, w.spec(f))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(f.gone).To(Equal(1))
}

// TestReadyMessage: a True Ready has no message even when the steps it
// summarises carry one (CAPI mirrors it into the Machine's and Cluster's
// conditions, whose healthy state CAPI's e2e specs expect without a message);
// a False Ready names the step that is not True, with its message.
func TestReadyMessage(t *testing.T) {
	g := NewWithT(t)
	st := Status{Summary: []string{condA, condB, clusterv1.DeletingCondition}, Negative: []string{clusterv1.DeletingCondition}}
	c := config(false)
	conditions.MarkTrue(c, condA, "info about A")
	conditions.MarkTrue(c, condB, "info about B")
	conditions.MarkFalse(c, clusterv1.DeletingCondition, clusterv1.NotDeletingReason, "")
	setReady(c, st)
	ready := capiconditions.Get(c, clusterv1.ReadyCondition)
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(ready.Message).To(BeEmpty())
	g.Expect(capiconditions.Get(c, condA).Message).To(Equal("info about A"), "the step keeps its message")

	conditions.MarkFalse(c, condB, "Waiting", "B waits for something")
	setReady(c, st)
	ready = capiconditions.Get(c, clusterv1.ReadyCondition)
	g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(ready.Message).To(Equal("* B: B waits for something"))
}
