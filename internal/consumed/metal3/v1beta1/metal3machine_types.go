/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3MachineSpec is the desired state of a Metal3 machine.
type Metal3MachineSpec struct {
	// +optional
	ProviderID *string `json:"providerID,omitempty"`
	// Image has omitempty upstream, but as a struct it is always written.
	// +optional
	Image Image `json:"image,omitempty"`
	// +optional
	CustomDeploy *CustomDeploy `json:"customDeploy,omitempty"`
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`
	// +optional
	HostSelector HostSelector `json:"hostSelector,omitempty"`
	// DataTemplate names a Metal3DataTemplate (a full ObjectReference
	// upstream in v1beta1; see the package doc).
	// +optional
	DataTemplate *LocalObjectReference `json:"dataTemplate,omitempty"`
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=metadata;disabled
	AutomatedCleaningMode *string `json:"automatedCleaningMode,omitempty"`
}

// MachineAddressType is the kind of a machine address.
type MachineAddressType string

// MachineAddress is an address of a machine (CAPI's type).
type MachineAddress struct {
	// +kubebuilder:validation:Enum=Hostname;ExternalIP;InternalIP;ExternalDNS;InternalDNS
	Type MachineAddressType `json:"type"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Address string `json:"address"`
}

// Metal3MachineStatus is the observed state of a Metal3 machine; readiness
// is not modelled (see the package doc).
type Metal3MachineStatus struct {
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
	// +optional
	Addresses []MachineAddress `json:"addresses,omitempty"`
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`
	// RenderedData names the Metal3Data rendered for the machine.
	// +optional
	RenderedData *LocalObjectReference `json:"renderedData,omitempty"`
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`
}

// Metal3Machine is the Metal3 infrastructure of a CAPI Machine.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3machines,scope=Namespaced,categories=cluster-api,shortName=m3m;m3machine;m3machines;metal3m;metal3machine
// +kubebuilder:subresource:status
type Metal3Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec Metal3MachineSpec `json:"spec,omitempty"`
	// +optional
	Status Metal3MachineStatus `json:"status,omitempty"`
}

// Metal3MachineList is a list of Metal3Machines.
// +kubebuilder:object:root=true
type Metal3MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Machine `json:"items"`
}
