package clusterinstall

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// Phase is where an installation is, as far as the control plane cares.
type Phase int

// The phases.
const (
	// NotStarted: no state yet, waiting for hosts, or ready to start.
	NotStarted Phase = iota
	// Installing: the day-1 installation runs.
	Installing
	// Installed: the control plane is up (finalizing) or the cluster is
	// installed and accepts day-2 hosts.
	Installed
	// Failed: the installation failed or was cancelled.
	Failed
)

func (p Phase) String() string {
	return [...]string{"NotStarted", "Installing", "Installed", "Failed"}[p]
}

// Status is an AgentClusterInstall's state read for the control plane.
type Status struct {
	Phase Phase
	// State is assisted-service's state.
	State string
	// Message says what the installation is doing or waits for, in
	// assisted-service's words.
	Message string
}

// Started tells whether the installation has started: the install-time
// settings are then the installer's.
func (s Status) Started() bool { return s.Phase != NotStarted }

// StateOf reads an AgentClusterInstall (nil: not created yet).
func StateOf(aci *hiveextv1beta1.AgentClusterInstall) Status {
	if aci == nil {
		return Status{Phase: NotStarted, Message: "the AgentClusterInstall does not exist yet"}
	}
	st := aci.Status
	state := st.DebugInfo.State
	s := Status{State: state}
	switch state {
	case "", hiveextv1beta1.StateInsufficient, hiveextv1beta1.StatePendingForInput, hiveextv1beta1.StateReady:
		s.Phase = NotStarted
		s.Message = conditionMessage(st.Conditions, hivev1.ClusterInstallRequirementsMet)
		if s.Message == "" {
			s.Message = "waiting for assisted-service to validate the cluster and its hosts"
		}
	case hiveextv1beta1.StatePreparingForInstallation, hiveextv1beta1.StateInstalling, hiveextv1beta1.StateInstallingPendingUser:
		s.Phase = Installing
		s.Message = conditionMessage(st.Conditions, hivev1.ClusterInstallCompleted)
		if s.Message == "" {
			s.Message = st.DebugInfo.StateInfo
		}
		s.Message = fmt.Sprintf("%s (%d%%)", s.Message, st.Progress.TotalPercentage)
		if state == hiveextv1beta1.StateInstallingPendingUser {
			s.Message += "; assisted-service waits for a user action on a host (see the AgentClusterInstall's events)"
		}
	case hiveextv1beta1.StateFinalizing, hiveextv1beta1.StateInstalled, hiveextv1beta1.StateAddingHosts:
		s.Phase = Installed
		s.Message = st.DebugInfo.StateInfo
	case hiveextv1beta1.StateError, hiveextv1beta1.StateCancelled:
		s.Phase = Failed
		s.Message = trueConditionMessage(st.Conditions, hivev1.ClusterInstallFailed)
		if s.Message == "" {
			s.Message = st.DebugInfo.StateInfo
		}
	default:
		// A state this provider does not know: treat it as running.
		s.Phase = Installing
		s.Message = fmt.Sprintf("installation state %q", state)
	}
	return s
}

// Completed tells whether the installation reached adding-hosts or
// installed: the cluster accepts day-2 hosts and its provision
// requirements may follow CAPI again.
func (s Status) Completed() bool {
	return s.State == hiveextv1beta1.StateAddingHosts || s.State == hiveextv1beta1.StateInstalled
}

func conditionMessage(conds []hivev1.ClusterInstallCondition, t hivev1.ClusterInstallConditionType) string {
	for _, c := range conds {
		if c.Type == t && c.Status != corev1.ConditionUnknown {
			return c.Message
		}
	}
	return ""
}

func trueConditionMessage(conds []hivev1.ClusterInstallCondition, t hivev1.ClusterInstallConditionType) string {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return c.Message
		}
	}
	return ""
}
