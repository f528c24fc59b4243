/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BMCDetails are how to reach and log in to the host's BMC.
type BMCDetails struct {
	// Address is a BMC URL such as redfish-virtualmedia://host/redfish/v1/Systems/1.
	Address string `json:"address"`
	// CredentialsName names a Secret with username and password keys.
	CredentialsName string `json:"credentialsName"`
	// +optional
	DisableCertificateVerification bool `json:"disableCertificateVerification,omitempty"`
}

// BootMode is how the host boots.
// +kubebuilder:validation:Enum=UEFI;UEFISecureBoot;legacy
type BootMode string

// The values of BootMode.
const (
	UEFI           BootMode = "UEFI"
	UEFISecureBoot BootMode = "UEFISecureBoot"
	Legacy         BootMode = "legacy"
)

// ChecksumType is the hash algorithm of an image checksum.
// +kubebuilder:validation:Enum=md5;sha256;sha512;auto
type ChecksumType string

// Image is the image written to the host's disk.
type Image struct {
	URL string `json:"url"`
	// +optional
	Checksum string `json:"checksum,omitempty"`
	// +optional
	ChecksumType ChecksumType `json:"checksumType,omitempty"`
	// DiskFormat is spelled format on the wire; live-iso boots the image
	// from virtual media instead of writing it.
	// +optional
	// +kubebuilder:validation:Enum=raw;qcow2;vdi;vmdk;live-iso
	DiskFormat *string `json:"format,omitempty"`
}

// CustomDeploy names a custom deploy method.
type CustomDeploy struct {
	Method string `json:"method"`
}

// BareMetalHostSpec is the desired state of a host.
type BareMetalHostSpec struct {
	// BMC has omitempty upstream, but as a struct it is always written.
	// +optional
	BMC BMCDetails `json:"bmc,omitempty"`
	// +optional
	BootMode BootMode `json:"bootMode,omitempty"`
	// BootMACAddress is the MAC of the NIC that PXE boots.
	// +optional
	// +kubebuilder:validation:Pattern=`[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}`
	BootMACAddress string `json:"bootMACAddress,omitempty"`
	// Online is the desired power state. No omitempty upstream; required.
	Online bool `json:"online"`
	// ConsumerRef is the object that claimed the host.
	// +optional
	ConsumerRef *corev1.ObjectReference `json:"consumerRef,omitempty"`
	// +optional
	Image *Image `json:"image,omitempty"`
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`
	// +optional
	CustomDeploy *CustomDeploy `json:"customDeploy,omitempty"`
}

// OperationalStatus is the host's overall health.
// +kubebuilder:validation:Enum="";OK;discovered;error;delayed;detached;servicing
type OperationalStatus string

// The values of OperationalStatus this project looks at.
const (
	OperationalStatusOK         OperationalStatus = "OK"
	OperationalStatusDiscovered OperationalStatus = "discovered"
	OperationalStatusError      OperationalStatus = "error"
	OperationalStatusDetached   OperationalStatus = "detached"
)

// ErrorType is the class of the host's last error.
// +kubebuilder:validation:Enum="provisioned registration error";"registration error";"inspection error";"preparation error";"provisioning error";"power management error";"servicing error"
type ErrorType string

// ProvisioningState is where the host is in its provisioning life cycle,
// such as available, provisioning, provisioned, deprovisioning.
type ProvisioningState string

// ProvisionStatus is the host's provisioning state. Both fields are
// required upstream.
type ProvisionStatus struct {
	State ProvisioningState `json:"state"`
	// ID is the Ironic node UUID.
	ID string `json:"ID"`
}

// BareMetalHostStatus is the observed state of a host. Upstream writes
// operationalStatus, provisioning, errorMessage, poweredOn, errorCount and
// provisioningFailCount even when empty, and the CRD requires them.
type BareMetalHostStatus struct {
	OperationalStatus OperationalStatus `json:"operationalStatus"`
	// +optional
	ErrorType ErrorType `json:"errorType,omitempty"`
	// +optional
	LastUpdated  *metav1.Time    `json:"lastUpdated,omitempty"`
	Provisioning ProvisionStatus `json:"provisioning"`
	ErrorMessage string          `json:"errorMessage"`
	PoweredOn    bool            `json:"poweredOn"`
	// +kubebuilder:default=0
	ErrorCount int `json:"errorCount"`
	// +kubebuilder:default=0
	ProvisioningFailCount int `json:"provisioningFailCount"`
}

// BareMetalHost is a physical host managed by the bare-metal operator.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=baremetalhosts,scope=Namespaced,shortName=bmh;bmhost
// +kubebuilder:subresource:status
type BareMetalHost struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec BareMetalHostSpec `json:"spec,omitempty"`
	// +optional
	Status BareMetalHostStatus `json:"status,omitempty"`
}

// BareMetalHostList is a list of BareMetalHosts.
// +kubebuilder:object:root=true
type BareMetalHostList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BareMetalHost `json:"items"`
}
