// Package gate decides when a worker machine may join the cluster: while
// the day-1 installation has not started (it is installed with the control
// plane), or once the installation is complete and the cluster accepts
// day-2 hosts, but not while the day-1 installation runs. Control-plane
// machines are never gated: the installation waits for them.
//
// "Not started" is what assisted-service says, not a list of states alone:
// its state "ready" only means that the cluster's validations pass (enough
// control-plane hosts, every host known); the installation starts once the
// AgentClusterInstall's provision requirements are met by known, approved
// Agents. Until then RequirementsMet is False (InsufficientAgents,
// UnapprovedAgents, UnsyncedAgents), and a worker refused there would never
// register, so the installation would never start. docs/assisted-simulator.md
// lists the states and conditions and where assisted-service sets them.
package gate

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// Reasons of the AgentClusterInstall's Completed condition that this
// package reads, as assisted-service sets them.
const (
	reasonNotStarted = "InstallationNotStarted"
	reasonOnHold     = "InstallationOnHold"
	reasonNotAvail   = "NotAvailable"
)

// WorkerMayJoin tells whether a worker may boot (and its Agent be approved)
// while the cluster's installation is in status. If not, the message says
// what the worker waits for.
//
//   - insufficient, pending-for-input: the installation has not started;
//     the worker is one of the hosts it waits for.
//   - ready: the validations pass; while RequirementsMet is not True the
//     installation waits for more Agents or approvals, this worker's among
//     them. With RequirementsMet True every required Agent is in and the
//     installation starts with them: a further worker joins on day 2.
//   - adding-hosts: the cluster accepts day-2 hosts.
//   - preparing-for-installation, installing, installing-pending-user-action,
//     finalizing, installed: the day-1 installation runs or has just ended;
//     the worker waits for adding-hosts.
//   - error, cancelled: stopped; it waits for the user's fix.
//   - "" (assisted-service has not reported yet, or could not: its
//     conditions are then Unknown) and states this package does not know:
//     the Completed condition decides; only "not started" lets the worker
//     in, or, with no state, no information at all.
//
// A cluster whose day-1 installation takes no workers (the AgentClusterInstall's
// provisionRequirements.workerAgents is 0: single-node and compact
// clusters) admits workers on day 2 only: assisted-service counts every
// Agent bound to the cluster, and a worker there fails its validations
// ("Single-node clusters must have a single control plane node and no
// workers") or its provision requirements ("requires exactly 0 worker
// agents"), which would hold the installation for good.
func WorkerMayJoin(aci *hiveextv1beta1.AgentClusterInstall) (bool, string) {
	status := aci.Status
	state := status.DebugInfo.State
	if aci.Spec.ProvisionRequirements.WorkerAgents == 0 && state != hiveextv1beta1.StateAddingHosts {
		return false, fmt.Sprintf("the cluster's day-1 installation takes no workers (provisionRequirements.workerAgents is 0); "+
			"this worker joins as a day-2 host once the AgentClusterInstall reaches %q (state %q)", hiveextv1beta1.StateAddingHosts, state)
	}
	switch state {
	case hiveextv1beta1.StateInsufficient, hiveextv1beta1.StatePendingForInput, hiveextv1beta1.StateAddingHosts:
		return true, ""
	case hiveextv1beta1.StateReady:
		if c := find(status.Conditions, hivev1.ClusterInstallRequirementsMet); c != nil && c.Status == corev1.ConditionTrue {
			return false, fmt.Sprintf("the cluster's day-1 installation is about to start without this worker (state %q, "+
				"RequirementsMet: %s); it joins as a day-2 host once the AgentClusterInstall reaches %q",
				state, c.Message, hiveextv1beta1.StateAddingHosts)
		}
		return true, ""
	case hiveextv1beta1.StatePreparingForInstallation, hiveextv1beta1.StateInstalling, hiveextv1beta1.StateInstallingPendingUser, hiveextv1beta1.StateFinalizing, hiveextv1beta1.StateInstalled:
		return false, inProgress(state)
	case hiveextv1beta1.StateError, hiveextv1beta1.StateCancelled:
		return false, fmt.Sprintf("the cluster's installation is in state %q; fix the AgentClusterInstall, "+
			"and this worker joins once the cluster reaches %q", state, hiveextv1beta1.StateAddingHosts)
	}
	c := find(status.Conditions, hivev1.ClusterInstallCompleted)
	switch {
	case c == nil && state == "":
		return true, ""
	case c == nil:
		return false, inProgress(state)
	case c.Status != corev1.ConditionTrue && (c.Reason == reasonNotStarted || c.Reason == reasonOnHold ||
		(c.Status == corev1.ConditionUnknown && c.Reason == reasonNotAvail)):
		return true, ""
	}
	return false, inProgress(fmt.Sprintf("%s; Completed: %s %s", state, c.Status, c.Reason))
}

func inProgress(state string) string {
	return fmt.Sprintf("the cluster's day-1 installation is in progress (state %q); this worker joins as a "+
		"day-2 host once the AgentClusterInstall reaches %q", state, hiveextv1beta1.StateAddingHosts)
}

func find(conds []hivev1.ClusterInstallCondition, t hivev1.ClusterInstallConditionType) *hivev1.ClusterInstallCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
