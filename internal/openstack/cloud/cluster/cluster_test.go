package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/cluster"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// Path templates of the fake, for counting calls.
const (
	pathNetworks     = "/network/v2.0/networks"
	pathNetwork      = "/network/v2.0/networks/{id}"
	pathSubnets      = "/network/v2.0/subnets"
	pathRouters      = "/network/v2.0/routers"
	pathAddInterface = "/network/v2.0/routers/{id}/add_router_interface"
	pathFloatingIPs  = "/network/v2.0/floatingips"
	pathFloatingIP   = "/network/v2.0/floatingips/{id}"
	pathSecGroups    = "/network/v2.0/security-groups"
	pathRules        = "/network/v2.0/security-group-rules"
	pathRule         = "/network/v2.0/security-group-rules/{id}"
	pathLBs          = "/load-balancer/v2.0/lbaas/loadbalancers"
	pathLB           = "/load-balancer/v2.0/lbaas/loadbalancers/{id}"
)

type rulesCreate = rules.CreateOpts

// env is a fake cloud with an external network, and clients for it.
type env struct {
	t     *testing.T
	ctx   context.Context
	cloud *fakeopenstack.Cloud
	s     scope.Scope

	extNet, extSubnet string
}

// newEnv starts the cloud; configure(cloud) runs before the clients are
// built (a service hidden from the catalog must be hidden by then). The
// request log starts empty.
func newEnv(t *testing.T, configure ...func(*fakeopenstack.Cloud)) *env {
	t.Helper()
	cloud := fakeopenstack.New(t)
	e := &env{t: t, ctx: context.Background(), cloud: cloud}
	e.extNet, e.extSubnet = cloud.AddExternalNetwork("public", "172.24.4.0/24")
	for _, f := range configure {
		f(cloud)
	}
	c, err := clients.NewFactory(clients.Options{}).For(e.ctx, clients.Identity{
		Key: "ns/cloud-config", Version: "1", CloudsYAML: cloud.Clouds("openstack"), CloudName: "openstack"})
	if err != nil {
		t.Fatal(err)
	}
	e.s = scope.Scope{Clients: c, Log: logr.Discard()}
	cloud.ResetRequests()
	return e
}

// managed is a cluster with a managed network and security groups.
func managed(mods ...func(*infrav1.OpenStackClusterSpec)) cluster.Request {
	spec := &infrav1.OpenStackClusterSpec{
		ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		Tags:                  []string{"cluster-c"},
	}
	for _, m := range mods {
		m(spec)
	}
	return cluster.Request{Namespace: "ns", Name: "c", Spec: spec}
}

func noLoadBalancer(s *infrav1.OpenStackClusterSpec) {
	s.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}}
}

// writes counts the requests that change something.
func (e *env) writes() []string {
	var out []string
	for _, r := range e.cloud.Requests() {
		if r.Method != "GET" && !strings.HasPrefix(r.Path, "/identity/") {
			out = append(out, r.String())
		}
	}
	return out
}

// progress reports whether err is a step still waiting for OpenStack.
func progress(err error) bool {
	var p *scope.Progress
	return errors.As(err, &p)
}

func reason(err error) string {
	var e *clients.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// infra is what the controller's normal pass builds, in its order.
type infra struct {
	ext    *infrav1.NetworkStatus
	net    *infrav1.NetworkStatusWithSubnets
	router *infrav1.Router
	sgs    cluster.SecurityGroups
	ep     *cluster.Endpoint
	passes int
}

// provision runs the steps as the controller does, passing the status of
// one pass to the next, until the endpoint is ready (Octavia applies one
// change per pass or two, so the load balancer takes several).
func (e *env) provision(req cluster.Request, st *infra) *infra {
	e.t.Helper()
	g := NewWithT(e.t)
	if st == nil {
		st = &infra{}
	}
	for st.passes = 1; st.passes <= 40; st.passes++ {
		var err error
		st.ext, err = cluster.EnsureExternalNetwork(e.ctx, e.s, req, st.ext)
		g.Expect(err).NotTo(HaveOccurred())
		st.net, err = cluster.EnsureNetwork(e.ctx, e.s, req, st.net)
		g.Expect(err).NotTo(HaveOccurred())
		st.router, err = cluster.EnsureRouter(e.ctx, e.s, req, st.net, st.ext, st.router)
		g.Expect(err).NotTo(HaveOccurred())
		st.sgs, err = cluster.EnsureSecurityGroups(e.ctx, e.s, req)
		g.Expect(err).NotTo(HaveOccurred())
		var known *infrav1.LoadBalancer
		if st.ep != nil {
			known = st.ep.LoadBalancer
		}
		ep, err := cluster.EnsureAPIEndpoint(e.ctx, e.s, req, st.net, st.ext, known)
		if ep != nil && (ep.LoadBalancer != nil || ep.Host != "") {
			st.ep = ep
		}
		if progress(err) {
			continue
		}
		g.Expect(err).NotTo(HaveOccurred())
		return st
	}
	e.t.Fatalf("the endpoint was not ready after %d passes", st.passes)
	return nil
}

func TestManagedNetworkCreateAdoptAndRecreate(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t)
	req := managed()

	ext, err := cluster.EnsureExternalNetwork(e.ctx, e.s, req, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ext.ID).To(Equal(e.extNet), "the cloud's only external network")

	net, err := cluster.EnsureNetwork(e.ctx, e.s, req, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(net.Name).To(Equal("k8s-clusterapi-cluster-ns-c"))
	g.Expect(net.Subnets).To(HaveLen(1))
	g.Expect(net.Subnets[0].CIDR).To(Equal("10.6.0.0/24"))
	g.Expect(e.cloud.Object(fakeopenstack.Networks, net.ID)["tags"]).To(ConsistOf("cluster-c"))
	g.Expect(e.cloud.Object(fakeopenstack.Subnets, net.Subnets[0].ID)["tags"]).To(ConsistOf("cluster-c"))

	// Status lost: adopted by name, nothing created twice.
	e.cloud.ResetRequests()
	again, err := cluster.EnsureNetwork(e.ctx, e.s, req, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(net))
	g.Expect(e.writes()).To(BeEmpty())

	// Status known: one read, no write.
	e.cloud.ResetRequests()
	again, err = cluster.EnsureNetwork(e.ctx, e.s, req, net)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(net))
	g.Expect(e.cloud.Calls()).To(Equal([]string{"GET " + pathNetwork}))

	// Deleted out of band: the provider's network is created anew, not
	// trusted from the status.
	g.Expect(e.s.Clients.NetworkInfra.DeleteNetwork(e.ctx, net.ID)).To(Succeed())
	fresh, err := cluster.EnsureNetwork(e.ctx, e.s, req, net)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fresh.ID).NotTo(Equal(net.ID))
	g.Expect(fresh.Subnets[0].ID).NotTo(Equal(net.Subnets[0].ID))
	g.Expect(e.cloud.Names(fakeopenstack.Networks)).To(ConsistOf("public", "k8s-clusterapi-cluster-ns-c"))

	// Only the subnet deleted: the subnet is created again in the network.
	g.Expect(e.s.Clients.NetworkInfra.DeleteSubnet(e.ctx, fresh.Subnets[0].ID)).To(Succeed())
	again, err = cluster.EnsureNetwork(e.ctx, e.s, req, fresh)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.ID).To(Equal(fresh.ID))
	g.Expect(again.Subnets[0].ID).NotTo(Equal(fresh.Subnets[0].ID))
}

func TestExistingNetwork(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t)
	netID := e.cloud.AddNetwork("machines")
	a := e.cloud.AddSubnet(netID, "a", "10.0.0.0/24")
	b := e.cloud.AddSubnet(netID, "b", "10.0.1.0/24")

	byFilter := cluster.Request{Namespace: "ns", Name: "c", Spec: &infrav1.OpenStackClusterSpec{
		Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "machines"}}}}
	net, err := cluster.EnsureNetwork(e.ctx, e.s, byFilter, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(net.ID).To(Equal(netID))
	g.Expect(net.Subnets).To(HaveLen(2), "every subnet of the network")

	one := cluster.Request{Namespace: "ns", Name: "c", Spec: &infrav1.OpenStackClusterSpec{
		Network: &infrav1.NetworkParam{ID: ptr.To(netID)},
		Subnets: []infrav1.SubnetParam{{Filter: &infrav1.SubnetFilter{Name: "b"}}}}}
	net, err = cluster.EnsureNetwork(e.ctx, e.s, one, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(net.Subnets).To(HaveLen(1))
	g.Expect(net.Subnets[0].ID).To(Equal(b))

	// No router for an existing network, and nothing was written.
	rt, err := cluster.EnsureRouter(e.ctx, e.s, one, net, &infrav1.NetworkStatus{ID: e.extNet}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rt).To(BeNil())
	g.Expect(e.writes()).To(BeEmpty())

	// The user's network deleted out of band: reported NotFound, the same
	// way on every pass (so a pass never undoes the previous one), and
	// never recreated.
	g.Expect(e.s.Clients.NetworkInfra.DeleteSubnet(e.ctx, a)).To(Succeed())
	g.Expect(e.s.Clients.NetworkInfra.DeleteSubnet(e.ctx, b)).To(Succeed())
	g.Expect(e.s.Clients.NetworkInfra.DeleteNetwork(e.ctx, netID)).To(Succeed())
	e.cloud.ResetRequests()
	_, err1 := cluster.EnsureNetwork(e.ctx, e.s, one, net)
	_, err2 := cluster.EnsureNetwork(e.ctx, e.s, one, net)
	g.Expect(reason(err1)).To(Equal(clients.ReasonNotFound))
	g.Expect(err1.Error()).To(ContainSubstring("no longer exists"))
	g.Expect(err2).To(MatchError(err1.Error()))
	g.Expect(e.writes()).To(BeEmpty())

	// Not found by filter on the first visit.
	_, err = cluster.EnsureNetwork(e.ctx, e.s, byFilter, nil)
	g.Expect(reason(err)).To(Equal(clients.ReasonNotFound))
}

func TestRouter(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t)
	req := managed()
	ext, _ := cluster.EnsureExternalNetwork(e.ctx, e.s, req, nil)
	net, err := cluster.EnsureNetwork(e.ctx, e.s, req, nil)
	g.Expect(err).NotTo(HaveOccurred())

	rt, err := cluster.EnsureRouter(e.ctx, e.s, req, net, ext, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rt.Name).To(Equal("k8s-clusterapi-cluster-ns-c"))
	g.Expect(rt.IPs).To(HaveLen(1))
	g.Expect(rt.IPs[0]).To(HavePrefix("172.24.4."), "the gateway's address on the external network")
	g.Expect(e.cloud.Object(fakeopenstack.Routers, rt.ID)["tags"]).To(ConsistOf("cluster-c"))
	g.Expect(e.cloud.Hits("PUT", pathAddInterface)).To(Equal(1))

	// Status lost: adopted by name; the second interface request gets
	// Neutron's 400 "already has a port", which is success.
	e.cloud.ResetRequests()
	again, err := cluster.EnsureRouter(e.ctx, e.s, req, net, ext, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.ID).To(Equal(rt.ID))
	g.Expect(e.cloud.Hits("POST", pathRouters)).To(BeZero())
	g.Expect(e.cloud.Len(fakeopenstack.Routers)).To(Equal(1))

	// Known: one read.
	e.cloud.ResetRequests()
	_, err = cluster.EnsureRouter(e.ctx, e.s, req, net, ext, rt)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(e.cloud.Calls()).To(Equal([]string{"GET " + pathRouters}))

	// Deleted out of band: created again, with the interface.
	g.Expect(e.s.Clients.NetworkInfra.RemoveRouterInterface(e.ctx, rt.ID, net.Subnets[0].ID)).To(Succeed())
	g.Expect(e.s.Clients.NetworkInfra.DeleteRouter(e.ctx, rt.ID)).To(Succeed())
	fresh, err := cluster.EnsureRouter(e.ctx, e.s, req, net, ext, rt)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fresh.ID).NotTo(Equal(rt.ID))
	g.Expect(e.cloud.Len(fakeopenstack.Routers)).To(Equal(1))

	// No external network and no router in the spec: none needed.
	none, err := cluster.EnsureRouter(e.ctx, e.s, req, net, nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(none).To(BeNil())
}

func TestSecurityGroups(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t)
	req := managed()

	sgs, err := cluster.EnsureSecurityGroups(e.ctx, e.s, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sgs.ControlPlane.Name).To(Equal("k8s-cluster-ns-c-secgroup-controlplane"))
	g.Expect(sgs.Worker.Name).To(Equal("k8s-cluster-ns-c-secgroup-worker"))
	g.Expect(sgs.Bastion).To(BeNil())
	g.Expect(e.cloud.Hits("POST", pathRules)).To(Equal(2), "one bulk request per group")
	wantRules := e.cloud.Len(fakeopenstack.SecurityGroupRules)

	// Steady: one list, no write. Neutron's own egress rules are the
	// desired ones, so they are kept.
	e.cloud.ResetRequests()
	again, err := cluster.EnsureSecurityGroups(e.ctx, e.s, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(sgs))
	g.Expect(e.cloud.Calls()).To(Equal([]string{"GET " + pathSecGroups}))

	// A rule added by hand is removed; one deleted by hand comes back.
	var rules []map[string]any
	for _, r := range e.cloud.Objects(fakeopenstack.SecurityGroupRules) {
		if r["security_group_id"] == sgs.Worker.ID {
			rules = append(rules, r)
		}
	}
	g.Expect(e.s.Clients.NetworkInfra.DeleteSecurityGroupRule(e.ctx, rules[len(rules)-1]["id"].(string))).To(Succeed())
	_, err = e.s.Clients.NetworkInfra.CreateSecurityGroupRules(e.ctx, []rulesCreate{{SecGroupID: sgs.Worker.ID,
		Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 8080, PortRangeMax: 8080, RemoteIPPrefix: "0.0.0.0/0"}})
	g.Expect(err).NotTo(HaveOccurred())
	e.cloud.ResetRequests()
	_, err = cluster.EnsureSecurityGroups(e.ctx, e.s, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(e.cloud.Len(fakeopenstack.SecurityGroupRules)).To(Equal(wantRules))
	g.Expect(e.cloud.Hits("POST", pathRules)).To(Equal(1))
	g.Expect(e.cloud.Hits("DELETE", pathRule)).To(Equal(1))

	// With a bastion: its group, and SSH from it into the others.
	withBastion := managed(func(s *infrav1.OpenStackClusterSpec) {
		s.Bastion = &infrav1.Bastion{Spec: &infrav1.OpenStackMachineSpec{}}
	})
	sgs, err = cluster.EnsureSecurityGroups(e.ctx, e.s, withBastion)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sgs.Bastion).NotTo(BeNil())
	g.Expect(e.cloud.Len(fakeopenstack.SecurityGroups)).To(Equal(4), "default and the three managed groups")

	// Not managed: nothing.
	e.cloud.ResetRequests()
	sgs, err = cluster.EnsureSecurityGroups(e.ctx, e.s, cluster.Request{Namespace: "ns", Name: "c", Spec: &infrav1.OpenStackClusterSpec{}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sgs).To(Equal(cluster.SecurityGroups{}))
	g.Expect(e.cloud.Calls()).To(BeEmpty())
}

func TestAPIEndpointLoadBalancer(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t)
	req := managed()

	st := e.provision(req, nil)
	lb := st.ep.LoadBalancer
	g.Expect(lb).NotTo(BeNil())
	g.Expect(lb.Name).To(Equal("k8s-clusterapi-cluster-ns-c-kubeapi"))
	g.Expect(lb.InternalIP).To(HavePrefix("10.6.0."), "the VIP is on the cluster subnet")
	g.Expect(lb.IP).To(HavePrefix("172.24.4."), "the floating IP on the VIP")
	g.Expect(st.ep.Host).To(Equal(lb.IP))
	g.Expect(st.ep.Port).To(Equal(6443))
	g.Expect(st.passes).To(BeNumerically(">", 3), "Octavia applies each change asynchronously")
	g.Expect(e.cloud.Object(fakeopenstack.LoadBalancers, lb.ID)["provisioning_status"]).To(Equal("ACTIVE"))
	g.Expect(e.cloud.Names(fakeopenstack.Listeners)).To(Equal([]string{"k8s-clusterapi-cluster-ns-c-kubeapi-6443"}))
	g.Expect(e.cloud.Names(fakeopenstack.Pools)).To(Equal([]string{"k8s-clusterapi-cluster-ns-c-kubeapi-6443"}))
	g.Expect(e.cloud.Len(fakeopenstack.HealthMonitors)).To(Equal(1))
	fips := e.cloud.Objects(fakeopenstack.FloatingIPs)
	g.Expect(fips).To(HaveLen(1))
	g.Expect(fips[0]["port_id"]).To(Equal(e.cloud.Object(fakeopenstack.LoadBalancers, lb.ID)["vip_port_id"]))
	g.Expect(fips[0]["description"]).To(Equal(req.APIFloatingIPDescription()))

	// Steady: nothing written.
	e.cloud.ResetRequests()
	ep, err := cluster.EnsureAPIEndpoint(e.ctx, e.s, req, st.net, st.ext, lb)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ep.Host).To(Equal(lb.IP))
	g.Expect(e.writes()).To(BeEmpty())

	// ERROR: terminal, and the load balancer is left for the user.
	e.cloud.Set(fakeopenstack.LoadBalancers, lb.ID, "provisioning_status", "ERROR")
	_, err = cluster.EnsureAPIEndpoint(e.ctx, e.s, req, st.net, st.ext, lb)
	g.Expect(err).To(MatchError(ContainSubstring("ERROR")))
	g.Expect(reason(err)).To(Equal(clients.ReasonInvalidSpec))
	g.Expect(clients.IsTransient(err)).To(BeFalse())

	// Deleted out of band (here: by the user, after the ERROR): created
	// again, and the floating IP moves to the new VIP, so the endpoint
	// stays the same.
	g.Expect(e.s.Clients.LoadBalancer.DeleteLoadBalancer(e.ctx, lb.ID)).To(Succeed())
	e.waitGone(lb.ID)
	st2 := e.provision(req, st)
	g.Expect(st2.ep.LoadBalancer.ID).NotTo(Equal(lb.ID))
	g.Expect(st2.ep.Host).To(Equal(lb.IP))
	g.Expect(e.cloud.Len(fakeopenstack.FloatingIPs)).To(Equal(1))
	g.Expect(e.cloud.Objects(fakeopenstack.FloatingIPs)[0]["port_id"]).To(Equal(
		e.cloud.Object(fakeopenstack.LoadBalancers, st2.ep.LoadBalancer.ID)["vip_port_id"]))
}

func TestAPIEndpointLoadBalancerWithoutFloatingIPKeepsVIP(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t)
	req := managed(func(s *infrav1.OpenStackClusterSpec) { s.EnableExternalNetwork = ptr.To(false) })
	st := e.provision(req, nil)
	lb := st.ep.LoadBalancer
	g.Expect(st.ep.Host).To(Equal(lb.InternalIP), "no external network: the endpoint is the VIP")
	g.Expect(e.cloud.Len(fakeopenstack.FloatingIPs)).To(BeZero())

	g.Expect(e.s.Clients.LoadBalancer.DeleteLoadBalancer(e.ctx, lb.ID)).To(Succeed())
	e.waitGone(lb.ID)
	st2 := e.provision(req, st)
	g.Expect(st2.ep.LoadBalancer.ID).NotTo(Equal(lb.ID))
	g.Expect(st2.ep.Host).To(Equal(lb.InternalIP), "a recreated load balancer keeps the VIP that is the endpoint")
}

func TestAPIEndpointFloatingIP(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t)
	req := managed(noLoadBalancer)
	st := e.provision(req, nil)
	g.Expect(st.ep.LoadBalancer).To(BeNil())
	g.Expect(st.ep.FloatingIP).To(HavePrefix("172.24.4."))
	g.Expect(st.ep.Host).To(Equal(st.ep.FloatingIP))
	g.Expect(st.passes).To(Equal(1))

	// Adopted by description on the next pass: one list, nothing created.
	e.cloud.ResetRequests()
	ep, err := cluster.EnsureAPIEndpoint(e.ctx, e.s, req, st.net, st.ext, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ep.FloatingIP).To(Equal(st.ep.FloatingIP))
	g.Expect(e.cloud.Calls()).To(Equal([]string{"GET " + pathFloatingIPs}))

	// A user-given address is allocated exactly.
	e2 := newEnv(t, func(c *fakeopenstack.Cloud) { c.HideService("load-balancer") })
	given := managed(func(s *infrav1.OpenStackClusterSpec) {
		s.APIServer = &infrav1.APIServer{FloatingIP: ptr.To("172.24.4.99")}
	})
	st = e2.provision(given, nil)
	g.Expect(st.ep.Host).To(Equal("172.24.4.99"))

	// Neither a load balancer nor an external network: the fixed IP, or a
	// clear error.
	e3 := newEnv(t)
	fixed := managed(noLoadBalancer, func(s *infrav1.OpenStackClusterSpec) {
		s.EnableExternalNetwork = ptr.To(false)
		s.APIServer.FixedIP = ptr.To("10.6.0.5")
	})
	st = e3.provision(fixed, nil)
	g.Expect(st.ep.Host).To(Equal("10.6.0.5"))
	fixed.Spec.APIServer.FixedIP = nil
	_, err = cluster.EnsureAPIEndpoint(e3.ctx, e3.s, fixed, st.net, nil, nil)
	g.Expect(reason(err)).To(Equal(clients.ReasonInvalidSpec))
	g.Expect(err.Error()).To(ContainSubstring("apiServer.fixedIP"))

	// enabled: true on a cloud without Octavia names the field.
	e4 := newEnv(t, func(c *fakeopenstack.Cloud) { c.HideService("load-balancer") })
	want := managed(func(s *infrav1.OpenStackClusterSpec) {
		s.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{Enabled: ptr.To(true)}}
	})
	_, err = cluster.EnsureAPIEndpoint(e4.ctx, e4.s, want, nil, nil, nil)
	g.Expect(err).To(MatchError(ContainSubstring("apiServer.managedLoadBalancer.enabled")))
}

func TestFailureDomains(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t, func(c *fakeopenstack.Cloud) { c.SetAvailabilityZones("az2", "az1", "az3") })
	req := managed(func(s *infrav1.OpenStackClusterSpec) { s.ControlPlaneAvailabilityZones = []string{"az2"} })
	fds, err := cluster.FailureDomains(e.ctx, e.s, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fds).To(HaveLen(3))
	for i, name := range []string{"az1", "az2", "az3"} {
		g.Expect(fds[i].Name).To(Equal(name))
		g.Expect(*fds[i].ControlPlane).To(Equal(name == "az2"))
	}
	req.Spec.ControlPlaneOmitAvailabilityZone = ptr.To(true)
	e.cloud.ResetRequests()
	fds, err = cluster.FailureDomains(e.ctx, e.s, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fds).To(BeEmpty())
	g.Expect(e.cloud.Calls()).To(BeEmpty())
}

// deleteAll runs the deletion steps as the controller does, each until
// it no longer waits.
func (e *env) deleteAll(req cluster.Request, lbID, subnetID string) {
	e.t.Helper()
	g := NewWithT(e.t)
	for i := 0; ; i++ {
		var err error
		lbID, err = cluster.DeleteLoadBalancer(e.ctx, e.s, req, lbID)
		if progress(err) && i < 20 {
			continue
		}
		g.Expect(err).NotTo(HaveOccurred())
		break
	}
	g.Expect(cluster.DeleteFloatingIPs(e.ctx, e.s, req, req.APIFloatingIPDescription(), "")).To(Succeed())
	g.Expect(cluster.DeleteRouter(e.ctx, e.s, req, subnetID)).To(Succeed())
	g.Expect(cluster.DeleteNetwork(e.ctx, e.s, req)).To(Succeed())
	g.Expect(cluster.DeleteSecurityGroups(e.ctx, e.s, req)).To(Succeed())
}

func (e *env) expectOnlyExternal(g Gomega) {
	g.Expect(e.cloud.Names(fakeopenstack.Networks)).To(Equal([]string{"public"}))
	g.Expect(e.cloud.Names(fakeopenstack.SecurityGroups)).To(Equal([]string{"default"}))
	for _, k := range []fakeopenstack.Kind{fakeopenstack.Routers, fakeopenstack.FloatingIPs, fakeopenstack.LoadBalancers,
		fakeopenstack.Listeners, fakeopenstack.Pools, fakeopenstack.HealthMonitors} {
		g.Expect(e.cloud.Names(k)).To(BeEmpty(), "%s left", k)
	}
	for _, p := range e.cloud.Objects(fakeopenstack.Ports) {
		g.Expect(p["network_id"]).To(Equal(e.extNet), "port %v left", p)
	}
}

func TestDelete(t *testing.T) {
	for _, tc := range []struct {
		name string
		// lost drops the status before deletion: resources are found by
		// name and description.
		lost bool
		// partial deletes the load balancer and the router before (a
		// deletion interrupted half way, or done by hand): the status
		// still names them.
		partial bool
	}{{name: "with status"}, {name: "status lost", lost: true}, {name: "partly deleted", partial: true}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			e := newEnv(t)
			req := managed()
			st := e.provision(req, nil)
			lbID, subnetID := st.ep.LoadBalancer.ID, st.net.Subnets[0].ID
			if tc.partial {
				g.Expect(e.s.Clients.LoadBalancer.DeleteLoadBalancer(e.ctx, lbID)).To(Succeed())
				e.waitGone(lbID)
				g.Expect(cluster.DeleteFloatingIPs(e.ctx, e.s, req, req.APIFloatingIPDescription(), "")).To(Succeed())
				g.Expect(e.s.Clients.NetworkInfra.RemoveRouterInterface(e.ctx, st.router.ID, subnetID)).To(Succeed())
				g.Expect(e.s.Clients.NetworkInfra.DeleteRouter(e.ctx, st.router.ID)).To(Succeed())
			}
			if tc.lost {
				lbID = ""
				// What the controller does when the status lost the subnet.
				net, err := cluster.LookupManagedNetwork(e.ctx, e.s, req)
				g.Expect(err).NotTo(HaveOccurred())
				subnetID = net.Subnets[0].ID
			}
			e.deleteAll(req, lbID, subnetID)
			e.expectOnlyExternal(g)

			// Deleting again finds nothing and changes nothing.
			e.cloud.ResetRequests()
			e.deleteAll(req, "", "")
			g.Expect(e.writes()).To(BeEmpty())
		})
	}
}

// TestDeleteWithoutOptionalAPIs: a cloud whose Neutron has no layer-3
// extension (no routers, no floating IPs) and whose load-balancer endpoint
// answers 404. The list requests of those APIs answer 404 for the whole
// collection, which means nothing of the kind can exist: deletion goes on.
func TestDeleteWithoutOptionalAPIs(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t, func(c *fakeopenstack.Cloud) {
		c.SetExtensions("security-group", "port-security", "standard-attr-tag", "tag-creation")
		c.DisableService("load-balancer")
	})
	req := managed(func(s *infrav1.OpenStackClusterSpec) {
		s.EnableExternalNetwork = ptr.To(false)
		s.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}, FixedIP: ptr.To("10.6.0.5")}
	})
	st := e.provision(req, nil)
	g.Expect(st.router).To(BeNil())

	lbID, err := cluster.DeleteLoadBalancer(e.ctx, e.s, req, "")
	g.Expect(err).NotTo(HaveOccurred(), "Octavia's 404 must not block deletion")
	g.Expect(lbID).To(BeEmpty())
	g.Expect(cluster.DeleteFloatingIPs(e.ctx, e.s, req, req.APIFloatingIPDescription(), "")).To(Succeed(),
		"a missing floating-IP API must not block deletion")
	g.Expect(cluster.DeleteRouter(e.ctx, e.s, req, st.net.Subnets[0].ID)).To(Succeed(),
		"a missing router API must not block deletion")
	g.Expect(cluster.DeleteNetwork(e.ctx, e.s, req)).To(Succeed())
	g.Expect(cluster.DeleteSecurityGroups(e.ctx, e.s, req)).To(Succeed())
	g.Expect(e.cloud.Names(fakeopenstack.Networks)).To(Equal([]string{"public"}))
}

// waitGone reads a deleted load balancer until Octavia has removed it.
func (e *env) waitGone(id string) {
	e.t.Helper()
	for range 10 {
		if _, err := e.s.Clients.LoadBalancer.GetLoadBalancer(e.ctx, id); err != nil && clients.Classify(err, "").Reason == clients.ReasonNotFound {
			return
		}
	}
	e.t.Fatalf("load balancer %s was not deleted", id)
}
