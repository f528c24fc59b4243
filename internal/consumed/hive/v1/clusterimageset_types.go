/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterImageSetSpec names an OpenShift release.
type ClusterImageSetSpec struct {
	// ReleaseImage is the release payload's pullspec.
	ReleaseImage string `json:"releaseImage"`
}

// ClusterImageSetStatus is empty upstream.
type ClusterImageSetStatus struct{}

// ClusterImageSet is an OpenShift release that clusters may install.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterimagesets,scope=Cluster,shortName=imgset
// +kubebuilder:subresource:status
type ClusterImageSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ClusterImageSetSpec `json:"spec,omitempty"`
	// +optional
	Status ClusterImageSetStatus `json:"status,omitempty"`
}

// ClusterImageSetList is a list of ClusterImageSets.
// +kubebuilder:object:root=true
type ClusterImageSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterImageSet `json:"items"`
}
