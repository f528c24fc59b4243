package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CAPI v1beta1 types that CAPO's v1beta1 API embeds, with their JSON
// and validation. They are spelt out here rather than imported from CAPI's
// api/core/v1beta1, which CAPI deprecates and will remove while this
// version must stay served.

// APIEndpoint is a host and port.
type APIEndpoint struct {
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Host string `json:"host"`
	// +optional
	Port int32 `json:"port"`
}

// ConditionSeverity classifies a False condition: Error, Warning, Info or
// none.
// +kubebuilder:validation:MaxLength=32
type ConditionSeverity string

// ConditionType names a condition.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=256
type ConditionType string

// Condition is a CAPI v1beta1 condition.
type Condition struct {
	// +required
	Type ConditionType `json:"type"`
	// +required
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	Severity ConditionSeverity `json:"severity,omitempty"`
	// +required
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Reason string `json:"reason,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	// +optional
	Message string `json:"message,omitempty"`
}

// Conditions are CAPI v1beta1 conditions.
type Conditions []Condition

// FailureDomainSpec is a failure domain, in CAPI v1beta1's map of them.
type FailureDomainSpec struct {
	// +optional
	ControlPlane bool `json:"controlPlane,omitempty"`
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

// FailureDomains are failure domains by name.
type FailureDomains map[string]FailureDomainSpec
