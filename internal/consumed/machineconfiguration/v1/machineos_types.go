/*
Copyright 2026 The ocp-capi Authors.
SPDX-License-Identifier: Apache-2.0
*/

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachineOSConfig and MachineOSBuild (GA in OpenShift 4.19): the on-cluster
// layering API that replaced the pool annotations of 4.14. Both are
// cluster-scoped; a MachineOSConfig is named after its pool (upstream's CEL
// rule) and says how to build the pool's image; each MachineOSBuild is one
// build and shows its state in its status. Mirrored from openshift/api
// machineconfiguration/v1/types_machineosconfig.go and
// types_machineosbuild.go at the commit named in doc.go.

// MachineConfigPoolReference names a MachineConfigPool.
type MachineConfigPoolReference struct {
	// +required
	Name string `json:"name"`
}

// MachineOSImageBuilder says which builder builds the images.
type MachineOSImageBuilder struct {
	// ImageBuilderType is the builder: Job (buildah in a Job) only.
	// +required
	// +kubebuilder:validation:Enum=Job
	ImageBuilderType string `json:"imageBuilderType"`
}

// ImageSecretObjectReference names a Secret in the MCO's namespace.
type ImageSecretObjectReference struct {
	// +required
	Name string `json:"name"`
}

// MachineOSContainerfile is the user's Containerfile for one architecture.
type MachineOSContainerfile struct {
	// ContainerfileArch is ARM64, AMD64, PPC64LE, S390X or NoArch (all).
	// +optional
	// +kubebuilder:default=NoArch
	// +kubebuilder:validation:Enum=ARM64;AMD64;PPC64LE;S390X;NoArch
	ContainerfileArch string `json:"containerfileArch,omitempty"`
	// Content is the Containerfile, appended to the generated one.
	// +required
	// +kubebuilder:validation:MaxLength=4096
	Content string `json:"content"`
}

// MachineOSConfigSpec says how the pool's image is built.
type MachineOSConfigSpec struct {
	// +required
	MachineConfigPool MachineConfigPoolReference `json:"machineConfigPool"`
	// +required
	ImageBuilder MachineOSImageBuilder `json:"imageBuilder"`
	// BaseImagePullSecret pulls the base image; unset means the cluster's
	// global pull secret.
	// +optional
	BaseImagePullSecret *ImageSecretObjectReference `json:"baseImagePullSecret,omitempty"`
	// RenderedImagePushSecret pushes the built image.
	// +required
	RenderedImagePushSecret ImageSecretObjectReference `json:"renderedImagePushSecret"`
	// RenderedImagePushSpec is where the image is pushed:
	// host[:port][/namespace]/name:tag.
	// +required
	RenderedImagePushSpec string `json:"renderedImagePushSpec"`
	// ContainerFile is the user's Containerfile, one per architecture.
	// +optional
	// +listType=map
	// +listMapKey=containerfileArch
	// +kubebuilder:validation:MaxItems=4
	ContainerFile []MachineOSContainerfile `json:"containerFile,omitempty"`
}

// ObjectReference names an object by group, resource, namespace and name.
type ObjectReference struct {
	// +required
	Group string `json:"group"`
	// +required
	Resource string `json:"resource"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +required
	Name string `json:"name"`
}

// MachineOSConfigStatus is what the build controller reports.
type MachineOSConfigStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// CurrentImagePullSpec is the pool's image, by digest.
	// +optional
	CurrentImagePullSpec string `json:"currentImagePullSpec,omitempty"`
	// MachineOSBuild is the build that made CurrentImagePullSpec.
	// +optional
	MachineOSBuild *ObjectReference `json:"machineOSBuild,omitempty"`
}

// MachineOSConfig configures the layered image of one MachineConfigPool.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machineosconfigs,scope=Cluster
// +kubebuilder:subresource:status
type MachineOSConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec MachineOSConfigSpec `json:"spec"`
	// +optional
	Status MachineOSConfigStatus `json:"status,omitempty"`
}

// MachineOSConfigList is a list of MachineOSConfigs.
// +kubebuilder:object:root=true
type MachineOSConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineOSConfig `json:"items"`
}

// MachineConfigReference names a rendered MachineConfig.
type MachineConfigReference struct {
	// +required
	Name string `json:"name"`
}

// MachineOSConfigReference names a MachineOSConfig.
type MachineOSConfigReference struct {
	// +required
	Name string `json:"name"`
}

// MachineOSBuildSpec is one build; immutable upstream.
type MachineOSBuildSpec struct {
	// +required
	MachineConfig MachineConfigReference `json:"machineConfig"`
	// +required
	MachineOSConfig MachineOSConfigReference `json:"machineOSConfig"`
	// RenderedImagePushSpec is the tag the build pushes.
	// +required
	RenderedImagePushSpec string `json:"renderedImagePushSpec"`
}

// MachineOSBuilderReference is the builder that runs a build.
type MachineOSBuilderReference struct {
	// +required
	ImageBuilderType string `json:"imageBuilderType"`
	// Job is the build's Job (required when the type is Job).
	// +optional
	Job *ObjectReference `json:"job,omitempty"`
}

// Condition types of a MachineOSBuild (upstream's BuildProgress).
const (
	MachineOSBuildPrepared    = "Prepared"
	MachineOSBuildBuilding    = "Building"
	MachineOSBuildFailed      = "Failed"
	MachineOSBuildInterrupted = "Interrupted"
	MachineOSBuildSucceeded   = "Succeeded"
)

// MachineOSBuildStatus is the build's state.
type MachineOSBuildStatus struct {
	// Conditions: Prepared, Building, Failed, Interrupted, Succeeded; once
	// Failed, Interrupted or Succeeded is True they cannot change.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Builder *MachineOSBuilderReference `json:"builder,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	// +listMapKey=resource
	// +kubebuilder:validation:MaxItems=10
	RelatedObjects []ObjectReference `json:"relatedObjects,omitempty"`
	// +optional
	BuildStart *metav1.Time `json:"buildStart,omitempty"`
	// +optional
	BuildEnd *metav1.Time `json:"buildEnd,omitempty"`
	// DigestedImagePushSpec is the pushed image, by digest.
	// +optional
	DigestedImagePushSpec string `json:"digestedImagePushSpec,omitempty"`
}

// MachineOSBuild is one build of a pool's layered image.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machineosbuilds,scope=Cluster
// +kubebuilder:subresource:status
type MachineOSBuild struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec MachineOSBuildSpec `json:"spec"`
	// +optional
	Status MachineOSBuildStatus `json:"status,omitempty"`
}

// MachineOSBuildList is a list of MachineOSBuilds.
// +kubebuilder:object:root=true
type MachineOSBuildList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineOSBuild `json:"items"`
}

func init() {
	registerTypes(&MachineOSConfig{}, &MachineOSConfigList{}, &MachineOSBuild{}, &MachineOSBuildList{})
}
