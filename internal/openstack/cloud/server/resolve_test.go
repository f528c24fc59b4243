package server_test

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

func TestResolveByIDMakesNoCalls(t *testing.T) {
	e := newEnv(t)
	group := e.cloud.AddServerGroup("workers", "soft-anti-affinity")
	e.cloud.ResetRequests()
	spec := e.spec(func(s *infrav1alpha1.OpenStackServerSpec) {
		s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To(group)}
		s.SecurityGroups = []infrav1.SecurityGroupParam{{ID: ptr.To(e.sg)}}
		s.Tags = []string{"cluster-a", "shared"}
		s.Trunk = ptr.To(true)
		s.Ports = append(s.Ports, infrav1.PortOpts{
			Network:    &infrav1.NetworkParam{ID: ptr.To(e.net)},
			NameSuffix: ptr.To("storage"),
			FixedIPs:   []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{ID: ptr.To(e.subnet)}, IPAddress: ptr.To("10.0.0.99")}},
			Tags:       []infrav1.NeutronTag{"shared", "storage"},
			Trunk:      ptr.To(false),
		})
	})
	got := e.resolve(e.request("worker-a", spec))

	want := &infrav1alpha1.ResolvedServerSpec{ImageID: e.image, FlavorID: e.flavor, ServerGroupID: group,
		Ports: []infrav1.ResolvedPortSpec{
			{Name: "worker-a-0", NetworkID: e.net, Tags: []infrav1.NeutronTag{"cluster-a", "shared"}, Trunk: ptr.To(true),
				SecurityGroups: []string{e.sg}},
			{Name: "worker-a-storage", NetworkID: e.net, Tags: []infrav1.NeutronTag{"cluster-a", "shared", "storage"}, Trunk: ptr.To(false),
				FixedIPs:       []infrav1.ResolvedFixedIP{{Subnet: ptr.To(e.subnet), IPAddress: ptr.To("10.0.0.99")}},
				SecurityGroups: []string{e.sg}},
		}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resolved\n  %+v\nwant\n  %+v", got, want)
	}
	e.wantCalls()
}

func TestResolveFilters(t *testing.T) {
	e := newEnv(t)
	group := e.cloud.AddServerGroup("workers", "anti-affinity")
	e.cloud.AddImage("rhcos-4.18") // same name, without the tag
	e.cloud.AddFlavor("m1.small", 1, 2048, 20)
	other := e.cloud.AddNetwork("machines") // same name, without the tag
	e.cloud.AddSubnet(other, "other-v4", "10.0.0.0/24")
	e.cloud.ResetRequests()

	spec := &infrav1alpha1.OpenStackServerSpec{
		Image:       infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos-4.18"), Tags: []string{"ocp"}}},
		Flavor:      ptr.To("m1.large"),
		ServerGroup: &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To("workers")}},
		SecurityGroups: []infrav1.SecurityGroupParam{{Filter: &infrav1.SecurityGroupFilter{
			Name: "workers", FilterByNeutronTags: infrav1.FilterByNeutronTags{Tags: []infrav1.NeutronTag{"cluster-a"}}}}},
		Ports: []infrav1.PortOpts{{
			Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "machines",
				FilterByNeutronTags: infrav1.FilterByNeutronTags{Tags: []infrav1.NeutronTag{"cluster-a"}}}},
			FixedIPs: []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{CIDR: "10.0.0.0/24"}}}},
		}},
	}
	got := e.resolve(e.request("worker-a", spec))
	if got.ImageID != e.image || got.FlavorID != e.flavor || got.ServerGroupID != group {
		t.Errorf("image %s flavor %s group %s, want %s %s %s", got.ImageID, got.FlavorID, got.ServerGroupID, e.image, e.flavor, group)
	}
	p := got.Ports[0]
	if p.NetworkID != e.net || len(p.FixedIPs) != 1 || ptr.Deref(p.FixedIPs[0].Subnet, "") != e.subnet ||
		!reflect.DeepEqual(p.SecurityGroups, []string{e.sg}) {
		t.Errorf("port %+v; want network %s, subnet %s, security group %s", p, e.net, e.subnet, e.sg)
	}
	// One lookup per filter; the subnet is looked up in the resolved network.
	if n := len(e.cloud.Requests()); n != 6 {
		t.Errorf("%d calls, want 6: %v", n, e.cloud.Calls())
	}
	if r, _ := e.cloud.Last("GET", "/network/v2.0/subnets"); r.Query != "cidr=10.0.0.0%2F24&network_id="+e.net {
		t.Errorf("subnet query %q", r.Query)
	}
}

func TestResolveNotFoundAndAmbiguous(t *testing.T) {
	e := newEnv(t)
	e.cloud.AddImage("twin")
	e.cloud.AddImage("twin")
	e.cloud.AddFlavor("twin", 1, 1024, 10)
	e.cloud.AddFlavor("twin", 1, 1024, 10)
	e.cloud.AddNetwork("twin")
	e.cloud.AddNetwork("twin")
	e.cloud.AddServerGroup("twin", "affinity")
	e.cloud.AddServerGroup("twin", "affinity")
	e.cloud.AddSecurityGroup("twin")
	e.cloud.AddSecurityGroup("twin")

	image := func(name string) func(*infrav1alpha1.OpenStackServerSpec) {
		return func(s *infrav1alpha1.OpenStackServerSpec) {
			s.Image = infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To(name)}}
		}
	}
	flavor := func(name string) func(*infrav1alpha1.OpenStackServerSpec) {
		return func(s *infrav1alpha1.OpenStackServerSpec) { s.FlavorID, s.Flavor = nil, ptr.To(name) }
	}
	network := func(name string) func(*infrav1alpha1.OpenStackServerSpec) {
		return func(s *infrav1alpha1.OpenStackServerSpec) {
			s.Ports[0].Network = &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: name}}
		}
	}
	subnet := func(cidr string) func(*infrav1alpha1.OpenStackServerSpec) {
		return func(s *infrav1alpha1.OpenStackServerSpec) {
			s.Ports[0].FixedIPs = []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{CIDR: cidr}}}}
		}
	}
	group := func(name string) func(*infrav1alpha1.OpenStackServerSpec) {
		return func(s *infrav1alpha1.OpenStackServerSpec) {
			s.ServerGroup = &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To(name)}}
		}
	}
	secgroup := func(name string) func(*infrav1alpha1.OpenStackServerSpec) {
		return func(s *infrav1alpha1.OpenStackServerSpec) {
			s.SecurityGroups = []infrav1.SecurityGroupParam{{Filter: &infrav1.SecurityGroupFilter{Name: name}}}
		}
	}
	tests := []struct {
		name   string
		mod    func(*infrav1alpha1.OpenStackServerSpec)
		reason string
		msg    string
	}{
		{"image not found", image("nope"), clients.ReasonNotFound, `no image matches {"name":"nope"}`},
		{"image ambiguous", image("twin"), clients.ReasonAmbiguous, `2 images match {"name":"twin"}`},
		{"flavor not found", flavor("nope"), clients.ReasonNotFound, `no flavor matches {"name":"nope"}`},
		{"flavor ambiguous", flavor("twin"), clients.ReasonAmbiguous, `2 flavors match {"name":"twin"}`},
		{"network not found", network("nope"), clients.ReasonNotFound, `no network matches {"name":"nope"}`},
		{"network ambiguous", network("twin"), clients.ReasonAmbiguous, `2 networks match {"name":"twin"}`},
		{"subnet not found", subnet("192.168.0.0/24"), clients.ReasonNotFound, `no subnet matches {"cidr":"192.168.0.0/24"}`},
		{"server group not found", group("nope"), clients.ReasonNotFound, `no server group matches {"name":"nope"}`},
		{"server group ambiguous", group("twin"), clients.ReasonAmbiguous, `2 server groups match {"name":"twin"}`},
		{"security group not found", secgroup("nope"), clients.ReasonNotFound, `no security group matches {"name":"nope"}`},
		{"security group ambiguous", secgroup("twin"), clients.ReasonAmbiguous, `2 security groups match {"name":"twin"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := server.Resolve(e.ctx, e.s, e.request("worker-a", e.spec(tt.mod)))
			wantError(t, err, clients.Terminal, tt.reason, tt.msg)
		})
	}
}

func TestResolveLooksUpAFilterOnce(t *testing.T) {
	e := newEnv(t)
	net := &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "machines"}}
	sg := infrav1.SecurityGroupParam{Filter: &infrav1.SecurityGroupFilter{Name: "workers"}}
	spec := e.spec(func(s *infrav1alpha1.OpenStackServerSpec) {
		s.SecurityGroups = []infrav1.SecurityGroupParam{sg}
		s.Ports = []infrav1.PortOpts{{Network: net}, {Network: net, SecurityGroups: []infrav1.SecurityGroupParam{sg}}, {Network: net}}
	})
	got := e.resolve(e.request("worker-a", spec))
	for i, p := range got.Ports {
		if p.Name != fmt.Sprintf("worker-a-%d", i) || p.NetworkID != e.net || !reflect.DeepEqual(p.SecurityGroups, []string{e.sg}) {
			t.Errorf("port %d: %+v", i, p)
		}
	}
	e.wantCalls("GET /network/v2.0/networks", "GET /network/v2.0/security-groups")
}

func TestResolvePortSecurityDisabledTakesNoSecurityGroups(t *testing.T) {
	e := newEnv(t)
	spec := e.spec(func(s *infrav1alpha1.OpenStackServerSpec) {
		s.SecurityGroups = []infrav1.SecurityGroupParam{{Filter: &infrav1.SecurityGroupFilter{Name: "workers"}}}
		s.Ports[0].EnablePortSecurity = ptr.To(false)
	})
	got := e.resolve(e.request("worker-a", spec))
	if len(got.Ports[0].SecurityGroups) != 0 {
		t.Errorf("security groups %v on a port without port security", got.Ports[0].SecurityGroups)
	}
	e.wantCalls() // and none looked up
}

func TestResolveInvalidSpec(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name string
		mod  func(*infrav1alpha1.OpenStackServerSpec)
	}{
		{"no image", func(s *infrav1alpha1.OpenStackServerSpec) { s.Image = infrav1.ImageParam{} }},
		{"no flavor", func(s *infrav1alpha1.OpenStackServerSpec) { s.FlavorID = nil }},
		{"port without network", func(s *infrav1alpha1.OpenStackServerSpec) { s.Ports[0].Network = nil }},
		// The API forbids it (MinProperties), but this package also serves
		// callers that build specs in Go.
		{"empty network reference", func(s *infrav1alpha1.OpenStackServerSpec) { s.Ports[0].Network = &infrav1.NetworkParam{} }},
		{"empty security group reference", func(s *infrav1alpha1.OpenStackServerSpec) {
			s.SecurityGroups = []infrav1.SecurityGroupParam{{}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Resolve panicked: %v", r)
				}
			}()
			_, err := server.Resolve(e.ctx, e.s, e.request("worker-a", e.spec(tt.mod)))
			wantError(t, err, clients.Terminal, clients.ReasonInvalidSpec)
		})
	}
}

func TestResolveSurfacesRateLimits(t *testing.T) {
	e := newEnv(t)
	e.cloud.Inject(fakeopenstack.Fault{Method: "GET", PathPrefix: "/image/v2/images", Status: 429, RetryAfter: "17"})
	spec := e.spec(func(s *infrav1alpha1.OpenStackServerSpec) {
		s.Image = infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos-4.18")}}
	})
	_, err := server.Resolve(e.ctx, e.s, e.request("worker-a", spec))
	if got := wantError(t, err, clients.Transient, clients.ReasonRateLimited, "looking up the image"); got.RetryAfter.Seconds() != 17 {
		t.Errorf("RetryAfter %v, want 17s", got.RetryAfter)
	}
}
