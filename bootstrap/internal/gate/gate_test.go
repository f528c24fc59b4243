package gate

import "testing"

func TestWorkerMayJoin(t *testing.T) {
	for state, want := range map[string]bool{
		"": true, StateInsufficient: true, StatePendingForInput: true, StateAddingHosts: true,
		StateReady: false, StatePreparingForInstallation: false, StateInstalling: false,
		StateInstallingPendingUser: false, StateFinalizing: false, StateInstalled: false,
		StateError: false, StateCancelled: false, "something-new": false,
	} {
		got, msg := WorkerMayJoin(state)
		if got != want {
			t.Errorf("%q: %v, want %v", state, got, want)
		}
		if !got && msg == "" {
			t.Errorf("%q: gated without a message", state)
		}
	}
}
