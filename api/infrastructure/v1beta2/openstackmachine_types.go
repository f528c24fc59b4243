package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// OpenStackMachineFinalizer lets the controller delete the machine's server
// before the OpenStackMachine goes away.
const OpenStackMachineFinalizer = "openstackmachine.infrastructure.cluster.x-k8s.io"

// OpenStackMachineSpec is the server a Machine runs on. It is immutable
// except for providerID, which the controller sets.
type OpenStackMachineSpec struct {
	// providerID is openstack://<region>/<server id>, set by the controller.
	// +optional
	ProviderID string `json:"providerID,omitempty"`

	// flavor of the server.
	// +required
	Flavor FlavorParam `json:"flavor"`

	// image the server boots from (or its root volume is made from).
	// +required
	Image ImageParam `json:"image"`

	// sshKeyName is a Nova keypair to inject.
	// +optional
	SSHKeyName string `json:"sshKeyName,omitempty"`

	// ports of the server. When empty, one port on the cluster's network.
	// +listType=atomic
	// +optional
	Ports []PortOpts `json:"ports,omitempty"`

	// securityGroups of ports that do not set their own.
	// +listType=atomic
	// +optional
	SecurityGroups []SecurityGroupParam `json:"securityGroups,omitempty"`

	// trunk is the default of ports[].trunk.
	// +optional
	Trunk bool `json:"trunk,omitempty"`

	// tags for the server and every resource made for it, in addition to
	// the cluster's.
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`

	// serverMetadata is Nova metadata of the server.
	// +listType=map
	// +listMapKey=key
	// +optional
	ServerMetadata []ServerMetadata `json:"serverMetadata,omitempty"`

	// configDrive attaches a config drive with the user data.
	// +optional
	ConfigDrive *bool `json:"configDrive,omitempty"`

	// rootVolume makes the server boot from a volume.
	// +optional
	RootVolume *RootVolume `json:"rootVolume,omitempty"`

	// additionalBlockDevices attached to the server.
	// +listType=map
	// +listMapKey=name
	// +optional
	AdditionalBlockDevices []AdditionalBlockDevice `json:"additionalBlockDevices,omitempty"`

	// serverGroup of the server.
	// +optional
	ServerGroup *ServerGroupParam `json:"serverGroup,omitempty"`

	// identityRef holds the credentials; the OpenStackCluster's when unset.
	// +optional
	IdentityRef *OpenStackIdentityReference `json:"identityRef,omitempty"`

	// floatingIPPoolRef names an IPAM pool (an OpenStackFloatingIPPool): the
	// machine's server claims an address from it and gets that floating IP
	// on its first port; the claim is released when the server is deleted.
	// +optional
	FloatingIPPoolRef *corev1.TypedLocalObjectReference `json:"floatingIPPoolRef,omitempty"`

	// schedulerHintAdditionalProperties are extra Nova scheduler hints.
	// +listType=map
	// +listMapKey=name
	// +optional
	SchedulerHintAdditionalProperties []SchedulerHintAdditionalProperty `json:"schedulerHintAdditionalProperties,omitempty"`
}

// OpenStackMachineInitializationStatus is the CAPI v1beta2 contract's
// initialization block.
type OpenStackMachineInitializationStatus struct {
	// provisioned is true once the server was first ACTIVE. It is never
	// reset.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// OpenStackMachineStatus is the observed state of an OpenStackMachine.
type OpenStackMachineStatus struct {
	// initialization per the CAPI v1beta2 contract.
	// +optional
	Initialization *OpenStackMachineInitializationStatus `json:"initialization,omitempty"`

	// instanceID is the Nova server ID.
	// +optional
	InstanceID *string `json:"instanceID,omitempty"`

	// instanceState is the Nova server status.
	// +optional
	InstanceState *InstanceState `json:"instanceState,omitempty"`

	// addresses of the server, copied to the Machine.
	// +listType=atomic
	// +optional
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// apiServerLoadBalancerID is the ID of the cluster's API load balancer
	// whose pools this control-plane machine was last made a member of.
	// When the cluster's load balancer is another one (it was deleted and
	// recreated), the machine joins the new one's pools and
	// APIServerIngressReady is not True until it has.
	// +optional
	APIServerLoadBalancerID *string `json:"apiServerLoadBalancerID,omitempty"`

	// conditions: Ready (summary), InstanceReady, APIServerIngressReady,
	// Paused.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OpenStackMachine is the infrastructure of a CAPI Machine on OpenStack.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openstackmachines,scope=Namespaced,categories=cluster-api,shortName=osm
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster this machine belongs to"
// +kubebuilder:printcolumn:name="Machine",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"Machine\")].name",description="Machine that owns this OpenStackMachine"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.instanceState",description="Nova server status"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Ready condition"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Ready condition reason"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenStackMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackMachineSpec `json:"spec"`
	// +optional
	Status OpenStackMachineStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions (CAPI conditions helpers use it).
func (m *OpenStackMachine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions.
func (m *OpenStackMachine) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// OpenStackMachineList is a list of OpenStackMachines.
//
// +kubebuilder:object:root=true
type OpenStackMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackMachine `json:"items"`
}

func init() {
	registerTypes(&OpenStackMachine{}, &OpenStackMachineList{})
}
