/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Agent condition types.
const (
	SpecSyncedCondition      ConditionType = "SpecSynced"
	ConnectedCondition       ConditionType = "Connected"
	RequirementsMetCondition ConditionType = "RequirementsMet"
	ValidatedCondition       ConditionType = "Validated"
	InstalledCondition       ConditionType = "Installed"
	BoundCondition           ConditionType = "Bound"
)

// HostRole is an Agent's role in the cluster.
type HostRole string

// The values of HostRole.
const (
	HostRoleAutoAssign HostRole = "auto-assign"
	HostRoleMaster     HostRole = "master"
	HostRoleWorker     HostRole = "worker"
	HostRoleArbiter    HostRole = "arbiter"
	HostRoleBootstrap  HostRole = "bootstrap"
)

// HostStage is an installation stage of an Agent, such as
// "Starting installation", "Joined", "Done" or "Failed".
type HostStage string

// AgentSpec is the desired state of a discovered host.
type AgentSpec struct {
	// ClusterDeploymentName binds the Agent to a ClusterDeployment.
	// +optional
	ClusterDeploymentName *ClusterReference `json:"clusterDeploymentName,omitempty"`
	// Role has no omitempty upstream and is required.
	Role     HostRole `json:"role"`
	Hostname string   `json:"hostname,omitempty"`
	// MachineConfigPool is the pool the node joins.
	MachineConfigPool string `json:"machineConfigPool,omitempty"`
	// Approved lets the Agent be installed. No omitempty upstream; required.
	Approved bool `json:"approved"`
	// +optional
	InstallationDiskID string `json:"installation_disk_id,omitempty"`
	// +optional
	InstallationDiskPath string `json:"installation_disk_path,omitempty"`
	// InstallerArgs is a JSON list of coreos-installer arguments.
	InstallerArgs string `json:"installerArgs,omitempty"`
	// IgnitionConfigOverrides is a JSON Ignition config merged into the
	// host's install ignition.
	IgnitionConfigOverrides string            `json:"ignitionConfigOverrides,omitempty"`
	NodeLabels              map[string]string `json:"nodeLabels,omitempty"`
}

// HostInterface is a network interface of a host. The address and flag
// lists have no omitempty upstream and are required.
type HostInterface struct {
	IPV6Addresses []string `json:"ipV6Addresses"`
	Name          string   `json:"name,omitempty"`
	IPV4Addresses []string `json:"ipV4Addresses"`
	MacAddress    string   `json:"macAddress,omitempty"`
	Flags         []string `json:"flags"`
	SpeedMbps     int64    `json:"speedMbps,omitempty"`
}

// HostSystemVendor identifies a host's hardware.
type HostSystemVendor struct {
	SerialNumber string `json:"serialNumber,omitempty"`
	ProductName  string `json:"productName,omitempty"`
	Manufacturer string `json:"manufacturer,omitempty"`
	Virtual      bool   `json:"virtual,omitempty"`
}

// HostInventory is what the discovery agent found on the host; a subset.
type HostInventory struct {
	Hostname     string           `json:"hostname,omitempty"`
	BmcAddress   string           `json:"bmcAddress,omitempty"`
	Interfaces   []HostInterface  `json:"interfaces,omitempty"`
	SystemVendor HostSystemVendor `json:"systemVendor,omitempty"`
}

// HostProgressInfo is the host's installation progress.
type HostProgressInfo struct {
	CurrentStage           HostStage    `json:"currentStage,omitempty"`
	InstallationPercentage int64        `json:"installationPercentage,omitempty"`
	StageStartTime         *metav1.Time `json:"stageStartTime,omitempty"`
	StageUpdateTime        *metav1.Time `json:"stageUpdateTime,omitempty"`
}

// HostNTPSources is an NTP source as seen by the host.
type HostNTPSources struct {
	SourceName  string `json:"sourceName,omitempty"`
	SourceState string `json:"sourceState,omitempty"`
}

// DebugInfo is the host's assisted-service state.
type DebugInfo struct {
	// +optional
	EventsURL string `json:"eventsURL,omitempty"`
	// State is the assisted-service host state, such as discovering, known,
	// installing, installed, error.
	// +optional
	State string `json:"state,omitempty"`
	// +optional
	StateInfo string `json:"stateInfo,omitempty"`
}

// AgentStatus is the observed state of a discovered host.
type AgentStatus struct {
	// Bootstrap is true for the host that bootstraps the cluster.
	Bootstrap bool `json:"bootstrap,omitempty"`
	// Role is the effective role (auto-assign resolved). No omitempty
	// upstream.
	// +optional
	Role       HostRole         `json:"role"`
	Inventory  HostInventory    `json:"inventory,omitempty"`
	Progress   HostProgressInfo `json:"progress,omitempty"`
	NtpSources []HostNTPSources `json:"ntpSources,omitempty"`
	Conditions []Condition      `json:"conditions,omitempty"`
	// DebugInfo has no omitempty upstream.
	// +optional
	DebugInfo DebugInfo `json:"debugInfo"`
}

// Agent is a host that booted the discovery image and registered.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=agents,scope=Namespaced
// +kubebuilder:subresource:status
type Agent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AgentSpec   `json:"spec,omitempty"`
	Status AgentStatus `json:"status,omitempty"`
}

// AgentList is a list of Agents.
// +kubebuilder:object:root=true
type AgentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Agent `json:"items"`
}
