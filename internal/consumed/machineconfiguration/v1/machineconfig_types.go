/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MachineConfigSpec is the configuration of a machine. Upstream writes
// osImageURL, kernelArguments, extensions, fips and kernelType even when
// empty.
type MachineConfigSpec struct {
	// OSImageURL is the OS container image the machine boots.
	// +optional
	OSImageURL string `json:"osImageURL"`

	// Config is an Ignition config, kept as raw JSON.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Config runtime.RawExtension `json:"config,omitempty"`

	// +optional
	// +nullable
	// +listType=atomic
	KernelArguments []string `json:"kernelArguments"`

	// +optional
	// +listType=atomic
	Extensions []string `json:"extensions"`

	// +optional
	FIPS bool `json:"fips"`

	// KernelType is "", default, realtime or 64k-pages.
	// +optional
	KernelType string `json:"kernelType"`
}

// MachineConfig is one piece of machine configuration; the MCO merges those
// a pool selects into a rendered MachineConfig.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machineconfigs,scope=Cluster,shortName=mc
type MachineConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec MachineConfigSpec `json:"spec"`
}

// MachineConfigList is a list of MachineConfigs.
// +kubebuilder:object:root=true
type MachineConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineConfig `json:"items"`
}
