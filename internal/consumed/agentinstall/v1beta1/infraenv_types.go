/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The InfraEnv condition types.
const (
	ImageCreatedCondition               ConditionType = "ImageCreated"
	ClusterDeploymentReferenceCondition ConditionType = "ClusterDeploymentReference"
)

// InfraEnvNameLabel is set on each Agent to the name of the InfraEnv it
// booted from.
const InfraEnvNameLabel = "infraenvs.agent-install.openshift.io"

// ClusterReference names a ClusterDeployment.
type ClusterReference struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// Proxy is the proxy the discovery agent uses.
type Proxy struct {
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	// +optional
	NoProxy string `json:"noProxy,omitempty"`
}

// KernelArgument edits the discovery image's kernel command line.
type KernelArgument struct {
	// +kubebuilder:validation:Enum=append;replace;delete
	Operation string `json:"operation,omitempty"`
	// +kubebuilder:validation:Pattern=`^(?:(?:[^ \t\n\r"]+)|(?:"[^"]*"))+$`
	Value string `json:"value,omitempty"`
}

// IPXEScriptType says what the generated iPXE script boots.
// +kubebuilder:validation:Enum="";DiscoveryImageAlways;BootOrderControl
type IPXEScriptType string

// The values of IPXEScriptType.
const (
	DiscoveryImageAlways IPXEScriptType = "DiscoveryImageAlways"
	BootOrderControl     IPXEScriptType = "BootOrderControl"
)

// ImageType is the kind of discovery ISO.
type ImageType string

// The values of ImageType.
const (
	ImageTypeFullISO    ImageType = "full-iso"
	ImageTypeMinimalISO ImageType = "minimal-iso"
)

// InfraEnvSpec is the desired discovery environment.
type InfraEnvSpec struct {
	// +optional
	Proxy *Proxy `json:"proxy,omitempty"`
	// +optional
	AdditionalNTPSources []string `json:"additionalNTPSources,omitempty"`
	// +optional
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`
	// PullSecretRef has no omitempty upstream and is required.
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef"`
	// AgentLabels are set on every Agent that boots from this InfraEnv.
	// +optional
	AgentLabels map[string]string `json:"agentLabels,omitempty"`
	// +optional
	NMStateConfigLabelSelector metav1.LabelSelector `json:"nmStateConfigLabelSelector,omitempty"`
	// ClusterRef binds the InfraEnv (and its Agents) to a ClusterDeployment.
	// +optional
	ClusterRef *ClusterReference `json:"clusterRef,omitempty"`
	// IgnitionConfigOverride is a JSON Ignition config merged into the
	// discovery ignition.
	// +optional
	IgnitionConfigOverride string `json:"ignitionConfigOverride,omitempty"`
	// +optional
	// +kubebuilder:default=x86_64
	CPUArchitecture string `json:"cpuArchitecture,omitempty"`
	// IPXEScriptType has no omitempty upstream.
	// +optional
	// +kubebuilder:default=DiscoveryImageAlways
	IPXEScriptType IPXEScriptType `json:"ipxeScriptType"`
	// +optional
	KernelArguments []KernelArgument `json:"kernelArguments,omitempty"`
	// +optional
	AdditionalTrustBundle string `json:"additionalTrustBundle,omitempty"`
	// +optional
	OSImageVersion string `json:"osImageVersion,omitempty"`
	// +optional
	ImageType ImageType `json:"imageType,omitempty"`
}

// InfraEnvDebugInfo are debugging locations. EventsURL has no omitempty
// upstream.
type InfraEnvDebugInfo struct {
	// +optional
	EventsURL string `json:"eventsURL"`
	// +optional
	StaticNetworkDownloadURL string `json:"staticNetworkDownloadURL,omitempty"`
}

// BootArtifacts are the URLs of the discovery boot artifacts, for network
// boot. None has omitempty upstream.
type BootArtifacts struct {
	// +optional
	InitrdURL string `json:"initrd"`
	// +optional
	RootfsURL string `json:"rootfs"`
	// +optional
	KernelURL string `json:"kernel"`
	// +optional
	IpxeScriptURL string `json:"ipxeScript"`
	// +optional
	DiscoveryIgnitionURL string `json:"discoveryIgnitionURL"`
}

// InfraEnvStatus is the observed discovery environment.
type InfraEnvStatus struct {
	// ISODownloadURL is where the discovery ISO is served.
	ISODownloadURL string `json:"isoDownloadURL,omitempty"`
	// CreatedTime is when the ISO was last generated.
	CreatedTime *metav1.Time `json:"createdTime,omitempty"`
	Conditions  []Condition  `json:"conditions,omitempty"`
	// InfraEnvDebugInfo has no omitempty upstream.
	// +optional
	InfraEnvDebugInfo InfraEnvDebugInfo `json:"debugInfo"`
	// BootArtifacts has no omitempty upstream.
	// +optional
	BootArtifacts BootArtifacts `json:"bootArtifacts"`
}

// InfraEnv is a discovery environment: the image hosts boot to become Agents.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=infraenvs,scope=Namespaced
// +kubebuilder:subresource:status
type InfraEnv struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   InfraEnvSpec   `json:"spec,omitempty"`
	Status InfraEnvStatus `json:"status,omitempty"`
}

// InfraEnvList is a list of InfraEnvs.
// +kubebuilder:object:root=true
type InfraEnvList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InfraEnv `json:"items"`
}
