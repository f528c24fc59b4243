package controllers_test

import (
	"testing"
	"time"

	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// TestInstallationIsPaced checks the stand-in this suite runs: the
// assisted-service simulator takes a step of an installation at most every
// installStep (its MinStepInterval; docs/assisted-simulator.md, "Pace"), as
// assisted-service moves a cluster on its monitor's timer. The
// AgentClusterInstall's state, read every 20 ms from its registration to
// installed, changes no faster than that. Without the pace the simulator
// steps on its own writes and the whole installation takes milliseconds.
func TestInstallationIsPaced(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	tc.machineDeployment("md", 0)

	type change struct {
		state string
		at    time.Time
	}
	var changes []change
	last := ""
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		s := tc.aciState()
		if s != last {
			changes = append(changes, change{s, time.Now()})
			last = s
		}
		if s == hiveextv1beta1.StateInstalled || s == hiveextv1beta1.StateAddingHosts {
			break
		}
	}
	if last != hiveextv1beta1.StateInstalled && last != hiveextv1beta1.StateAddingHosts {
		t.Fatalf("not installed after %s: states %v", wait, changes)
	}
	// ready, preparing-for-installation, installing, finalizing, installed
	// at least: a run that missed most of them proves nothing.
	if len(changes) < 5 {
		t.Fatalf("saw %d states, want at least 5: %v", len(changes), changes)
	}
	// A change is seen up to a read late; half the interval is the margin.
	least := installStep / 2
	for i := 1; i < len(changes); i++ {
		if gap := changes[i].at.Sub(changes[i-1].at); gap < least {
			t.Errorf("%s -> %s after %s, want at least %s (MinStepInterval %s)",
				changes[i-1].state, changes[i].state, gap, least, installStep)
		}
	}
}
