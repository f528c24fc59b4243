package v1beta2

// Types shared by OpenStackMachine, OpenStackServer and (later)
// OpenStackCluster. JSON names, list types and constraints follow CAPO's
// v1beta2 API.

// IdentityRefType says what an identityRef points at.
// +kubebuilder:validation:Enum=Secret;ClusterIdentity
type IdentityRefType string

const (
	// IdentityRefTypeSecret is a Secret in the object's namespace holding
	// clouds.yaml (and optionally cacert).
	IdentityRefTypeSecret IdentityRefType = "Secret"
	// IdentityRefTypeClusterIdentity is an OpenStackClusterIdentity
	// (cluster-scoped), usable from the namespaces its namespaceSelector
	// selects.
	IdentityRefTypeClusterIdentity IdentityRefType = "ClusterIdentity"
)

// OpenStackIdentityReference points at the credentials used to talk to
// OpenStack: a Secret with a `clouds.yaml` key (and optionally `cacert`, a
// PEM CA bundle), either in the same namespace or through an
// OpenStackClusterIdentity; the cloud to use in it; and optionally a
// region.
// +kubebuilder:validation:XValidation:rule="(!has(self.region) && !has(oldSelf.region)) || self.region == oldSelf.region",message="region is immutable"
type OpenStackIdentityReference struct {
	// type is Secret (the default) or ClusterIdentity.
	// +kubebuilder:default:=Secret
	// +optional
	Type IdentityRefType `json:"type,omitempty"`

	// name of the Secret in the same namespace (type Secret) or of the
	// OpenStackClusterIdentity (type ClusterIdentity). The Secret must hold
	// a `clouds.yaml` key and may hold `cacert`.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// cloudName is the entry of clouds.yaml to use.
	// +kubebuilder:validation:MinLength=1
	// +required
	CloudName string `json:"cloudName"`

	// region overrides the region in clouds.yaml. When set it is part of
	// the providerID (openstack://<region>/<id>).
	// +optional
	Region string `json:"region,omitempty"`
}

// FlavorParam selects a flavor by ID or by name. Exactly one is set.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type FlavorParam struct {
	// id is the flavor's ID. It is not validated before use.
	// +optional
	ID *string `json:"id,omitempty"`

	// filter selects the flavor by name.
	// +optional
	Filter *FlavorFilter `json:"filter,omitempty"`
}

// FlavorFilter is a query for a flavor.
// +kubebuilder:validation:MinProperties:=1
type FlavorFilter struct {
	// name of the flavor.
	// +optional
	Name *string `json:"name,omitempty"`
}

// ImageParam selects an image by ID, by filter, or by an ORC Image
// reference. Exactly one is set.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type ImageParam struct {
	// id is the image's UUID.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// filter selects the image by name and tags; it must match exactly one.
	// +optional
	Filter *ImageFilter `json:"filter,omitempty"`

	// imageRef names an ORC Image (openstack.k-orc.cloud) in the same
	// namespace; the image is the Glance image it reports once Available.
	// +optional
	ImageRef *ResourceReference `json:"imageRef,omitempty"`
}

// ImageFilter is a query for an image.
// +kubebuilder:validation:MinProperties:=1
type ImageFilter struct {
	// name of the image.
	// +optional
	Name *string `json:"name,omitempty"`

	// tags the image must carry.
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// ResourceReference names an object in the same namespace.
type ResourceReference struct {
	// name of the referenced object.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
}

// NeutronTag is a Neutron tag: no commas, not empty.
// +kubebuilder:validation:Pattern:="^[^,]+$"
// +kubebuilder:validation:MinLength:=1
type NeutronTag string

// FilterByNeutronTags selects Neutron resources by their tags.
type FilterByNeutronTags struct {
	// tags: the resource has all of these tags.
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`

	// tagsAny: the resource has at least one of these tags.
	// +listType=set
	// +optional
	TagsAny []NeutronTag `json:"tagsAny,omitempty"`

	// notTags: the resource has none of these tags (all of them excluded).
	// +listType=set
	// +optional
	NotTags []NeutronTag `json:"notTags,omitempty"`

	// notTagsAny: the resource lacks at least one of these tags.
	// +listType=set
	// +optional
	NotTagsAny []NeutronTag `json:"notTagsAny,omitempty"`
}

// NetworkParam selects a network by ID or filter. Exactly one is set.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type NetworkParam struct {
	// id is the network's UUID.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// filter must match exactly one network.
	// +optional
	Filter *NetworkFilter `json:"filter,omitempty"`
}

// NetworkFilter is a query for a network.
// +kubebuilder:validation:MinProperties:=1
type NetworkFilter struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	FilterByNeutronTags `json:",inline"`
}

// SubnetParam selects a subnet by ID or filter. Exactly one is set.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type SubnetParam struct {
	// id is the subnet's UUID.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// filter must match exactly one subnet.
	// +optional
	Filter *SubnetFilter `json:"filter,omitempty"`
}

// SubnetFilter is a query for a subnet.
// +kubebuilder:validation:MinProperties:=1
type SubnetFilter struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	ProjectID string `json:"projectID,omitempty"`
	// +optional
	IPVersion int32 `json:"ipVersion,omitempty"`
	// +optional
	GatewayIP string `json:"gatewayIP,omitempty"`
	// +optional
	CIDR string `json:"cidr,omitempty"`
	// +optional
	IPv6AddressMode string `json:"ipv6AddressMode,omitempty"`
	// +optional
	IPv6RAMode string `json:"ipv6RAMode,omitempty"`

	FilterByNeutronTags `json:",inline"`
}

// SecurityGroupParam selects a security group by ID or filter.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type SecurityGroupParam struct {
	// id is the security group's UUID.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// filter must match exactly one security group.
	// +optional
	Filter *SecurityGroupFilter `json:"filter,omitempty"`
}

// SecurityGroupFilter is a query for a security group.
// +kubebuilder:validation:MinProperties:=1
type SecurityGroupFilter struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	FilterByNeutronTags `json:",inline"`
}

// ServerGroupParam selects a Nova server group by ID or name.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type ServerGroupParam struct {
	// id is the server group's UUID.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// filter selects the server group by name.
	// +optional
	Filter *ServerGroupFilter `json:"filter,omitempty"`
}

// ServerGroupFilter is a query for a server group.
// +kubebuilder:validation:MinProperties:=1
type ServerGroupFilter struct {
	// +optional
	Name *string `json:"name,omitempty"`
}

// FixedIP asks for an address on a subnet of the port's network.
type FixedIP struct {
	// subnet the address comes from. If unset, Neutron picks one.
	// +optional
	Subnet *SubnetParam `json:"subnet,omitempty"`

	// ipAddress is a specific address to use.
	// +optional
	IPAddress *string `json:"ipAddress,omitempty"`
}

// AddressPair is an allowed address pair of a port.
type AddressPair struct {
	// ipAddress is an IP address or CIDR.
	// +kubebuilder:validation:MinLength:=1
	// +required
	IPAddress string `json:"ipAddress"`

	// macAddress defaults to the port's.
	// +optional
	MACAddress *string `json:"macAddress,omitempty"`
}

// BindingProfile is the subset of a port's binding:profile that is known
// to work.
type BindingProfile struct {
	// ovsHWOffload enables hardware offload (capabilities: [switchdev]).
	// +optional
	OVSHWOffload *bool `json:"ovsHWOffload,omitempty"`

	// trustedVF marks an SR-IOV VF as trusted.
	// +optional
	TrustedVF *bool `json:"trustedVF,omitempty"`
}

// ValueSpec is an extra key/value sent in the port create request.
type ValueSpec struct {
	// name identifies the entry in this list.
	// +kubebuilder:validation:MinLength:=1
	// +required
	Name string `json:"name"`
	// key is the request body key.
	// +kubebuilder:validation:MinLength:=1
	// +required
	Key string `json:"key"`
	// value is sent as is.
	// +kubebuilder:validation:MinLength:=1
	// +required
	Value string `json:"value"`
}

// ResolvedPortSpecFields are the port settings that need no resolution:
// they appear the same in the spec and in the resolved spec.
type ResolvedPortSpecFields struct {
	// adminStateUp: the port starts up (default) or down.
	// +optional
	AdminStateUp *bool `json:"adminStateUp,omitempty"`

	// macAddress of the port; generated when unset.
	// +optional
	MACAddress *string `json:"macAddress,omitempty"`

	// allowedAddressPairs the port may also send from.
	// +listType=atomic
	// +optional
	AllowedAddressPairs []AddressPair `json:"allowedAddressPairs,omitempty"`

	// vnicType (normal, direct, macvtap, baremetal, ...).
	// +optional
	VNICType *string `json:"vnicType,omitempty"`

	// profile is the binding profile.
	// +optional
	Profile *BindingProfile `json:"profile,omitempty"`

	// enablePortSecurity; inherited from the network when unset.
	// +optional
	EnablePortSecurity *bool `json:"enablePortSecurity,omitempty"`

	// propagateUplinkStatus makes the port follow the state of its uplink
	// (SR-IOV). Needs Neutron's uplink-status-propagation extension.
	// +optional
	PropagateUplinkStatus *bool `json:"propagateUplinkStatus,omitempty"`

	// valueSpecs are extra keys sent in the port create request.
	// +listType=map
	// +listMapKey=name
	// +optional
	ValueSpecs []ValueSpec `json:"valueSpecs,omitempty"`

	// hostID is the binding host (binding:host_id); admin only.
	// +optional
	HostID *string `json:"hostID,omitempty"`
}

// PortOpts describes one port of a server.
type PortOpts struct {
	// network the port is on. Required for an OpenStackServer; an
	// OpenStackMachine may leave it to the cluster's network.
	// +optional
	Network *NetworkParam `json:"network,omitempty"`

	// description of the port.
	// +optional
	Description *string `json:"description,omitempty"`

	// nameSuffix is appended to the server name to name the port; the
	// port's index is used when unset.
	// +optional
	NameSuffix *string `json:"nameSuffix,omitempty"`

	// fixedIPs the port gets.
	// +listType=atomic
	// +optional
	FixedIPs []FixedIP `json:"fixedIPs,omitempty"`

	// securityGroups of the port; when unset, the server's.
	// +listType=atomic
	// +optional
	SecurityGroups []SecurityGroupParam `json:"securityGroups,omitempty"`

	// tags of the port (and of its trunk), in addition to the server's.
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`

	// trunk makes the port the parent of a trunk. Inherited from the
	// server when unset.
	// +optional
	Trunk *bool `json:"trunk,omitempty"`

	ResolvedPortSpecFields `json:",inline"`
}

// VolumeAZSource says where a volume's availability zone comes from.
// +kubebuilder:validation:Enum=Name;Machine
type VolumeAZSource string

const (
	// VolumeAZFromName uses the zone named in the spec.
	VolumeAZFromName VolumeAZSource = "Name"
	// VolumeAZFromMachine uses the Machine's failure domain.
	VolumeAZFromMachine VolumeAZSource = "Machine"
)

// VolumeAZName is a Cinder availability zone.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:Pattern=`^[^ ]+$`
type VolumeAZName string

// VolumeAvailabilityZone is where a volume is created.
// +kubebuilder:validation:XValidation:rule="!has(self.from) || self.from == 'Name' ? has(self.name) : !has(self.name)",message="name is required when from is 'Name' or default"
type VolumeAvailabilityZone struct {
	// from is Name (default) or Machine.
	// +kubebuilder:default:=Name
	// +optional
	From VolumeAZSource `json:"from,omitempty"`

	// name of the zone when from is Name.
	// +optional
	Name *VolumeAZName `json:"name,omitempty"`
}

// BlockDeviceVolume holds the options of a Cinder volume.
type BlockDeviceVolume struct {
	// type is the Cinder volume type; the cloud's default when unset.
	// +optional
	Type string `json:"type,omitempty"`

	// availabilityZone of the volume; none explicit when unset.
	// +optional
	AvailabilityZone *VolumeAvailabilityZone `json:"availabilityZone,omitempty"`
}

// RootVolume makes the server boot from a volume made from its image.
type RootVolume struct {
	// sizeGiB of the volume.
	// +kubebuilder:validation:Minimum:=1
	// +required
	SizeGiB int32 `json:"sizeGiB"`

	BlockDeviceVolume `json:",inline"`
}

// BlockDeviceType is Local (ephemeral disk on the hypervisor) or Volume.
// +kubebuilder:validation:Enum=Local;Volume
type BlockDeviceType string

const (
	// LocalBlockDevice is an ephemeral disk on the hypervisor.
	LocalBlockDevice BlockDeviceType = "Local"
	// VolumeBlockDevice is a Cinder volume.
	VolumeBlockDevice BlockDeviceType = "Volume"
)

// BlockDeviceStorage is the kind of an additional block device.
type BlockDeviceStorage struct {
	// type is Local or Volume.
	// +required
	Type BlockDeviceType `json:"type"`

	// volume options, for type Volume.
	// +optional
	Volume *BlockDeviceVolume `json:"volume,omitempty"`
}

// AdditionalBlockDevice is a block device attached to the server besides
// its root disk.
type AdditionalBlockDevice struct {
	// name of the device within the server; a Cinder volume is named
	// <server>-<name>. "root" is reserved.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self != 'root'",message="the name root is reserved for the root volume"
	// +required
	Name string `json:"name"`

	// sizeGiB of the device.
	// +kubebuilder:validation:Minimum=1
	// +required
	SizeGiB int32 `json:"sizeGiB"`

	// storage says whether it is a volume or a local disk.
	// +required
	Storage BlockDeviceStorage `json:"storage"`
}

// ServerMetadata is one Nova metadata entry.
type ServerMetadata struct {
	// +kubebuilder:validation:MaxLength:=255
	// +kubebuilder:validation:MinLength:=1
	// +required
	Key string `json:"key"`

	// +kubebuilder:validation:MaxLength:=255
	// +kubebuilder:validation:MinLength:=1
	// +required
	Value string `json:"value"`
}

// SchedulerHintValueType is the type of a scheduler hint's value.
// +kubebuilder:validation:Enum=Bool;String;Number
type SchedulerHintValueType string

// Scheduler hint value types.
const (
	SchedulerHintTypeBool   SchedulerHintValueType = "Bool"
	SchedulerHintTypeString SchedulerHintValueType = "String"
	SchedulerHintTypeNumber SchedulerHintValueType = "Number"
)

// SchedulerHintAdditionalValue is a typed scheduler hint value.
// +kubebuilder:validation:XValidation:rule="has(self.type) && self.type == 'Bool' ? has(self.bool) : !has(self.bool)",message="bool is required when type is Bool, and forbidden otherwise"
// +kubebuilder:validation:XValidation:rule="has(self.type) && self.type == 'Number' ? has(self.number) : !has(self.number)",message="number is required when type is Number, and forbidden otherwise"
// +kubebuilder:validation:XValidation:rule="has(self.type) && self.type == 'String' ? has(self.string) : !has(self.string)",message="string is required when type is String, and forbidden otherwise"
type SchedulerHintAdditionalValue struct {
	// +required
	Type SchedulerHintValueType `json:"type"`
	// +optional
	Bool *bool `json:"bool,omitempty"`
	// +optional
	Number *int32 `json:"number,omitempty"`
	// +kubebuilder:validation:MaxLength:=255
	// +kubebuilder:validation:MinLength:=1
	// +optional
	String *string `json:"string,omitempty"`
}

// SchedulerHintAdditionalProperty is one extra Nova scheduler hint.
type SchedulerHintAdditionalProperty struct {
	// +kubebuilder:validation:MinLength:=1
	// +required
	Name string `json:"name"`
	// +required
	Value SchedulerHintAdditionalValue `json:"value"`
}

// InstanceState is a Nova server status.
type InstanceState string

// Nova server statuses this provider acts on.
const (
	InstanceStateBuild       InstanceState = "BUILD"
	InstanceStateActive      InstanceState = "ACTIVE"
	InstanceStateError       InstanceState = "ERROR"
	InstanceStateStopped     InstanceState = "STOPPED"
	InstanceStateShutoff     InstanceState = "SHUTOFF"
	InstanceStateDeleted     InstanceState = "DELETED"
	InstanceStateSoftDeleted InstanceState = "SOFT_DELETED"
	InstanceStateUndefined   InstanceState = ""
)

// ResolvedFixedIP is a FixedIP with the subnet resolved to its ID.
type ResolvedFixedIP struct {
	// +optional
	Subnet *string `json:"subnet,omitempty"`
	// +optional
	IPAddress *string `json:"ipAddress,omitempty"`
}

// ResolvedPortSpec is a port with every reference resolved to an ID and
// its final name: what the controller creates.
type ResolvedPortSpec struct {
	// name of the port in Neutron.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// +optional
	Description string `json:"description,omitempty"`

	// networkID the port is on.
	// +kubebuilder:validation:MinLength=1
	// +required
	NetworkID string `json:"networkID"`

	// tags of the port.
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`

	// trunk: the port is the parent of a trunk.
	// +optional
	Trunk *bool `json:"trunk,omitempty"`

	// +listType=atomic
	// +optional
	FixedIPs []ResolvedFixedIP `json:"fixedIPs,omitempty"`

	// securityGroups by ID.
	// +listType=atomic
	// +optional
	SecurityGroups []string `json:"securityGroups,omitempty"`

	ResolvedPortSpecFields `json:",inline"`
}

// PortStatus is a port the controller created.
type PortStatus struct {
	// id of the port.
	// +kubebuilder:validation:MinLength=1
	// +required
	ID string `json:"id"`

	// macAddress of the port, for matching hosts that register by MAC.
	// +optional
	MACAddress string `json:"macAddress,omitempty"`
}
