package clusterinstall

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

func TestPhaseString(t *testing.T) {
	for p, want := range map[Phase]string{NotStarted: "NotStarted", Installing: "Installing", Installed: "Installed", Failed: "Failed"} {
		if got := p.String(); got != want {
			t.Errorf("Phase(%d).String() = %q, want %q", int(p), got, want)
		}
	}
}

func cond(t hivev1.ClusterInstallConditionType, s corev1.ConditionStatus, msg string) hivev1.ClusterInstallCondition {
	return hivev1.ClusterInstallCondition{Type: t, Status: s, Reason: "R", Message: msg}
}

func aciIn(state, stateInfo string, percent int64, conds ...hivev1.ClusterInstallCondition) *hiveextv1beta1.AgentClusterInstall {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	aci.Status.DebugInfo.State = state
	aci.Status.DebugInfo.StateInfo = stateInfo
	aci.Status.Progress.TotalPercentage = percent
	aci.Status.Conditions = conds
	return aci
}

const (
	notMet    = "The cluster is not ready to begin the installation: 2 hosts missing"
	met       = "The cluster requirements are met"
	inProg    = "The installation is in progress: Installation in progress"
	failedMsg = "The installation failed: cluster has hosts in error"
	waiting   = "waiting for assisted-service to validate the cluster and its hosts"
	userSuf   = "; assisted-service waits for a user action on a host (see the AgentClusterInstall's events)"
)

// TestStateOf follows docs/controlplane.md's table of
// status.debugInfo.state → Available: NotStarted is InstallationNotStarted
// (RequirementsMet's message), Installing is ControlPlaneInstalling (with
// the percentage), Installed is Available, Failed is InstallationFailed
// (Failed's message).
func TestStateOf(t *testing.T) {
	for _, tc := range []struct {
		desc               string
		aci                *hiveextv1beta1.AgentClusterInstall
		want               Status
		started, completed bool
	}{
		{
			desc: "no AgentClusterInstall",
			want: Status{Phase: NotStarted, Message: "the AgentClusterInstall does not exist yet"},
		},
		// Not started.
		{
			desc: "no state yet, no conditions", aci: aciIn("", "", 0),
			want: Status{Phase: NotStarted, Message: waiting},
		},
		{
			desc: "no state yet, RequirementsMet False", aci: aciIn("", "", 0, cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionFalse, notMet)),
			want: Status{Phase: NotStarted, Message: notMet},
		},
		{
			desc: "insufficient", aci: aciIn(hiveextv1beta1.StateInsufficient, "Cluster is not ready for install", 0,
				cond(hivev1.ClusterInstallCompleted, corev1.ConditionFalse, "not completed"),
				cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionFalse, notMet)),
			want: Status{Phase: NotStarted, State: hiveextv1beta1.StateInsufficient, Message: notMet},
		},
		{
			desc: "insufficient, RequirementsMet Unknown: the fallback", aci: aciIn(hiveextv1beta1.StateInsufficient, "info", 0,
				cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionUnknown, "unknown yet")),
			want: Status{Phase: NotStarted, State: hiveextv1beta1.StateInsufficient, Message: waiting},
		},
		{
			desc: "pending-for-input", aci: aciIn(hiveextv1beta1.StatePendingForInput, "", 0, cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionFalse, notMet)),
			want: Status{Phase: NotStarted, State: hiveextv1beta1.StatePendingForInput, Message: notMet},
		},
		{
			desc: "ready, RequirementsMet True", aci: aciIn(hiveextv1beta1.StateReady, "", 0, cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionTrue, met)),
			want: Status{Phase: NotStarted, State: hiveextv1beta1.StateReady, Message: met},
		},
		{
			desc: "ready, RequirementsMet True with an empty message: the fallback", aci: aciIn(hiveextv1beta1.StateReady, "", 0, cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionTrue, "")),
			want: Status{Phase: NotStarted, State: hiveextv1beta1.StateReady, Message: waiting},
		},
		// Installing.
		{
			desc: "preparing-for-installation", aci: aciIn(hiveextv1beta1.StatePreparingForInstallation, "Preparing cluster for installation", 10,
				cond(hivev1.ClusterInstallCompleted, corev1.ConditionFalse, inProg)),
			want:    Status{Phase: Installing, State: hiveextv1beta1.StatePreparingForInstallation, Message: inProg + " (10%)"},
			started: true,
		},
		{
			desc: "installing, Completed Unknown: stateInfo", aci: aciIn(hiveextv1beta1.StateInstalling, "Installation in progress", 42,
				cond(hivev1.ClusterInstallCompleted, corev1.ConditionUnknown, "ignored"),
				cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionTrue, met)),
			want:    Status{Phase: Installing, State: hiveextv1beta1.StateInstalling, Message: "Installation in progress (42%)"},
			started: true,
		},
		{
			desc: "installing-pending-user-action", aci: aciIn(hiveextv1beta1.StateInstallingPendingUser, "Host needs a reboot", 57,
				cond(hivev1.ClusterInstallCompleted, corev1.ConditionFalse, inProg)),
			want:    Status{Phase: Installing, State: hiveextv1beta1.StateInstallingPendingUser, Message: inProg + " (57%)" + userSuf},
			started: true,
		},
		{
			desc: "installing-pending-user-action without messages", aci: aciIn(hiveextv1beta1.StateInstallingPendingUser, "Host needs a reboot", 57),
			want:    Status{Phase: Installing, State: hiveextv1beta1.StateInstallingPendingUser, Message: "Host needs a reboot (57%)" + userSuf},
			started: true,
		},
		{
			// CURRENT BEHAVIOUR (pinned, open question): docs/controlplane.md says
			// a state this provider does not know is ControlPlaneInstalling
			// "with the progress percentage"; the message has none.
			desc: "a state this provider does not know", aci: aciIn("some-new-state", "info", 33),
			want:    Status{Phase: Installing, State: "some-new-state", Message: `installation state "some-new-state"`},
			started: true,
		},
		{
			desc: "states are case-sensitive", aci: aciIn("Installed", "info", 100),
			want:    Status{Phase: Installing, State: "Installed", Message: `installation state "Installed"`},
			started: true,
		},
		// Installed.
		{
			desc: "finalizing: up, not completed", aci: aciIn(hiveextv1beta1.StateFinalizing, "Finalizing cluster installation", 90,
				cond(hivev1.ClusterInstallCompleted, corev1.ConditionFalse, inProg)),
			want:    Status{Phase: Installed, State: hiveextv1beta1.StateFinalizing, Message: "Finalizing cluster installation"},
			started: true,
		},
		{
			desc: "installed", aci: aciIn(hiveextv1beta1.StateInstalled, "Cluster is installed", 100,
				cond(hivev1.ClusterInstallCompleted, corev1.ConditionTrue, "The installation has completed: Cluster is installed")),
			want:    Status{Phase: Installed, State: hiveextv1beta1.StateInstalled, Message: "Cluster is installed"},
			started: true, completed: true,
		},
		{
			desc: "adding-hosts", aci: aciIn(hiveextv1beta1.StateAddingHosts, "cluster is adding hosts to existing OCP cluster", 100),
			want:    Status{Phase: Installed, State: hiveextv1beta1.StateAddingHosts, Message: "cluster is adding hosts to existing OCP cluster"},
			started: true, completed: true,
		},
		// Failed.
		{
			desc: "error, Failed True", aci: aciIn(hiveextv1beta1.StateError, "cluster has hosts in error", 50,
				cond(hivev1.ClusterInstallCompleted, corev1.ConditionFalse, "not completed"),
				cond(hivev1.ClusterInstallFailed, corev1.ConditionTrue, failedMsg)),
			want:    Status{Phase: Failed, State: hiveextv1beta1.StateError, Message: failedMsg},
			started: true,
		},
		{
			desc: "error, Failed False: stateInfo", aci: aciIn(hiveextv1beta1.StateError, "cluster has hosts in error", 50,
				cond(hivev1.ClusterInstallFailed, corev1.ConditionFalse, "The installation has not failed")),
			want:    Status{Phase: Failed, State: hiveextv1beta1.StateError, Message: "cluster has hosts in error"},
			started: true,
		},
		{
			desc: "cancelled, no conditions", aci: aciIn(hiveextv1beta1.StateCancelled, "Canceled cluster installation", 30),
			want:    Status{Phase: Failed, State: hiveextv1beta1.StateCancelled, Message: "Canceled cluster installation"},
			started: true,
		},
		{
			desc: "cancelled, Failed True", aci: aciIn(hiveextv1beta1.StateCancelled, "Canceled", 30, cond(hivev1.ClusterInstallFailed, corev1.ConditionTrue, "cancelled by user")),
			want:    Status{Phase: Failed, State: hiveextv1beta1.StateCancelled, Message: "cancelled by user"},
			started: true,
		},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got := StateOf(tc.aci)
			if got != tc.want {
				t.Errorf("StateOf =\n%+v\nwant\n%+v", got, tc.want)
			}
			if got.Started() != tc.started {
				t.Errorf("Started() = %v, want %v", got.Started(), tc.started)
			}
			if got.Completed() != tc.completed {
				t.Errorf("Completed() = %v, want %v", got.Completed(), tc.completed)
			}
		})
	}
}

// TestStateOfFirstCondition: of several conditions of one type, the first
// that is not Unknown (for Failed: the first True) gives the message.
func TestStateOfFirstCondition(t *testing.T) {
	got := StateOf(aciIn(hiveextv1beta1.StateInsufficient, "", 0,
		cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionUnknown, "a"),
		cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionFalse, "b"),
		cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionTrue, "c")))
	if got.Message != "b" {
		t.Errorf("RequirementsMet message %q, want b", got.Message)
	}
	got = StateOf(aciIn(hiveextv1beta1.StateError, "", 0,
		cond(hivev1.ClusterInstallFailed, corev1.ConditionFalse, "a"),
		cond(hivev1.ClusterInstallFailed, corev1.ConditionUnknown, "b"),
		cond(hivev1.ClusterInstallFailed, corev1.ConditionTrue, "c")))
	if got.Message != "c" {
		t.Errorf("Failed message %q, want c", got.Message)
	}
}

// TestProvisionRequirementsFollowCAPI: docs/controlplane.md says the
// AgentClusterInstall follows the spec until the installation starts, then
// only provisionRequirements, and only while no installation runs. The
// controller calls ApplyAgentClusterInstall with started = Started() and
// installing = Started() && !Completed(); this is that, state by state.
func TestProvisionRequirementsFollowCAPI(t *testing.T) {
	const (
		everything = "everything"
		provision  = "provisionRequirements only"
		nothing    = "nothing"
	)
	for _, tc := range []struct {
		state string
		want  string
	}{
		{"", everything},
		{hiveextv1beta1.StateInsufficient, everything},
		{hiveextv1beta1.StatePendingForInput, everything},
		{hiveextv1beta1.StateReady, everything},
		{hiveextv1beta1.StatePreparingForInstallation, nothing},
		{hiveextv1beta1.StateInstalling, nothing},
		{hiveextv1beta1.StateInstallingPendingUser, nothing},
		{"some-new-state", nothing},
		{hiveextv1beta1.StateFinalizing, nothing},
		{hiveextv1beta1.StateInstalled, provision},
		{hiveextv1beta1.StateAddingHosts, provision},
		// CURRENT BEHAVIOUR (pinned, open question): the doc's "only while
		// no installation runs" would let them follow in error and
		// cancelled, where nothing runs; Completed() is only installed and
		// adding-hosts, so they stay.
		{hiveextv1beta1.StateError, nothing},
		{hiveextv1beta1.StateCancelled, nothing},
	} {
		t.Run(tc.state, func(t *testing.T) {
			st := StateOf(aciIn(tc.state, "", 0))
			desired := desiredACI()
			spec := hiveextv1beta1.AgentClusterInstallSpec{}
			changed := ApplyAgentClusterInstall(&spec, desired, st.Started(), st.Started() && !st.Completed())
			var got string
			switch {
			case len(changed) == len(allACIFields):
				got = everything
			case len(changed) == 1 && changed[0] == "provisionRequirements":
				got = provision
			case len(changed) == 0:
				got = nothing
			default:
				got = strings.Join(changed, ",")
			}
			if got != tc.want {
				t.Errorf("state %q: %s follows CAPI, want %s", tc.state, got, tc.want)
			}
		})
	}
}

// FuzzStateOf: the state and messages come from assisted-service. Any
// value reads without panic, deterministically, into a valid phase that
// keeps the state; only adding-hosts and installed complete.
func FuzzStateOf(f *testing.F) {
	for _, s := range []string{"", hiveextv1beta1.StateInsufficient, hiveextv1beta1.StatePendingForInput, hiveextv1beta1.StateReady, hiveextv1beta1.StatePreparingForInstallation, hiveextv1beta1.StateInstalling,
		hiveextv1beta1.StateInstallingPendingUser, hiveextv1beta1.StateFinalizing, hiveextv1beta1.StateInstalled, hiveextv1beta1.StateAddingHosts, hiveextv1beta1.StateError, hiveextv1beta1.StateCancelled, "unknown", "INSTALLED", "%d%%"} {
		f.Add(s, "info %s", "cond message", int64(42), uint8(0))
	}
	f.Add("installing", "", "", int64(-1), uint8(7))
	f.Fuzz(func(t *testing.T, state, stateInfo, msg string, percent int64, statuses uint8) {
		var conds []hivev1.ClusterInstallCondition
		all := []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}
		for i, typ := range []hivev1.ClusterInstallConditionType{hivev1.ClusterInstallRequirementsMet, hivev1.ClusterInstallCompleted, hivev1.ClusterInstallFailed} {
			conds = append(conds, cond(typ, all[int(statuses>>(2*i))%3], msg))
		}
		aci := aciIn(state, stateInfo, percent, conds...)
		got := StateOf(aci)
		if again := StateOf(aci); again != got {
			t.Fatalf("not deterministic: %+v then %+v", got, again)
		}
		if got.Phase < NotStarted || got.Phase > Failed {
			t.Fatalf("phase %d out of range", got.Phase)
		}
		_ = got.Phase.String()
		if got.State != state {
			t.Fatalf("State %q, want %q", got.State, state)
		}
		if got.Started() != (got.Phase != NotStarted) {
			t.Fatalf("Started() %v in phase %v", got.Started(), got.Phase)
		}
		if got.Completed() != (state == hiveextv1beta1.StateInstalled || state == hiveextv1beta1.StateAddingHosts) {
			t.Fatalf("Completed() %v in state %q", got.Completed(), state)
		}
		if got.Completed() && got.Phase != Installed {
			t.Fatalf("completed in phase %v", got.Phase)
		}
		if got.Phase == NotStarted && got.Message == "" {
			t.Fatalf("no message in state %q", state)
		}
	})
}
