// Package gate decides when a worker machine may join the cluster: before
// the day-1 installation starts (it is installed with the control plane), or
// once the installation is complete and the cluster accepts day-2 hosts, but
// not while the day-1 installation runs. Control-plane machines are never
// gated: the installation waits for them.
package gate

import "fmt"

// AgentClusterInstall states (status.debugInfo.state), as assisted-service
// names them.
const (
	StateInsufficient             = "insufficient"
	StatePendingForInput          = "pending-for-input"
	StateReady                    = "ready"
	StatePreparingForInstallation = "preparing-for-installation"
	StateInstalling               = "installing"
	StateInstallingPendingUser    = "installing-pending-user-action"
	StateFinalizing               = "finalizing"
	StateInstalled                = "installed"
	StateAddingHosts              = "adding-hosts"
	StateError                    = "error"
	StateCancelled                = "cancelled"
)

// WorkerMayJoin tells whether a worker may boot (and its Agent be approved)
// while the cluster's AgentClusterInstall is in state. The states are the
// reference's: before the installation starts ("", insufficient,
// pending-for-input) and once it accepts day-2 hosts (adding-hosts). If not,
// the message says what the worker waits for.
func WorkerMayJoin(state string) (bool, string) {
	switch state {
	case "", StateInsufficient, StatePendingForInput, StateAddingHosts:
		return true, ""
	case StateError, StateCancelled:
		return false, fmt.Sprintf("the cluster's installation is in state %q; fix the AgentClusterInstall, "+
			"and this worker joins once the cluster reaches %q", state, StateAddingHosts)
	}
	return false, fmt.Sprintf("the cluster's day-1 installation is in progress (state %q); this worker joins as a "+
		"day-2 host once the AgentClusterInstall reaches %q", state, StateAddingHosts)
}
