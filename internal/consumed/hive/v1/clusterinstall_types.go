/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterInstallConditionType names a condition of a cluster install
// implementation such as AgentClusterInstall.
type ClusterInstallConditionType string

// The condition types hive defines for cluster install implementations.
const (
	ClusterInstallRequirementsMet ClusterInstallConditionType = "RequirementsMet"
	ClusterInstallCompleted       ClusterInstallConditionType = "Completed"
	ClusterInstallFailed          ClusterInstallConditionType = "Failed"
	ClusterInstallStopped         ClusterInstallConditionType = "Stopped"
)

// ClusterInstallCondition is a condition of a cluster install implementation.
type ClusterInstallCondition struct {
	Type   ClusterInstallConditionType `json:"type"`
	Status corev1.ConditionStatus      `json:"status"`
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}
