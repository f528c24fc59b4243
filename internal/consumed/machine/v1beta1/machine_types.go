/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MachineAuthority names the API whose controllers act on a resource during
// the MAPI to CAPI migration.
type MachineAuthority string

// The values of MachineAuthority.
const (
	MachineAuthorityMachineAPI MachineAuthority = "MachineAPI"
	MachineAuthorityClusterAPI MachineAuthority = "ClusterAPI"
	// MachineAuthorityMigrating is only ever set in status, while the
	// migration controller hands authority over.
	MachineAuthorityMigrating MachineAuthority = "Migrating"
)

// SynchronizedAPI names the API that a resource was last synchronised from.
// +kubebuilder:validation:Enum=MachineAPI;ClusterAPI
type SynchronizedAPI string

// The values of SynchronizedAPI.
const (
	SynchronizedAPIMachineAPI SynchronizedAPI = "MachineAPI"
	SynchronizedAPIClusterAPI SynchronizedAPI = "ClusterAPI"
)

// ObjectMeta is MAPI's reduced object metadata, used inside templates and
// machine specs. Labels and annotations set here are propagated to the Node.
type ObjectMeta struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	GenerateName string `json:"generateName,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=uid
	OwnerReferences []metav1.OwnerReference `json:"ownerReferences,omitempty"`
}

// ProviderSpec holds the provider-specific machine configuration, for
// example an OpenstackProviderSpec, as an embedded object.
type ProviderSpec struct {
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Value *runtime.RawExtension `json:"value,omitempty"`
}

// LifecycleHook blocks a machine's deletion phase until removed by its owner.
type LifecycleHook struct {
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	Name string `json:"name"`
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=512
	Owner string `json:"owner"`
}

// LifecycleHooks are the hooks run before draining and before terminating.
type LifecycleHooks struct {
	// +optional
	// +listType=map
	// +listMapKey=name
	PreDrain []LifecycleHook `json:"preDrain,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	PreTerminate []LifecycleHook `json:"preTerminate,omitempty"`
}

// MachineSpec is the desired state of a Machine.
type MachineSpec struct {
	// ObjectMeta is propagated to the Node.
	// +optional
	ObjectMeta `json:"metadata,omitempty"`

	// +optional
	LifecycleHooks LifecycleHooks `json:"lifecycleHooks,omitempty"`

	// +optional
	// +listType=atomic
	Taints []corev1.Taint `json:"taints,omitempty"`

	// ProviderSpec has no omitempty upstream.
	// +optional
	ProviderSpec ProviderSpec `json:"providerSpec"`

	// +optional
	ProviderID *string `json:"providerID,omitempty"`

	// +optional
	// +kubebuilder:validation:Enum=MachineAPI;ClusterAPI
	// +kubebuilder:default=MachineAPI
	AuthoritativeAPI MachineAuthority `json:"authoritativeAPI,omitempty"`
}

// ConditionSeverity qualifies a condition whose status is False.
type ConditionSeverity string

// The values of ConditionSeverity.
const (
	ConditionSeverityNone    ConditionSeverity = ""
	ConditionSeverityError   ConditionSeverity = "Error"
	ConditionSeverityWarning ConditionSeverity = "Warning"
	ConditionSeverityInfo    ConditionSeverity = "Info"
)

// ConditionType names a MAPI condition.
type ConditionType string

// Condition is MAPI's own condition type (not metav1.Condition): it has a
// severity and no observedGeneration.
type Condition struct {
	// +required
	Type ConditionType `json:"type"`
	// +required
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	Severity ConditionSeverity `json:"severity,omitempty"`
	// +required
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// MachineStatusError is a machine-readable terminal error of a Machine.
type MachineStatusError string

// MachineStatus is the observed state of a Machine.
// The rules of upstream's TechPreviewNoUpgrade CRD (MachineAPIMigration),
// so that the CRDs generated from this type enforce what the API server
// enforces with upstream's: synchronizedGeneration only decreases when
// authoritativeAPI leaves Migrating, and authoritativeAPI, once set, stays.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.synchronizedGeneration) || (has(self.synchronizedGeneration) && self.synchronizedGeneration >= oldSelf.synchronizedGeneration) || (oldSelf.authoritativeAPI == 'Migrating' && self.authoritativeAPI != 'Migrating')",message="synchronizedGeneration must not decrease unless authoritativeAPI is transitioning from Migrating to another value",fieldPath=".synchronizedGeneration",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.authoritativeAPI) || !has(oldSelf.authoritativeAPI)",message="authoritativeAPI may not be removed once set"
type MachineStatus struct {
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
	// +optional
	ErrorReason *MachineStatusError `json:"errorReason,omitempty"`
	// +optional
	ErrorMessage *string `json:"errorMessage,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	ProviderStatus *runtime.RawExtension `json:"providerStatus,omitempty"`
	// +optional
	// +listType=atomic
	Addresses []corev1.NodeAddress `json:"addresses,omitempty"`
	// Phase is one of Provisioning, Provisioned, Running, Deleting, Failed.
	// +optional
	Phase *string `json:"phase,omitempty"`
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

// Machine is a MAPI machine.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machines,scope=Namespaced
// +kubebuilder:subresource:status
type Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineSpec   `json:"spec,omitempty"`
	Status MachineStatus `json:"status,omitempty"`
}

// MachineList is a list of Machines.
// +kubebuilder:object:root=true
type MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Machine `json:"items"`
}

// The Paused condition that the Machine API operator's Machine and
// MachineSet controllers set (machine-api-operator, pkg/controller/machine):
// True while status.authoritativeAPI is not MachineAPI (they stop acting),
// False otherwise.
const (
	PausedCondition ConditionType = "Paused"
	// PausedReasonNotMachineAPI is the reason of Paused=True.
	PausedReasonNotMachineAPI = "AuthoritativeAPINotMachineAPI"
	// PausedReasonMachineAPI is the reason of Paused=False.
	PausedReasonMachineAPI = "AuthoritativeAPIMachineAPI"
)

// MachineFinalizer is the finalizer the Machine API's machine controller
// puts on every Machine; it goes once the actuator has deleted the
// instance.
const MachineFinalizer = "machine.machine.openshift.io"
