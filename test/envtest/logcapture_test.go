package envtest

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// TestReconcileErrors: a "Reconciler error" is recorded under the namespace
// of its object, with the controller and name given to WithValues before or
// to Error itself; other entries are not, and every entry still reaches the
// wrapped sink.
func TestReconcileErrors(t *testing.T) {
	var logged []string
	inner := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	r := &ReconcileErrors{}
	log := logr.New(r.Sink(inner.GetSink()))

	ctrlLog := log.WithName("ctrl").WithValues("controller", "machine")
	a := ctrlLog.WithValues("namespace", "ns1", "name", "m1")
	b := ctrlLog.WithValues("namespace", "ns2")
	a.Error(errors.New("boom"), "Reconciler error")
	b.Error(errors.New("bang"), "Reconciler error", "name", "m2")
	a.Error(errors.New("other"), "something else failed")
	a.Info("Reconciler error")

	if got := r.In("ns1"); !slices.Equal(got, []string{"machine m1: boom"}) {
		t.Errorf("In(ns1) = %q", got)
	}
	if got := r.In("ns2"); !slices.Equal(got, []string{"machine m2: bang"}) {
		t.Errorf("In(ns2) = %q: the values of a sibling logger leaked", got)
	}
	if got := r.In("ns3"); len(got) != 0 {
		t.Errorf("In(ns3) = %q", got)
	}
	if len(logged) != 4 {
		t.Errorf("the wrapped sink got %d entries, want 4: %q", len(logged), logged)
	}
	// In returns a copy.
	if got := r.In("ns1"); len(got) > 0 {
		got[0] = "changed"
	}
	if got := r.In("ns1"); len(got) == 0 || got[0] != "machine m1: boom" {
		t.Errorf("In(ns1) changed through a returned slice: %q", got)
	}
}

// crErrors is installed as controller-runtime's logger before any test runs
// (TestMain): controller-runtime takes only the first SetLogger of a process,
// and fulfils its logger with a null sink by itself once 30 s have passed
// without one, so a SetLogger inside a test that runs late is lost.
var crErrors = &ReconcileErrors{}

func TestMain(m *testing.M) {
	ctrl.SetLogger(crErrors.Logger())
	os.Exit(m.Run())
}

// TestReconcileErrorsThroughControllerRuntime: installed as the suites
// install it, the recorder sees the errors logged through
// controller-runtime's delegating logger, as its controllers log them.
func TestReconcileErrorsThroughControllerRuntime(t *testing.T) {
	ctrl.Log.WithName("controller-runtime").WithValues("controller", "machine", "namespace", "crns", "name", "m1").
		Error(errors.New("boom"), "Reconciler error")
	if got := crErrors.In("crns"); !slices.Equal(got, []string{"machine m1: boom"}) {
		t.Errorf("In(crns) = %q", got)
	}
}

func TestIsStopError(t *testing.T) {
	for entry, want := range map[string]bool{
		"machine m1: context canceled":                                       true,
		"machine m1: failed to wait for Informer to sync: timed out":         true,
		"machine m1: Operation cannot be fulfilled on machines: conflict":    false,
		"machine m1: admission webhook denied the request: context deadline": false,
	} {
		if got := IsStopError(entry); got != want {
			t.Errorf("IsStopError(%q) = %v, want %v", entry, got, want)
		}
	}
}
