package manager

import (
	"context"
	"errors"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
)

func TestSharedIsMadeOnce(t *testing.T) {
	calls := 0
	s := NewShared(func(context.Context, ctrl.Manager) (int, error) { calls++; return 42, nil })
	for range 3 {
		if v, err := s.Get(context.Background(), nil); v != 42 || err != nil {
			t.Fatalf("got %v, %v", v, err)
		}
	}
	if calls != 1 {
		t.Errorf("made %d times, want once", calls)
	}

	boom := errors.New("boom")
	calls = 0
	failing := NewShared(func(context.Context, ctrl.Manager) (int, error) { calls++; return 0, boom })
	for range 2 {
		if _, err := failing.Get(context.Background(), nil); !errors.Is(err, boom) {
			t.Errorf("got %v, want %v on every call", err, boom)
		}
	}
	if calls != 1 {
		t.Errorf("made %d times, want once", calls)
	}
	// A Setup that needs it fails with the error, before any reconciler is
	// made.
	setup := SetupWith(failing, func(ctrl.Manager, ControllerOptions, int) Reconciler {
		t.Error("reconciler made despite the error")
		return nil
	})
	if err := setup(context.Background(), nil, ControllerOptions{}); !errors.Is(err, boom) {
		t.Errorf("Setup: got %v, want %v", err, boom)
	}
}
