/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AgentBareMetalPlatform is the platform of clusters installed by the
// assisted installer from Agents.
type AgentBareMetalPlatform struct {
	// AgentSelector selects the Agents that may join the cluster. No
	// omitempty upstream.
	AgentSelector metav1.LabelSelector `json:"agentSelector"`
}

// Platform is the cluster's platform; exactly one member is set. Only
// agentBareMetal is modelled.
type Platform struct {
	// +optional
	AgentBareMetal *AgentBareMetalPlatform `json:"agentBareMetal,omitempty"`
}

// ClusterInstallLocalReference points at the object that installs the
// cluster, such as an AgentClusterInstall in the same namespace.
type ClusterInstallLocalReference struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
}

// ClusterImageSetReference names a ClusterImageSet.
type ClusterImageSetReference struct {
	Name string `json:"name"`
}

// ClusterMetadata is what an installed cluster is known by. AgentClusterInstall
// embeds it too.
type ClusterMetadata struct {
	ClusterID                string                      `json:"clusterID"`
	InfraID                  string                      `json:"infraID"`
	AdminKubeconfigSecretRef corev1.LocalObjectReference `json:"adminKubeconfigSecretRef"`
	// +optional
	AdminPasswordSecretRef *corev1.LocalObjectReference `json:"adminPasswordSecretRef,omitempty"`
}

// ClusterDeploymentSpec is the desired cluster.
type ClusterDeploymentSpec struct {
	// +required
	ClusterName string `json:"clusterName"`
	// +required
	BaseDomain string `json:"baseDomain"`
	// +required
	Platform Platform `json:"platform"`
	// +optional
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef,omitempty"`
	// PreserveOnDelete keeps the cluster when the ClusterDeployment is deleted.
	// +optional
	PreserveOnDelete bool `json:"preserveOnDelete,omitempty"`
	// +optional
	ClusterMetadata *ClusterMetadata `json:"clusterMetadata,omitempty"`
	// Installed is set by the installer once the cluster is up. No omitempty
	// upstream.
	// +optional
	Installed bool `json:"installed"`
	// +optional
	ClusterInstallRef *ClusterInstallLocalReference `json:"clusterInstallRef,omitempty"`
}

// ClusterDeploymentConditionType names a ClusterDeployment condition.
type ClusterDeploymentConditionType string

// ClusterDeploymentCondition is a ClusterDeployment condition.
type ClusterDeploymentCondition struct {
	Type   ClusterDeploymentConditionType `json:"type"`
	Status corev1.ConditionStatus         `json:"status"`
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// ClusterDeploymentStatus is the observed state of a cluster; only a little
// of it is modelled.
type ClusterDeploymentStatus struct {
	// +optional
	Conditions []ClusterDeploymentCondition `json:"conditions,omitempty"`
	// +optional
	InstalledTimestamp *metav1.Time `json:"installedTimestamp,omitempty"`
}

// ClusterDeployment is a cluster managed by hive.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterdeployments,scope=Namespaced,shortName=cd
// +kubebuilder:subresource:status
type ClusterDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ClusterDeploymentSpec `json:"spec,omitempty"`
	// +optional
	Status ClusterDeploymentStatus `json:"status,omitempty"`
}

// ClusterDeploymentList is a list of ClusterDeployments.
// +kubebuilder:object:root=true
type ClusterDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterDeployment `json:"items"`
}
