package envtest

import (
	"context"
	"errors"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
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
