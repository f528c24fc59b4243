/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
)

// PlatformType is the platform the assisted installer installs for.
// +kubebuilder:validation:Enum="";BareMetal;None;VSphere;Nutanix;External
type PlatformType string

// The values of PlatformType.
const (
	BareMetalPlatformType PlatformType = "BareMetal"
	NonePlatformType      PlatformType = "None"
	VSpherePlatformType   PlatformType = "VSphere"
	NutanixPlatformType   PlatformType = "Nutanix"
	ExternalPlatformType  PlatformType = "External"
)

// ClusterNetworkEntry is a pod network range.
type ClusterNetworkEntry struct {
	CIDR string `json:"cidr"`
	// +optional
	HostPrefix int32 `json:"hostPrefix,omitempty"`
}

// MachineNetworkEntry is a machine network range.
type MachineNetworkEntry struct {
	CIDR string `json:"cidr"`
}

// Networking is the cluster's network configuration.
type Networking struct {
	// +optional
	MachineNetwork []MachineNetworkEntry `json:"machineNetwork,omitempty"`
	// +optional
	ClusterNetwork []ClusterNetworkEntry `json:"clusterNetwork,omitempty"`
	// +optional
	ServiceNetwork []string `json:"serviceNetwork,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=OpenShiftSDN;OVNKubernetes;CiscoACI;Cilium;Calico;None
	NetworkType string `json:"networkType,omitempty"`
	// +optional
	UserManagedNetworking *bool `json:"userManagedNetworking,omitempty"`
}

// ProvisionRequirements are how many Agents of each role the install waits
// for. ControlPlaneAgents has no omitempty upstream.
type ProvisionRequirements struct {
	ControlPlaneAgents int `json:"controlPlaneAgents"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	WorkerAgents int `json:"workerAgents,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	ArbiterAgents int `json:"arbiterAgents,omitempty"`
}

// DiskEncryption configures encryption of the installed disks.
type DiskEncryption struct {
	// EnableOn is none, all, or a comma-separated list of roles.
	// +optional
	// +kubebuilder:default=none
	// +kubebuilder:validation:Enum=none;all;masters;arbiters;workers;"masters,arbiters";"masters,workers";"arbiters,workers";"masters,arbiters,workers"
	EnableOn *string `json:"enableOn,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=tpmv2;tang
	Mode *string `json:"mode,omitempty"`
	// TangServers is a JSON list of tang servers.
	// +optional
	TangServers string `json:"tangServers,omitempty"`
}

// Proxy is the cluster-wide proxy.
type Proxy struct {
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	// +optional
	NoProxy string `json:"noProxy,omitempty"`
}

// ManifestsConfigMapReference names a ConfigMap of extra install manifests.
type ManifestsConfigMapReference struct {
	Name string `json:"name"`
}

// MirrorRegistryConfigMapReference names the ConfigMap of a cluster's
// mirror registries (keys registries.conf and ca-bundle.crt).
type MirrorRegistryConfigMapReference struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// AgentClusterInstallSpec is the desired install.
type AgentClusterInstallSpec struct {
	// +optional
	ImageSetRef *hivev1.ClusterImageSetReference `json:"imageSetRef,omitempty"`
	// ClusterDeploymentRef names the ClusterDeployment in the same namespace.
	ClusterDeploymentRef corev1.LocalObjectReference `json:"clusterDeploymentRef"`
	// ClusterMetadata is set by the installer once the cluster exists.
	// +optional
	ClusterMetadata *hivev1.ClusterMetadata `json:"clusterMetadata,omitempty"`
	// ManifestsConfigMapRef is deprecated upstream for ManifestsConfigMapRefs.
	// +optional
	ManifestsConfigMapRef *corev1.LocalObjectReference `json:"manifestsConfigMapRef,omitempty"`
	// +optional
	ManifestsConfigMapRefs []ManifestsConfigMapReference `json:"manifestsConfigMapRefs,omitempty"`

	// Networking has no omitempty upstream.
	Networking Networking `json:"networking"`

	// +optional
	SSHPublicKey string `json:"sshPublicKey,omitempty"`

	// ProvisionRequirements has no omitempty upstream.
	ProvisionRequirements ProvisionRequirements `json:"provisionRequirements"`

	// APIVIP is deprecated upstream for APIVIPs.
	// +optional
	APIVIP string `json:"apiVIP,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=2
	APIVIPs []string `json:"apiVIPs,omitempty"`
	// IngressVIP is deprecated upstream for IngressVIPs.
	// +optional
	IngressVIP string `json:"ingressVIP,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=2
	IngressVIPs []string `json:"ingressVIPs,omitempty"`
	// HoldInstallation keeps a ready cluster from starting to install.
	// +optional
	HoldInstallation bool `json:"holdInstallation,omitempty"`
	// +optional
	DiskEncryption *DiskEncryption `json:"diskEncryption,omitempty"`
	// +optional
	Proxy *Proxy `json:"proxy,omitempty"`
	// +optional
	PlatformType PlatformType `json:"platformType,omitempty"`
	// +optional
	MastersSchedulable bool `json:"mastersSchedulable,omitempty"`
	// MirrorRegistryRef names the ConfigMap of the cluster's mirror
	// registries.
	// +optional
	MirrorRegistryRef *MirrorRegistryConfigMapReference `json:"mirrorRegistryRef,omitempty"`
}

// ClusterProgressInfo is the install's progress. TotalPercentage has no
// omitempty upstream and is required.
type ClusterProgressInfo struct {
	TotalPercentage int64 `json:"totalPercentage"`
}

// DebugInfo are the install's state and log locations. EventsURL and
// LogsURL have no omitempty upstream.
type DebugInfo struct {
	// +optional
	EventsURL string `json:"eventsURL"`
	// +optional
	LogsURL string `json:"logsURL"`
	// State is the assisted-service cluster state, such as insufficient,
	// ready, installing, installed, error.
	// +optional
	State string `json:"state,omitempty"`
	// +optional
	StateInfo string `json:"stateInfo,omitempty"`
}

// AgentClusterInstallStatus is the observed install.
type AgentClusterInstallStatus struct {
	// +optional
	Conditions []hivev1.ClusterInstallCondition `json:"conditions,omitempty"`
	// +optional
	Progress ClusterProgressInfo `json:"progress,omitempty"`
	// +optional
	ConnectivityMajorityGroups string `json:"connectivityMajorityGroups,omitempty"`
	// DebugInfo has no omitempty upstream.
	// +optional
	DebugInfo DebugInfo `json:"debugInfo"`
	// +optional
	// +kubebuilder:validation:MaxItems=2
	APIVIPs []string `json:"apiVIPs,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=2
	IngressVIPs []string `json:"ingressVIPs,omitempty"`
	// +optional
	PlatformType PlatformType `json:"platformType,omitempty"`
}

// AgentClusterInstall installs a hive ClusterDeployment with the assisted
// installer.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=agentclusterinstalls,scope=Namespaced,shortName=aci
// +kubebuilder:subresource:status
type AgentClusterInstall struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AgentClusterInstallSpec `json:"spec"`
	// +optional
	Status AgentClusterInstallStatus `json:"status,omitempty"`
}

// AgentClusterInstallList is a list of AgentClusterInstalls.
// +kubebuilder:object:root=true
type AgentClusterInstallList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentClusterInstall `json:"items"`
}
