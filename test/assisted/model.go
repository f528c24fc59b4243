package assisted

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// This file is the simulator's model of assisted-service: pure functions
// from what assisted-service looks at (the cluster's hosts, the
// AgentClusterInstall's spec, the test's knobs) to the next cluster and
// host states and to the conditions it writes. docs/assisted-simulator.md
// tabulates every transition and condition, each with the upstream place it
// mirrors, and conformance_test.go checks this file against those tables in
// both directions.

// Host states (Agent status.debugInfo.state), as assisted-service names them.
const (
	HostDiscovering              = "discovering"
	HostKnown                    = "known"
	HostPreparingForInstallation = "preparing-for-installation"
	HostPreparingSuccessful      = "preparing-successful"
	HostInstalling               = "installing"
	HostInstallingInProgress     = "installing-in-progress"
	HostInstalled                = "installed"
	HostAddedToExistingCluster   = "added-to-existing-cluster"
	HostError                    = "error"
)

// Install stages (Agent status.progress.currentStage).
const (
	stageStarting  aiv1beta1.HostStage = "Starting installation"
	stageWriting   aiv1beta1.HostStage = "Writing image to disk"
	stageRebooting aiv1beta1.HostStage = "Rebooting"
	stageDone      aiv1beta1.HostStage = "Done"
)

// Rules of the cluster's state machine: the "rule" column of the doc's
// cluster table.
const (
	ruleRegistered        = "registered"
	ruleImported          = "imported"
	ruleValidationsFail   = "validations-fail"
	ruleValidationsPass   = "validations-pass"
	ruleHeld              = "held"
	ruleRequirementsUnmet = "requirements-unmet"
	ruleOnHold            = "on-hold"
	ruleRequirementsMet   = "requirements-met"
	ruleHostsPreparing    = "hosts-preparing"
	ruleHostsPrepared     = "hosts-prepared"
	ruleHostsInstalling   = "hosts-installing"
	ruleEnoughInstalled   = "enough-hosts-installed"
	ruleFinalizing        = "finalizing"
	ruleHostsDone         = "hosts-done"
	ruleMetadataPending   = "metadata-pending"
	ruleDay2              = "day2"
	ruleAddingHosts       = "day2-hosts"
	ruleFailure           = "failure-injected"
	ruleFailedStays       = "failure-kept"
	ruleReset             = "reset"
	ruleUnknownStateKept  = "unknown-state"
)

// host is what assisted-service knows of one host bound to the cluster.
type host struct {
	name     string
	state    string
	stage    aiv1beta1.HostStage
	role     aiv1beta1.HostRole // spec.role: master, worker or auto-assign
	approved bool
	// unsynced: the Agent's SpecSynced is False (its spec was refused).
	unsynced bool
}

// facts are what one step of the cluster looks at.
type facts struct {
	hosts []host
	want  hiveextv1beta1.ProvisionRequirements
	// holdInstallation is spec.holdInstallation.
	holdInstallation bool
	// cdInstalled is the ClusterDeployment's spec.installed.
	cdInstalled bool
	// failure is an injected failure (Fail, FailAt); held: HoldAt's state
	// is the current one.
	failure string
	held    bool
	// prepared: a preparation for installation has succeeded for this
	// cluster before (upstream keeps LastInstallationPreparation across a
	// reset); read back from the LastInstallationPreparationFailed
	// condition, see preparedBefore.
	prepared bool
}

// tally is what the validations and the provision requirements count.
type tally struct {
	// masters and workers by effective role, over every host of the
	// cluster whatever its state (upstream counts the hosts' suggested
	// roles in its database).
	masters, workers int
	// known and approvedKnown: hosts in state known, and those approved.
	known, approvedKnown int
	unsynced             int
	// allReady: every host is known or preparing (AllHostsAreReadyToInstall).
	allReady bool
}

// effectiveRoles resolves auto-assign: such hosts, by name, fill the
// control-plane count first, the rest are workers (SufficientMastersCount's
// candidate loop; the simulated hosts are valid candidates).
func effectiveRoles(hosts []host, controlPlane int) map[string]aiv1beta1.HostRole {
	out := map[string]aiv1beta1.HostRole{}
	masters := 0
	var auto []string
	for _, h := range hosts {
		switch h.role {
		case aiv1beta1.HostRoleMaster:
			masters++
			out[h.name] = h.role
		case aiv1beta1.HostRoleWorker:
			out[h.name] = h.role
		default:
			auto = append(auto, h.name)
		}
	}
	slices.Sort(auto)
	for _, n := range auto {
		if masters < controlPlane {
			masters++
			out[n] = aiv1beta1.HostRoleMaster
		} else {
			out[n] = aiv1beta1.HostRoleWorker
		}
	}
	return out
}

func count(f facts) tally {
	roles := effectiveRoles(f.hosts, f.want.ControlPlaneAgents)
	t := tally{allReady: true}
	for _, h := range f.hosts {
		switch roles[h.name] {
		case aiv1beta1.HostRoleMaster:
			t.masters++
		case aiv1beta1.HostRoleWorker:
			t.workers++
		}
		if h.state == HostKnown {
			t.known++
			if h.approved {
				t.approvedKnown++
			}
		}
		if h.unsynced {
			t.unsynced++
		}
		if h.state != HostKnown && h.state != HostPreparingForInstallation && h.state != HostPreparingSuccessful {
			t.allReady = false
		}
	}
	return t
}

// validationFailures are the cluster validations that fail (the ones the
// simulated hosts can fail), in upstream's order: every host ready to
// install, and exactly the required control-plane hosts (none other for a
// single node; two need an arbiter or fencing, neither of which is
// simulated).
func validationFailures(f facts) []string {
	t := count(f)
	var out []string
	if !t.allReady {
		out = append(out, "The cluster has hosts that are not ready to install.")
	}
	cp := f.want.ControlPlaneAgents
	suffix := ""
	if cp == 2 {
		suffix = " and at least 1 arbiter node or the control plane nodes must have fencing credentials"
	}
	switch {
	case cp == 1 && (t.masters != 1 || t.workers != 0):
		out = append(out, "Single-node clusters must have a single control plane node and no workers.")
	case cp < 1 || t.masters != cp || suffix != "":
		out = append(out, fmt.Sprintf("The cluster must have exactly %d dedicated control plane nodes%s. Add or remove hosts, "+
			"or change their roles configurations to meet the requirement.", cp, suffix))
	}
	return out
}

// requirements is RequirementsMet in state ready: the provision
// requirements against the known, approved, synced hosts. ok means the
// installation starts.
func requirements(f facts) (ok bool, reason, message string) {
	t := count(f)
	w := f.want
	expected := w.ControlPlaneAgents + w.WorkerAgents + w.ArbiterAgents
	switch {
	case t.masters != w.ControlPlaneAgents || t.workers != w.WorkerAgents || w.ArbiterAgents != 0:
		return false, "InsufficientAgents", fmt.Sprintf("The cluster currently requires exactly %d master agents, %d arbiter agents "+
			"and %d worker agents, but currently registered %d master agents, %d arbiter agents and %d worker agents",
			w.ControlPlaneAgents, w.ArbiterAgents, w.WorkerAgents, t.masters, 0, t.workers)
	case t.unsynced != 0:
		return false, "UnsyncedAgents", fmt.Sprintf("The cluster currently has %d agents with spec error", t.unsynced)
	case t.approvedKnown < expected:
		return false, "UnapprovedAgents", fmt.Sprintf("The installation is pending on the approval of %d agents", expected-t.approvedKnown)
	}
	// isReadyForInstallation also wants known == approvedKnown == expected:
	// in state ready every host is known, so the counts above imply it.
	return true, "ClusterIsReady", "The cluster is ready to begin the installation"
}

func preInstall(state string) bool {
	return state == hiveextv1beta1.StateInsufficient || state == hiveextv1beta1.StateReady || state == hiveextv1beta1.StatePendingForInput
}

// acceptsRegistration: the cluster states in which a new host may register
// (AcceptRegistration). In any other state the discovery agent's
// registration is refused and retried, so a host the simulator registered
// meanwhile stays discovering and is no host of the cluster yet.
func acceptsRegistration(state string) bool {
	return preInstall(state) || state == hiveextv1beta1.StateAddingHosts
}

// registered are the cluster's hosts as upstream's database has them once
// the cluster stopped accepting registrations: without the refused ones.
func registered(f facts) []host {
	var out []host
	for _, h := range f.hosts {
		if h.state != "" && h.state != HostDiscovering {
			out = append(out, h)
		}
	}
	return out
}

func all(hosts []host, ok func(host) bool) bool {
	for _, h := range hosts {
		if !ok(h) {
			return false
		}
	}
	return len(hosts) > 0
}

// enoughInstalled is IsFinalizing (HasEnoughMastersAndWorkers over
// installed hosts): every control-plane host installed (and, for a single
// node, no worker), and two installed workers when there are two or more.
func enoughInstalled(f facts) bool {
	hosts := registered(f)
	roles := effectiveRoles(hosts, f.want.ControlPlaneAgents)
	var masters, workers, mastersDone, workersDone int
	for _, h := range hosts {
		done := h.state == HostInstalled
		switch roles[h.name] {
		case aiv1beta1.HostRoleMaster:
			masters++
			if done {
				mastersDone++
			}
		default:
			workers++
			if done {
				workersDone++
			}
		}
	}
	if f.want.ControlPlaneAgents == 1 {
		return mastersDone == 1 && workersDone == 0
	}
	return masters >= 3 && mastersDone == masters && (workers < 2 || workersDone >= 2)
}

// nextState is one step of the cluster: the next state and the rule that
// chose it.
func nextState(state string, f facts) (string, string) {
	switch {
	case state == hiveextv1beta1.StateError && f.failure != "":
		return hiveextv1beta1.StateError, ruleFailedStays
	case (state == hiveextv1beta1.StateInstalling || state == hiveextv1beta1.StateFinalizing) && f.failure != "":
		// Upstream reaches error only from a running installation; an
		// injected failure waits for one.
		return hiveextv1beta1.StateError, ruleFailure
	case state == "" && f.cdInstalled:
		return hiveextv1beta1.StateAddingHosts, ruleImported
	case state == "":
		return hiveextv1beta1.StateInsufficient, ruleRegistered
	case preInstall(state):
		if len(validationFailures(f)) > 0 {
			return hiveextv1beta1.StateInsufficient, ruleValidationsFail
		}
		if state != hiveextv1beta1.StateReady {
			return hiveextv1beta1.StateReady, ruleValidationsPass
		}
		if f.held {
			return hiveextv1beta1.StateReady, ruleHeld
		}
		if ok, _, _ := requirements(f); !ok {
			return hiveextv1beta1.StateReady, ruleRequirementsUnmet
		}
		if f.holdInstallation {
			return hiveextv1beta1.StateReady, ruleOnHold
		}
		return hiveextv1beta1.StatePreparingForInstallation, ruleRequirementsMet
	}
	switch state {
	case hiveextv1beta1.StatePreparingForInstallation, hiveextv1beta1.StateInstalling, hiveextv1beta1.StateFinalizing, hiveextv1beta1.StateInstalled, hiveextv1beta1.StateAddingHosts, hiveextv1beta1.StateError:
		if f.held {
			return state, ruleHeld
		}
	default:
		return state, ruleUnknownStateKept
	}
	switch state {
	case hiveextv1beta1.StatePreparingForInstallation:
		if all(registered(f), func(h host) bool { return h.state == HostPreparingSuccessful }) {
			return hiveextv1beta1.StateInstalling, ruleHostsPrepared
		}
		return state, ruleHostsPreparing
	case hiveextv1beta1.StateInstalling:
		if enoughInstalled(f) {
			return hiveextv1beta1.StateFinalizing, ruleEnoughInstalled
		}
		return state, ruleHostsInstalling
	case hiveextv1beta1.StateFinalizing:
		if all(registered(f), func(h host) bool { return h.state == HostInstalled || h.state == HostError }) {
			return hiveextv1beta1.StateInstalled, ruleHostsDone
		}
		return state, ruleFinalizing
	case hiveextv1beta1.StateInstalled:
		if f.cdInstalled {
			return hiveextv1beta1.StateAddingHosts, ruleDay2
		}
		return state, ruleMetadataPending
	case hiveextv1beta1.StateAddingHosts:
		return state, ruleAddingHosts
	}
	// error, released.
	return hiveextv1beta1.StateInsufficient, ruleReset
}

// nextHost is one step of a host while the cluster moves to clusterState:
// its next state and stage. A host no case matches keeps both.
func nextHost(clusterState string, h host) (string, aiv1beta1.HostStage) {
	switch {
	case h.state == "" || h.state == HostDiscovering:
		if acceptsRegistration(clusterState) {
			// The agent sent its inventory; the simulated host passes its
			// validations.
			return HostKnown, ""
		}
		return HostDiscovering, ""
	case h.state == HostPreparingForInstallation && clusterState != hiveextv1beta1.StatePreparingForInstallation,
		h.state == HostPreparingSuccessful && clusterState != hiveextv1beta1.StatePreparingForInstallation &&
			clusterState != hiveextv1beta1.StateInstalling:
		// The cluster is not preparing (any more): its move to preparing
		// was lost, or it was reset. The host is known again, and counts
		// towards the requirements (docs/assisted-simulator.md, Host
		// transitions); without this a ready cluster would wait for ever
		// on hosts that are still preparing.
		return HostKnown, ""
	case clusterState == hiveextv1beta1.StateError:
		switch h.state {
		case HostInstalling, HostInstallingInProgress, HostInstalled:
			return HostError, h.stage
		}
	case preInstall(clusterState):
		if h.state == HostError {
			// A reset: the host boots the discovery image again.
			return HostDiscovering, ""
		}
	case clusterState == hiveextv1beta1.StatePreparingForInstallation:
		// Approval is not looked at: it gates the start of the
		// installation (and day-2 hosts), not the hosts it takes.
		switch h.state {
		case HostKnown:
			return HostPreparingForInstallation, ""
		case HostPreparingForInstallation:
			return HostPreparingSuccessful, ""
		}
	case clusterState == hiveextv1beta1.StateInstalling || clusterState == hiveextv1beta1.StateFinalizing:
		switch {
		case h.state == HostPreparingSuccessful && clusterState == hiveextv1beta1.StateInstalling:
			return HostInstalling, stageStarting
		case h.state == HostInstalling:
			return HostInstallingInProgress, stageWriting
		case h.state == HostInstallingInProgress && h.stage == stageWriting:
			return HostInstallingInProgress, stageRebooting
		case h.state == HostInstallingInProgress && h.stage == stageRebooting:
			return HostInstalled, stageDone
		}
	case clusterState == hiveextv1beta1.StateAddingHosts:
		switch {
		case h.state == HostKnown && h.approved:
			return HostInstalling, stageStarting
		case h.state == HostInstalling:
			return HostInstallingInProgress, stageRebooting
		case h.state == HostInstallingInProgress:
			return HostAddedToExistingCluster, stageDone
		}
	}
	return h.state, h.stage
}

// hostStateInfo is the host's status.debugInfo.stateInfo.
func hostStateInfo(state string, stage aiv1beta1.HostStage) string {
	switch state {
	case HostDiscovering:
		return "Waiting for host to send hardware details"
	case HostKnown:
		return "Host is ready to be installed"
	case HostPreparingForInstallation:
		return "Host is preparing for installation"
	case HostPreparingSuccessful:
		return "Host finished successfully to prepare for installation"
	case HostInstalling:
		return "Installation is in progress"
	case HostInstallingInProgress, HostInstalled, HostAddedToExistingCluster:
		return string(stage)
	case HostError:
		return "Host is part of a cluster that failed to install"
	}
	return ""
}

func hostPercentage(state string, stage aiv1beta1.HostStage) int64 {
	switch {
	case state == HostInstalled || state == HostAddedToExistingCluster:
		return 100
	case stage == stageRebooting:
		return 70
	case stage == stageWriting:
		return 30
	}
	return 0
}

func agentCond(t string, s corev1.ConditionStatus, reason, msg string) aiv1beta1.Condition {
	return aiv1beta1.Condition{Type: aiv1beta1.ConditionType(t), Status: s, Reason: reason, Message: msg}
}

// agentConditions are the six conditions of an Agent in host state, with
// assisted-service's reasons and messages.
func agentConditions(state string, approved bool, stateInfo string) []aiv1beta1.Condition {
	var req, validated, installed aiv1beta1.Condition
	switch state {
	case HostKnown:
		if approved {
			req = agentCond("RequirementsMet", corev1.ConditionTrue, "AgentIsReady", "The agent is ready to begin the installation")
		} else {
			req = agentCond("RequirementsMet", corev1.ConditionFalse, "AgentIsNotApproved", "The agent is not approved")
		}
	case HostDiscovering:
		req = agentCond("RequirementsMet", corev1.ConditionFalse, "AgentNotReady", "The agent is not ready to begin the installation")
	case HostPreparingForInstallation, HostPreparingSuccessful, HostInstalling, HostInstallingInProgress:
		req = agentCond("RequirementsMet", corev1.ConditionTrue, "AgentAlreadyInstalling", "Installation already started and is in progress")
	default: // installed, added-to-existing-cluster, error
		req = agentCond("RequirementsMet", corev1.ConditionTrue, "AgentInstallationStopped", "The agent installation stopped")
	}
	if state == HostDiscovering {
		validated = agentCond("Validated", corev1.ConditionUnknown, "ValidationsUnknown", "The agent's validations have not yet been calculated")
	} else {
		validated = agentCond("Validated", corev1.ConditionTrue, "ValidationsPassing", "The agent's validations are passing")
	}
	switch state {
	case HostDiscovering, HostKnown:
		installed = agentCond("Installed", corev1.ConditionFalse, "InstallationNotStarted", "The installation has not yet started")
	case HostPreparingForInstallation, HostPreparingSuccessful, HostInstalling, HostInstallingInProgress:
		installed = agentCond("Installed", corev1.ConditionFalse, "InstallationInProgress", "The installation is in progress: "+stateInfo)
	case HostInstalled, HostAddedToExistingCluster:
		installed = agentCond("Installed", corev1.ConditionTrue, "InstallationCompleted", "The installation has completed: "+stateInfo)
	default:
		installed = agentCond("Installed", corev1.ConditionFalse, "InstallationFailed", "The installation has failed: "+stateInfo)
	}
	return []aiv1beta1.Condition{
		agentCond("SpecSynced", corev1.ConditionTrue, "SyncOK", "The Spec has been successfully applied"),
		agentCond("Connected", corev1.ConditionTrue, "AgentIsConnected", "The agent's connection to the installation service is unimpaired"),
		req, validated, installed,
		agentCond("Bound", corev1.ConditionTrue, "Bound", "The agent is bound to a cluster deployment"),
	}
}

// clusterStateInfo is the AgentClusterInstall's status.debugInfo.stateInfo.
func clusterStateInfo(state string, f facts) string {
	switch state {
	case hiveextv1beta1.StateInsufficient:
		return "Cluster is not ready for install"
	case hiveextv1beta1.StatePendingForInput:
		return "User input required"
	case hiveextv1beta1.StateReady:
		return "Cluster ready to be installed"
	case hiveextv1beta1.StatePreparingForInstallation:
		return "Preparing cluster for installation"
	case hiveextv1beta1.StateInstalling:
		return "Installation in progress"
	case hiveextv1beta1.StateFinalizing:
		return "Finalizing cluster installation"
	case hiveextv1beta1.StateInstalled:
		return "Cluster is installed"
	case hiveextv1beta1.StateAddingHosts:
		if f.prepared {
			// Installed here: turning the cluster into a day-2 one
			// changes its state, not its state info.
			return "Cluster is installed"
		}
		return "cluster is adding hosts to existing OCP cluster"
	case hiveextv1beta1.StateError:
		return f.failure
	}
	return ""
}

func clusterProgress(state string) int64 {
	return map[string]int64{hiveextv1beta1.StatePreparingForInstallation: 5, hiveextv1beta1.StateInstalling: 30, hiveextv1beta1.StateFinalizing: 90,
		hiveextv1beta1.StateInstalled: 100, hiveextv1beta1.StateAddingHosts: 100}[state]
}

func installCond(t string, s corev1.ConditionStatus, reason, msg string) hivev1.ClusterInstallCondition {
	return hivev1.ClusterInstallCondition{Type: hivev1.ClusterInstallConditionType(t), Status: s, Reason: reason, Message: msg}
}

// The LastInstallationPreparationFailed condition and its reasons (the
// reasons are sentences upstream).
const (
	condLastPreparationFailed = "LastInstallationPreparationFailed"
	reasonPreparationOK       = "There is no failing prior preparation attempt"
	reasonPreparationPending  = "Cluster preparation has never been performed for this cluster"
)

// preparedBefore reads facts.prepared back from the conditions the
// simulator wrote: the preparation is history the state alone does not
// tell.
func preparedBefore(conds []hivev1.ClusterInstallCondition) bool {
	for _, c := range conds {
		if c.Type == condLastPreparationFailed {
			return c.Reason == reasonPreparationOK
		}
	}
	return false
}

// installConditions are the AgentClusterInstall's seven conditions in
// state, with assisted-service's reasons and messages.
func installConditions(state string, f facts) []hivev1.ClusterInstallCondition {
	info := clusterStateInfo(state, f)
	var req, validated, completed, failed, stopped, lastPrep hivev1.ClusterInstallCondition
	switch state {
	case hiveextv1beta1.StateReady:
		ok, reason, msg := requirements(f)
		status := corev1.ConditionFalse
		if ok {
			status = corev1.ConditionTrue
		}
		req = installCond("RequirementsMet", status, reason, msg)
	case hiveextv1beta1.StateInsufficient, hiveextv1beta1.StatePendingForInput:
		req = installCond("RequirementsMet", corev1.ConditionFalse, "ClusterNotReady", "The cluster is not ready to begin the installation")
	case hiveextv1beta1.StatePreparingForInstallation, hiveextv1beta1.StateInstalling, hiveextv1beta1.StateFinalizing, hiveextv1beta1.StateAddingHosts:
		req = installCond("RequirementsMet", corev1.ConditionTrue, "ClusterAlreadyInstalling", "The cluster requirements are met")
	default: // installed, error
		req = installCond("RequirementsMet", corev1.ConditionTrue, "ClusterInstallationStopped", "The cluster installation stopped")
	}
	switch state {
	case hiveextv1beta1.StateInsufficient:
		validated = installCond("Validated", corev1.ConditionFalse, "ValidationsFailing",
			"The cluster's validations are failing: "+strings.Join(validationFailures(f), ","))
	case hiveextv1beta1.StatePendingForInput:
		validated = installCond("Validated", corev1.ConditionFalse, "ValidationsUserPending",
			"The cluster's validations are pending for user: "+strings.Join(validationFailures(f), ","))
	default:
		validated = installCond("Validated", corev1.ConditionTrue, "ValidationsPassing", "The cluster's validations are passing")
	}
	switch state {
	case hiveextv1beta1.StateInstalled, hiveextv1beta1.StateAddingHosts:
		completed = installCond("Completed", corev1.ConditionTrue, "InstallationCompleted", "The installation has completed: "+info)
	case hiveextv1beta1.StateError:
		completed = installCond("Completed", corev1.ConditionFalse, "InstallationFailed", "The installation has failed: "+info)
	case hiveextv1beta1.StateReady:
		completed = installCond("Completed", corev1.ConditionFalse, "InstallationNotStarted", "The installation has not yet started")
		if f.holdInstallation {
			completed = installCond("Completed", corev1.ConditionFalse, "InstallationOnHold",
				"The installation is on hold. To unhold set holdInstallation to false")
		}
	case hiveextv1beta1.StateInsufficient, hiveextv1beta1.StatePendingForInput:
		completed = installCond("Completed", corev1.ConditionFalse, "InstallationNotStarted", "The installation has not yet started")
	default:
		completed = installCond("Completed", corev1.ConditionFalse, "InstallationInProgress", "The installation is in progress: "+info)
	}
	if state == hiveextv1beta1.StateError {
		failed = installCond("Failed", corev1.ConditionTrue, "InstallationFailed", "The installation failed: "+info)
		stopped = installCond("Stopped", corev1.ConditionTrue, "InstallationFailed", "The installation has stopped due to error")
	} else {
		failed = installCond("Failed", corev1.ConditionFalse, "InstallationNotFailed", "The installation has not failed")
		stopped = installCond("Stopped", corev1.ConditionFalse, "InstallationNotStopped", "The installation is waiting to start or in progress")
		if state == hiveextv1beta1.StateInstalled || state == hiveextv1beta1.StateAddingHosts {
			stopped = installCond("Stopped", corev1.ConditionTrue, "InstallationCompleted", "The installation has stopped because it completed successfully")
		}
	}
	// A preparation succeeds before installing; a reset keeps the record.
	switch {
	case f.prepared || state == hiveextv1beta1.StateInstalling || state == hiveextv1beta1.StateFinalizing || state == hiveextv1beta1.StateInstalled || state == hiveextv1beta1.StateError:
		lastPrep = installCond(condLastPreparationFailed, corev1.ConditionFalse, reasonPreparationOK, "")
	default:
		lastPrep = installCond(condLastPreparationFailed, corev1.ConditionFalse, reasonPreparationPending, "")
	}
	// Upstream's SpecSynced message is its reason (clusterSpecSynced).
	return []hivev1.ClusterInstallCondition{
		installCond("SpecSynced", corev1.ConditionTrue, "SyncOK", "SyncOK"),
		req, validated, completed, failed, stopped, lastPrep,
	}
}
