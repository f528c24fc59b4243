/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons of ORC objects.
const (
	// ConditionAvailable is True when the OpenStack resource exists and can
	// be used (for an Image: Glance reports it active).
	ConditionAvailable = "Available"
	// ConditionProgressing is True while ORC works on the object; False
	// once it is done, successfully or not.
	ConditionProgressing = "Progressing"

	// ReasonSuccess: reconciled.
	ReasonSuccess = "Success"
	// ReasonInvalidConfiguration: the spec cannot be acted on; terminal.
	ReasonInvalidConfiguration = "InvalidConfiguration"
	// ReasonUnrecoverableError: an error ORC does not retry; terminal.
	ReasonUnrecoverableError = "UnrecoverableError"
)

// CloudCredentialsReference names the Secret with the clouds.yaml ORC uses.
type CloudCredentialsReference struct {
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=253
	// +required
	SecretName string `json:"secretName"`
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=256
	// +required
	CloudName string `json:"cloudName"`
}

// ImageFilter selects an existing Glance image to import.
// +kubebuilder:validation:MinProperties:=1
type ImageFilter struct {
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=255
	// +kubebuilder:validation:Pattern:="^[^,]+$"
	// +optional
	Name *string `json:"name,omitempty"`
	// +kubebuilder:validation:MaxItems:=64
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// ImageImport imports an existing image: by ID or by filter.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type ImageImport struct {
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`
	// +optional
	Filter *ImageFilter `json:"filter,omitempty"`
}

// ImageHash is the hash of downloaded content.
type ImageHash struct {
	// +kubebuilder:validation:Enum:=md5;sha1;sha256;sha512
	// +required
	Algorithm string `json:"algorithm"`
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=1024
	// +kubebuilder:validation:Pattern:="^[0-9a-f]+$"
	// +required
	Value string `json:"value"`
}

// ImageContentSourceDownload is where ORC downloads the image from.
type ImageContentSourceDownload struct {
	// +kubebuilder:validation:Format:=uri
	// +kubebuilder:validation:MaxLength:=2048
	// +required
	URL string `json:"url"`
	// +kubebuilder:validation:Enum:=xz;gz;bz2
	// +optional
	Decompress *string `json:"decompress,omitempty"`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="hash is immutable"
	// +optional
	Hash *ImageHash `json:"hash,omitempty"`
}

// ImageContent is the content of an image ORC uploads.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="content is immutable"
type ImageContent struct {
	// +kubebuilder:validation:Enum:=ami;ari;aki;bare;ovf;ova;docker;compressed
	// +kubebuilder:default:=bare
	// +optional
	ContainerFormat string `json:"containerFormat,omitempty"`
	// +kubebuilder:validation:Enum:=ami;ari;aki;vhd;vhdx;vmdk;raw;qcow2;vdi;ploop;iso
	// +required
	DiskFormat string `json:"diskFormat"`
	// +required
	Download *ImageContentSourceDownload `json:"download"`
}

// ImageResourceSpec is the image ORC creates.
type ImageResourceSpec struct {
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=255
	// +kubebuilder:validation:Pattern:="^[^,]+$"
	// +optional
	Name *string `json:"name,omitempty"`
	// +optional
	Protected *bool `json:"protected,omitempty"`
	// +kubebuilder:validation:MaxItems:=64
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
	// +kubebuilder:validation:Enum:=public;private;shared;community
	// +optional
	Visibility *string `json:"visibility,omitempty"`
	// +optional
	Content *ImageContent `json:"content,omitempty"`
}

// ManagedOptions say what ORC does with a managed resource.
type ManagedOptions struct {
	// +kubebuilder:validation:Enum:=delete;detach
	// +kubebuilder:default:=delete
	// +optional
	OnDelete string `json:"onDelete,omitempty"`
}

// ImageSpec is what ORC is asked to do.
// +kubebuilder:validation:XValidation:rule="self.managementPolicy == 'managed' ? has(self.resource) : true",message="resource must be specified when policy is managed"
// +kubebuilder:validation:XValidation:rule="self.managementPolicy == 'managed' ? !has(self.__import__) : true",message="import may not be specified when policy is managed"
// +kubebuilder:validation:XValidation:rule="self.managementPolicy == 'unmanaged' ? !has(self.resource) : true",message="resource may not be specified when policy is unmanaged"
// +kubebuilder:validation:XValidation:rule="self.managementPolicy == 'unmanaged' ? has(self.__import__) : true",message="import must be specified when policy is unmanaged"
// +kubebuilder:validation:XValidation:rule="has(self.managedOptions) ? self.managementPolicy == 'managed' : true",message="managedOptions may only be provided when policy is managed"
// +kubebuilder:validation:XValidation:rule="!has(self.__import__) ? has(self.resource.content) : true",message="resource content must be specified when not importing"
type ImageSpec struct {
	// +optional
	Import *ImageImport `json:"import,omitempty"`
	// +optional
	Resource *ImageResourceSpec `json:"resource,omitempty"`
	// +kubebuilder:validation:Enum:=managed;unmanaged
	// +kubebuilder:default:=managed
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="managementPolicy is immutable"
	// +optional
	ManagementPolicy string `json:"managementPolicy,omitempty"`
	// +optional
	ManagedOptions *ManagedOptions `json:"managedOptions,omitempty"`
	// +required
	CloudCredentialsRef CloudCredentialsReference `json:"cloudCredentialsRef"`
}

// ImageResourceStatus is the Glance image as ORC last saw it.
type ImageResourceStatus struct {
	// +kubebuilder:validation:MaxLength:=1024
	// +optional
	Name string `json:"name,omitempty"`
	// status is Glance's (active, queued, ...).
	// +kubebuilder:validation:MaxLength:=1024
	// +optional
	Status string `json:"status,omitempty"`
}

// ImageStatus is what ORC reports.
type ImageStatus struct {
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems:=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// id is the Glance image's ID.
	// +optional
	ID *string `json:"id,omitempty"`
	// +optional
	Resource *ImageResourceStatus `json:"resource,omitempty"`
}

// Image is an ORC Image: a Glance image that ORC creates or imports.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=openstack
type Image struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ImageSpec `json:"spec,omitempty"`
	// +optional
	Status ImageStatus `json:"status,omitempty"`
}

// ImageList is a list of Images.
// +kubebuilder:object:root=true
type ImageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Image `json:"items"`
}
