/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

// The states an AgentClusterInstall reports in status.debugInfo.state
// (DebugInfo.State). They are assisted-service's cluster states, the enum of
// models.Cluster.Status (github.com/openshift/assisted-service, models/cluster.go,
// ClusterStatus*), which its ClusterDeployments controller copies into the
// AgentClusterInstall. docs/assisted-simulator.md lists where assisted-service
// moves between them; "" means it has not reported yet.
//
// They are declared once, here, beside the type that carries them: the
// bootstrap provider's day-1/day-2 gate, the control plane's installation
// phases and the simulator (test/assisted) all read these.
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
