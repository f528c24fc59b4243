package gate

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

func status(state string, conds ...hivev1.ClusterInstallCondition) hiveextv1beta1.AgentClusterInstallStatus {
	st := hiveextv1beta1.AgentClusterInstallStatus{Conditions: conds}
	st.DebugInfo.State = state
	return st
}

func cond(t hivev1.ClusterInstallConditionType, s corev1.ConditionStatus, reason string) hivev1.ClusterInstallCondition {
	return hivev1.ClusterInstallCondition{Type: t, Status: s, Reason: reason, Message: reason + " message"}
}

var (
	reqMet     = hivev1.ClusterInstallRequirementsMet
	completed  = hivev1.ClusterInstallCompleted
	notStarted = cond(completed, corev1.ConditionFalse, "InstallationNotStarted")
)

// TestWorkerMayJoin is the gate's table. The rows marked "defect 3" are
// the deadlock of issue 15: assisted-service's "ready" with the
// installation still waiting for Agents or approvals must let workers in,
// or their Agents never register and the installation never starts.
func TestWorkerMayJoin(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   hiveextv1beta1.AgentClusterInstallStatus
		want bool
	}{
		{"no status yet", status(""), true},
		{"assisted-service cannot report (conditions Unknown)", status("", cond(completed, corev1.ConditionUnknown, "NotAvailable")), true},
		{"insufficient", status(hiveextv1beta1.StateInsufficient, cond(reqMet, corev1.ConditionFalse, "ClusterNotReady"), notStarted), true},
		{"pending-for-input", status(hiveextv1beta1.StatePendingForInput, cond(reqMet, corev1.ConditionFalse, "ClusterNotReady"), notStarted), true},
		{"defect 3: ready, waiting for workers", status(hiveextv1beta1.StateReady, cond(reqMet, corev1.ConditionFalse, "InsufficientAgents"), notStarted), true},
		{"defect 3: ready, waiting for approvals", status(hiveextv1beta1.StateReady, cond(reqMet, corev1.ConditionFalse, "UnapprovedAgents"), notStarted), true},
		{"ready, an Agent with a spec error", status(hiveextv1beta1.StateReady, cond(reqMet, corev1.ConditionFalse, "UnsyncedAgents"), notStarted), true},
		{"defect 3: ready, conditions not written yet", status(hiveextv1beta1.StateReady), true},
		{"ready, every required Agent in: starting without this worker",
			status(hiveextv1beta1.StateReady, cond(reqMet, corev1.ConditionTrue, "ClusterIsReady"), notStarted), false},
		{"ready, all in, on hold", status(hiveextv1beta1.StateReady, cond(reqMet, corev1.ConditionTrue, "ClusterIsReady"),
			cond(completed, corev1.ConditionFalse, "InstallationOnHold")), false},
		{"preparing-for-installation", status(hiveextv1beta1.StatePreparingForInstallation), false},
		{"installing", status(hiveextv1beta1.StateInstalling, cond(completed, corev1.ConditionFalse, "InstallationInProgress")), false},
		{"installing-pending-user-action", status(hiveextv1beta1.StateInstallingPendingUser), false},
		{"finalizing", status(hiveextv1beta1.StateFinalizing), false},
		{"installed, not yet open for day 2", status(hiveextv1beta1.StateInstalled, cond(completed, corev1.ConditionTrue, "InstallationCompleted")), false},
		{"adding-hosts", status(hiveextv1beta1.StateAddingHosts, cond(completed, corev1.ConditionTrue, "InstallationCompleted")), true},
		{"error", status(hiveextv1beta1.StateError, cond(completed, corev1.ConditionFalse, "InstallationFailed")), false},
		{"cancelled", status(hiveextv1beta1.StateCancelled), false},
		{"unknown state, not started", status("something-new", notStarted), true},
		{"unknown state, in progress", status("something-new", cond(completed, corev1.ConditionFalse, "InstallationInProgress")), false},
		{"unknown state, completed", status("something-new", cond(completed, corev1.ConditionTrue, "InstallationCompleted")), false},
		{"unknown state, no conditions", status("something-new"), false},
		{"no state, but in progress", status("", cond(completed, corev1.ConditionFalse, "InstallationInProgress")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := WorkerMayJoin(withWorkers(2, tc.st))
			if got != tc.want {
				t.Errorf("state %q %v: may join %v, want %v (%s)", tc.st.DebugInfo.State, tc.st.Conditions, got, tc.want, msg)
			}
			if !got && msg == "" {
				t.Error("gated without a message")
			}
			if got && msg != "" {
				t.Errorf("not gated, yet a message: %s", msg)
			}
		})
	}
}

// TestNoDay1Workers: a cluster whose day-1 installation takes no workers
// (single-node, compact) admits workers on day 2 only, whatever the state:
// assisted-service would count such a worker and never start.
func TestNoDay1Workers(t *testing.T) {
	for _, st := range []hiveextv1beta1.AgentClusterInstallStatus{
		status(""), status(hiveextv1beta1.StateInsufficient, notStarted),
		status(hiveextv1beta1.StateReady, cond(reqMet, corev1.ConditionFalse, "InsufficientAgents"), notStarted),
		status(hiveextv1beta1.StateInstalling), status(hiveextv1beta1.StateInstalled, cond(completed, corev1.ConditionTrue, "InstallationCompleted")),
		status("something-new", notStarted),
	} {
		if ok, msg := WorkerMayJoin(withWorkers(0, st)); ok || !strings.Contains(msg, "workerAgents is 0") {
			t.Errorf("state %q: may join %v (%s), want refused naming workerAgents", st.DebugInfo.State, ok, msg)
		}
	}
	day2 := status(hiveextv1beta1.StateAddingHosts, cond(completed, corev1.ConditionTrue, "InstallationCompleted"))
	if ok, msg := WorkerMayJoin(withWorkers(0, day2)); !ok {
		t.Errorf("adding-hosts: refused: %s", msg)
	}
}

func withWorkers(n int, st hiveextv1beta1.AgentClusterInstallStatus) *hiveextv1beta1.AgentClusterInstall {
	aci := &hiveextv1beta1.AgentClusterInstall{Status: st}
	aci.Spec.ProvisionRequirements.ControlPlaneAgents = 3
	aci.Spec.ProvisionRequirements.WorkerAgents = n
	return aci
}

// FuzzWorkerMayJoin: any state and condition never panics, and a refusal
// always says why.
func FuzzWorkerMayJoin(f *testing.F) {
	f.Add(hiveextv1beta1.StateReady, "RequirementsMet", "True", "ClusterIsReady", 2)
	f.Add("", "Completed", "Unknown", "NotAvailable", 0)
	f.Fuzz(func(t *testing.T, state, typ, st, reason string, workers int) {
		ok, msg := WorkerMayJoin(withWorkers(workers, status(state, hivev1.ClusterInstallCondition{Type: hivev1.ClusterInstallConditionType(typ),
			Status: corev1.ConditionStatus(st), Reason: reason})))
		if !ok && msg == "" {
			t.Errorf("%q %q %q %q: gated without a message", state, typ, st, reason)
		}
	})
}
