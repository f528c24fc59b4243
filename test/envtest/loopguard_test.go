package envtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestObjectOf(t *testing.T) {
	for _, c := range []struct {
		method, path, body string
		want               string // "" for not counted
	}{
		{"PATCH", "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns1/machines/m1", "", "machines.cluster.x-k8s.io ns1/m1"},
		{"PUT", "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns1/machines/m1/status", "", "machines.cluster.x-k8s.io ns1/m1"},
		// The same plural in another group is another object.
		{"PATCH", "/apis/machine.openshift.io/v1beta1/namespaces/ns1/machines/m1", "", "machines.machine.openshift.io ns1/m1"},
		{"DELETE", "/api/v1/namespaces/ns1/secrets/s", "", "secrets ns1/s"},
		{"POST", "/api/v1/namespaces/ns1/secrets", `{"metadata":{"name":"kubeconfig"}}`, "secrets ns1/kubeconfig"},
		{"POST", "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns1/machines", `{"metadata":{"generateName":"cp-"}}`, "machines.cluster.x-k8s.io ns1/cp-*"},
		{"POST", "/api/v1/namespaces/ns1/configmaps", `not json`, "configmaps ns1/(create)"},
		{"DELETE", "/api/v1/namespaces/ns1/configmaps", "", "configmaps ns1/(collection)"},
		{"PATCH", "/apis/hive.openshift.io/v1/clusterimagesets/img-4.19", "", "clusterimagesets.hive.openshift.io img-4.19"},
		{"PUT", "/api/v1/namespaces/ns1/finalize", "", "namespaces ns1"},
		{"DELETE", "/api/v1/namespaces/ns1", "", "namespaces ns1"},
		// Events are the recorder's business, not a managed object.
		{"POST", "/api/v1/namespaces/ns1/events", `{"metadata":{"name":"e"}}`, ""},
		{"PATCH", "/apis/events.k8s.io/v1/namespaces/ns1/events/e", "", ""},
		{"POST", "/healthz", "", ""},
	} {
		got, ok := ObjectOf(c.method, c.path, []byte(c.body))
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("ObjectOf(%s %s) = %q, want %q", c.method, c.path, got, c.want)
		}
	}
}

// fakeClock advances by step on every reading.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time { c.t = c.t.Add(c.step); return c.t }

func okTransport() http.RoundTripper {
	return roundTripperFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}"))}, nil
	})
}

func send(t *testing.T, rt http.RoundTripper, method, path, body string) {
	t.Helper()
	req, err := http.NewRequest(method, "https://127.0.0.1:6443"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
}

// recorder collects what Check reports.
type recorder struct{ errors []string }

func (r *recorder) Helper()           {}
func (r *recorder) Error(args ...any) { r.errors = append(r.errors, fmt.Sprint(args...)) }

// A loop: one status write every 10 ms, each undoing the last. The guard
// names the object, its count and the requests, and fails the run.
func TestLoopGuardTripsOnALoop(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0), step: 10 * time.Millisecond}
	g := &LoopGuard{now: clock.now}
	rt := g.Wrap(okTransport())
	const path = "/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/ns1/openstackclusters/c1/status"
	for i := range 300 {
		send(t, rt, http.MethodPatch, path, fmt.Sprintf(`{"status":{"ready":%t}}`, i%2 == 0))
	}
	// Another object in the same run that converged is not named.
	send(t, rt, http.MethodPatch, "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns1/machines/m1", `{}`)

	vs := g.Violations()
	if len(vs) != 1 {
		t.Fatalf("violations %+v, want one", vs)
	}
	v := vs[0]
	if v.Object != "openstackclusters.infrastructure.cluster.x-k8s.io ns1/c1" || v.Total != 300 || v.Peak < DefaultLoopMax+1 {
		t.Errorf("violation %s peak %d total %d", v.Object, v.Peak, v.Total)
	}
	rec := &recorder{}
	g.Check(rec)
	if len(rec.errors) != 1 {
		t.Fatalf("Check reported %d errors, want 1: %v", len(rec.errors), rec.errors)
	}
	msg := rec.errors[0]
	for _, want := range []string{"reconcile loop", "ns1/c1", fmt.Sprintf("limit %d", DefaultLoopMax), "300 writes", `PATCH ` + path + ` {"status":{"ready":true}}`, `{"status":{"ready":false}}`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if code := g.Finish(0); code != 1 {
		t.Errorf("Finish(0) = %d, want 1 after a loop", code)
	}
}

// A normal convergence: an object written a few times in quick
// succession, another polled every few seconds for a long time, many
// objects created by one controller, reads and events. Nothing trips.
func TestLoopGuardAcceptsConvergence(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0), step: 50 * time.Millisecond}
	g := &LoopGuard{now: clock.now}
	rt := g.Wrap(okTransport())
	const srv = "/apis/infrastructure.cluster.x-k8s.io/v1alpha1/namespaces/ns1/openstackservers/s1"
	// Finalizer, then status steps: resolved, ports, volumes, instance.
	send(t, rt, http.MethodPatch, srv, `{"metadata":{"finalizers":["x"]}}`)
	for range 10 {
		send(t, rt, http.MethodPatch, srv+"/status", `{}`)
	}
	// A poll of a server Nova is building, one status write every 3 s
	// for 3 minutes: many writes, but never many at once.
	slow := &fakeClock{t: time.Unix(0, 0), step: 3 * time.Second}
	g.now = slow.now
	for range 60 {
		send(t, rt, http.MethodPatch, srv+"/status", `{}`)
	}
	g.now = clock.now
	// Twenty distinct Machines created back to back.
	for i := range 20 {
		send(t, rt, http.MethodPost, "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns1/machines", `{"metadata":{"name":"m`+strconv.Itoa(i)+`"}}`)
	}
	// Reads and events do not count.
	for range 200 {
		send(t, rt, http.MethodGet, srv, "")
		send(t, rt, http.MethodPost, "/api/v1/namespaces/ns1/events", `{"metadata":{"name":"e"}}`)
	}
	if vs := g.Violations(); len(vs) != 0 {
		t.Fatalf("violations on a normal convergence: %+v", vs)
	}
	if code := g.Finish(0); code != 0 {
		t.Errorf("Finish(0) = %d, want 0", code)
	}
	if code := g.Finish(3); code != 3 {
		t.Errorf("Finish(3) = %d, want the run's own code", code)
	}
	s := g.Summary()
	if !strings.Contains(s, "controllers wrote 21 objects 91 times") {
		t.Errorf("summary %q", s)
	}
}

// Writes refused with a conflict change nothing and bring no event: they
// are counted apart, not against the limit, and shown in the summary and
// in a violation's requests; accepted writes to the same object still trip.
func TestLoopGuardCountsConflictsApart(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0), step: 10 * time.Millisecond}
	g := &LoopGuard{now: clock.now}
	const path = "/apis/machine.openshift.io/v1beta1/namespaces/ns1/machinesets/ms1/status"
	conflict := g.Wrap(roundTripperFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusConflict, Body: io.NopCloser(strings.NewReader("{}"))}, nil
	}))
	for range 100 {
		send(t, conflict, http.MethodPatch, path, `{"status":{}}`)
	}
	if vs := g.Violations(); len(vs) != 0 {
		t.Fatalf("conflicts alone tripped the guard: %+v", vs)
	}
	if s := g.Summary(); !strings.Contains(s, "controllers wrote 1 objects 0 times (100 more refused with a conflict)") {
		t.Errorf("summary %q", s)
	}
	ok := g.Wrap(okTransport())
	for range DefaultLoopMax + 1 {
		send(t, ok, http.MethodPatch, path, `{"status":{}}`)
	}
	vs := g.Violations()
	if len(vs) != 1 || vs[0].Total != DefaultLoopMax+1 || vs[0].Conflicts != 100 {
		t.Fatalf("violations %+v, want one of %d writes and 100 conflicts", vs, DefaultLoopMax+1)
	}
	msg := g.describe(vs[0])
	if !strings.Contains(msg, "100 more refused with a conflict") || !strings.Contains(msg, path+` {"status":{}} -> 409 Conflict`) {
		t.Errorf("message:\n%s", msg)
	}
}

// The summary divides each controller's reconciles by the objects of its
// kind that were written.
func TestLoopGuardSummaryReconcilesPerObject(t *testing.T) {
	counts := map[string]float64{"openstackserver": 7, "machinesetsync": 9, "idle": 4}
	g := &LoopGuard{
		reconcile: func() map[string]float64 { return counts },
		baseline:  map[string]float64{"openstackserver": 1, "idle": 4},
	}
	rt := g.Wrap(okTransport())
	send(t, rt, http.MethodPatch, "/apis/infrastructure.cluster.x-k8s.io/v1alpha1/namespaces/n/openstackservers/a", `{}`)
	send(t, rt, http.MethodPatch, "/apis/infrastructure.cluster.x-k8s.io/v1alpha1/namespaces/n/openstackservers/b/status", `{}`)
	send(t, rt, http.MethodPatch, "/apis/infrastructure.cluster.x-k8s.io/v1alpha1/namespaces/n/openstackservers/b", `{}`)
	s := g.Summary()
	for _, want := range []string{
		"controllers wrote 2 objects 3 times, at most 2 times within 5s",
		"reconciles: machinesetsync 9, openstackserver 6 (3.0/object, 2 objects)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q: %s", want, s)
		}
	}
	if strings.Contains(s, "idle") {
		t.Errorf("a controller with no reconciles since the baseline is listed: %s", s)
	}
}

// loopReconciler writes a ConfigMap on every reconcile when loop is set
// (the write's own event brings the next reconcile); otherwise it writes
// once and is done.
type loopReconciler struct {
	client.Client
	loop bool
}

func (r *loopReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, req.NamespacedName, cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	n, _ := strconv.Atoi(cm.Data["seen"])
	if !r.loop && n > 0 {
		return reconcile.Result{}, nil
	}
	base := cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["seen"] = strconv.Itoa(n + 1)
	return reconcile.Result{}, r.Patch(ctx, cm, client.MergeFrom(base))
}

// TestLoopGuardWithAController runs two controllers through
// ControllerConfig against the real API server: one converges in one write
// per object, the other writes each object on every reconcile. Only the
// second's object is named.
func TestLoopGuardWithAController(t *testing.T) {
	RequireAPIServer(t)
	env, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	ns, err := env.NewNamespace(ctx, "loop")
	if err != nil {
		t.Fatal(err)
	}

	mgr, err := ctrl.NewManager(env.ControllerConfig(), env.ManagerOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		loop bool
	}{{"converging", false}, {"looping", true}} {
		r := &loopReconciler{Client: mgr.GetClient(), loop: c.loop}
		name := c.name
		err := ctrl.NewControllerManagedBy(mgr).Named(c.name).
			For(&corev1.ConfigMap{}).
			WithEventFilter(predicate.NewPredicateFuncs(func(o client.Object) bool { return strings.HasPrefix(o.GetName(), name) })).
			Complete(r)
		if err != nil {
			t.Fatal(err)
		}
	}
	stop := RunManager(ctx, mgr)
	t.Cleanup(func() { _ = stop() })

	for _, name := range []string{"converging-a", "converging-b", "looping-a"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	// Wait for the loop to pass the limit (it does in well under a second;
	// the deadline only bounds a failure).
	deadline := time.Now().Add(60 * time.Second)
	for len(env.Guard.Violations()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	vs := env.Guard.Violations()
	if len(vs) != 1 || vs[0].Object != "configmaps "+ns.Name+"/looping-a" {
		t.Fatalf("violations %+v, want configmaps %s/looping-a alone", vs, ns.Name)
	}
	// The converging objects were each written once.
	for _, name := range []string{"converging-a", "converging-b"} {
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, cm); err != nil || cm.Data["seen"] != "1" {
			t.Errorf("%s: seen=%q, %v", name, cm.Data["seen"], err)
		}
	}
	s := env.Guard.Summary()
	t.Log(s)
	if !strings.Contains(s, "reconciles: ") || !strings.Contains(s, "looping ") || !strings.Contains(s, "converging ") {
		t.Errorf("summary lacks the two controllers' reconciles: %s", s)
	}
}
