/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	"k8s.io/apimachinery/pkg/selection"
)

// APIEndpoint is where a cluster's API server is reached.
type APIEndpoint struct {
	Host string `json:"host"`
	Port int    `json:"port"`
}

// HostSelector selects BareMetalHosts by label.
type HostSelector struct {
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// +optional
	MatchExpressions []HostSelectorRequirement `json:"matchExpressions,omitempty"`
}

// HostSelectorRequirement is one label requirement. Values has no omitempty
// upstream.
type HostSelectorRequirement struct {
	Key      string             `json:"key"`
	Operator selection.Operator `json:"operator"`
	Values   []string           `json:"values"`
}

// Image is the image written to the host's disk. Its format is not modelled
// (format in v1beta1, diskFormat in v1beta2; see the package doc).
type Image struct {
	URL string `json:"url"`
	// +optional
	Checksum string `json:"checksum,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=md5;sha256;sha512
	ChecksumType *string `json:"checksumType,omitempty"`
}

// CustomDeploy names a custom deploy method of the bare-metal operator; the
// assisted providers use it to boot the discovery ISO.
type CustomDeploy struct {
	Method string `json:"method"`
}

// LocalObjectReference names an object, optionally in another namespace.
// It is the part of a v1beta1 ObjectReference that v1beta2 keeps.
type LocalObjectReference struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}
