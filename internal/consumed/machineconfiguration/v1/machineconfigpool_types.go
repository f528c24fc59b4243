/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineConfigPoolStatusConfiguration names a rendered MachineConfig and
// the objects it was made from. The layering BuildController also keeps the
// reference to its running Build (or Pod) in Source.
type MachineConfigPoolStatusConfiguration struct {
	corev1.ObjectReference `json:",inline"`

	// +optional
	// +listType=atomic
	Source []corev1.ObjectReference `json:"source,omitempty"`
}

// MachineConfigPoolSpec is the desired state of a pool.
type MachineConfigPoolSpec struct {
	// MachineConfigSelector selects the MachineConfigs rendered for the pool.
	// +optional
	MachineConfigSelector *metav1.LabelSelector `json:"machineConfigSelector,omitempty"`

	// NodeSelector selects the nodes of the pool.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`

	// Paused stops updates to the pool's nodes. No omitempty upstream.
	// +optional
	Paused bool `json:"paused"`

	// +optional
	// +kubebuilder:validation:XIntOrString
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// Configuration is the rendered MachineConfig the pool's nodes should
	// run. No omitempty upstream.
	// +optional
	Configuration MachineConfigPoolStatusConfiguration `json:"configuration"`
}

// MachineConfigPoolConditionType names a pool condition, such as Updated,
// Updating, Degraded, RenderDegraded, or the layering conditions BuildPending,
// Building, BuildSuccess and BuildFailed.
type MachineConfigPoolConditionType string

// MachineConfigPoolCondition is a pool condition. Upstream writes type,
// lastTransitionTime, reason and message even when empty; none is required.
type MachineConfigPoolCondition struct {
	// +optional
	Type MachineConfigPoolConditionType `json:"type"`
	// +optional
	Status corev1.ConditionStatus `json:"status,omitempty"`
	// +optional
	// +nullable
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// +optional
	Reason string `json:"reason"`
	// +optional
	Message string `json:"message"`
}

// MachineConfigPoolStatus is the observed state of a pool. Upstream writes
// configuration, the machine counts and conditions even when empty.
type MachineConfigPoolStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Configuration MachineConfigPoolStatusConfiguration `json:"configuration"`
	// +optional
	MachineCount int32 `json:"machineCount"`
	// +optional
	UpdatedMachineCount int32 `json:"updatedMachineCount"`
	// +optional
	ReadyMachineCount int32 `json:"readyMachineCount"`
	// +optional
	UnavailableMachineCount int32 `json:"unavailableMachineCount"`
	// +optional
	DegradedMachineCount int32 `json:"degradedMachineCount"`
	// +optional
	// +listType=atomic
	Conditions []MachineConfigPoolCondition `json:"conditions"`
}

// MachineConfigPool groups nodes that run the same rendered MachineConfig.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machineconfigpools,scope=Cluster,shortName=mcp
// +kubebuilder:subresource:status
type MachineConfigPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MachineConfigPoolSpec `json:"spec"`
	// +optional
	Status MachineConfigPoolStatus `json:"status"`
}

// MachineConfigPoolList is a list of MachineConfigPools.
// +kubebuilder:object:root=true
type MachineConfigPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineConfigPool `json:"items"`
}
