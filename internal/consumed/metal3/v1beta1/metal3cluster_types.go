/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3ClusterSpec is the desired state of a Metal3 cluster.
type Metal3ClusterSpec struct {
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty"`
	// CloudProviderEnabled says whether an external cloud provider sets the
	// nodes' provider IDs.
	// +optional
	CloudProviderEnabled *bool `json:"cloudProviderEnabled,omitempty"`
}

// Metal3ClusterStatus is the observed state of a Metal3 cluster; readiness is
// not modelled (see the package doc).
type Metal3ClusterStatus struct {
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
}

// Metal3Cluster is the Metal3 infrastructure of a CAPI Cluster.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3clusters,scope=Namespaced,categories=cluster-api,shortName=m3c;m3cluster;m3clusters;metal3c;metal3cluster
// +kubebuilder:subresource:status
type Metal3Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec Metal3ClusterSpec `json:"spec,omitempty"`
	// +optional
	Status Metal3ClusterStatus `json:"status,omitempty"`
}

// Metal3ClusterList is a list of Metal3Clusters.
// +kubebuilder:object:root=true
type Metal3ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Cluster `json:"items"`
}
