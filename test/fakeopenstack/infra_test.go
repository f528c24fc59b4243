package fakeopenstack_test

// Tests of the fake's routers, floating IPs, security groups and Octavia
// against docs/openstack/fake-cloud.md: each test names the table rows it
// checks. They use gophercloud alone, not this project's clients.

import (
	"context"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	lbflavors "github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

var ctx = context.Background()

func loadBalancerClient(t *testing.T, c *fakeopenstack.Cloud) *gophercloud.ServiceClient {
	t.Helper()
	provider, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: c.AuthURL(), Username: fakeopenstack.Username, Password: fakeopenstack.Password,
		TenantName: fakeopenstack.ProjectName, DomainName: fakeopenstack.DomainName})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := openstack.NewLoadBalancerV2(provider, gophercloud.EndpointOpts{Region: fakeopenstack.Region})
	if err != nil {
		t.Fatal(err)
	}
	return lb
}

// ok fails the test on err, else returns v: ok(call())(t).
func ok[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantStatus(t *testing.T, what string, err error, want int) {
	t.Helper()
	if got := status(err); got != want {
		t.Errorf("%s: %v (status %d), want %d", what, err, got, want)
	}
}

// Rows "networks and subnets".
func TestNetworksAndSubnets(t *testing.T) {
	c := fakeopenstack.New(t)
	n := connect(t, c).network
	net := ok(networks.Create(ctx, n, networks.CreateOpts{Name: "n"}).Extract())(t)
	_, err := subnets.Create(ctx, n, subnets.CreateOpts{NetworkID: "00000000-0000-4000-8000-0000000fffff", CIDR: "10.0.0.0/24", IPVersion: 4}).Extract()
	wantStatus(t, "subnet on an unknown network", err, 404)
	sub := ok(subnets.Create(ctx, n, subnets.CreateOpts{NetworkID: net.ID, CIDR: "10.0.0.0/24", IPVersion: 4}).Extract())(t)
	if sub.GatewayIP != "10.0.0.1" {
		t.Errorf("gateway %q, want the first address", sub.GatewayIP)
	}
	_, err = subnets.Create(ctx, n, subnets.CreateOpts{NetworkID: net.ID, CIDR: "10.0.0.128/25", IPVersion: 4}).Extract()
	wantStatus(t, "overlapping subnet", err, 400)

	port := ok(ports.Create(ctx, n, ports.CreateOpts{NetworkID: net.ID}).Extract())(t)
	wantStatus(t, "delete a subnet with a port", subnets.Delete(ctx, n, sub.ID).ExtractErr(), 409)
	wantStatus(t, "delete a network with a port", networks.Delete(ctx, n, net.ID).ExtractErr(), 409)
	noErr(t, ports.Delete(ctx, n, port.ID).ExtractErr())
	noErr(t, networks.Delete(ctx, n, net.ID).ExtractErr())
	if c.Len(fakeopenstack.Subnets) != 0 {
		t.Errorf("the subnet outlived its network")
	}
	_, err = networks.Get(ctx, n, net.ID).Extract()
	wantStatus(t, "deleted network", err, 404)
}

// Rows "security groups" and "security group rules".
func TestSecurityGroupsAndRules(t *testing.T) {
	c := fakeopenstack.New(t)
	n := connect(t, c).network
	a := ok(groups.Create(ctx, n, groups.CreateOpts{Name: "a"}).Extract())(t)
	b := ok(groups.Create(ctx, n, groups.CreateOpts{Name: "b"}).Extract())(t)
	if len(a.Rules) != 2 || a.Rules[0].Direction != "egress" || a.Rules[0].EtherType != "IPv4" || a.Rules[1].EtherType != "IPv6" {
		t.Errorf("a new group's rules: %+v, want egress IPv4 and IPv6", a.Rules)
	}
	bulk := []rules.CreateOpts{
		{SecGroupID: a.ID, Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 22, PortRangeMax: 22, RemoteIPPrefix: "0.0.0.0/0"},
		{SecGroupID: a.ID, Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 10250, PortRangeMax: 10250, RemoteGroupID: b.ID},
	}
	created := ok(rules.CreateBulk(ctx, n, bulk).Extract())(t)
	if len(created) != 2 {
		t.Fatalf("bulk create: %d rules", len(created))
	}
	_, err := rules.CreateBulk(ctx, n, bulk[:1]).Extract()
	wantStatus(t, "duplicate rule", err, 409)
	_, err = rules.Create(ctx, n, rules.CreateOpts{SecGroupID: a.ID, Direction: "ingress", EtherType: "IPv4", PortRangeMin: 1, PortRangeMax: 2}).Extract()
	wantStatus(t, "ports without protocol", err, 400)
	// A failed bulk request creates nothing.
	before := c.Len(fakeopenstack.SecurityGroupRules)
	_, err = rules.CreateBulk(ctx, n, []rules.CreateOpts{
		{SecGroupID: a.ID, Direction: "ingress", EtherType: "IPv4", Protocol: "udp", PortRangeMin: 53, PortRangeMax: 53},
		bulk[0]}).Extract()
	wantStatus(t, "bulk with a duplicate", err, 409)
	if c.Len(fakeopenstack.SecurityGroupRules) != before {
		t.Errorf("a failed bulk request created rules")
	}

	net := c.AddNetwork("n")
	c.AddSubnet(net, "s", "10.0.0.0/24")
	port := ok(ports.Create(ctx, n, ports.CreateOpts{NetworkID: net, SecurityGroups: &[]string{b.ID}}).Extract())(t)
	wantStatus(t, "delete a group in use", groups.Delete(ctx, n, b.ID).ExtractErr(), 409)
	noErr(t, ports.Delete(ctx, n, port.ID).ExtractErr())
	noErr(t, groups.Delete(ctx, n, b.ID).ExtractErr())
	got := ok(groups.Get(ctx, n, a.ID).Extract())(t)
	if len(got.Rules) != 3 {
		t.Errorf("after deleting the remote group, a has %d rules, want 3 (the rule from b goes with b)", len(got.Rules))
	}
	wantStatus(t, "delete an unknown rule", rules.Delete(ctx, n, "00000000-0000-4000-8000-0000000fffff").ExtractErr(), 404)
}

// Rows "routers", "router interfaces".
func TestRouters(t *testing.T) {
	c := fakeopenstack.New(t)
	n := connect(t, c).network
	ext, _ := c.AddExternalNetwork("public", "172.24.4.0/24")
	net := c.AddNetwork("n")
	sub := c.AddSubnet(net, "s", "10.0.0.0/24")

	pages := ok(networks.List(n, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{}, External: new(true)}).AllPages(ctx))(t)
	if list, _ := networks.ExtractNetworks(pages); len(list) != 1 || list[0].ID != ext {
		t.Errorf("external networks: %v", list)
	}
	_, err := routers.Create(ctx, n, routers.CreateOpts{Name: "r", GatewayInfo: &routers.GatewayInfo{NetworkID: net}}).Extract()
	wantStatus(t, "gateway on an internal network", err, 400)
	rt := ok(routers.Create(ctx, n, routers.CreateOpts{Name: "r", GatewayInfo: &routers.GatewayInfo{NetworkID: ext}}).Extract())(t)
	if len(rt.GatewayInfo.ExternalFixedIPs) != 1 || rt.GatewayInfo.ExternalFixedIPs[0].IPAddress != "172.24.4.10" {
		t.Errorf("gateway: %+v", rt.GatewayInfo)
	}
	ifc := ok(routers.AddInterface(ctx, n, rt.ID, routers.AddInterfaceOpts{SubnetID: sub}).Extract())(t)
	if p := c.Object(fakeopenstack.Ports, ifc.PortID); p["device_owner"] != "network:router_interface" ||
		p["fixed_ips"].([]any)[0].(map[string]any)["ip_address"] != "10.0.0.1" {
		t.Errorf("interface port: %v", p)
	}
	_, err = routers.AddInterface(ctx, n, rt.ID, routers.AddInterfaceOpts{SubnetID: sub}).Extract()
	wantStatus(t, "second interface on the subnet", err, 400)
	wantStatus(t, "delete the interface port", ports.Delete(ctx, n, ifc.PortID).ExtractErr(), 409)
	wantStatus(t, "delete a router with an interface", routers.Delete(ctx, n, rt.ID).ExtractErr(), 409)
	wantStatus(t, "delete a network with a router interface", networks.Delete(ctx, n, net).ExtractErr(), 409)
	ok(routers.RemoveInterface(ctx, n, rt.ID, routers.RemoveInterfaceOpts{SubnetID: sub}).Extract())(t)
	_, err = routers.RemoveInterface(ctx, n, rt.ID, routers.RemoveInterfaceOpts{SubnetID: sub}).Extract()
	wantStatus(t, "remove a missing interface", err, 404)
	noErr(t, routers.Delete(ctx, n, rt.ID).ExtractErr())
	for _, p := range c.Objects(fakeopenstack.Ports) {
		t.Errorf("port left after the router: %v", p)
	}
	wantStatus(t, "delete an unknown router", routers.Delete(ctx, n, rt.ID).ExtractErr(), 404)
}

// Rows "floating IPs".
func TestFloatingIPs(t *testing.T) {
	c := fakeopenstack.New(t)
	n := connect(t, c).network
	ext, _ := c.AddExternalNetwork("public", "172.24.4.0/24")
	net := c.AddNetwork("n")
	sub := c.AddSubnet(net, "s", "10.0.0.0/24")
	port := ok(ports.Create(ctx, n, ports.CreateOpts{NetworkID: net}).Extract())(t)

	_, err := floatingips.Create(ctx, n, floatingips.CreateOpts{FloatingNetworkID: net}).Extract()
	wantStatus(t, "floating IP on an internal network", err, 400)
	_, err = floatingips.Create(ctx, n, floatingips.CreateOpts{FloatingNetworkID: ext, PortID: port.ID}).Extract()
	wantStatus(t, "port not reachable through a router", err, 404)
	if c.Len(fakeopenstack.FloatingIPs) != 0 {
		t.Errorf("a refused create allocated a floating IP")
	}
	rt := ok(routers.Create(ctx, n, routers.CreateOpts{GatewayInfo: &routers.GatewayInfo{NetworkID: ext}}).Extract())(t)
	ok(routers.AddInterface(ctx, n, rt.ID, routers.AddInterfaceOpts{SubnetID: sub}).Extract())(t)

	fip := ok(floatingips.Create(ctx, n, floatingips.CreateOpts{FloatingNetworkID: ext, FloatingIP: "172.24.4.50", Description: "api"}).Extract())(t)
	if fip.FloatingIP != "172.24.4.50" || fip.PortID != "" || fip.Status != "DOWN" {
		t.Errorf("new floating IP: %+v", fip)
	}
	_, err = floatingips.Create(ctx, n, floatingips.CreateOpts{FloatingNetworkID: ext, FloatingIP: "172.24.4.50"}).Extract()
	wantStatus(t, "address taken", err, 409)
	fip = ok(floatingips.Update(ctx, n, fip.ID, floatingips.UpdateOpts{PortID: &port.ID}).Extract())(t)
	if fip.PortID != port.ID || fip.FixedIP != "10.0.0.10" || fip.RouterID != rt.ID || fip.Status != "ACTIVE" {
		t.Errorf("associated: %+v", fip)
	}
	other := ok(floatingips.Create(ctx, n, floatingips.CreateOpts{FloatingNetworkID: ext}).Extract())(t)
	_, err = floatingips.Update(ctx, n, other.ID, floatingips.UpdateOpts{PortID: &port.ID}).Extract()
	wantStatus(t, "second floating IP on a port", err, 409)
	_, err = routers.RemoveInterface(ctx, n, rt.ID, routers.RemoveInterfaceOpts{SubnetID: sub}).Extract()
	wantStatus(t, "remove an interface a floating IP needs", err, 409)

	for q, want := range map[string]floatingips.ListOpts{
		"address":     {FloatingIP: "172.24.4.50"},
		"description": {Description: "api", ProjectID: fakeopenstack.ProjectID},
		"port":        {PortID: port.ID, FloatingNetworkID: ext},
	} {
		pages := ok(floatingips.List(n, want).AllPages(ctx))(t)
		if list, _ := floatingips.ExtractFloatingIPs(pages); len(list) != 1 || list[0].ID != fip.ID {
			t.Errorf("floating IPs by %s: %v", q, list)
		}
	}

	// Deleting the port detaches its floating IP, which stays allocated.
	noErr(t, ports.Delete(ctx, n, port.ID).ExtractErr())
	fip = ok(floatingips.Get(ctx, n, fip.ID).Extract())(t)
	if fip.PortID != "" || fip.Status != "DOWN" {
		t.Errorf("after the port's deletion: %+v", fip)
	}
	noErr(t, floatingips.Delete(ctx, n, fip.ID).ExtractErr())
	wantStatus(t, "delete it again", floatingips.Delete(ctx, n, fip.ID).ExtractErr(), 404)
	// The user sees no port of Neutron's own (gateway, floating IPs).
	pages := ok(ports.List(n, ports.ListOpts{NetworkID: ext}).AllPages(ctx))(t)
	if list, _ := ports.ExtractPorts(pages); len(list) != 0 {
		t.Errorf("the user sees %d ports on the external network", len(list))
	}
}

// Row "without the layer-3 extension".
func TestWithoutL3(t *testing.T) {
	c := fakeopenstack.New(t)
	c.SetExtensions("security-group", "port-security")
	n := connect(t, c).network
	_, err := routers.List(n, routers.ListOpts{}).AllPages(ctx)
	wantStatus(t, "list routers", err, 404)
	_, err = floatingips.List(n, floatingips.ListOpts{}).AllPages(ctx)
	wantStatus(t, "list floating IPs", err, 404)
	_, err = floatingips.Create(ctx, n, floatingips.CreateOpts{FloatingNetworkID: "x"}).Extract()
	wantStatus(t, "create a floating IP", err, 404)
}

// Rows "load balancers", "immutable while pending", "listeners, pools,
// members, health monitors", "cascade delete".
func TestOctavia(t *testing.T) {
	c := fakeopenstack.New(t)
	lbc := loadBalancerClient(t, c)
	net := c.AddNetwork("n")
	sub := c.AddSubnet(net, "s", "10.0.0.0/24")

	_, err := loadbalancers.Create(ctx, lbc, loadbalancers.CreateOpts{Name: "lb"}).Extract()
	wantStatus(t, "no VIP", err, 400)
	lb := ok(loadbalancers.Create(ctx, lbc, loadbalancers.CreateOpts{Name: "lb", VipSubnetID: sub, Tags: []string{"a"}}).Extract())(t)
	if lb.ProvisioningStatus != "PENDING_CREATE" || lb.VipAddress != "10.0.0.10" || lb.VipPortID == "" {
		t.Errorf("created: %s %s %s", lb.ProvisioningStatus, lb.VipAddress, lb.VipPortID)
	}
	if p := c.Object(fakeopenstack.Ports, lb.VipPortID); p["name"] != "octavia-lb-"+lb.ID {
		t.Errorf("VIP port: %v", p)
	}
	_, err = listeners.Create(ctx, lbc, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: "TCP", ProtocolPort: 6443}).Extract()
	wantStatus(t, "listener while PENDING_CREATE", err, 409)
	// SetLoadBalancerSteps' default: one more request sees it pending,
	// the next one ACTIVE.
	active := func() {
		t.Helper()
		for range 3 {
			if got := ok(loadbalancers.Get(ctx, lbc, lb.ID).Extract())(t); got.ProvisioningStatus == "ACTIVE" {
				return
			}
		}
		t.Fatal("the load balancer did not become ACTIVE")
	}
	active()

	l := ok(listeners.Create(ctx, lbc, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: "TCP", ProtocolPort: 6443, Name: "l"}).Extract())(t)
	if l.ProvisioningStatus != "PENDING_CREATE" {
		t.Errorf("listener: %s", l.ProvisioningStatus)
	}
	if got := ok(loadbalancers.Get(ctx, lbc, lb.ID).Extract())(t); got.ProvisioningStatus != "PENDING_UPDATE" {
		t.Errorf("load balancer after a listener create: %s", got.ProvisioningStatus)
	}
	active()
	_, err = listeners.Create(ctx, lbc, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: "TCP", ProtocolPort: 6443}).Extract()
	wantStatus(t, "second listener on the port", err, 409)
	p := ok(pools.Create(ctx, lbc, pools.CreateOpts{ListenerID: l.ID, Name: "p", Protocol: "TCP", LBMethod: pools.LBMethodRoundRobin}).Extract())(t)
	active()
	if got := ok(listeners.Get(ctx, lbc, l.ID).Extract())(t); got.DefaultPoolID != p.ID || got.ProvisioningStatus != "ACTIVE" {
		t.Errorf("listener after its pool: default pool %q, %s", got.DefaultPoolID, got.ProvisioningStatus)
	}
	_, err = pools.Create(ctx, lbc, pools.CreateOpts{ListenerID: l.ID, Protocol: "TCP", LBMethod: pools.LBMethodRoundRobin}).Extract()
	wantStatus(t, "second default pool", err, 409)
	ok(monitors.Create(ctx, lbc, monitors.CreateOpts{PoolID: p.ID, Type: "TCP", Delay: 10, Timeout: 5, MaxRetries: 3}).Extract())(t)
	active()
	_, err = monitors.Create(ctx, lbc, monitors.CreateOpts{PoolID: p.ID, Type: "TCP", Delay: 10, Timeout: 5, MaxRetries: 3}).Extract()
	wantStatus(t, "second monitor", err, 409)
	if got := ok(pools.Get(ctx, lbc, p.ID).Extract())(t); got.MonitorID == "" {
		t.Errorf("pool without its monitor")
	}

	m := ok(pools.CreateMember(ctx, lbc, p.ID, pools.CreateMemberOpts{Name: "m", Address: "10.0.0.20", ProtocolPort: 6443, SubnetID: sub}).Extract())(t)
	_, err = pools.CreateMember(ctx, lbc, p.ID, pools.CreateMemberOpts{Name: "m2", Address: "10.0.0.21", ProtocolPort: 6443}).Extract()
	wantStatus(t, "member while PENDING_UPDATE", err, 409)
	active()
	_, err = pools.CreateMember(ctx, lbc, p.ID, pools.CreateMemberOpts{Address: "10.0.0.20", ProtocolPort: 6443}).Extract()
	wantStatus(t, "duplicate member", err, 409)
	noErr(t, pools.DeleteMember(ctx, lbc, p.ID, m.ID).ExtractErr())
	active()
	pages := ok(pools.ListMembers(lbc, p.ID, pools.ListMembersOpts{}).AllPages(ctx))(t)
	if list, _ := pools.ExtractMembers(pages); len(list) != 0 {
		t.Errorf("members after the delete: %v", list)
	}
	wantStatus(t, "delete an unknown member", pools.DeleteMember(ctx, lbc, p.ID, m.ID).ExtractErr(), 404)

	// Filters.
	pages = ok(listeners.List(lbc, listeners.ListOpts{LoadbalancerID: lb.ID}).AllPages(ctx))(t)
	if list, _ := listeners.ExtractListeners(pages); len(list) != 1 {
		t.Errorf("listeners of the load balancer: %v", list)
	}
	pages = ok(listeners.List(lbc, listeners.ListOpts{LoadbalancerID: "00000000-0000-4000-8000-0000000fffff"}).AllPages(ctx))(t)
	if list, _ := listeners.ExtractListeners(pages); len(list) != 0 {
		t.Errorf("listeners of another load balancer: %v", list)
	}
	pages = ok(loadbalancers.List(lbc, loadbalancers.ListOpts{Name: "lb", ProjectID: fakeopenstack.ProjectID}).AllPages(ctx))(t)
	if list, _ := loadbalancers.ExtractLoadBalancers(pages); len(list) != 1 {
		t.Errorf("load balancers by name: %v", list)
	}

	// Delete: children need cascade; then PENDING_DELETE, then gone with
	// everything under it and the VIP port.
	wantStatus(t, "delete with children", loadbalancers.Delete(ctx, lbc, lb.ID, nil).ExtractErr(), 400)
	noErr(t, loadbalancers.Delete(ctx, lbc, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr())
	if got := c.Object(fakeopenstack.LoadBalancers, lb.ID); got["provisioning_status"] != "PENDING_DELETE" {
		t.Errorf("after delete: %v", got["provisioning_status"])
	}
	wantStatus(t, "delete while PENDING_DELETE", loadbalancers.Delete(ctx, lbc, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(), 409)
	_, err = loadbalancers.Get(ctx, lbc, lb.ID).Extract()
	wantStatus(t, "deleted load balancer", err, 404)
	for _, k := range []fakeopenstack.Kind{fakeopenstack.Listeners, fakeopenstack.Pools, fakeopenstack.Members, fakeopenstack.HealthMonitors, fakeopenstack.Ports} {
		if n := c.Len(k); n != 0 {
			t.Errorf("%d %s left after the cascade delete", n, k)
		}
	}
}

// Rows "ERROR" and "endpoint without the service".
func TestOctaviaErrorAndMissingService(t *testing.T) {
	c := fakeopenstack.New(t)
	c.SetLoadBalancerSteps(0)
	lbc := loadBalancerClient(t, c)
	net := c.AddNetwork("n")
	sub := c.AddSubnet(net, "s", "10.0.0.0/24")
	lb := ok(loadbalancers.Create(ctx, lbc, loadbalancers.CreateOpts{Name: "lb", VipSubnetID: sub}).Extract())(t)
	if got := ok(loadbalancers.Get(ctx, lbc, lb.ID).Extract())(t); got.ProvisioningStatus != "ACTIVE" {
		t.Fatalf("with 0 steps the next request sees ACTIVE, got %s", got.ProvisioningStatus)
	}
	c.Set(fakeopenstack.LoadBalancers, lb.ID, "provisioning_status", "ERROR")
	_, err := listeners.Create(ctx, lbc, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: "TCP", ProtocolPort: 6443}).Extract()
	wantStatus(t, "listener on an ERROR load balancer", err, 409)
	noErr(t, loadbalancers.Delete(ctx, lbc, lb.ID, nil).ExtractErr())

	c.DisableService("load-balancer")
	_, err = loadbalancers.List(lbc, nil).AllPages(ctx)
	wantStatus(t, "list with the service disabled", err, 404)
}

// Row "flavors and availability zones".
func TestOctaviaFlavorsAndAvailabilityZones(t *testing.T) {
	c := fakeopenstack.New(t)
	lbc := loadBalancerClient(t, c)
	sub := c.AddSubnet(c.AddNetwork("n"), "s", "10.0.0.0/24")
	small := c.AddLoadBalancerFlavor("small", true)
	off := c.AddLoadBalancerFlavor("off", false)
	c.AddLoadBalancerAvailabilityZone("az1", true)
	c.AddLoadBalancerAvailabilityZone("az-off", false)

	list := ok(lbflavors.List(lbc, lbflavors.ListOpts{Name: "small"}).AllPages(ctx))(t)
	got, err := lbflavors.ExtractFlavors(list)
	if err != nil || len(got) != 1 || got[0].ID != small || !got[0].Enabled {
		t.Fatalf("flavors named small: %+v %v", got, err)
	}

	for _, tc := range []struct {
		name, flavor, az string
		want             int
	}{
		{"unknown flavor", "00000000-0000-4000-8000-0000000000ff", "", 400},
		{"disabled flavor", off, "", 400},
		{"unknown availability zone", "", "nope", 400},
		{"disabled availability zone", "", "az-off", 400},
	} {
		_, err := loadbalancers.Create(ctx, lbc, loadbalancers.CreateOpts{Name: "lb", VipSubnetID: sub, FlavorID: tc.flavor, AvailabilityZone: tc.az}).Extract()
		wantStatus(t, tc.name, err, tc.want)
	}
	lb := ok(loadbalancers.Create(ctx, lbc, loadbalancers.CreateOpts{Name: "lb", VipSubnetID: sub, FlavorID: small, AvailabilityZone: "az1"}).Extract())(t)
	if lb.FlavorID != small || lb.AvailabilityZone != "az1" {
		t.Errorf("created with flavor %q and zone %q", lb.FlavorID, lb.AvailabilityZone)
	}
}

// Row "router gateway fixed addresses".
func TestRouterGatewayFixedIPs(t *testing.T) {
	c := fakeopenstack.New(t)
	n := connect(t, c).network
	ext, extSub := c.AddExternalNetwork("public", "172.24.4.0/24")
	want := routers.GatewayInfo{NetworkID: ext, ExternalFixedIPs: []routers.ExternalFixedIP{{SubnetID: extSub, IPAddress: "172.24.4.200"}}}
	_, err := routers.Create(ctx, n, routers.CreateOpts{Name: "r", GatewayInfo: &want}).Extract()
	wantStatus(t, "fixed gateway addresses as a member", err, 403)

	c.AllowGatewayFixedIPs()
	rt := ok(routers.Create(ctx, n, routers.CreateOpts{Name: "r", GatewayInfo: &want}).Extract())(t)
	if ips := rt.GatewayInfo.ExternalFixedIPs; len(ips) != 1 || ips[0].IPAddress != "172.24.4.200" || ips[0].SubnetID != extSub {
		t.Errorf("gateway: %+v", rt.GatewayInfo)
	}
	_, err = routers.Create(ctx, n, routers.CreateOpts{Name: "r2", GatewayInfo: &want}).Extract()
	wantStatus(t, "an address another gateway holds", err, 409)
}
