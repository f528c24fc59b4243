package mapi2capi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	mapiv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
)

type spec = infrav1.OpenStackMachineSpec

// TestOpenStack covers every row of the OpenstackProviderSpec table in
// docs/addon/machineset-sync.md: each field mapped, warned about or
// rejected.
func TestOpenStack(t *testing.T) {
	vipPairs := []infrav1.AddressPair{{IPAddress: "10.0.0.5"}, {IPAddress: "10.0.0.7"}}
	tests := []struct {
		name   string
		mutate func(*mapiv1alpha1.OpenstackProviderSpec)
		infra  func(*Infra)
		// want changes the spec of the base providerSpec into the expected one.
		want         func(*spec)
		wantMS       func(*testing.T, *clusterv1.MachineSet)
		wantWarnings []string
		wantErrs     []string
	}{
		{name: "base", mutate: func(*mapiv1alpha1.OpenstackProviderSpec) {}},
		{
			name:   "availabilityZone is the failure domain, userDataSecret the bootstrap data",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.AvailabilityZone = "az-1" },
			wantMS: func(t *testing.T, ms *clusterv1.MachineSet) {
				if got := ms.Spec.Template.Spec.FailureDomain; got != "az-1" {
					t.Errorf("failureDomain %q", got)
				}
				if got := ptr.Deref(ms.Spec.Template.Spec.Bootstrap.DataSecretName, ""); got != "worker-user-data" {
					t.Errorf("dataSecretName %q", got)
				}
			},
		},
		{
			name: "keyName, trunk, configDrive, tags (a set)",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.KeyName, ps.Trunk, ps.ConfigDrive = "mykey", true, ptr.To(true)
				ps.Tags = []string{"a", "b", "a"}
			},
			want: func(s *spec) {
				s.SSHKeyName, s.Trunk, s.ConfigDrive, s.Tags = "mykey", true, ptr.To(true), []string{"a", "b"}
			},
		},
		{
			name: "serverMetadata sorted by key",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.ServerMetadata = map[string]string{"z": "1", "a": "2"}
			},
			want: func(s *spec) {
				s.ServerMetadata = []infrav1.ServerMetadata{{Key: "a", Value: "2"}, {Key: "z", Value: "1"}}
			},
		},
		{
			name:     "serverMetadata empty value rejected",
			mutate:   func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.ServerMetadata = map[string]string{"k": ""} },
			wantErrs: []string{pv("serverMetadata[k]")},
		},
		{
			name:   "serverGroupID",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.ServerGroupID = sgrpID },
			want:   func(s *spec) { s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To(sgrpID)} },
		},
		{
			name:   "serverGroupName",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.ServerGroupName = "workers" },
			want: func(s *spec) {
				s.ServerGroup = &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To("workers")}}
			},
		},
		{
			name:         "serverGroupID wins over serverGroupName",
			mutate:       func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.ServerGroupID, ps.ServerGroupName = sgrpID, "workers" },
			want:         func(s *spec) { s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To(sgrpID)} },
			wantWarnings: []string{pv("serverGroupName")},
		},
		{
			name:     "serverGroupID not a UUID",
			mutate:   func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.ServerGroupID = "abc" },
			wantErrs: []string{pv("serverGroupID")},
		},
		{
			name: "sshUserName, primarySubnet and metadata are ignored by MAPO",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.SSHUserName, ps.PrimarySubnet, ps.Labels = "core", "sub", map[string]string{"a": "b"}
			},
			wantWarnings: []string{pv("sshUserName"), pv("primarySubnet"), pv("metadata")},
		},
		{
			name:     "floatingIP is refused",
			mutate:   func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.FloatingIP = "172.24.4.10" },
			wantErrs: []string{pv("floatingIP")},
		},
		{name: "flavor required", mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.Flavor = "" }, wantErrs: []string{pv("flavor")}},
		{name: "image required", mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.Image = "" }, wantErrs: []string{pv("image")}},
		{
			name:     "userDataSecret required",
			mutate:   func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.UserDataSecret = nil },
			wantErrs: []string{pv("userDataSecret.name")},
		},
		{
			name:         "userDataSecret in another namespace",
			mutate:       func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.UserDataSecret.Namespace = "elsewhere" },
			wantWarnings: []string{pv("userDataSecret.namespace")},
		},
		{
			name:         "no cloudsSecret: the cluster's identity",
			mutate:       func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.CloudsSecret = nil },
			want:         func(s *spec) { s.IdentityRef = nil },
			wantWarnings: []string{pv("cloudsSecret"), pv("cloudName")},
		},
		{
			name:     "cloudName required with cloudsSecret",
			mutate:   func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.CloudName = "" },
			wantErrs: []string{pv("cloudName")},
		},
		{
			name:         "cloudsSecret in another namespace",
			mutate:       func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.CloudsSecret.Namespace = "kube-system" },
			wantWarnings: []string{pv("cloudsSecret.namespace")},
		},
		{
			name: "securityGroups by uuid, filter.id, name and filter",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.SecurityGroups = []mapiv1alpha1.SecurityGroupParam{
					{UUID: sgID},
					{Filter: mapiv1alpha1.SecurityGroupFilter{ID: sg2ID}},
					{Name: "byname", Filter: mapiv1alpha1.SecurityGroupFilter{Name: "ignored", TenantID: "t", Tags: "a,b", TagsAny: "c", NotTags: "d", NotTagsAny: "e,,e"}},
					{Filter: mapiv1alpha1.SecurityGroupFilter{Name: "f", Description: "d", ProjectID: "p", TenantID: "t"}},
				}
			},
			want: func(s *spec) {
				s.SecurityGroups = []infrav1.SecurityGroupParam{
					{ID: ptr.To(sgID)},
					{ID: ptr.To(sg2ID)},
					{Filter: &infrav1.SecurityGroupFilter{Name: "byname", ProjectID: "t", FilterByNeutronTags: infrav1.FilterByNeutronTags{
						Tags: []infrav1.NeutronTag{"a", "b"}, TagsAny: []infrav1.NeutronTag{"c"}, NotTags: []infrav1.NeutronTag{"d"}, NotTagsAny: []infrav1.NeutronTag{"e"},
					}}},
					{Filter: &infrav1.SecurityGroupFilter{Name: "f", Description: "d", ProjectID: "p"}},
				}
			},
		},
		{
			name: "securityGroups: by ID the filter is dropped; deprecated fields; empty; not a UUID",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.SecurityGroups = []mapiv1alpha1.SecurityGroupParam{
					{UUID: sgID, Name: "x"},
					{Name: "y", Filter: mapiv1alpha1.SecurityGroupFilter{DeprecatedLimit: 3}},
					{},
					{UUID: "nope"},
				}
			},
			wantWarnings: []string{pv("securityGroups[0]"), pv("securityGroups[1].filter")},
			wantErrs:     []string{pv("securityGroups[2]"), pv("securityGroups[3].uuid")},
		},
		{
			name: "rootVolume: size, type, zone; the image is sourceUUID",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Image = ""
				ps.RootVolume = &mapiv1alpha1.RootVolume{SourceUUID: "rhcos-4.20", VolumeType: "ssd", Size: 50, Zone: "nova-az"}
			},
			want: func(s *spec) {
				s.RootVolume = &infrav1.RootVolume{SizeGiB: 50, BlockDeviceVolume: infrav1.BlockDeviceVolume{
					Type: "ssd", AvailabilityZone: &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromName, Name: ptr.To[infrav1.VolumeAZName]("nova-az")},
				}}
			},
		},
		{
			name: "rootVolume: image differs from sourceUUID; deprecated fields",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Image = "other"
				ps.RootVolume = &mapiv1alpha1.RootVolume{SourceUUID: "rhcos-4.20", Size: 50, DeprecatedDeviceType: "disk", DeprecatedSourceType: "image"}
			},
			want:         func(s *spec) { s.RootVolume = &infrav1.RootVolume{SizeGiB: 50} },
			wantWarnings: []string{pv("image"), pv("rootVolume.deviceType"), pv("rootVolume.sourceType")},
		},
		{
			name:         "rootVolume without sourceUUID uses image",
			mutate:       func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.RootVolume = &mapiv1alpha1.RootVolume{Size: 50} },
			want:         func(s *spec) { s.RootVolume = &infrav1.RootVolume{SizeGiB: 50} },
			wantWarnings: []string{pv("rootVolume.sourceUUID")},
		},
		{
			name: "rootVolume: no image at all, size 0, zone with a space",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Image = ""
				ps.RootVolume = &mapiv1alpha1.RootVolume{Zone: "a b"}
			},
			wantErrs: []string{pv("rootVolume.sourceUUID"), pv("rootVolume.diskSize"), pv("rootVolume.availabilityZone")},
		},
		{
			name: "additionalBlockDevices",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.AdditionalBlockDevices = []mapiv1alpha1.AdditionalBlockDevice{
					{Name: "etcd", SizeGiB: 10, Storage: mapiv1alpha1.BlockDeviceStorage{Type: mapiv1alpha1.LocalBlockDevice}},
					{Name: "data", SizeGiB: 20, Storage: mapiv1alpha1.BlockDeviceStorage{Type: mapiv1alpha1.VolumeBlockDevice,
						Volume: &mapiv1alpha1.BlockDeviceVolume{Type: "ssd", AvailabilityZone: "az"}}},
					{Name: "plain", SizeGiB: 5, Storage: mapiv1alpha1.BlockDeviceStorage{Type: mapiv1alpha1.VolumeBlockDevice}},
				}
			},
			want: func(s *spec) {
				s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
					{Name: "etcd", SizeGiB: 10, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}},
					{Name: "data", SizeGiB: 20, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice, Volume: &infrav1.BlockDeviceVolume{
						Type: "ssd", AvailabilityZone: &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromName, Name: ptr.To[infrav1.VolumeAZName]("az")}}}},
					{Name: "plain", SizeGiB: 5, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}},
				}
			},
		},
		{
			name: "additionalBlockDevices refused",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				local := mapiv1alpha1.BlockDeviceStorage{Type: mapiv1alpha1.LocalBlockDevice}
				ps.AdditionalBlockDevices = []mapiv1alpha1.AdditionalBlockDevice{
					{Name: "root", SizeGiB: 1, Storage: local},
					{Name: "", SizeGiB: 1, Storage: local},
					{Name: "a", SizeGiB: 0, Storage: local},
					{Name: "a", SizeGiB: 1, Storage: local},
					{Name: "b", SizeGiB: 1, Storage: mapiv1alpha1.BlockDeviceStorage{Type: "Tape"}},
					{Name: "c", SizeGiB: 1, Storage: mapiv1alpha1.BlockDeviceStorage{Type: mapiv1alpha1.LocalBlockDevice, Volume: &mapiv1alpha1.BlockDeviceVolume{Type: "x"}}},
				}
			},
			wantWarnings: []string{pv("additionalBlockDevices[5].storage.volume")},
			wantErrs: []string{
				pv("additionalBlockDevices[0].name"), pv("additionalBlockDevices[1].name"), pv("additionalBlockDevices[2].sizeGiB"),
				pv("additionalBlockDevices[3].name"), pv("additionalBlockDevices[4].storage.type"),
			},
		},
		{
			// Upstream lost noAllowedAddressPairs, portSecurity, vnicType and
			// profile by setting them on a copy of each port.
			name: "network by uuid with subnets: one port, every network setting kept",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Networks = []mapiv1alpha1.NetworkParam{{
					UUID: netID, PortTags: []string{"n"}, VNICType: "direct", PortSecurity: ptr.To(false),
					Profile: map[string]string{"capabilities": `["switchdev"]`, "trusted": "true"},
					Subnets: []mapiv1alpha1.SubnetParam{{UUID: subnetID, PortTags: []string{"s", "n"}}, {Filter: mapiv1alpha1.SubnetFilter{Name: "sub-b", IPVersion: 6}}},
				}}
			},
			want: func(s *spec) {
				s.Ports = []infrav1.PortOpts{{
					Network: &infrav1.NetworkParam{ID: ptr.To(netID)},
					Tags:    []infrav1.NeutronTag{"n", "s"},
					FixedIPs: []infrav1.FixedIP{
						{Subnet: &infrav1.SubnetParam{ID: ptr.To(subnetID)}},
						{Subnet: &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "sub-b", IPVersion: 6}}},
					},
					ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{
						VNICType: ptr.To("direct"), EnablePortSecurity: ptr.To(false),
						Profile: &infrav1.BindingProfile{OVSHWOffload: ptr.To(true), TrustedVF: ptr.To(true)},
					},
				}}
			},
			// Port security off: MAPO drops the VIP address pairs (Neutron
			// refuses them).
			wantWarnings: []string{pv("networks[0].portSecurity")},
		},
		{
			name: "network by filter; noAllowedAddressPairs",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Networks = []mapiv1alpha1.NetworkParam{{
					NoAllowedAddressPairs: true,
					Filter:                mapiv1alpha1.Filter{Name: "n", Description: "d", TenantID: "t", Tags: "x,y", NotTagsAny: "z"},
				}}
			},
			want: func(s *spec) {
				s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{
					Name: "n", Description: "d", ProjectID: "t",
					FilterByNeutronTags: infrav1.FilterByNeutronTags{Tags: []infrav1.NeutronTag{"x", "y"}, NotTagsAny: []infrav1.NeutronTag{"z"}},
				}}}}
			},
		},
		{
			name: "network by filter.id; the rest of the filter is dropped",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Networks = []mapiv1alpha1.NetworkParam{{NoAllowedAddressPairs: true, Filter: mapiv1alpha1.Filter{ID: netID, Name: "n"}}}
			},
			want:         func(s *spec) { s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}}} },
			wantWarnings: []string{pv("networks[0].filter")},
		},
		{
			name: "subnets only: one port per subnet, on the cluster network",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Networks = []mapiv1alpha1.NetworkParam{{
					PortTags: []string{"n"}, VNICType: "normal",
					Subnets: []mapiv1alpha1.SubnetParam{
						{Filter: mapiv1alpha1.SubnetFilter{Name: "nodes", Tags: "openshiftClusterID=ocp-x7k2p"}},
						{UUID: sub2ID, PortTags: []string{"s"}},
					},
				}}
			},
			want: func(s *spec) {
				common := infrav1.ResolvedPortSpecFields{AllowedAddressPairs: vipPairs, VNICType: ptr.To("normal")}
				s.Ports = []infrav1.PortOpts{
					{Tags: []infrav1.NeutronTag{"n"}, ResolvedPortSpecFields: common, FixedIPs: []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{
						Name: "nodes", FilterByNeutronTags: infrav1.FilterByNeutronTags{Tags: []infrav1.NeutronTag{"openshiftClusterID=ocp-x7k2p"}},
					}}}}},
					{Tags: []infrav1.NeutronTag{"n", "s"}, ResolvedPortSpecFields: common, FixedIPs: []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{ID: ptr.To(sub2ID)}}}},
				}
			},
			wantWarnings: []string{pv("networks[0].subnets[0]"), pv("networks[0].subnets[1]")},
		},
		{
			// Upstream gave such a subnet both an ID and a filter.
			name: "subnet with uuid and filter: by ID only",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Networks = []mapiv1alpha1.NetworkParam{{UUID: netID, NoAllowedAddressPairs: true, Subnets: []mapiv1alpha1.SubnetParam{
					{UUID: subnetID, Filter: mapiv1alpha1.SubnetFilter{CIDR: "10.0.0.0/16"}},
					{Filter: mapiv1alpha1.SubnetFilter{ID: sub2ID}},
				}}}
			},
			want: func(s *spec) {
				s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}, FixedIPs: []infrav1.FixedIP{
					{Subnet: &infrav1.SubnetParam{ID: ptr.To(subnetID)}}, {Subnet: &infrav1.SubnetParam{ID: ptr.To(sub2ID)}},
				}}}
			},
			wantWarnings: []string{pv("networks[0].subnets[0].filter")},
		},
		{
			name: "subnet fields MAPO ignores",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Networks = []mapiv1alpha1.NetworkParam{{UUID: netID, NoAllowedAddressPairs: true, FixedIP: "10.0.0.9", Subnets: []mapiv1alpha1.SubnetParam{
					{PortSecurity: ptr.To(true), Filter: mapiv1alpha1.SubnetFilter{
						Name: "s", NetworkID: netID, SubnetPoolID: "pool", DeprecatedLimit: 1,
						GatewayIP: "10.0.0.1", IPv6AddressMode: "slaac", IPv6RAMode: "slaac", ProjectID: "p", Description: "d", TagsAny: "t",
					}},
					{},
				}}}
			},
			want: func(s *spec) {
				s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}, FixedIPs: []infrav1.FixedIP{
					{Subnet: &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{
						Name: "s", GatewayIP: "10.0.0.1", IPv6AddressMode: "slaac", IPv6RAMode: "slaac", ProjectID: "p", Description: "d",
						FilterByNeutronTags: infrav1.FilterByNeutronTags{TagsAny: []infrav1.NeutronTag{"t"}},
					}}},
					{},
				}}}
			},
			wantWarnings: []string{
				pv("networks[0].fixedIp"), pv("networks[0].subnets[0].portSecurity"), pv("networks[0].subnets[0].filter.networkId"),
				pv("networks[0].subnets[0].filter.subnetpoolId"), pv("networks[0].subnets[0].filter"), pv("networks[0].subnets[1]"),
			},
		},
		{
			name: "network: deprecated filter fields; only those; nothing at all; bad ID; bad tag",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Networks = []mapiv1alpha1.NetworkParam{
					{UUID: netID, NoAllowedAddressPairs: true, Filter: mapiv1alpha1.Filter{DeprecatedSortKey: "name"}},
					{Filter: mapiv1alpha1.Filter{DeprecatedLimit: 1}},
					{NoAllowedAddressPairs: true},
					{UUID: "x", NoAllowedAddressPairs: true},
					{UUID: netID, NoAllowedAddressPairs: true, PortTags: []string{"a,b"}},
				}
			},
			want: func(s *spec) {
				s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}}}
			},
			wantWarnings: []string{pv("networks[0].filter"), pv("networks[1].filter"), pv("networks[2]")},
			wantErrs:     []string{pv("networks[1].filter"), pv("networks[3].uuid"), pv("networks[4].portTags[0]")},
		},
		{
			name:   "VIP pairs: none with a user-managed load balancer",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.Networks = []mapiv1alpha1.NetworkParam{{UUID: netID}} },
			infra:  func(i *Infra) { i.UserManagedLoadBalancer = true },
			want:   func(s *spec) { s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}}} },
		},
		{
			name:         "VIP pairs: the Infrastructure names no VIP",
			mutate:       func(ps *mapiv1alpha1.OpenstackProviderSpec) { ps.Networks = []mapiv1alpha1.NetworkParam{{UUID: netID}} },
			infra:        func(i *Infra) { i.APIVIPs, i.IngressVIPs = nil, nil },
			want:         func(s *spec) { s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}}} },
			wantWarnings: []string{pv("networks[0].noAllowedAddressPairs")},
		},
		{
			// Upstream dropped fixedIPs[].subnetID.
			name: "port: every field",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Ports = []mapiv1alpha1.PortOpts{{
					NetworkID: net2ID, NameSuffix: "storage", Description: "d", AdminStateUp: ptr.To(true), MACAddress: "fa:16:3e:00:00:01",
					FixedIPs:            []mapiv1alpha1.FixedIPs{{SubnetID: subnetID, IPAddress: "10.1.0.5"}, {SubnetID: sub2ID}, {IPAddress: "10.1.0.6"}},
					SecurityGroups:      &[]string{sgID},
					AllowedAddressPairs: []mapiv1alpha1.AddressPair{{IPAddress: "10.1.0.100", MACAddress: "fa:16:3e:00:00:02"}, {IPAddress: "10.1.0.101"}},
					Tags:                []string{"p", "p"}, VNICType: "direct", Profile: map[string]string{"trusted": "true"},
					PortSecurity: ptr.To(true), Trunk: ptr.To(true),
				}}
			},
			want: func(s *spec) {
				s.Ports = []infrav1.PortOpts{{
					Network: &infrav1.NetworkParam{ID: ptr.To(net2ID)}, NameSuffix: ptr.To("storage"), Description: ptr.To("d"),
					FixedIPs: []infrav1.FixedIP{
						{Subnet: &infrav1.SubnetParam{ID: ptr.To(subnetID)}, IPAddress: ptr.To("10.1.0.5")},
						{Subnet: &infrav1.SubnetParam{ID: ptr.To(sub2ID)}},
						{IPAddress: ptr.To("10.1.0.6")},
					},
					SecurityGroups: []infrav1.SecurityGroupParam{{ID: ptr.To(sgID)}},
					Tags:           []infrav1.NeutronTag{"p"}, Trunk: ptr.To(true),
					ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{
						AdminStateUp: ptr.To(true), MACAddress: ptr.To("fa:16:3e:00:00:01"), VNICType: ptr.To("direct"),
						AllowedAddressPairs: []infrav1.AddressPair{{IPAddress: "10.1.0.100", MACAddress: ptr.To("fa:16:3e:00:00:02")}, {IPAddress: "10.1.0.101"}},
						Profile:             &infrav1.BindingProfile{TrustedVF: ptr.To(true)}, EnablePortSecurity: ptr.To(true),
					},
				}}
			},
		},
		{
			name: "port: an empty security group list means the machine's",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Ports = []mapiv1alpha1.PortOpts{{NetworkID: net2ID, SecurityGroups: &[]string{}, Profile: map[string]string{"trusted": "false"}}}
			},
			want: func(s *spec) { s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(net2ID)}}} },
		},
		{
			name: "port: fields MAPO ignores",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Ports = []mapiv1alpha1.PortOpts{{NetworkID: net2ID, TenantID: "t", ProjectID: "p", DeprecatedHostID: "h",
					Profile: map[string]string{"capabilities": "[]"}}}
			},
			want:         func(s *spec) { s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(net2ID)}}} },
			wantWarnings: []string{pv("ports[0].tenantID"), pv("ports[0].projectID"), pv("ports[0].hostID"), pv("ports[0].profile[capabilities]")},
		},
		{
			name: "port: allowed address pairs dropped with a user-managed load balancer",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Ports = []mapiv1alpha1.PortOpts{{NetworkID: net2ID, AllowedAddressPairs: []mapiv1alpha1.AddressPair{{IPAddress: "10.1.0.100"}}}}
			},
			infra:        func(i *Infra) { i.UserManagedLoadBalancer = true },
			want:         func(s *spec) { s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(net2ID)}}} },
			wantWarnings: []string{pv("ports[0].allowedAddressPairs")},
		},
		{
			name: "ports refused",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Ports = []mapiv1alpha1.PortOpts{
					{},
					{NetworkID: net2ID, Profile: map[string]string{"foo": "bar"}},
					{NetworkID: net2ID, PortSecurity: ptr.To(false), SecurityGroups: &[]string{sgID}},
					{NetworkID: "n", FixedIPs: []mapiv1alpha1.FixedIPs{{SubnetID: "s"}}, SecurityGroups: &[]string{"g"}},
					{NetworkID: net2ID, AllowedAddressPairs: []mapiv1alpha1.AddressPair{{MACAddress: "m"}}, Tags: []string{""}},
				}
			},
			wantErrs: []string{
				pv("ports[0].networkID"),
				pv("ports[3].networkID"), pv("ports[3].fixedIPs[0].subnetID"), pv("ports[3].securityGroups[0]"),
				pv("ports[4].allowedAddressPairs[0].ipAddress"), pv("ports[4].tags[0]"),
			},
			// What MAPO ignores or drops is warned, not refused.
			wantWarnings: []string{pv("ports[1].profile[foo]"), pv("ports[2].securityGroups")},
		},
		{
			name: "networks come before ports, as in MAPO",
			mutate: func(ps *mapiv1alpha1.OpenstackProviderSpec) {
				ps.Ports = []mapiv1alpha1.PortOpts{{NetworkID: net2ID}}
				ps.Networks = []mapiv1alpha1.NetworkParam{{UUID: netID, NoAllowedAddressPairs: true}}
			},
			want: func(s *spec) {
				s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}}, {Network: &infrav1.NetworkParam{ID: ptr.To(net2ID)}}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := baseOpenStack()
			tt.mutate(&ps)
			infra := testInfra()
			if tt.infra != nil {
				tt.infra(&infra)
			}
			capi, tmpl, warnings, errs := MachineSet(testMachineSet(t, ps), infra)
			checkReport(t, warnings, errs, tt.wantWarnings, tt.wantErrs)
			if len(tt.wantErrs) > 0 {
				if capi != nil || tmpl != nil {
					t.Errorf("objects returned with errors")
				}
				return
			}
			if len(errs) > 0 {
				return
			}
			osmt, ok := tmpl.(*infrav1.OpenStackMachineTemplate)
			if !ok {
				t.Fatalf("template is a %T", tmpl)
			}
			want := baseSpec()
			if tt.want != nil {
				tt.want(&want)
			}
			if diff := cmp.Diff(want, osmt.Spec.Template.Spec); diff != "" {
				t.Errorf("template spec (-want +got):\n%s", diff)
			}
			if tt.wantMS != nil {
				tt.wantMS(t, capi)
			}
		})
	}
}

// baseSpec is what baseOpenStack converts to.
func baseSpec() spec {
	return spec{
		Flavor:      infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.xlarge")}},
		Image:       infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos-4.20")}},
		IdentityRef: &infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: "openstack-cloud-credentials", CloudName: "openstack"},
	}
}

// TestOpenStackTemplateObject checks the template's identity and the
// reference to it.
func TestOpenStackTemplateObject(t *testing.T) {
	capi, tmpl, warnings, errs := MachineSet(testMachineSet(t, baseOpenStack()), testInfra())
	if len(errs) > 0 || len(warnings) > 0 {
		t.Fatalf("errors %v, warnings %v", errs, warnings)
	}
	osmt := tmpl.(*infrav1.OpenStackMachineTemplate)
	wantName, err := TemplateName(testMSName, osmt.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if osmt.Name != wantName || osmt.Namespace != testCAPINS {
		t.Errorf("template %s/%s, want %s/%s", osmt.Namespace, osmt.Name, testCAPINS, wantName)
	}
	if osmt.APIVersion != "infrastructure.cluster.x-k8s.io/v1beta2" || osmt.Kind != OpenStackMachineTemplateKind {
		t.Errorf("template type %s %s", osmt.APIVersion, osmt.Kind)
	}
	if diff := cmp.Diff(map[string]string{clusterv1.ClusterNameLabel: testCluster}, osmt.Labels); diff != "" {
		t.Errorf("template labels (-want +got):\n%s", diff)
	}
	want := clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: OpenStackMachineTemplateKind, Name: wantName}
	if diff := cmp.Diff(want, capi.Spec.Template.Spec.InfrastructureRef); diff != "" {
		t.Errorf("infrastructureRef (-want +got):\n%s", diff)
	}
}

// TestProviderSpecDecoding covers the providerSpec as a whole: its kind,
// unknown fields and bad JSON.
func TestProviderSpecDecoding(t *testing.T) {
	tests := []struct {
		name         string
		raw          string
		platform     string
		wantErrs     []string
		wantWarnings []string
		wantTemplate string
	}{
		{name: "kind names the provider", raw: `{"kind":"OpenstackProviderSpec","flavor":"f","image":"i","userDataSecret":{"name":"u"}}`, wantTemplate: OpenStackMachineTemplateKind},
		{name: "no kind: the platform decides", raw: `{"flavor":"f","image":"i","userDataSecret":{"name":"u"}}`, platform: "OpenStack", wantTemplate: OpenStackMachineTemplateKind},
		{name: "no kind, bare-metal platform", raw: `{"image":{"url":"http://x/i.qcow2","checksum":"http://x/i.md5sum"},"userData":{"name":"u"}}`, platform: "BareMetal", wantTemplate: Metal3MachineTemplateKind},
		{name: "no kind, other platform", raw: `{"flavor":"f"}`, platform: "AWS", wantErrs: []string{pv("kind")}},
		{name: "unknown kind", raw: `{"kind":"AWSMachineProviderConfig"}`, platform: "OpenStack", wantErrs: []string{pv("kind")}},
		{name: "not an object", raw: `[1]`, platform: "OpenStack", wantErrs: []string{"spec.template.spec.providerSpec.value"}},
		{name: "bad JSON", raw: `{"kind":`, platform: "OpenStack", wantErrs: []string{"spec.template.spec.providerSpec.value"}},
		{
			name:     "unknown field",
			raw:      `{"kind":"OpenstackProviderSpec","flavor":"f","image":"i","userDataSecret":{"name":"u"},"bogus":1,"ports":[{"networkID":"` + netID + `","trunkk":true}]}`,
			wantErrs: []string{pv("bogus"), pv("ports[0].trunkk")},
		},
		{
			name:         "mis-cased field: read as MAPO reads it, with a warning at its canonical path",
			raw:          `{"kind":"OpenstackProviderSpec","flavor":"f","image":"i","userDataSecret":{"name":"u"},"ports":[{"networkID":"` + netID + `","Trunk":true}]}`,
			wantWarnings: []string{pv("ports[0].trunk")},
			wantTemplate: OpenStackMachineTemplateKind,
		},
		{
			name:     "one field in two cases",
			raw:      `{"kind":"OpenstackProviderSpec","flavor":"f","Flavor":"g","image":"i","userDataSecret":{"name":"u"}}`,
			wantErrs: []string{pv("flavor")},
		},
		{
			name:     "duplicate field",
			raw:      `{"kind":"OpenstackProviderSpec","flavor":"f","flavor":"g","image":"i","userDataSecret":{"name":"u"}}`,
			wantErrs: []string{pv("flavor")},
		},
		{name: "wrong type: at the field's path", raw: `{"kind":"OpenstackProviderSpec","flavor":3}`, wantErrs: []string{pv("flavor")}},
		{
			name:     "wrong types deep down",
			raw:      `{"kind":"OpenstackProviderSpec","flavor":"f","image":"i","userDataSecret":{"name":"u"},"rootVolume":{"diskSize":"30"},"ports":[{"networkID":"` + netID + `","portSecurity":"false","fixedIPs":{}}]}`,
			wantErrs: []string{pv("rootVolume.diskSize"), pv("ports[0].portSecurity"), pv("ports[0].fixedIPs")},
		},
		{name: "a fraction where a whole number goes", raw: `{"kind":"OpenstackProviderSpec","flavor":"f","image":"i","userDataSecret":{"name":"u"},"rootVolume":{"diskSize":1.5}}`, wantErrs: []string{pv("rootVolume.diskSize")}},
		{name: "kind not a string", raw: `{"kind":7}`, platform: "OpenStack", wantErrs: []string{pv("kind")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infra := testInfra()
			infra.Platform = configPlatform(tt.platform)
			_, tmpl, warnings, errs := MachineSet(testMachineSet(t, tt.raw), infra)
			if got := errPaths(errs); !equalStrings(got, sorted(tt.wantErrs)) {
				t.Errorf("errors at %q, want %q: %v", got, tt.wantErrs, errs)
			}
			if got := warningPaths(warnings); tt.wantWarnings != nil && !equalStrings(got, sorted(append(tt.wantWarnings, pv("cloudsSecret")))) {
				t.Errorf("warnings at %q, want %q: %v", got, tt.wantWarnings, warnings)
			}
			if tt.wantTemplate != "" && (tmpl == nil || tmpl.GetObjectKind().GroupVersionKind().Kind != tt.wantTemplate) {
				t.Errorf("template %T, want a %s (warnings %v)", tmpl, tt.wantTemplate, warnings)
			}
		})
	}
	t.Run("no providerSpec", func(t *testing.T) {
		ms := testMachineSet(t, "{}")
		ms.Spec.Template.Spec.ProviderSpec.Value = nil
		_, _, _, errs := MachineSet(ms, testInfra())
		if got := errPaths(errs); !equalStrings(got, []string{"spec.template.spec.providerSpec.value"}) {
			t.Errorf("errors at %q", got)
		}
	})
}

// TestCloudsSecretSameNamespace: the usual MAPI namespace is no warning.
func TestCloudsSecretSameNamespace(t *testing.T) {
	ps := baseOpenStack()
	ps.CloudsSecret = &corev1.SecretReference{Name: "c", Namespace: testMAPINS}
	ps.UserDataSecret = &corev1.SecretReference{Name: "u", Namespace: testMAPINS}
	ps.ObjectMeta = metav1.ObjectMeta{}
	_, _, warnings, errs := MachineSet(testMachineSet(t, ps), testInfra())
	if len(warnings)+len(errs) > 0 {
		t.Errorf("warnings %v, errors %v", warnings, errs)
	}
}
