/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3MachineTemplateResource is the template's machine.
type Metal3MachineTemplateResource struct {
	Spec Metal3MachineSpec `json:"spec"`
}

// Metal3MachineTemplateSpec is a template of Metal3Machines.
type Metal3MachineTemplateSpec struct {
	Template Metal3MachineTemplateResource `json:"template"`
	// NodeReuse keeps a scaled-down host for the same pool. No omitempty
	// upstream.
	// +optional
	// +kubebuilder:default=false
	NodeReuse bool `json:"nodeReuse"`
}

// Metal3MachineTemplate is a template of Metal3Machines.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3machinetemplates,scope=Namespaced,categories=cluster-api,shortName=m3mt;m3machinetemplate;m3machinetemplates;metal3mt;metal3machinetemplate
type Metal3MachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec Metal3MachineTemplateSpec `json:"spec,omitempty"`
}

// Metal3MachineTemplateList is a list of Metal3MachineTemplates.
// +kubebuilder:object:root=true
type Metal3MachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3MachineTemplate `json:"items"`
}
