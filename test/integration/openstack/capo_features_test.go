package openstack

import (
	"context"
	"os"
	"testing"
	"time"

	lbflavors "github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

// The Octavia flavor and availability zone hack/openstack/cloud_objects.py
// makes on the local cloud.
const (
	localLBFlavor = "ocp-capi-single"
	localLBZone   = "ocp-capi-az"
)

// TestClusterLoadBalancerFlavorAndZone: the API load balancer is created
// in the Octavia flavor (named) and availability zone of
// apiServer.managedLoadBalancer, on the real Octavia; a zone Octavia does
// not know gives APIEndpointReady False/InvalidSpec with Octavia's own
// message, and nothing is left behind.
func TestClusterLoadBalancerFlavorAndZone(t *testing.T) {
	RegisterTestingT(t)
	needCloud(t)
	lbc := loadBalancerClient(t)
	if lbc == nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the local cloud has no Octavia")
		}
		t.Skip("the local cloud has no Octavia")
	}
	ctx := context.Background()
	pages, err := lbflavors.List(lbc, lbflavors.ListOpts{Name: localLBFlavor}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	flavors, err := lbflavors.ExtractFlavors(pages)
	Expect(err).NotTo(HaveOccurred())
	if len(flavors) != 1 {
		msg := "Octavia flavor " + localLBFlavor + " missing: run hack/openstack/cloud_objects.py"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}

	startManager(t)
	ns := newNamespace(t)
	name := fx.prefix + "-lbflavor"
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, name) })
	spec := managedClusterSpec()
	spec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{
		Flavor: ptr.To(localLBFlavor), AvailabilityZone: ptr.To(localLBZone)}}
	_, osc := clusterObjects(t, ns, name, spec)
	waitClusterReady(t, osc)
	Expect(osc.Status.APIServerLoadBalancer).NotTo(BeNil())
	lb, err := loadbalancers.Get(ctx, lbc, osc.Status.APIServerLoadBalancer.ID).Extract()
	Expect(err).NotTo(HaveOccurred())
	Expect(lb.FlavorID).To(Equal(flavors[0].ID))
	Expect(lb.AvailabilityZone).To(Equal(localLBZone))

	bad := fx.prefix + "-lbzone"
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, bad) })
	badSpec := managedClusterSpec()
	badSpec.ManagedSubnets[0].CIDR = "10.89.0.0/24"
	badSpec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{AvailabilityZone: ptr.To("no-such-zone")}}
	_, badOSC := clusterObjects(t, ns, bad, badSpec)
	Eventually(func(g Gomega) {
		get(t, badOSC)(g)
		c := capiconditions.Get(badOSC, infrav1.APIEndpointReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.InvalidSpecReason), condition(badOSC, infrav1.APIEndpointReadyCondition))
		g.Expect(c.Message).To(ContainSubstring("Invalid availability zone"))
	}, 3*wait, time.Second).Should(Succeed())
	t.Logf("unknown zone: %s", condition(badOSC, infrav1.APIEndpointReadyCondition))

	for _, o := range []*infrav1.OpenStackCluster{osc, badOSC} {
		Expect(env.Client.Delete(ctx, o)).To(Succeed())
		waitGone(t, o, 3*wait, func() string { return "Deleting " + condition(o, clusterv1.DeletingCondition) })
	}
}

// TestClusterManagedRouterNeedsAdmin: managedRouter.externalIPs asks
// Neutron for fixed gateway addresses, which its default policy grants to
// admins only; with the suite's member credentials the router is refused,
// RouterReady False/Forbidden naming the policy, and nothing is left.
func TestClusterManagedRouterNeedsAdmin(t *testing.T) {
	RegisterTestingT(t)
	needCloud(t)
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t)
	name := fx.prefix + "-gwip"
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, name) })
	spec := managedClusterSpec()
	spec.ManagedSubnets[0].CIDR = "10.90.0.0/24"
	spec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}}
	spec.ManagedRouter = &infrav1.ManagedRouter{ExternalIPs: []infrav1.ExternalRouterIPParam{
		{Subnet: infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{CIDR: "172.24.4.0/24"}}}}}
	_, osc := clusterObjects(t, ns, name, spec)
	Eventually(func(g Gomega) {
		get(t, osc)(g)
		c := capiconditions.Get(osc, infrav1.RouterReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.ForbiddenReason), condition(osc, infrav1.RouterReadyCondition))
		g.Expect(c.Message).To(ContainSubstring("external_fixed_ips"))
	}, 3*wait, time.Second).Should(Succeed())
	t.Logf("member asking for gateway addresses: %s", condition(osc, infrav1.RouterReadyCondition))
	Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	waitGone(t, osc, 3*wait, func() string { return "Deleting " + condition(osc, clusterv1.DeletingCondition) })
}

// TestPropagateUplinkStatusWithoutExtension: the local Neutron has no
// uplink-status-propagation extension, and refuses the attribute (400, as
// the fake cloud answers); a server whose port sets propagateUplinkStatus
// is refused before any port is made, PortsReady False/InvalidSpec naming
// the extension.
func TestPropagateUplinkStatusWithoutExtension(t *testing.T) {
	RegisterTestingT(t)
	needCloud(t)
	ctx := context.Background()
	p, err := ports.Create(ctx, direct.network, ports.CreateOpts{Name: fx.prefix + "-uplink-direct", NetworkID: fx.networkID,
		PropagateUplinkStatus: ptr.To(true)}).Extract()
	if err == nil {
		_ = ports.Delete(ctx, direct.network, p.ID).ExtractErr()
		t.Skip("the local Neutron has the uplink-status-propagation extension: nothing to refuse")
	}
	Expect(err.Error()).To(ContainSubstring("Unrecognized attribute(s) 'propagate_uplink_status'"))

	startManager(t)
	ns := newNamespace(t)
	oss := basicServer(ns, fx.prefix+"-uplink")
	oss.Spec.Ports[0].PropagateUplinkStatus = ptr.To(true)
	create(t, oss)
	Eventually(func(g Gomega) {
		get(t, oss)(g)
		c := capiconditions.Get(oss, infrav1.PortsReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.InvalidSpecReason), condition(oss, infrav1.PortsReadyCondition))
		g.Expect(c.Message).To(ContainSubstring(`Neutron has no "uplink-status-propagation" extension`))
	}, wait, 250*time.Millisecond).Should(Succeed())
	deleteAndWait(t, oss)
	expectNoLeftovers(t, fx.prefix+"-uplink")
}
