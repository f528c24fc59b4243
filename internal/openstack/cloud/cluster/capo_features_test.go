package cluster_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/cluster"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// TestManagedRouterExternalIPs: the managed router's gateway gets the
// addresses of managedRouter.externalIPs, on subnets of the external
// network found by filter or ID; where policy forbids it (a member, by
// default), the error is a terminal Forbidden naming the policy.
func TestManagedRouterExternalIPs(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t)
	req := managed(noLoadBalancer, func(s *infrav1.OpenStackClusterSpec) {
		s.ManagedRouter = &infrav1.ManagedRouter{ExternalIPs: []infrav1.ExternalRouterIPParam{
			{FixedIP: "172.24.4.77", Subnet: infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "public", CIDR: "172.24.4.0/24"}}}}}
	})
	ext, err := cluster.EnsureExternalNetwork(e.ctx, e.s, req, nil)
	g.Expect(err).NotTo(HaveOccurred())
	net, err := cluster.EnsureNetwork(e.ctx, e.s, req, nil)
	g.Expect(err).NotTo(HaveOccurred())

	_, err = cluster.EnsureRouter(e.ctx, e.s, req, net, ext, nil)
	g.Expect(reason(err)).To(Equal(clients.ReasonForbidden))
	g.Expect(err.Error()).To(ContainSubstring("external_fixed_ips))) is disallowed by policy"))

	e.cloud.AllowGatewayFixedIPs()
	rt, err := cluster.EnsureRouter(e.ctx, e.s, req, net, ext, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rt.IPs).To(Equal([]string{"172.24.4.77"}))

	// By ID, and a subnet that is not the external network's.
	other := managed(noLoadBalancer, func(s *infrav1.OpenStackClusterSpec) {
		s.ManagedRouter = &infrav1.ManagedRouter{ExternalIPs: []infrav1.ExternalRouterIPParam{
			{Subnet: infrav1.SubnetParam{ID: ptr.To(net.Subnets[0].ID)}}}}
	})
	other.Name = "other"
	otherNet, err := cluster.EnsureNetwork(e.ctx, e.s, other, nil)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cluster.EnsureRouter(e.ctx, e.s, other, otherNet, ext, nil)
	g.Expect(reason(err)).To(Equal(clients.ReasonNotFound))
	g.Expect(err.Error()).To(ContainSubstring("subnet of external network public"))
}

// TestLoadBalancerFlavorAndAvailabilityZone: the API load balancer is
// created with the Octavia flavor named by managedLoadBalancer.flavor (its
// ID looked up by name) and the availability zone given; an unknown flavor
// is a terminal NotFound before anything is created, an unknown zone the
// 400 Octavia answers.
func TestLoadBalancerFlavorAndAvailabilityZone(t *testing.T) {
	g := NewWithT(t)
	e := newEnv(t)
	flavor := e.cloud.AddLoadBalancerFlavor("ocp-capi-single", true)
	e.cloud.AddLoadBalancerFlavor("disabled", false)
	e.cloud.AddLoadBalancerAvailabilityZone("az1", true)
	lb := func(flavor, az string) cluster.Request {
		return managed(func(s *infrav1.OpenStackClusterSpec) {
			s.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{
				Flavor: ptr.To(flavor), AvailabilityZone: ptr.To(az)}}
		})
	}
	st := e.provision(lb("ocp-capi-single", "az1"), nil)
	got := e.cloud.Object(fakeopenstack.LoadBalancers, st.ep.LoadBalancer.ID)
	g.Expect(got["flavor_id"]).To(Equal(flavor))
	g.Expect(got["availability_zone"]).To(Equal("az1"))

	for _, tc := range []struct{ flavor, az, reason, message string }{
		{"nope", "", clients.ReasonNotFound, `no enabled load balancer flavor is named "nope"`},
		{"disabled", "", clients.ReasonNotFound, `no enabled load balancer flavor is named "disabled"`},
		{"", "nope", clients.ReasonInvalidSpec, "Invalid availability zone"},
	} {
		req := lb(tc.flavor, tc.az)
		req.Name = "bad-" + tc.flavor + tc.az
		ext, err := cluster.EnsureExternalNetwork(e.ctx, e.s, req, nil)
		g.Expect(err).NotTo(HaveOccurred())
		net, err := cluster.EnsureNetwork(e.ctx, e.s, req, nil)
		g.Expect(err).NotTo(HaveOccurred())
		_, err = cluster.EnsureAPIEndpoint(e.ctx, e.s, req, net, ext, nil)
		g.Expect(reason(err)).To(Equal(tc.reason), "%s/%s: %v", tc.flavor, tc.az, err)
		g.Expect(err.Error()).To(ContainSubstring(tc.message))
	}
}
