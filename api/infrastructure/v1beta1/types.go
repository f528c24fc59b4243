package v1beta1

// Types shared by the v1beta1 kinds. JSON names, pointers (what can be
// told apart from unset), list types and validation are CAPO's v1beta1.

// IdentityRefType says what an identityRef points at.
// +kubebuilder:validation:Enum=Secret;ClusterIdentity
type IdentityRefType string

// OpenStackIdentityReference points at the credentials: a Secret in the
// object's namespace (type Secret) or an OpenStackClusterIdentity (type
// ClusterIdentity), the cloud to use in its clouds.yaml, and optionally a
// region.
// +kubebuilder:validation:XValidation:rule="(!has(self.region) && !has(oldSelf.region)) || self.region == oldSelf.region",message="region is immutable"
type OpenStackIdentityReference struct {
	// type is Secret (the default) or ClusterIdentity.
	// +kubebuilder:default:=Secret
	// +required
	Type IdentityRefType `json:"type"`

	// name of the Secret or of the OpenStackClusterIdentity.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// cloudName is the entry of clouds.yaml to use.
	// +kubebuilder:validation:MinLength=1
	// +required
	CloudName string `json:"cloudName"`

	// region overrides the region in clouds.yaml.
	// +optional
	Region string `json:"region,omitempty"`
}

// ImageParam selects an image by ID, by filter or by an ORC Image.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type ImageParam struct {
	// id is the image's UUID.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// filter selects the image by name and tags.
	// +optional
	Filter *ImageFilter `json:"filter,omitempty"`

	// imageRef names an ORC Image in the same namespace.
	// +optional
	ImageRef *ResourceReference `json:"imageRef,omitempty"`
}

// ImageFilter is a query for an image.
// +kubebuilder:validation:MinProperties:=1
type ImageFilter struct {
	// +optional
	Name *string `json:"name,omitempty"`

	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// ResourceReference names an object in the same namespace.
type ResourceReference struct {
	// +required
	Name string `json:"name"`
}

// NeutronTag is a Neutron tag: no commas, not empty.
// +kubebuilder:validation:Pattern:="^[^,]+$"
// +kubebuilder:validation:MinLength:=1
type NeutronTag string

// FilterByNeutronTags selects Neutron resources by their tags.
type FilterByNeutronTags struct {
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`
	// +listType=set
	// +optional
	TagsAny []NeutronTag `json:"tagsAny,omitempty"`
	// +listType=set
	// +optional
	NotTags []NeutronTag `json:"notTags,omitempty"`
	// +listType=set
	// +optional
	NotTagsAny []NeutronTag `json:"notTagsAny,omitempty"`
}

// NetworkParam selects a network by ID or filter.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type NetworkParam struct {
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`
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

// SubnetParam selects a subnet by ID or filter.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type SubnetParam struct {
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`
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
	IPVersion int `json:"ipVersion,omitempty"`
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
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`
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

// RouterParam selects a router by ID or filter.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type RouterParam struct {
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`
	// +optional
	Filter *RouterFilter `json:"filter,omitempty"`
}

// RouterFilter is a query for a router.
// +kubebuilder:validation:MinProperties:=1
type RouterFilter struct {
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
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`
	// +optional
	Filter *ServerGroupFilter `json:"filter,omitempty"`
}

// ServerGroupFilter is a query for a server group.
// +kubebuilder:validation:MinProperties:=1
type ServerGroupFilter struct {
	// +optional
	Name *string `json:"name,omitempty"`
}

// ExternalRouterIPParam is a fixed external address of the router.
type ExternalRouterIPParam struct {
	// +optional
	FixedIP string `json:"fixedIP,omitempty"`
	// +required
	Subnet SubnetParam `json:"subnet"`
}

// SubnetSpec is a subnet the provider creates.
type SubnetSpec struct {
	// +required
	CIDR string `json:"cidr"`
	// +optional
	DNSNameservers []string `json:"dnsNameservers,omitempty"`
	// +optional
	AllocationPools []AllocationPool `json:"allocationPools,omitempty"`
}

// AllocationPool is a range of addresses Neutron allocates from.
type AllocationPool struct {
	// +required
	Start string `json:"start"`
	// +required
	End string `json:"end"`
}

// FixedIP asks for an address on a subnet of the port's network.
type FixedIP struct {
	// +optional
	Subnet *SubnetParam `json:"subnet,omitempty"`
	// +optional
	IPAddress *string `json:"ipAddress,omitempty"`
}

// AddressPair is an allowed address pair of a port.
type AddressPair struct {
	// +required
	IPAddress string `json:"ipAddress"`
	// +optional
	MACAddress *string `json:"macAddress,omitempty"`
}

// BindingProfile is the known subset of a port's binding:profile.
type BindingProfile struct {
	// +optional
	OVSHWOffload *bool `json:"ovsHWOffload,omitempty"`
	// +optional
	TrustedVF *bool `json:"trustedVF,omitempty"`
}

// ValueSpec is an extra key/value sent in the port create request.
type ValueSpec struct {
	// +required
	Name string `json:"name"`
	// +required
	Key string `json:"key"`
	// +required
	Value string `json:"value"`
}

// ResolvedPortSpecFields are the port settings that need no resolution.
type ResolvedPortSpecFields struct {
	// +optional
	AdminStateUp *bool `json:"adminStateUp,omitempty"`
	// +optional
	MACAddress *string `json:"macAddress,omitempty"`
	// +optional
	AllowedAddressPairs []AddressPair `json:"allowedAddressPairs,omitempty"`
	// +optional
	HostID *string `json:"hostID,omitempty"`
	// +optional
	VNICType *string `json:"vnicType,omitempty"`
	// +optional
	Profile *BindingProfile `json:"profile,omitempty"`
	// disablePortSecurity: true turns port security off (v1beta2:
	// enablePortSecurity, inverted).
	// +optional
	DisablePortSecurity *bool `json:"disablePortSecurity,omitempty"`
	// +optional
	PropagateUplinkStatus *bool `json:"propagateUplinkStatus,omitempty"`
	// +listType=map
	// +listMapKey=name
	// +optional
	ValueSpecs []ValueSpec `json:"valueSpecs,omitempty"`
}

// PortOpts describes one port of a server.
type PortOpts struct {
	// +optional
	Network *NetworkParam `json:"network,omitempty"`
	// +optional
	Description *string `json:"description,omitempty"`
	// +optional
	NameSuffix *string `json:"nameSuffix,omitempty"`
	// +listType=atomic
	// +optional
	FixedIPs []FixedIP `json:"fixedIPs,omitempty"`
	// +listType=atomic
	// +optional
	SecurityGroups []SecurityGroupParam `json:"securityGroups,omitempty"`
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
	// +optional
	Trunk *bool `json:"trunk,omitempty"`

	ResolvedPortSpecFields `json:",inline"`
}

// ResolvedFixedIP is a FixedIP with the subnet resolved to its ID.
type ResolvedFixedIP struct {
	// +optional
	Subnet *string `json:"subnet,omitempty"`
	// +optional
	IPAddress *string `json:"ipAddress,omitempty"`
}

// ResolvedPortSpec is a port with every reference resolved.
type ResolvedPortSpec struct {
	// +required
	Name string `json:"name"`
	// +required
	Description string `json:"description"`
	// +required
	NetworkID string `json:"networkID"`
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
	// +optional
	Trunk *bool `json:"trunk,omitempty"`
	// +listType=atomic
	// +optional
	FixedIPs []ResolvedFixedIP `json:"fixedIPs,omitempty"`
	// +listType=atomic
	// +optional
	SecurityGroups []string `json:"securityGroups,omitempty"`

	ResolvedPortSpecFields `json:",inline"`
}

// PortStatus is a port that was created.
type PortStatus struct {
	// +required
	ID string `json:"id"`
}

// ResolvedMachineSpec is a machine's spec with its references resolved.
type ResolvedMachineSpec struct {
	// +optional
	ServerGroupID string `json:"serverGroupID,omitempty"`
	// +optional
	ImageID string `json:"imageID,omitempty"`
	// +optional
	FlavorID string `json:"flavorID,omitempty"`
	// +optional
	Ports []ResolvedPortSpec `json:"ports,omitempty"`
}

// MachineResources are the OpenStack resources created for a machine.
type MachineResources struct {
	// +optional
	Ports []PortStatus `json:"ports,omitempty"`
}

// VolumeAZSource says where a volume's availability zone comes from.
// +kubebuilder:validation:Enum=Name;Machine
type VolumeAZSource string

// VolumeAZName is a Cinder availability zone.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:Pattern=`^[^ ]+$`
type VolumeAZName string

// VolumeAvailabilityZone is where a volume is created.
// +kubebuilder:validation:XValidation:rule="!has(self.from) || self.from == 'Name' ? has(self.name) : !has(self.name)",message="name is required when from is 'Name' or default"
type VolumeAvailabilityZone struct {
	// +kubebuilder:default:=Name
	// +optional
	From VolumeAZSource `json:"from,omitempty"`
	// +optional
	Name *VolumeAZName `json:"name,omitempty"`
}

// BlockDeviceVolume holds the options of a Cinder volume.
type BlockDeviceVolume struct {
	// +optional
	Type string `json:"type,omitempty"`
	// +optional
	AvailabilityZone *VolumeAvailabilityZone `json:"availabilityZone,omitempty"`
}

// RootVolume makes the server boot from a volume.
type RootVolume struct {
	// +kubebuilder:validation:Minimum:=1
	// +required
	SizeGiB int `json:"sizeGiB"`

	BlockDeviceVolume `json:",inline"`
}

// BlockDeviceType is Local or Volume (CAPO's v1beta1 schema does not
// enumerate them).
type BlockDeviceType string

// BlockDeviceStorage is the kind of an additional block device.
type BlockDeviceStorage struct {
	// +required
	Type BlockDeviceType `json:"type"`
	// +optional
	Volume *BlockDeviceVolume `json:"volume,omitempty"`
}

// AdditionalBlockDevice is a block device besides the root disk.
type AdditionalBlockDevice struct {
	// +required
	Name string `json:"name"`
	// +kubebuilder:validation:Minimum=1
	// +required
	SizeGiB int `json:"sizeGiB"`
	// +required
	Storage BlockDeviceStorage `json:"storage"`
}

// ServerMetadata is one Nova metadata entry.
type ServerMetadata struct {
	// +kubebuilder:validation:MaxLength:=255
	// +required
	Key string `json:"key"`
	// +kubebuilder:validation:MaxLength:=255
	// +required
	Value string `json:"value"`
}

// SchedulerHintValueType is the type of a scheduler hint's value.
// +kubebuilder:validation:Enum=Bool;String;Number
type SchedulerHintValueType string

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
	Number *int `json:"number,omitempty"`
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
