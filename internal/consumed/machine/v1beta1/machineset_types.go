/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachineSetDeletePolicy orders machines for deletion when scaling down.
type MachineSetDeletePolicy string

// The values of MachineSetDeletePolicy.
const (
	RandomMachineSetDeletePolicy MachineSetDeletePolicy = "Random"
	NewestMachineSetDeletePolicy MachineSetDeletePolicy = "Newest"
	OldestMachineSetDeletePolicy MachineSetDeletePolicy = "Oldest"
)

// MachineSetStatusError is a machine-readable terminal error of a MachineSet.
type MachineSetStatusError string

// InvalidConfigurationMachineSetError is the only errorReason MAPI sets.
const InvalidConfigurationMachineSetError MachineSetStatusError = "InvalidConfiguration"

// MachineTemplateSpec is the template machines of a MachineSet are made from.
type MachineTemplateSpec struct {
	// +optional
	ObjectMeta `json:"metadata,omitempty"`
	// +optional
	Spec MachineSpec `json:"spec,omitempty"`
}

// MachineSetSpec is the desired state of a MachineSet.
type MachineSetSpec struct {
	// Replicas is a pointer so that 0 differs from unset (which defaults to 1).
	// +optional
	// +kubebuilder:default=1
	Replicas *int32 `json:"replicas,omitempty"`

	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// DeletePolicy is a plain string upstream, restricted by an enum.
	// +optional
	// +kubebuilder:validation:Enum=Random;Newest;Oldest
	DeletePolicy string `json:"deletePolicy,omitempty"`

	// Selector has no omitempty upstream, yet is not required by the CRD.
	// +optional
	Selector metav1.LabelSelector `json:"selector"`

	// +optional
	Template MachineTemplateSpec `json:"template,omitempty"`

	// +optional
	// +kubebuilder:validation:Enum=MachineAPI;ClusterAPI
	// +kubebuilder:default=MachineAPI
	AuthoritativeAPI MachineAuthority `json:"authoritativeAPI,omitempty"`
}

// MachineSetStatus is the observed state of a MachineSet.
// The rules of upstream's TechPreviewNoUpgrade CRD (MachineAPIMigration),
// so that the CRDs generated from this type enforce what the API server
// enforces with upstream's: synchronizedGeneration only decreases when
// authoritativeAPI leaves Migrating, and authoritativeAPI, once set, stays.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.synchronizedGeneration) || (has(self.synchronizedGeneration) && self.synchronizedGeneration >= oldSelf.synchronizedGeneration) || (oldSelf.authoritativeAPI == 'Migrating' && self.authoritativeAPI != 'Migrating')",message="synchronizedGeneration must not decrease unless authoritativeAPI is transitioning from Migrating to another value",fieldPath=".synchronizedGeneration",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.authoritativeAPI) || !has(oldSelf.authoritativeAPI)",message="authoritativeAPI may not be removed once set"
type MachineSetStatus struct {
	// Replicas has no omitempty upstream.
	// +optional
	Replicas int32 `json:"replicas"`
	// +optional
	FullyLabeledReplicas int32 `json:"fullyLabeledReplicas,omitempty"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// LabelSelector is the serialised selector, for the scale subresource.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	LabelSelector string `json:"labelSelector,omitempty"`
	// +optional
	ErrorReason *MachineSetStatusError `json:"errorReason,omitempty"`
	// +optional
	ErrorMessage *string `json:"errorMessage,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []Condition `json:"conditions,omitempty"`
	// AuthoritativeAPI moves between MachineAPI and ClusterAPI only through
	// Migrating (upstream's transition rule).
	// +optional
	// +kubebuilder:validation:Enum=MachineAPI;ClusterAPI;Migrating
	// +kubebuilder:validation:XValidation:rule="self == 'Migrating' || self == oldSelf || oldSelf == 'Migrating'",message="The authoritativeAPI field must not transition directly from MachineAPI to ClusterAPI or vice versa. It must transition through Migrating."
	AuthoritativeAPI MachineAuthority `json:"authoritativeAPI,omitempty"`
	// +optional
	SynchronizedAPI SynchronizedAPI `json:"synchronizedAPI,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	SynchronizedGeneration int64 `json:"synchronizedGeneration,omitempty"`
}

// MachineSet keeps a number of Machines made from one template running.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinesets,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector
type MachineSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineSetSpec   `json:"spec,omitempty"`
	Status MachineSetStatus `json:"status,omitempty"`
}

// MachineSetList is a list of MachineSets.
// +kubebuilder:object:root=true
type MachineSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineSet `json:"items"`
}
