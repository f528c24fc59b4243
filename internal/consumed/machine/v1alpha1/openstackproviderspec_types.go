/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OpenstackProviderSpec is the MAPI OpenStack machine configuration.
//
// Upstream marks cloudsSecret, cloudName, flavor and image without omitempty;
// they are always written, even when empty.
// +kubebuilder:object:root=true
type OpenstackProviderSpec struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// CloudsSecret holds clouds.yaml.
	CloudsSecret *corev1.SecretReference `json:"cloudsSecret"`
	// CloudName selects the cloud in clouds.yaml.
	CloudName string `json:"cloudName"`
	// Flavor is the Nova flavor name.
	Flavor string `json:"flavor"`
	// Image is the Glance image name.
	Image string `json:"image"`
	// KeyName is the Nova keypair.
	KeyName string `json:"keyName,omitempty"`
	// SSHUserName is the login user of the image; the CAPI conversion drops it.
	SSHUserName string `json:"sshUserName,omitempty"`
	// Networks are attached after Ports, one port per network or subnet.
	Networks []NetworkParam `json:"networks,omitempty"`
	// Ports are created explicitly, before Networks.
	Ports []PortOpts `json:"ports,omitempty"`
	// FloatingIP is ignored by the CAPI conversion.
	FloatingIP string `json:"floatingIP,omitempty"`
	// AvailabilityZone is the Nova availability zone.
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	// SecurityGroups apply to the ports created from Networks.
	SecurityGroups []SecurityGroupParam `json:"securityGroups,omitempty"`
	// UserDataSecret holds the bootstrap user data.
	UserDataSecret *corev1.SecretReference `json:"userDataSecret,omitempty"`
	// Trunk makes ports trunks by default.
	Trunk bool `json:"trunk,omitempty"`
	// Tags are set on the server and its ports.
	Tags []string `json:"tags,omitempty"`
	// ServerMetadata is Nova server metadata.
	ServerMetadata map[string]string `json:"serverMetadata,omitempty"`
	// ConfigDrive forces a config drive.
	ConfigDrive *bool `json:"configDrive,omitempty"`
	// RootVolume boots from a Cinder volume instead of the image.
	RootVolume *RootVolume `json:"rootVolume,omitempty"`
	// AdditionalBlockDevices are attached besides the root disk.
	// +optional
	// +listType=map
	// +listMapKey=name
	AdditionalBlockDevices []AdditionalBlockDevice `json:"additionalBlockDevices,omitempty"`
	// ServerGroupID wins over ServerGroupName.
	ServerGroupID string `json:"serverGroupID,omitempty"`
	// ServerGroupName is looked up (and created by MAPO) by name.
	ServerGroupName string `json:"serverGroupName,omitempty"`
	// PrimarySubnet picks the subnet whose address is the machine's IP.
	PrimarySubnet string `json:"primarySubnet,omitempty"`
}

// SecurityGroupParam selects a security group by UUID, name or filter.
type SecurityGroupParam struct {
	UUID   string              `json:"uuid,omitempty"`
	Name   string              `json:"name,omitempty"`
	Filter SecurityGroupFilter `json:"filter,omitempty"`
}

// SecurityGroupFilter is a Neutron security group query. Tag lists are
// comma-separated strings. The Deprecated* fields are ignored by MAPO.
type SecurityGroupFilter struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	TenantID    string `json:"tenantId,omitempty"`
	ProjectID   string `json:"projectId,omitempty"`
	Tags        string `json:"tags,omitempty"`
	TagsAny     string `json:"tagsAny,omitempty"`
	NotTags     string `json:"notTags,omitempty"`
	NotTagsAny  string `json:"notTagsAny,omitempty"`

	DeprecatedLimit   int    `json:"limit,omitempty"`
	DeprecatedMarker  string `json:"marker,omitempty"`
	DeprecatedSortKey string `json:"sortKey,omitempty"`
	DeprecatedSortDir string `json:"sortDir,omitempty"`
}

// NetworkParam attaches the machine to a network, or to some of its subnets.
type NetworkParam struct {
	UUID string `json:"uuid,omitempty"`
	// FixedIP is not supported by the CAPI conversion.
	FixedIP               string            `json:"fixedIp,omitempty"`
	Filter                Filter            `json:"filter,omitempty"`
	Subnets               []SubnetParam     `json:"subnets,omitempty"`
	NoAllowedAddressPairs bool              `json:"noAllowedAddressPairs,omitempty"`
	PortTags              []string          `json:"portTags,omitempty"`
	VNICType              string            `json:"vnicType,omitempty"`
	Profile               map[string]string `json:"profile,omitempty"`
	PortSecurity          *bool             `json:"portSecurity,omitempty"`
}

// Filter is a Neutron network query. Tag lists are comma-separated strings.
// The Deprecated* fields are ignored by MAPO.
type Filter struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	TenantID    string `json:"tenantId,omitempty"`
	ProjectID   string `json:"projectId,omitempty"`
	Tags        string `json:"tags,omitempty"`
	TagsAny     string `json:"tagsAny,omitempty"`
	NotTags     string `json:"notTags,omitempty"`
	NotTagsAny  string `json:"notTagsAny,omitempty"`

	DeprecatedStatus       string `json:"status,omitempty"`
	DeprecatedAdminStateUp *bool  `json:"adminStateUp,omitempty"`
	DeprecatedShared       *bool  `json:"shared,omitempty"`
	DeprecatedMarker       string `json:"marker,omitempty"`
	DeprecatedLimit        int    `json:"limit,omitempty"`
	DeprecatedSortKey      string `json:"sortKey,omitempty"`
	DeprecatedSortDir      string `json:"sortDir,omitempty"`
}

// SubnetParam selects a subnet of a NetworkParam by UUID or filter.
type SubnetParam struct {
	UUID         string       `json:"uuid,omitempty"`
	Filter       SubnetFilter `json:"filter,omitempty"`
	PortTags     []string     `json:"portTags,omitempty"`
	PortSecurity *bool        `json:"portSecurity,omitempty"`
}

// SubnetFilter is a Neutron subnet query. Note the snake_case gateway_ip,
// as upstream spells it. The Deprecated* fields are ignored by MAPO.
type SubnetFilter struct {
	ID              string `json:"id,omitempty"`
	Name            string `json:"name,omitempty"`
	Description     string `json:"description,omitempty"`
	NetworkID       string `json:"networkId,omitempty"`
	TenantID        string `json:"tenantId,omitempty"`
	ProjectID       string `json:"projectId,omitempty"`
	IPVersion       int    `json:"ipVersion,omitempty"`
	GatewayIP       string `json:"gateway_ip,omitempty"`
	CIDR            string `json:"cidr,omitempty"`
	IPv6AddressMode string `json:"ipv6AddressMode,omitempty"`
	IPv6RAMode      string `json:"ipv6RaMode,omitempty"`
	SubnetPoolID    string `json:"subnetpoolId,omitempty"`
	Tags            string `json:"tags,omitempty"`
	TagsAny         string `json:"tagsAny,omitempty"`
	NotTags         string `json:"notTags,omitempty"`
	NotTagsAny      string `json:"notTagsAny,omitempty"`

	DeprecatedEnableDHCP *bool  `json:"enableDhcp,omitempty"`
	DeprecatedLimit      int    `json:"limit,omitempty"`
	DeprecatedMarker     string `json:"marker,omitempty"`
	DeprecatedSortKey    string `json:"sortKey,omitempty"`
	DeprecatedSortDir    string `json:"sortDir,omitempty"`
}

// PortOpts describes one port to create explicitly.
type PortOpts struct {
	// NetworkID is required upstream.
	NetworkID    string     `json:"networkID"`
	NameSuffix   string     `json:"nameSuffix,omitempty"`
	Description  string     `json:"description,omitempty"`
	AdminStateUp *bool      `json:"adminStateUp,omitempty"`
	MACAddress   string     `json:"macAddress,omitempty"`
	FixedIPs     []FixedIPs `json:"fixedIPs,omitempty"`
	TenantID     string     `json:"tenantID,omitempty"`
	ProjectID    string     `json:"projectID,omitempty"`
	// SecurityGroups are IDs. A pointer, as upstream: nil means the
	// machine's securityGroups apply, an empty list means none.
	SecurityGroups      *[]string         `json:"securityGroups,omitempty"`
	AllowedAddressPairs []AddressPair     `json:"allowedAddressPairs,omitempty"`
	Tags                []string          `json:"tags,omitempty"`
	VNICType            string            `json:"vnicType,omitempty"`
	Profile             map[string]string `json:"profile,omitempty"`
	PortSecurity        *bool             `json:"portSecurity,omitempty"`
	Trunk               *bool             `json:"trunk,omitempty"`

	// DeprecatedHostID is ignored (binding:host_id needs admin rights).
	DeprecatedHostID string `json:"hostID,omitempty"`
}

// AddressPair is a Neutron allowed address pair.
type AddressPair struct {
	IPAddress  string `json:"ipAddress,omitempty"`
	MACAddress string `json:"macAddress,omitempty"`
}

// FixedIPs requests an address on a subnet of a port. Upstream writes
// subnetID even when empty.
type FixedIPs struct {
	SubnetID  string `json:"subnetID"`
	IPAddress string `json:"ipAddress,omitempty"`
}

// RootVolume boots the server from a new Cinder volume.
type RootVolume struct {
	// SourceUUID is ignored by MAPO: the image is always the machine's image.
	SourceUUID string `json:"sourceUUID,omitempty"`
	VolumeType string `json:"volumeType,omitempty"`
	// Size is in GiB.
	Size int    `json:"diskSize,omitempty"`
	Zone string `json:"availabilityZone,omitempty"`

	DeprecatedSourceType string `json:"sourceType,omitempty"`
	DeprecatedDeviceType string `json:"deviceType,omitempty"`
}

// BlockDeviceType is where an additional block device lives.
type BlockDeviceType string

// The values of BlockDeviceType.
const (
	LocalBlockDevice  BlockDeviceType = "Local"
	VolumeBlockDevice BlockDeviceType = "Volume"
)

// BlockDeviceStorage says where an additional block device is stored. Volume
// may only be set when Type is Volume.
type BlockDeviceStorage struct {
	Type   BlockDeviceType    `json:"type"`
	Volume *BlockDeviceVolume `json:"volume,omitempty"`
}

// BlockDeviceVolume are the Cinder options of a Volume block device.
type BlockDeviceVolume struct {
	Type             string `json:"type,omitempty"`
	AvailabilityZone string `json:"availabilityZone,omitempty"`
}

// AdditionalBlockDevice is a disk attached besides the root disk.
type AdditionalBlockDevice struct {
	Name    string             `json:"name"`
	SizeGiB int                `json:"sizeGiB"`
	Storage BlockDeviceStorage `json:"storage"`
}
