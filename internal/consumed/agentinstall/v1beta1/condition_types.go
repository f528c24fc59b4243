/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionType names a condition of an InfraEnv or an Agent.
type ConditionType string

// Condition is the openshift/custom-resource-status condition that the
// assisted-service resources use. Upstream writes the two times even when
// zero (as null).
type Condition struct {
	Type   ConditionType          `json:"type"`
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastHeartbeatTime metav1.Time `json:"lastHeartbeatTime"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
}
