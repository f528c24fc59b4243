/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterID is the cluster's UUID.
type ClusterID string

// URL is an absolute http or https URL.
type URL string

// ClusterVersionArchitecture is "" (the current architecture) or Multi.
// +kubebuilder:validation:Enum=Multi;""
type ClusterVersionArchitecture string

// ClusterVersionArchitectureMulti asks for a heterogeneous release payload.
const ClusterVersionArchitectureMulti ClusterVersionArchitecture = "Multi"

// Update is a requested update. Upstream writes architecture, version, image
// and force even when empty; at most one of architecture and image may be
// set, and a non-empty architecture needs a version.
type Update struct {
	// +optional
	Architecture ClusterVersionArchitecture `json:"architecture"`
	// +optional
	Version string `json:"version"`
	// +optional
	Image string `json:"image"`
	// Force skips the payload's signature and precondition checks.
	// +optional
	Force bool `json:"force"`
}

// ClusterVersionSpec is the desired version of the cluster.
type ClusterVersionSpec struct {
	// +required
	ClusterID ClusterID `json:"clusterID"`
	// +optional
	DesiredUpdate *Update `json:"desiredUpdate,omitempty"`
	// Upstream is the update service to ask for available updates.
	// +optional
	Upstream URL `json:"upstream,omitempty"`
	// +optional
	Channel string `json:"channel,omitempty"`
}

// Release is a release payload.
type Release struct {
	// +optional
	Architecture ClusterVersionArchitecture `json:"architecture,omitempty"`
	// +required
	Version string `json:"version"`
	// +required
	Image string `json:"image"`
	// +optional
	URL URL `json:"url,omitempty"`
	// +optional
	// +listType=set
	Channels []string `json:"channels,omitempty"`
}

// UpdateState is how far an update got.
type UpdateState string

// The values of UpdateState.
const (
	CompletedUpdate UpdateState = "Completed"
	PartialUpdate   UpdateState = "Partial"
)

// UpdateHistory is one entry of the update history, newest first.
type UpdateHistory struct {
	// +required
	State UpdateState `json:"state"`
	// +required
	StartedTime metav1.Time `json:"startedTime"`
	// CompletionTime is null while the update is in progress.
	// +required
	// +nullable
	CompletionTime *metav1.Time `json:"completionTime"`
	// +optional
	Version string `json:"version"`
	// +required
	Image string `json:"image"`
	// +required
	Verified bool `json:"verified"`
}

// ConditionStatus is True, False or Unknown.
type ConditionStatus string

// The values of ConditionStatus.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// ClusterStatusConditionType names a cluster operator or version condition,
// such as Available, Progressing, Degraded or Failing.
type ClusterStatusConditionType string

// ClusterOperatorStatusCondition is the condition type of ClusterVersion
// (and ClusterOperator).
type ClusterOperatorStatusCondition struct {
	// +required
	Type ClusterStatusConditionType `json:"type"`
	// +required
	Status ConditionStatus `json:"status"`
	// +required
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// ClusterVersionStatus is the observed version of the cluster.
type ClusterVersionStatus struct {
	// +required
	Desired Release `json:"desired"`
	// +optional
	// +listType=atomic
	History []UpdateHistory `json:"history,omitempty"`
	// +required
	ObservedGeneration int64 `json:"observedGeneration"`
	// +required
	VersionHash string `json:"versionHash"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []ClusterOperatorStatusCondition `json:"conditions,omitempty"`
	// AvailableUpdates is required but may be null.
	// +required
	// +nullable
	// +listType=atomic
	AvailableUpdates []Release `json:"availableUpdates"`
}

// ClusterVersion is the cluster's version and update state; a cluster has
// one, named "version".
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterversions,scope=Cluster
// +kubebuilder:subresource:status
type ClusterVersion struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterVersionSpec `json:"spec"`
	// +optional
	Status ClusterVersionStatus `json:"status"`
}

// ClusterVersionList is a list of ClusterVersions.
// +kubebuilder:object:root=true
type ClusterVersionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterVersion `json:"items"`
}
