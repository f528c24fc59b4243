/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BuildSourceType is the kind of a build's source.
type BuildSourceType string

// BuildSourceDockerfile is an inline Dockerfile.
const BuildSourceDockerfile BuildSourceType = "Dockerfile"

// ConfigMapBuildSource copies a ConfigMap's keys into the build context.
type ConfigMapBuildSource struct {
	// +required
	ConfigMap corev1.LocalObjectReference `json:"configMap"`
	// DestinationDir is relative to the build context.
	// +optional
	DestinationDir string `json:"destinationDir,omitempty"`
}

// SecretBuildSource copies a Secret's keys into the build context.
type SecretBuildSource struct {
	// +required
	Secret corev1.LocalObjectReference `json:"secret"`
	// +optional
	DestinationDir string `json:"destinationDir,omitempty"`
}

// BuildSource is the input of a build.
type BuildSource struct {
	// +optional
	Type BuildSourceType `json:"type,omitempty"`
	// Dockerfile is the Dockerfile's content.
	// +optional
	Dockerfile *string `json:"dockerfile,omitempty"`
	// +optional
	Secrets []SecretBuildSource `json:"secrets,omitempty"`
	// +optional
	ConfigMaps []ConfigMapBuildSource `json:"configMaps,omitempty"`
}

// BuildStrategyType is the kind of a build's strategy.
type BuildStrategyType string

// DockerBuildStrategyType builds with a Dockerfile.
const DockerBuildStrategyType BuildStrategyType = "Docker"

// ImageOptimizationPolicy controls how layers are committed.
type ImageOptimizationPolicy string

// The values of ImageOptimizationPolicy.
const (
	ImageOptimizationNone              ImageOptimizationPolicy = "None"
	ImageOptimizationSkipLayers        ImageOptimizationPolicy = "SkipLayers"
	ImageOptimizationSkipLayersAndWarn ImageOptimizationPolicy = "SkipLayersAndWarn"
)

// DockerBuildStrategy are the options of a Docker build.
type DockerBuildStrategy struct {
	// From replaces the Dockerfile's FROM image.
	// +optional
	From *corev1.ObjectReference `json:"from,omitempty"`
	// PullSecret is used to pull the base images.
	// +optional
	PullSecret *corev1.LocalObjectReference `json:"pullSecret,omitempty"`
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// +optional
	BuildArgs []corev1.EnvVar `json:"buildArgs,omitempty"`
	// +optional
	ImageOptimizationPolicy *ImageOptimizationPolicy `json:"imageOptimizationPolicy,omitempty"`
}

// BuildStrategy says how to build.
type BuildStrategy struct {
	// +optional
	Type BuildStrategyType `json:"type,omitempty"`
	// +optional
	DockerStrategy *DockerBuildStrategy `json:"dockerStrategy,omitempty"`
}

// ImageLabel is a label set on the output image.
type ImageLabel struct {
	// +required
	Name string `json:"name"`
	// +optional
	Value string `json:"value,omitempty"`
}

// BuildOutput is where the built image goes.
type BuildOutput struct {
	// To is a DockerImage (a pullspec in Name) or an ImageStreamTag.
	// +optional
	To *corev1.ObjectReference `json:"to,omitempty"`
	// +optional
	PushSecret *corev1.LocalObjectReference `json:"pushSecret,omitempty"`
	// +optional
	ImageLabels []ImageLabel `json:"imageLabels,omitempty"`
}

// OptionalNodeSelector is a node selector where null (use the cluster's
// default) differs from empty (any node).
type OptionalNodeSelector map[string]string

// CommonSpec is the part of a build's spec shared with BuildConfig.
type CommonSpec struct {
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// +optional
	Source BuildSource `json:"source,omitempty"`
	// Strategy has no omitempty upstream.
	// +required
	Strategy BuildStrategy `json:"strategy"`
	// +optional
	Output BuildOutput `json:"output,omitempty"`
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// +optional
	CompletionDeadlineSeconds *int64 `json:"completionDeadlineSeconds,omitempty"`
	// NodeSelector has no omitempty upstream: nil is written as null.
	// +optional
	// +nullable
	NodeSelector OptionalNodeSelector `json:"nodeSelector"`
}

// BuildSpec is the desired build.
type BuildSpec struct {
	CommonSpec `json:",inline"`
}

// BuildPhase is where a build is in its life.
type BuildPhase string

// The values of BuildPhase.
const (
	BuildPhaseNew       BuildPhase = "New"
	BuildPhasePending   BuildPhase = "Pending"
	BuildPhaseRunning   BuildPhase = "Running"
	BuildPhaseComplete  BuildPhase = "Complete"
	BuildPhaseFailed    BuildPhase = "Failed"
	BuildPhaseError     BuildPhase = "Error"
	BuildPhaseCancelled BuildPhase = "Cancelled"
)

// StatusReason is a machine-readable reason for a build's phase.
type StatusReason string

// BuildStatusOutputTo describes the pushed image.
type BuildStatusOutputTo struct {
	// ImageDigest is the digest of the pushed image.
	// +optional
	ImageDigest string `json:"imageDigest,omitempty"`
}

// BuildStatusOutput describes the build's result.
type BuildStatusOutput struct {
	// +optional
	To *BuildStatusOutputTo `json:"to,omitempty"`
}

// BuildConditionType names a build condition; the types mirror the phases.
type BuildConditionType string

// BuildCondition is a build condition.
type BuildCondition struct {
	// +required
	Type BuildConditionType `json:"type"`
	// +required
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// BuildStatus is the observed state of a build.
type BuildStatus struct {
	// Phase has no omitempty upstream. A finished phase cannot change (the
	// API server's update validation): a success reported after a cancel is
	// refused.
	// +required
	// +kubebuilder:validation:XValidation:rule="!(oldSelf in ['Complete', 'Failed', 'Error', 'Cancelled']) || self == oldSelf",message="phase cannot be updated from a terminal state"
	Phase BuildPhase `json:"phase"`
	// +optional
	Cancelled bool `json:"cancelled,omitempty"`
	// +optional
	Reason StatusReason `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty"`
	// +optional
	CompletionTimestamp *metav1.Time `json:"completionTimestamp,omitempty"`
	// Duration is in nanoseconds on the wire.
	// +optional
	Duration time.Duration `json:"duration,omitempty"`
	// OutputDockerImageReference is the pullspec (without digest) pushed to.
	// +optional
	OutputDockerImageReference string `json:"outputDockerImageReference,omitempty"`
	// +optional
	Output BuildStatusOutput `json:"output,omitempty"`
	// +optional
	LogSnippet string `json:"logSnippet,omitempty"`
	// +optional
	Conditions []BuildCondition `json:"conditions,omitempty"`
}

// No status subresource: OpenShift serves builds, builds/clone, builds/log
// and builds/details, and no builds/status. Status (phase, and cancelled as
// `oc cancel-build` sets it) is written through the main resource, so the
// test CRD must not have one either, or it would drop those writes.

// Build is one image build.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=builds,scope=Namespaced
type Build struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec BuildSpec `json:"spec,omitempty"`
	// +optional
	Status BuildStatus `json:"status,omitempty"`
}

// BuildList is a list of Builds.
// +kubebuilder:object:root=true
type BuildList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Build `json:"items"`
}
