/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Interface maps a NIC name in the nmstate config to a MAC address.
type Interface struct {
	Name string `json:"name"`
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}[:]){5}([0-9A-Fa-f]{2})$`
	MacAddress string `json:"macAddress"`
}

// NMStateConfigSpec is a host's static network configuration.
type NMStateConfigSpec struct {
	// +kubebuilder:validation:MinItems=1
	Interfaces []Interface `json:"interfaces,omitempty"`
	// Config is the nmstate document, as JSON.
	// +kubebuilder:pruning:PreserveUnknownFields
	Config runtime.RawExtension `json:"config,omitempty"`
}

// NMStateConfig is the static network configuration of a host, picked up
// by InfraEnvs whose nmStateConfigLabelSelector matches its labels. It has
// a status subresource upstream but no status.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nmstateconfigs,scope=Namespaced
// +kubebuilder:subresource:status
type NMStateConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec NMStateConfigSpec `json:"spec,omitempty"`
}

// NMStateConfigList is a list of NMStateConfigs.
// +kubebuilder:object:root=true
type NMStateConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NMStateConfig `json:"items"`
}
