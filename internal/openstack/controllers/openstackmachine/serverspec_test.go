package openstackmachine_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackmachine"
)

// Inputs shared by the cases: a machine that names only flavor and image,
// its CAPI Machine, and the defaults of a cluster.
func osmWith(mods ...func(*infrav1.OpenStackMachineSpec)) *infrav1.OpenStackMachine {
	osm := &infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "m-0", Namespace: "ns"},
		Spec: infrav1.OpenStackMachineSpec{
			Flavor: infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.large")}},
			Image:  infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
		},
	}
	for _, m := range mods {
		m(&osm.Spec)
	}
	return osm
}

func machineWith(mods ...func(*clusterv1.Machine)) *clusterv1.Machine {
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "m-0", Namespace: "ns", Labels: map[string]string{clusterv1.ClusterNameLabel: "c"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "c",
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("m-0-bootstrap")},
		},
	}
	for _, f := range mods {
		f(m)
	}
	return m
}

func controlPlane(m *clusterv1.Machine) { m.Labels[clusterv1.MachineControlPlaneLabel] = "" }

var (
	machineIdentity = infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: "machine-cloud", CloudName: "openstack", Region: "RegionTwo"}
	clusterIdentity = infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: "cluster-cloud", CloudName: "openstack", Region: "RegionOne"}
	cpGroup         = infrav1.SecurityGroupParam{ID: ptr.To("sg-control-plane")}
	workerGroup     = infrav1.SecurityGroupParam{ID: ptr.To("sg-worker")}
	ownGroup        = infrav1.SecurityGroupParam{Filter: &infrav1.SecurityGroupFilter{Name: "own"}}
)

func clusterDefaults() *openstackmachine.Defaults {
	return &openstackmachine.Defaults{
		IdentityRef:                &clusterIdentity,
		Network:                    &infrav1.NetworkParam{ID: ptr.To("net-cluster")},
		Subnets:                    []infrav1.SubnetParam{{ID: ptr.To("subnet-v4")}, {ID: ptr.To("subnet-v6")}},
		ControlPlaneSecurityGroups: []infrav1.SecurityGroupParam{cpGroup},
		WorkerSecurityGroups:       []infrav1.SecurityGroupParam{workerGroup},
		Tags:                       []string{"cluster-c", "shared"},
	}
}

// defaultPort is the port a machine without ports gets from clusterDefaults.
func defaultPort() infrav1.PortOpts {
	return infrav1.PortOpts{
		Network:  &infrav1.NetworkParam{ID: ptr.To("net-cluster")},
		FixedIPs: []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{ID: ptr.To("subnet-v4")}}, {Subnet: &infrav1.SubnetParam{ID: ptr.To("subnet-v6")}}},
	}
}

func TestServerSpec(t *testing.T) {
	tests := []struct {
		name     string
		osm      *infrav1.OpenStackMachine
		machine  *clusterv1.Machine
		defaults *openstackmachine.Defaults
		// check looks at the derived spec; wantErr is a substring of the
		// error instead.
		check   func(g Gomega, s *infrav1alpha1.OpenStackServerSpec)
		wantErr string
	}{
		{
			name:     "identity from the machine wins over the cluster's",
			osm:      osmWith(func(s *infrav1.OpenStackMachineSpec) { s.IdentityRef = ptr.To(machineIdentity) }),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.IdentityRef).To(Equal(machineIdentity))
			},
		},
		{
			name:     "identity from the cluster when the machine has none",
			osm:      osmWith(),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.IdentityRef).To(Equal(clusterIdentity))
			},
		},
		{
			name:     "no identity anywhere is an error",
			osm:      osmWith(),
			machine:  machineWith(),
			defaults: func() *openstackmachine.Defaults { d := clusterDefaults(); d.IdentityRef = nil; return d }(),
			wantErr:  "spec.identityRef",
		},
		{
			name: "no identity and no defaults at all is an error",
			osm: osmWith(func(s *infrav1.OpenStackMachineSpec) {
				s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To("n")}}}
			}),
			machine:  machineWith(),
			defaults: nil,
			wantErr:  "spec.identityRef",
		},
		{
			name: "flavor by id",
			osm: osmWith(func(s *infrav1.OpenStackMachineSpec) {
				s.Flavor = infrav1.FlavorParam{ID: ptr.To("flavor-uuid")}
			}),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.FlavorID).To(Equal(ptr.To("flavor-uuid")))
				g.Expect(s.Flavor).To(BeNil())
			},
		},
		{
			name:     "flavor by name",
			osm:      osmWith(),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.Flavor).To(Equal(ptr.To("m1.large")))
				g.Expect(s.FlavorID).To(BeNil())
			},
		},
		{
			name: "flavor with neither id nor name is an error",
			osm: osmWith(func(s *infrav1.OpenStackMachineSpec) {
				s.Flavor = infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{}}
			}),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			wantErr:  "spec.flavor",
		},
		{
			name:     "trunk off by default",
			osm:      osmWith(),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.Trunk).To(BeNil())
			},
		},
		{
			name:     "trunk",
			osm:      osmWith(func(s *infrav1.OpenStackMachineSpec) { s.Trunk = true }),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.Trunk).To(Equal(ptr.To(true)))
			},
		},
		{
			name:     "availability zone from the Machine's failure domain",
			osm:      osmWith(),
			machine:  machineWith(func(m *clusterv1.Machine) { m.Spec.FailureDomain = "az-2" }),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.AvailabilityZone).To(Equal(ptr.To("az-2")))
			},
		},
		{
			name:     "no failure domain, no availability zone",
			osm:      osmWith(),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.AvailabilityZone).To(BeNil())
			},
		},
		{
			name:     "user data from the bootstrap Secret",
			osm:      osmWith(),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.UserDataRef).To(Equal(&corev1.LocalObjectReference{Name: "m-0-bootstrap"}))
			},
		},
		{
			name:     "no bootstrap data, no user data",
			osm:      osmWith(),
			machine:  machineWith(func(m *clusterv1.Machine) { m.Spec.Bootstrap.DataSecretName = nil }),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.UserDataRef).To(BeNil())
			},
		},
		{
			name:     "tags: the cluster's, then the machine's, without duplicates",
			osm:      osmWith(func(s *infrav1.OpenStackMachineSpec) { s.Tags = []string{"shared", "machine", "machine"} }),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.Tags).To(Equal([]string{"cluster-c", "shared", "machine"}))
			},
		},
		{
			name:     "no tags anywhere",
			osm:      osmWith(),
			machine:  machineWith(),
			defaults: func() *openstackmachine.Defaults { d := clusterDefaults(); d.Tags = nil; return d }(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.Tags).To(BeEmpty())
			},
		},
		{
			name:     "security groups of a worker from the defaults",
			osm:      osmWith(),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.SecurityGroups).To(Equal([]infrav1.SecurityGroupParam{workerGroup}))
			},
		},
		{
			name:     "security groups of a control-plane machine from the defaults",
			osm:      osmWith(),
			machine:  machineWith(controlPlane),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.SecurityGroups).To(Equal([]infrav1.SecurityGroupParam{cpGroup}))
			},
		},
		{
			name:     "the machine's own security groups win over the defaults",
			osm:      osmWith(func(s *infrav1.OpenStackMachineSpec) { s.SecurityGroups = []infrav1.SecurityGroupParam{ownGroup} }),
			machine:  machineWith(controlPlane),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.SecurityGroups).To(Equal([]infrav1.SecurityGroupParam{ownGroup}))
			},
		},
		{
			name:     "no ports: one port on the cluster network, its subnets as fixed IPs",
			osm:      osmWith(),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.Ports).To(Equal([]infrav1.PortOpts{defaultPort()}))
			},
		},
		{
			name: "a port without network gets the cluster network, its other fields kept",
			osm: osmWith(func(s *infrav1.OpenStackMachineSpec) {
				s.Ports = []infrav1.PortOpts{{NameSuffix: ptr.To("data"), Trunk: ptr.To(true), Tags: []infrav1.NeutronTag{"p"}}}
			}),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				want := defaultPort()
				want.NameSuffix, want.Trunk, want.Tags = ptr.To("data"), ptr.To(true), []infrav1.NeutronTag{"p"}
				g.Expect(s.Ports).To(Equal([]infrav1.PortOpts{want}))
			},
		},
		{
			name: "a port without network keeps its own fixed IPs",
			osm: osmWith(func(s *infrav1.OpenStackMachineSpec) {
				s.Ports = []infrav1.PortOpts{{FixedIPs: []infrav1.FixedIP{{IPAddress: ptr.To("10.0.0.5")}}}}
			}),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.Ports).To(Equal([]infrav1.PortOpts{{
					Network:  &infrav1.NetworkParam{ID: ptr.To("net-cluster")},
					FixedIPs: []infrav1.FixedIP{{IPAddress: ptr.To("10.0.0.5")}},
				}}))
			},
		},
		{
			name: "a port with its own network gets no default subnets",
			osm: osmWith(func(s *infrav1.OpenStackMachineSpec) {
				s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "storage"}}}}
			}),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.Ports).To(Equal([]infrav1.PortOpts{{Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "storage"}}}}))
			},
		},
		{
			name: "ports keep their order",
			osm: osmWith(func(s *infrav1.OpenStackMachineSpec) {
				s.Ports = []infrav1.PortOpts{
					{Network: &infrav1.NetworkParam{ID: ptr.To("a")}},
					{},
					{Network: &infrav1.NetworkParam{ID: ptr.To("c")}},
				}
			}),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.Ports).To(HaveLen(3))
				g.Expect(*s.Ports[0].Network.ID).To(Equal("a"))
				g.Expect(*s.Ports[1].Network.ID).To(Equal("net-cluster"))
				g.Expect(*s.Ports[2].Network.ID).To(Equal("c"))
			},
		},
		{
			name: "a port without network and no cluster network is an error naming the port",
			osm: osmWith(func(s *infrav1.OpenStackMachineSpec) {
				s.IdentityRef = ptr.To(machineIdentity)
				s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To("a")}}, {}}
			}),
			machine:  machineWith(),
			defaults: nil,
			wantErr:  "spec.ports[1].network",
		},
		{
			name:     "no ports and no cluster network is an error naming the default port",
			osm:      osmWith(func(s *infrav1.OpenStackMachineSpec) { s.IdentityRef = ptr.To(machineIdentity) }),
			machine:  machineWith(),
			defaults: &openstackmachine.Defaults{},
			wantErr:  "spec.ports[0].network",
		},
		{
			name: "server fields are copied",
			osm: osmWith(func(s *infrav1.OpenStackMachineSpec) {
				s.Image = infrav1.ImageParam{ID: ptr.To("image-uuid")}
				s.SSHKeyName = "key"
				s.ConfigDrive = ptr.To(true)
				s.RootVolume = &infrav1.RootVolume{SizeGiB: 30}
				s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{{Name: "etcd", SizeGiB: 10, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}}}
				s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To("sg-uuid")}
				s.ServerMetadata = []infrav1.ServerMetadata{{Key: "k", Value: "v"}}
			}),
			machine:  machineWith(),
			defaults: clusterDefaults(),
			check: func(g Gomega, s *infrav1alpha1.OpenStackServerSpec) {
				g.Expect(s.Image).To(Equal(infrav1.ImageParam{ID: ptr.To("image-uuid")}))
				g.Expect(s.SSHKeyName).To(Equal("key"))
				g.Expect(s.ConfigDrive).To(Equal(ptr.To(true)))
				g.Expect(s.RootVolume).To(Equal(&infrav1.RootVolume{SizeGiB: 30}))
				g.Expect(s.AdditionalBlockDevices).To(HaveLen(1))
				g.Expect(s.ServerGroup).To(Equal(&infrav1.ServerGroupParam{ID: ptr.To("sg-uuid")}))
				g.Expect(s.ServerMetadata).To(Equal([]infrav1.ServerMetadata{{Key: "k", Value: "v"}}))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			osmBefore, machineBefore := tt.osm.DeepCopy(), tt.machine.DeepCopy()
			spec, err := openstackmachine.ServerSpec(tt.osm, tt.machine, tt.defaults)
			// Pure: the inputs are left as they were.
			g.Expect(tt.osm).To(Equal(osmBefore))
			g.Expect(tt.machine).To(Equal(machineBefore))
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				g.Expect(spec).To(BeNil())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tt.check(g, spec)
			// Deterministic: the same inputs give the same spec.
			again, err := openstackmachine.ServerSpec(tt.osm, tt.machine, tt.defaults)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(equality.Semantic.DeepEqual(spec, again)).To(BeTrue())
		})
	}
}

// TestServerSpecDoesNotAliasItsInputs: the derived spec is stored in a new
// OpenStackServer; changing it must not change the machine or the
// cluster's defaults (which the caller may share between machines).
func TestServerSpecDoesNotAliasItsInputs(t *testing.T) {
	g := NewWithT(t)
	osm := osmWith(func(s *infrav1.OpenStackMachineSpec) {
		s.Ports = []infrav1.PortOpts{{}, {Network: &infrav1.NetworkParam{ID: ptr.To("own")}}}
		s.Tags = []string{"machine"}
	})
	d := clusterDefaults()
	dBefore, osmBefore := *clusterDefaults(), osm.DeepCopy()

	spec, err := openstackmachine.ServerSpec(osm, machineWith(), d)
	g.Expect(err).NotTo(HaveOccurred())
	*spec.Ports[0].Network.ID = "changed"
	*spec.Ports[0].FixedIPs[0].Subnet.ID = "changed"
	*spec.Ports[1].Network.ID = "changed"
	spec.Tags[0] = "changed"
	*spec.SecurityGroups[0].ID = "changed"

	g.Expect(osm).To(Equal(osmBefore))
	g.Expect(*d.Network.ID).To(Equal(*dBefore.Network.ID))
	g.Expect(*d.Subnets[0].ID).To(Equal(*dBefore.Subnets[0].ID))
	g.Expect(d.Tags).To(Equal(dBefore.Tags))
	g.Expect(*d.WorkerSecurityGroups[0].ID).To(Equal("sg-worker"), "the defaults' security groups are shared with the derived spec")
}

func TestProviderID(t *testing.T) {
	tests := []struct {
		region, id, want string
	}{
		{"RegionOne", "5e0d7c5c-1e5c-4a3c-9f7e-1c0c2a3b4d5e", "openstack://RegionOne/5e0d7c5c-1e5c-4a3c-9f7e-1c0c2a3b4d5e"},
		{"", "5e0d7c5c-1e5c-4a3c-9f7e-1c0c2a3b4d5e", "openstack:///5e0d7c5c-1e5c-4a3c-9f7e-1c0c2a3b4d5e"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			NewWithT(t).Expect(openstackmachine.ProviderID(tt.region, tt.id)).To(Equal(tt.want))
		})
	}
}

// FuzzServerSpec: any machine gives a spec or an error, never a panic, and
// the same inputs always give the same answer.
func FuzzServerSpec(f *testing.F) {
	f.Add("m1.large", "", "net", "subnet", "az", "tag", true, false, uint8(1))
	f.Add("", "flavor-id", "", "", "", "", false, true, uint8(0))
	f.Fuzz(func(t *testing.T, flavorName, flavorID, network, subnet, az, tag string, withDefaults, cp bool, nPorts uint8) {
		osm := osmWith(func(s *infrav1.OpenStackMachineSpec) {
			s.Flavor = infrav1.FlavorParam{}
			if flavorID != "" {
				s.Flavor.ID = ptr.To(flavorID)
			} else if flavorName != "" {
				s.Flavor.Filter = &infrav1.FlavorFilter{Name: ptr.To(flavorName)}
			}
			s.Tags = []string{tag, tag}
			for i := 0; i < int(nPorts%4); i++ {
				p := infrav1.PortOpts{}
				if i%2 == 1 && network != "" {
					p.Network = &infrav1.NetworkParam{ID: ptr.To(network)}
				}
				s.Ports = append(s.Ports, p)
			}
		})
		machine := machineWith(func(m *clusterv1.Machine) { m.Spec.FailureDomain = az })
		if cp {
			controlPlane(machine)
		}
		var d *openstackmachine.Defaults
		if withDefaults {
			d = clusterDefaults()
			if network == "" {
				d.Network = nil
			}
			d.Subnets = []infrav1.SubnetParam{{ID: ptr.To(subnet)}}
		}
		a, errA := openstackmachine.ServerSpec(osm, machine, d)
		b, errB := openstackmachine.ServerSpec(osm, machine, d)
		if (errA == nil) != (errB == nil) || !equality.Semantic.DeepEqual(a, b) {
			t.Fatalf("not deterministic: %v / %v", errA, errB)
		}
		if errA == nil && len(a.Ports) == 0 {
			t.Fatal("a server spec without ports")
		}
	})
}
