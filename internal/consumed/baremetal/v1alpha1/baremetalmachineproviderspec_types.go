/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"
)

// BareMetalMachineProviderSpec is the MAPI bare-metal machine configuration:
// which BareMetalHost to claim and what to deploy on it.
// +kubebuilder:object:root=true
type BareMetalMachineProviderSpec struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Image is required unless CustomDeploy.Method is set.
	Image Image `json:"image,omitempty"`
	// CustomDeploy replaces the image-based deployment.
	CustomDeploy CustomDeploy `json:"customDeploy,omitempty"`
	// UserData is the secret holding the bootstrap user data.
	UserData *corev1.SecretReference `json:"userData,omitempty"`
	// HostSelector narrows the hosts that may be claimed.
	HostSelector HostSelector `json:"hostSelector,omitempty"`
}

// HostSelector selects BareMetalHosts by label.
type HostSelector struct {
	MatchLabels      map[string]string         `json:"matchLabels,omitempty"`
	MatchExpressions []HostSelectorRequirement `json:"matchExpressions,omitempty"`
}

// HostSelectorRequirement is one label requirement. Values has no omitempty
// upstream.
type HostSelectorRequirement struct {
	Key      string             `json:"key"`
	Operator selection.Operator `json:"operator"`
	Values   []string           `json:"values"`
}

// Image is the image written to the host's disk. Both fields are written
// even when empty.
type Image struct {
	URL      string `json:"url"`
	Checksum string `json:"checksum"`
}

// CustomDeploy names a custom deploy method of the bare-metal operator.
type CustomDeploy struct {
	Method string `json:"method"`
}
