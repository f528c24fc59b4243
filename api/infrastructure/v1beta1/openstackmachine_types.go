package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OpenStackMachineSpec is the server a Machine runs on.
//
// +kubebuilder:validation:XValidation:message="at least one of flavor or flavorID must be set",rule=(has(self.flavor) || has(self.flavorID))
type OpenStackMachineSpec struct {
	// providerID is openstack://<region>/<server id>.
	// +optional
	ProviderID *string `json:"providerID,omitempty"`

	// flavor is the name of the flavor (v1beta2: flavor.filter.name).
	// +kubebuilder:validation:MinLength=1
	// +optional
	Flavor *string `json:"flavor,omitempty"`

	// flavorID is the ID of the flavor; it wins over flavor (v1beta2:
	// flavor.id).
	// +kubebuilder:validation:MinLength=1
	// +optional
	FlavorID *string `json:"flavorID,omitempty"`

	// +required
	Image ImageParam `json:"image"`

	// +optional
	SSHKeyName string `json:"sshKeyName,omitempty"`

	// +optional
	Ports []PortOpts `json:"ports,omitempty"`

	// +optional
	SecurityGroups []SecurityGroupParam `json:"securityGroups,omitempty"`

	// +optional
	Trunk bool `json:"trunk,omitempty"`

	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`

	// +listType=map
	// +listMapKey=key
	// +optional
	ServerMetadata []ServerMetadata `json:"serverMetadata,omitempty"`

	// +optional
	ConfigDrive *bool `json:"configDrive,omitempty"`

	// +optional
	RootVolume *RootVolume `json:"rootVolume,omitempty"`

	// +listType=map
	// +listMapKey=name
	// +optional
	AdditionalBlockDevices []AdditionalBlockDevice `json:"additionalBlockDevices,omitempty"`

	// +optional
	ServerGroup *ServerGroupParam `json:"serverGroup,omitempty"`

	// +optional
	IdentityRef *OpenStackIdentityReference `json:"identityRef,omitempty"`

	// floatingIPPoolRef names an IPAM pool (an OpenStackFloatingIPPool) the
	// server gets a floating IP from.
	// +optional
	FloatingIPPoolRef *corev1.TypedLocalObjectReference `json:"floatingIPPoolRef,omitempty"`

	// +listType=map
	// +listMapKey=name
	// +optional
	SchedulerHintAdditionalProperties []SchedulerHintAdditionalProperty `json:"schedulerHintAdditionalProperties,omitempty"`
}

// MachineInitialization is the CAPI v1beta2 contract's initialization block.
type MachineInitialization struct {
	// +optional
	Provisioned bool `json:"provisioned,omitempty"`
}

// OpenStackMachineStatus is the observed state of an OpenStackMachine.
type OpenStackMachineStatus struct {
	// ready is true when the Ready condition is (computed on conversion).
	// +optional
	Ready bool `json:"ready"`

	// +optional
	Initialization *MachineInitialization `json:"initialization,omitempty"`

	// +optional
	InstanceID *string `json:"instanceID,omitempty"`

	// +optional
	Addresses []corev1.NodeAddress `json:"addresses,omitempty"`

	// +optional
	InstanceState *InstanceState `json:"instanceState,omitempty"`

	// resolved has no v1beta2 counterpart (this provider keeps it on the
	// OpenStackServer of the same name); kept in the conversion annotation.
	// +optional
	Resolved *ResolvedMachineSpec `json:"resolved,omitempty"`

	// resources has no v1beta2 counterpart either.
	// +optional
	Resources *MachineResources `json:"resources,omitempty"`

	// +optional
	FailureReason *string `json:"failureReason,omitempty"`

	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`

	// conditions are CAPI v1beta1 conditions, converted in place from and
	// to v1beta2's metav1 conditions.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
}

// OpenStackMachine is the infrastructure of a CAPI Machine on OpenStack,
// at CAPO's v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:resource:path=openstackmachines,scope=Namespaced,categories=cluster-api,shortName=osm
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster this machine belongs to"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.ready",description="Ready condition is True"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Machine",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"Machine\")].name",description="Machine that owns this OpenStackMachine"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenStackMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OpenStackMachineSpec `json:"spec,omitempty"`
	// +optional
	Status OpenStackMachineStatus `json:"status,omitempty"`
}

// OpenStackMachineList is a list of OpenStackMachines.
//
// +kubebuilder:object:root=true
type OpenStackMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackMachine `json:"items"`
}

// OpenStackMachineTemplateResource is the template of an OpenStackMachine.
type OpenStackMachineTemplateResource struct {
	// +required
	Spec OpenStackMachineSpec `json:"spec"`
}

// OpenStackMachineTemplateSpec is the desired state of a template.
type OpenStackMachineTemplateSpec struct {
	// +required
	Template OpenStackMachineTemplateResource `json:"template"`
}

// NodeInfo describes the nodes a template makes.
// +kubebuilder:validation:MinProperties=1
type NodeInfo struct {
	// +optional
	OperatingSystem string `json:"operatingSystem,omitempty"`
}

// OpenStackMachineTemplateStatus is the observed state of a template.
type OpenStackMachineTemplateStatus struct {
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// +optional
	NodeInfo NodeInfo `json:"nodeInfo,omitempty,omitzero"`

	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
}

// OpenStackMachineTemplate is a template of OpenStackMachines, at CAPO's
// v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:resource:path=openstackmachinetemplates,scope=Namespaced,categories=cluster-api,shortName=osmt
type OpenStackMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OpenStackMachineTemplateSpec `json:"spec,omitempty"`
	// +optional
	Status OpenStackMachineTemplateStatus `json:"status,omitempty"`
}

// OpenStackMachineTemplateList is a list of OpenStackMachineTemplates.
//
// +kubebuilder:object:root=true
type OpenStackMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackMachineTemplate `json:"items"`
}

func init() {
	registerTypes(&OpenStackMachine{}, &OpenStackMachineList{}, &OpenStackMachineTemplate{}, &OpenStackMachineTemplateList{})
}
