package envtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// startOnly is a manager whose Start blocks until its context ends.
type startOnly struct {
	ctrl.Manager
	started chan struct{}
}

func (m startOnly) Start(ctx context.Context) error {
	close(m.started)
	<-ctx.Done()
	return errors.New("stopped")
}

// TestRunManager: stop cancels the manager's context, waits for Start to
// return and gives its error, again on a second call.
func TestRunManager(t *testing.T) {
	m := startOnly{started: make(chan struct{})}
	stop := RunManager(context.Background(), m)
	<-m.started
	for i := range 2 {
		if err := stop(); err == nil || err.Error() != "stopped" {
			t.Errorf("stop #%d = %v, want Start's error", i+1, err)
		}
	}
}

// hangingRunnable ignores its context until released.
func hangingRunnable(release <-chan struct{}) manager.RunnableFunc {
	return func(context.Context) error { <-release; return nil }
}

// TestRunManagerShowsTheHang: a manager whose runnable outlives the grace
// period stops with an error that carries the stacks of the goroutines
// still running, the hanging one among them.
func TestRunManagerShowsTheHang(t *testing.T) {
	grace := 100 * time.Millisecond
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		GracefulShutdownTimeout: &grace,
	})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	if err := mgr.Add(hangingRunnable(release)); err != nil {
		t.Fatal(err)
	}
	stop := RunManager(context.Background(), mgr)
	time.Sleep(50 * time.Millisecond) // let the runnable start
	err = stop()
	if err == nil {
		t.Fatal("the manager stopped cleanly; want the grace-period error")
	}
	for _, want := range []string{"grace period", "goroutines still running", "hangingRunnable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%.2000s", want, err)
		}
	}
	if again := stop(); !errors.Is(again, err) {
		t.Errorf("a second stop returned %v, want the first error", again)
	}
}
