package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

// OpenStackServerFinalizer keeps the object until its OpenStack resources
// are gone.
const OpenStackServerFinalizer = "openstackserver.infrastructure.cluster.x-k8s.io"

// OpenStackServerSpec is one server and everything it needs. It is
// immutable: a different server is a new object.
//
// +kubebuilder:validation:XValidation:rule="has(self.flavor) || has(self.flavorID)",message="at least one of flavor or flavorID must be set"
type OpenStackServerSpec struct {
	// additionalBlockDevices attached to the server.
	// +listType=map
	// +listMapKey=name
	// +optional
	AdditionalBlockDevices []infrav1.AdditionalBlockDevice `json:"additionalBlockDevices,omitempty"`

	// availabilityZone of the server.
	// +optional
	AvailabilityZone *string `json:"availabilityZone,omitempty"`

	// configDrive attaches a config drive.
	// +optional
	ConfigDrive *bool `json:"configDrive,omitempty"`

	// flavor name; flavorID wins when both are set.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Flavor *string `json:"flavor,omitempty"`

	// flavorID of the server.
	// +kubebuilder:validation:MinLength=1
	// +optional
	FlavorID *string `json:"flavorID,omitempty"`

	// floatingIPPoolRef names an IPAM pool (an OpenStackFloatingIPPool): the
	// server claims an address from it and gets that floating IP on its
	// first port; the claim is released when the server is deleted.
	// +optional
	FloatingIPPoolRef *corev1.TypedLocalObjectReference `json:"floatingIPPoolRef,omitempty"`

	// identityRef holds the credentials.
	// +required
	IdentityRef infrav1.OpenStackIdentityReference `json:"identityRef"`

	// image of the server.
	// +required
	Image infrav1.ImageParam `json:"image"`

	// ports of the server, in order. Each must name its network.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:XValidation:rule="self.all(p, has(p.network))",message="every port of an OpenStackServer must name its network"
	// +required
	Ports []infrav1.PortOpts `json:"ports"`

	// rootVolume makes the server boot from a volume.
	// +optional
	RootVolume *infrav1.RootVolume `json:"rootVolume,omitempty"`

	// sshKeyName is a Nova keypair; may be empty.
	// +required
	SSHKeyName string `json:"sshKeyName"`

	// securityGroups of ports that do not set their own.
	// +listType=atomic
	// +optional
	SecurityGroups []infrav1.SecurityGroupParam `json:"securityGroups,omitempty"`

	// serverGroup of the server.
	// +optional
	ServerGroup *infrav1.ServerGroupParam `json:"serverGroup,omitempty"`

	// serverMetadata is Nova metadata.
	// +listType=map
	// +listMapKey=key
	// +optional
	ServerMetadata []infrav1.ServerMetadata `json:"serverMetadata,omitempty"`

	// tags for the server, its ports, trunks and volumes.
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`

	// trunk is the default of ports[].trunk.
	// +optional
	Trunk *bool `json:"trunk,omitempty"`

	// userDataRef is a Secret whose `value` key is the user data.
	// +optional
	UserDataRef *corev1.LocalObjectReference `json:"userDataRef,omitempty"`

	// schedulerHintAdditionalProperties are extra Nova scheduler hints.
	// +listType=map
	// +listMapKey=name
	// +optional
	SchedulerHintAdditionalProperties []infrav1.SchedulerHintAdditionalProperty `json:"schedulerHintAdditionalProperties,omitempty"`
}

// ResolvedServerSpec is the spec with every reference resolved to an ID.
// It is written once, before anything is created.
type ResolvedServerSpec struct {
	// +optional
	ServerGroupID string `json:"serverGroupID,omitempty"`
	// +optional
	ImageID string `json:"imageID,omitempty"`
	// +optional
	FlavorID string `json:"flavorID,omitempty"`
	// ports with their final names and IDs of what they refer to.
	// +listType=atomic
	// +optional
	Ports []infrav1.ResolvedPortSpec `json:"ports,omitempty"`
}

// VolumeStatus is a volume of the server.
type VolumeStatus struct {
	// name is root or the additional block device's name, when known
	// (volumes made by Nova from block device mappings are known by ID).
	// +optional
	Name string `json:"name,omitempty"`
	// id of the Cinder volume.
	// +required
	ID string `json:"id"`
}

// ServerResources are the OpenStack resources created for the server.
type ServerResources struct {
	// ports, in the order of the spec.
	// +listType=atomic
	// +optional
	Ports []infrav1.PortStatus `json:"ports,omitempty"`

	// volumes attached to the server.
	// +listType=atomic
	// +optional
	Volumes []VolumeStatus `json:"volumes,omitempty"`
}

// OpenStackServerInitializationStatus follows the CAPI v1beta2 contract's
// shape.
type OpenStackServerInitializationStatus struct {
	// provisioned is true once the server was first ACTIVE; never reset.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// OpenStackServerStatus is the observed state of the server.
type OpenStackServerStatus struct {
	// initialization: provisioned once the server was first ACTIVE.
	// +optional
	Initialization *OpenStackServerInitializationStatus `json:"initialization,omitempty"`

	// instanceID is the Nova server ID.
	// +optional
	InstanceID *string `json:"instanceID,omitempty"`

	// instanceState is the Nova server status.
	// +optional
	InstanceState *infrav1.InstanceState `json:"instanceState,omitempty"`

	// addresses of the server.
	// +listType=atomic
	// +optional
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// resolved is the spec with references resolved to IDs.
	// +optional
	Resolved *ResolvedServerSpec `json:"resolved,omitempty"`

	// resources created for the server.
	// +optional
	Resources *ServerResources `json:"resources,omitempty"`

	// conditions: Ready (summary), ReferencesResolved, PortsReady,
	// VolumesReady, InstanceReady, Paused.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OpenStackServer is one OpenStack server with its ports, trunks and
// volumes.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openstackservers,scope=Namespaced,categories=cluster-api,shortName=oss
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.instanceState",description="Nova server status"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Ready condition"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Ready condition reason"
// +kubebuilder:printcolumn:name="InstanceID",type="string",JSONPath=".status.instanceID",description="Nova server ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenStackServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackServerSpec `json:"spec"`
	// +optional
	Status OpenStackServerStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions.
func (s *OpenStackServer) GetConditions() []metav1.Condition { return s.Status.Conditions }

// SetConditions sets the conditions.
func (s *OpenStackServer) SetConditions(c []metav1.Condition) { s.Status.Conditions = c }

// OpenStackServerList is a list of OpenStackServers.
//
// +kubebuilder:object:root=true
type OpenStackServerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackServer `json:"items"`
}

func init() {
	registerTypes(&OpenStackServer{}, &OpenStackServerList{})
}
