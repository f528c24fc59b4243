package openstack

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	osprovider "github.com/ocp-capi/ocp-capi/internal/openstack"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// More real-cloud tests of the OpenStackCluster: an existing network, the
// floating-IP endpoint, a broken bastion, manager kills, and the call and
// time figures of docs/openstack/cluster.md.

func clusterBase(ns, name string) string { return "k8s-clusterapi-cluster-" + ns + "-" + name }

// externalNetworkID is the cloud's external network (hack/openstack/up.sh
// makes exactly one).
func externalNetworkID(t *testing.T) string {
	t.Helper()
	pages, err := networks.List(direct.network, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{}, External: ptr.To(true)}).AllPages(context.Background())
	Expect(err).NotTo(HaveOccurred())
	nl, err := networks.ExtractNetworks(pages)
	Expect(err).NotTo(HaveOccurred())
	Expect(nl).To(HaveLen(1), "external networks")
	return nl[0].ID
}

// floatingIP is the floating IP with the address.
func floatingIP(t *testing.T, address string) *floatingips.FloatingIP {
	t.Helper()
	pages, err := floatingips.List(direct.network, floatingips.ListOpts{FloatingIP: address}).AllPages(context.Background())
	Expect(err).NotTo(HaveOccurred())
	fl, err := floatingips.ExtractFloatingIPs(pages)
	Expect(err).NotTo(HaveOccurred())
	Expect(fl).To(HaveLen(1), "floating IPs with address %s", address)
	return &fl[0]
}

// serverPorts are the Neutron ports of the machine's server.
func serverPorts(t *testing.T, osm *infrav1.OpenStackMachine) []ports.Port {
	t.Helper()
	get(t, osm)(NewWithT(t))
	id := ptr.Deref(osm.Status.InstanceID, "")
	Expect(id).NotTo(BeEmpty(), "machine %s has no server", osm.Name)
	pages, err := ports.List(direct.network, ports.ListOpts{DeviceID: id}).AllPages(context.Background())
	Expect(err).NotTo(HaveOccurred())
	pl, err := ports.ExtractPorts(pages)
	Expect(err).NotTo(HaveOccurred())
	Expect(pl).NotTo(BeEmpty(), "ports of machine %s", osm.Name)
	return pl
}

func portIDs(pl []ports.Port) []string {
	out := make([]string, 0, len(pl))
	for _, p := range pl {
		out = append(out, p.ID)
	}
	return out
}

func waitMachineReady(t *testing.T, m *infrav1.OpenStackMachine) {
	t.Helper()
	Eventually(func(g Gomega) {
		get(t, m)(g)
		g.Expect(capiconditions.IsTrue(m, infrav1.ReadyCondition)).To(BeTrue(), "machine %s: InstanceReady %s; APIServerIngressReady %s",
			m.Name, condition(m, infrav1.InstanceReadyCondition), condition(m, infrav1.APIServerIngressReadyCondition))
	}, 2*wait, 500*time.Millisecond).Should(Succeed())
}

// markInfrastructureProvisioned plays CAPI core: the Cluster's
// infrastructure is provisioned, so machines may be created.
func markInfrastructureProvisioned(t *testing.T, c *clusterv1.Cluster) {
	t.Helper()
	Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		return env.Client.Status().Update(context.Background(), c)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

// waitGone waits until the object is deleted from the API server.
func waitGone(t *testing.T, obj client.Object, timeout time.Duration, why func() string) {
	t.Helper()
	Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	}, timeout, 500*time.Millisecond).Should(BeTrue(), func() string { return why() })
}

func isWrite(c openstackproxy.Call) bool {
	return c.Method != "GET" && c.Service != openstackproxy.ServiceIdentity
}

func notIdentity(c openstackproxy.Call) bool { return c.Service != openstackproxy.ServiceIdentity }

// settled waits until the last passes of provisioning are over: a quiet
// spell with no OpenStack call and no write of obj. A fixed pause was not
// enough on a loaded machine, where a queued pass then ran inside the
// measured window. A controller that never goes quiet fails here, naming
// what it kept calling. It returns obj's resourceVersion.
func settled(t *testing.T, obj client.Object) string {
	t.Helper()
	const quiet = 3 * time.Second
	var rv string
	Eventually(func(g Gomega) {
		get(t, obj)(g)
		before, calls := obj.GetResourceVersion(), proxy.CountFunc(notIdentity)
		time.Sleep(quiet)
		get(t, obj)(g)
		g.Expect(obj.GetResourceVersion()).To(Equal(before), "%s was written", obj.GetName())
		g.Expect(proxy.CountFunc(notIdentity)).To(Equal(calls), "OpenStack calls went on:\n%s", proxy.Summary())
		rv = before
	}, 2*wait, time.Millisecond).Should(Succeed())
	return rv
}

// steadyResync pokes a settled object and returns the OpenStack calls and
// writes its reconcile made; it fails if the controller wrote the object.
func steadyResync(t *testing.T, obj client.Object) (calls, writes int) {
	t.Helper()
	rv := settled(t, obj)
	proxy.Reset()
	annotateToReconcile(t, obj)
	poked := obj.GetResourceVersion()
	time.Sleep(3 * time.Second)
	get(t, obj)(NewWithT(t))
	Expect(resourceVersionsSince(rv, poked)).To(Equal(1))
	Expect(obj.GetResourceVersion()).To(Equal(poked), "the controller wrote %s during a steady reconcile", obj.GetName())
	return proxy.CountFunc(notIdentity), proxy.CountFunc(isWrite)
}

// TestClusterOnExistingNetwork: the cluster uses a network, subnet and
// router the user made. The provider creates and deletes none of them,
// machines get their ports on the network, and after the cluster is gone
// the network is still there, with nothing of the cluster left on it.
func TestClusterOnExistingNetwork(t *testing.T) {
	RegisterTestingT(t)
	ctx := context.Background()
	name := fx.prefix + "-exnet"

	// The user's network, subnet and router, removed last.
	net, err := networks.Create(ctx, direct.network, networks.CreateOpts{Name: name + "-net"}).Extract()
	Expect(err).NotTo(HaveOccurred())
	sub, err := subnets.Create(ctx, direct.network, subnets.CreateOpts{NetworkID: net.ID, Name: name + "-subnet",
		CIDR: "10.89.0.0/24", IPVersion: gophercloud.IPv4}).Extract()
	Expect(err).NotTo(HaveOccurred())
	rt, err := routers.Create(ctx, direct.network, routers.CreateOpts{Name: name + "-router",
		GatewayInfo: &routers.GatewayInfo{NetworkID: externalNetworkID(t)}}).Extract()
	Expect(err).NotTo(HaveOccurred())
	_, err = routers.AddInterface(ctx, direct.network, rt.ID, routers.AddInterfaceOpts{SubnetID: sub.ID}).Extract()
	Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		_, _ = routers.RemoveInterface(ctx, direct.network, rt.ID, routers.RemoveInterfaceOpts{SubnetID: sub.ID}).Extract()
		if err := routers.Delete(ctx, direct.network, rt.ID).ExtractErr(); err != nil {
			t.Errorf("deleting the test's router: %v", err)
		}
		if err := networks.Delete(ctx, direct.network, net.ID).ExtractErr(); err != nil {
			t.Errorf("deleting the test's network: %v", err)
		}
	})

	startManager(t)
	ns := newNamespace(t)
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, name) })
	spec := infrav1.OpenStackClusterSpec{
		IdentityRef:           identity(),
		Network:               &infrav1.NetworkParam{ID: ptr.To(net.ID)},
		Subnets:               []infrav1.SubnetParam{{Filter: &infrav1.SubnetFilter{Name: sub.Name}}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
	}
	proxy.Reset()
	c, osc := clusterObjects(t, ns, name, spec)
	waitClusterReady(t, osc)
	markInfrastructureProvisioned(t, c)

	Expect(osc.Status.Network).NotTo(BeNil())
	Expect(osc.Status.Network.ID).To(Equal(net.ID))
	Expect(osc.Status.Network.Subnets).To(HaveLen(1))
	Expect(osc.Status.Network.Subnets[0].ID).To(Equal(sub.ID))
	Expect(osc.Status.Router).To(BeNil(), "an existing network gets no router of the provider's")
	Expect(condition(osc, infrav1.RouterReadyCondition)).To(HavePrefix("True/" + infrav1.NotRequiredReason))
	Expect(osc.Spec.ControlPlaneEndpoint).NotTo(BeNil())
	Expect(osc.Spec.ControlPlaneEndpoint.Host).NotTo(BeEmpty())

	// A control-plane machine gets its port on the user's network (and
	// joins the endpoint).
	m := cpMachine(t, ns, name, name+"-cp-0")
	waitMachineReady(t, m)
	for _, p := range serverPorts(t, m) {
		Expect(p.NetworkID).To(Equal(net.ID), "port %s of the machine", p.Name)
	}

	deleteAndWait(t, m)
	Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	waitGone(t, osc, 3*wait, func() string { return "Deleting " + condition(osc, clusterv1.DeletingCondition) })

	// Nothing of the network was created or deleted by the provider.
	for _, m := range []openstackproxy.Match{
		{Service: openstackproxy.ServiceNetwork, Method: "POST", Path: "/v2.0/networks"},
		{Service: openstackproxy.ServiceNetwork, Method: "DELETE", PathPrefix: "/v2.0/networks/"},
		{Service: openstackproxy.ServiceNetwork, Method: "POST", Path: "/v2.0/subnets"},
		{Service: openstackproxy.ServiceNetwork, Method: "DELETE", PathPrefix: "/v2.0/subnets/"},
		{Service: openstackproxy.ServiceNetwork, Method: "POST", Path: "/v2.0/routers"},
		{Service: openstackproxy.ServiceNetwork, Method: "DELETE", PathPrefix: "/v2.0/routers/"},
		{Service: openstackproxy.ServiceNetwork, Method: "PUT", PathPrefix: "/v2.0/routers/"},
	} {
		Expect(proxy.Count(m)).To(BeZero(), "%s %s%s\n%s", m.Method, m.Path, m.PathPrefix, proxy.Summary())
	}
	got, err := networks.Get(ctx, direct.network, net.ID).Extract()
	Expect(err).NotTo(HaveOccurred(), "the user's network was deleted")
	Expect(got.Subnets).To(ConsistOf(sub.ID))
	_, err = routers.Get(ctx, direct.network, rt.ID).Extract()
	Expect(err).NotTo(HaveOccurred(), "the user's router was deleted")

	// Only the network's own ports are left on it: DHCP and the router
	// interface (no machine port, no load balancer VIP port).
	Eventually(func(g Gomega) {
		pages, err := ports.List(direct.network, ports.ListOpts{NetworkID: net.ID}).AllPages(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		pl, _ := ports.ExtractPorts(pages)
		var left []string
		for _, p := range pl {
			if p.DeviceOwner != "network:dhcp" && !strings.HasPrefix(p.DeviceOwner, "network:router_interface") {
				left = append(left, p.Name+" ("+p.DeviceOwner+")")
			}
		}
		g.Expect(left).To(BeEmpty(), "ports left on the user's network")
	}, wait, time.Second).Should(Succeed())
	expectNoClusterLeftovers(t, ns, name)
}

// fipClusterSpec is a managed cluster whose API is a floating IP: no load
// balancer, the external network named.
func fipClusterSpec(t *testing.T) infrav1.OpenStackClusterSpec {
	spec := managedClusterSpec()
	spec.ExternalNetwork = &infrav1.NetworkParam{ID: ptr.To(externalNetworkID(t))}
	spec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}}
	return spec
}

// TestClusterFloatingIPEndpoint: without a load balancer the endpoint is a
// floating IP; the first control-plane machine holds it, and when that
// machine goes the next one takes it.
func TestClusterFloatingIPEndpoint(t *testing.T) {
	RegisterTestingT(t)
	startManager(t)
	ns := newNamespace(t)
	name := fx.prefix + "-fip"
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, name) })
	ctx := context.Background()

	c, osc := clusterObjects(t, ns, name, fipClusterSpec(t))
	waitClusterReady(t, osc)
	Expect(osc.Status.APIServerLoadBalancer).To(BeNil())
	Expect(osc.Status.ExternalNetwork).NotTo(BeNil())
	host := osc.Spec.ControlPlaneEndpoint.Host
	fip := floatingIP(t, host)
	Expect(fip.FloatingNetworkID).To(Equal(osc.Status.ExternalNetwork.ID))
	Expect(fip.Description).To(ContainSubstring("API endpoint of cluster " + ns + "/" + name))
	Expect(fip.PortID).To(BeEmpty(), "no machine yet")

	calls, writes := steadyResync(t, osc)
	t.Logf("steady resync of a floating-IP cluster: %d OpenStack calls, %d writes\n%s", calls, writes, proxy.Summary())
	Expect(calls).To(BeNumerically("<=", 2))
	Expect(writes).To(BeZero())

	markInfrastructureProvisioned(t, c)
	cp0 := cpMachine(t, ns, name, name+"-cp-0")
	waitMachineReady(t, cp0)
	cp1 := cpMachine(t, ns, name, name+"-cp-1")
	waitMachineReady(t, cp1)

	// The first machine holds the floating IP.
	Expect(portIDs(serverPorts(t, cp0))).To(ContainElement(floatingIP(t, host).PortID), "the API floating IP is not on cp-0")
	Expect(condition(cp0, infrav1.APIServerIngressReadyCondition)).To(ContainSubstring("holds the API floating IP"))
	cp1Ports := portIDs(serverPorts(t, cp1))

	// cp-0 goes: cp-1 takes the floating IP.
	deleteAndWait(t, cp0)
	Eventually(func(g Gomega) {
		f := floatingIP(t, host)
		get(t, cp1)(g)
		g.Expect(cp1Ports).To(ContainElement(f.PortID), "the API floating IP (port %q) did not move to cp-1; cp-1 APIServerIngressReady: %s",
			f.PortID, condition(cp1, infrav1.APIServerIngressReadyCondition))
	}, wait, time.Second).Should(Succeed())

	deleteAndWait(t, cp1)
	Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	waitGone(t, osc, 3*wait, func() string { return "Deleting " + condition(osc, clusterv1.DeletingCondition) })
	expectNoClusterLeftovers(t, ns, name)
}

// TestDeleteClusterWithBrokenBastion: the bastion's image cannot be
// resolved, so its OpenStackServer never gets a server; deleting the
// cluster must still complete (CAPO bug #2266).
func TestDeleteClusterWithBrokenBastion(t *testing.T) {
	RegisterTestingT(t)
	startManager(t)
	ns := newNamespace(t)
	name := fx.prefix + "-badbastion"
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, name) })
	ctx := context.Background()

	spec := fipClusterSpec(t)
	spec.Bastion = bastionSpec(fx.flavorName)
	spec.Bastion.Spec.Image = infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("no-such-image-" + fx.prefix)}}
	_, osc := clusterObjects(t, ns, name, spec)

	oss := &infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-bastion"}}
	Eventually(func(g Gomega) {
		get(t, oss)(g)
		c := capiconditions.Get(oss, infrav1.ReferencesResolvedCondition)
		g.Expect(c).NotTo(BeNil())
		// On a failure, say where the server stands, not just the status.
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "ReferencesResolved: %s; Ready: %s",
			condition(oss, infrav1.ReferencesResolvedCondition), condition(oss, infrav1.ReadyCondition))
		g.Expect(c.Reason).To(Equal(infrav1.NotFoundReason))
		g.Expect(c.Message).To(ContainSubstring("no-such-image"))
	}, wait, 500*time.Millisecond).Should(Succeed())
	Eventually(func(g Gomega) {
		get(t, osc)(g)
		g.Expect(ptr.Deref(osc.Status.Initialization, infrav1.OpenStackClusterInitializationStatus{}).Provisioned).To(Equal(ptr.To(true)))
		g.Expect(capiconditions.IsFalse(osc, infrav1.BastionReadyCondition)).To(BeTrue(), condition(osc, infrav1.BastionReadyCondition))
		g.Expect(condition(osc, infrav1.BastionReadyCondition)).To(ContainSubstring("no-such-image"))
		g.Expect(capiconditions.IsFalse(osc, infrav1.ReadyCondition)).To(BeTrue())
	}, wait, 500*time.Millisecond).Should(Succeed())
	Expect(leftovers(t, name+"-bastion")).To(BeEmpty(), "a bastion server without an image")

	Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	waitGone(t, osc, 2*wait, func() string {
		return "Deleting " + condition(osc, clusterv1.DeletingCondition) + "; bastion Deleting " + condition(oss, clusterv1.DeletingCondition)
	})
	Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(oss), oss))).To(BeTrue(), "the bastion's OpenStackServer is left")
	expectNoClusterLeftovers(t, ns, name)
}

// TestBastionKeptOnCredentialRotation: a new identityRef on the cluster
// (credential rotation) reaches the bastion's OpenStackServer, and the
// bastion server stays: only a change of the bastion itself replaces it.
func TestBastionKeptOnCredentialRotation(t *testing.T) {
	RegisterTestingT(t)
	startManager(t)
	ns := newNamespace(t)
	name := fx.prefix + "-rotate"
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, name) })
	ctx := context.Background()

	// The same credentials under another Secret name.
	rotated := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud-rotated", Namespace: ns},
		Data: map[string][]byte{clients.CloudsYAMLKey: fx.identitySecretYAML}}
	Expect(env.Client.Create(ctx, rotated)).To(Succeed())

	spec := fipClusterSpec(t)
	spec.Bastion = bastionSpec(fx.flavorName)
	_, osc := clusterObjects(t, ns, name, spec)
	waitClusterReady(t, osc)
	oss := &infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-bastion"}}
	get(t, oss)(NewWithT(t))
	uid, serverID := oss.UID, ptr.Deref(oss.Status.InstanceID, "")
	Expect(serverID).NotTo(BeEmpty())

	Eventually(func() error {
		get(t, osc)(NewWithT(t))
		osc.Spec.IdentityRef.Name = rotated.Name
		return env.Client.Update(ctx, osc)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	Eventually(func(g Gomega) {
		get(t, oss)(g)
		g.Expect(oss.Spec.IdentityRef.Name).To(Equal(rotated.Name))
	}, wait, 500*time.Millisecond).Should(Succeed(), "the bastion's OpenStackServer did not get the new identityRef")
	Expect(oss.UID).To(Equal(uid), "the bastion's OpenStackServer was replaced on a credential rotation")
	Expect(ptr.Deref(oss.Status.InstanceID, "")).To(Equal(serverID), "the bastion server was replaced on a credential rotation")
	waitClusterReady(t, osc)

	Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	waitGone(t, osc, 2*wait, func() string { return "Deleting " + condition(osc, clusterv1.DeletingCondition) })
	expectNoClusterLeftovers(t, ns, name)
}

// runManager is startManager without the cleanup, for a test that starts
// and stops managers itself.
func runManager(t *testing.T) *testManager {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	for _, c := range osprovider.Controllers(osprovider.Options{}) {
		if err := c.Setup(ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: 10}); err != nil {
			cancel()
			t.Fatal(err)
		}
	}
	tm := &testManager{cancel: cancel, done: make(chan error, 1)}
	go func() { tm.done <- mgr.Start(ctx) }()
	return tm
}

// testSeed is OCP_CAPI_TEST_SEED, or the time.
func testSeed(t *testing.T) int64 {
	if s := os.Getenv("OCP_CAPI_TEST_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		Expect(err).NotTo(HaveOccurred())
		return n
	}
	return time.Now().UnixNano()
}

// loseStatus forgets what the controller recorded of the OpenStack
// resources, as a lost status write (or clusterctl move) would; the
// conditions stay.
func loseStatus(t *testing.T, osc *infrav1.OpenStackCluster) {
	t.Helper()
	Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(osc), osc); err != nil {
			return err
		}
		osc.Status = infrav1.OpenStackClusterStatus{Conditions: osc.Status.Conditions}
		return env.Client.Status().Update(context.Background(), osc)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

// clusterResourceCounts counts, by name, what OpenStack holds of a
// cluster.
func clusterResourceCounts(t *testing.T, ns, name string) map[string]int {
	t.Helper()
	ctx := context.Background()
	base := clusterBase(ns, name)
	out := map[string]int{}
	np, err := networks.List(direct.network, networks.ListOpts{Name: base}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	nl, _ := networks.ExtractNetworks(np)
	out["network"] = len(nl)
	sp, err := subnets.List(direct.network, subnets.ListOpts{Name: base}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	sl, _ := subnets.ExtractSubnets(sp)
	out["subnet"] = len(sl)
	rp, err := routers.List(direct.network, routers.ListOpts{Name: base}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	rl, _ := routers.ExtractRouters(rp)
	out["router"] = len(rl)
	for _, rt := range rl {
		pp, err := ports.List(direct.network, ports.ListOpts{DeviceID: rt.ID}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		pl, _ := ports.ExtractPorts(pp)
		for _, p := range pl {
			if strings.HasPrefix(p.DeviceOwner, "network:router_interface") {
				out["router interface"]++
			}
		}
	}
	gp, err := groups.List(direct.network, groups.ListOpts{}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	gl, _ := groups.ExtractGroups(gp)
	for _, g := range gl {
		if after, ok := strings.CutPrefix(g.Name, "k8s-cluster-"+ns+"-"+name+"-secgroup-"); ok {
			out["security group "+after]++
		}
	}
	fp, err := floatingips.List(direct.network, floatingips.ListOpts{}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	fl, _ := floatingips.ExtractFloatingIPs(fp)
	for _, f := range fl {
		if strings.Contains(f.Description, "API endpoint of cluster "+ns+"/"+name+" ") {
			out["API floating IP"]++
		}
	}
	lbc := loadBalancerClient(t)
	if lbc == nil {
		return out
	}
	lp, err := loadbalancers.List(lbc, loadbalancers.ListOpts{Name: base + "-kubeapi"}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	ll, _ := loadbalancers.ExtractLoadBalancers(lp)
	out["load balancer"] = len(ll)
	for _, lb := range ll {
		lsp, err := listeners.List(lbc, listeners.ListOpts{LoadbalancerID: lb.ID}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		ls, _ := listeners.ExtractListeners(lsp)
		out["listener"] += len(ls)
		pp, err := pools.List(lbc, pools.ListOpts{LoadbalancerID: lb.ID}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		pl, _ := pools.ExtractPools(pp)
		out["pool"] += len(pl)
		for _, p := range pl {
			mp, err := monitors.List(lbc, monitors.ListOpts{PoolID: p.ID}).AllPages(ctx)
			Expect(err).NotTo(HaveOccurred())
			ml, _ := monitors.ExtractMonitors(mp)
			out["health monitor"] += len(ml)
		}
	}
	return out
}

// TestManagerKillDuringCreateAndDelete stops the manager at random points
// while a cluster (load balancer endpoint, no bastion) is created and
// while it is deleted, sometimes losing the status too, and starts a new
// one each time. The cluster must end with exactly one of each resource,
// quiet at steady state, and leave nothing once deleted. The seed is
// logged; OCP_CAPI_TEST_SEED replays a run.
func TestManagerKillDuringCreateAndDelete(t *testing.T) {
	RegisterTestingT(t)
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d (OCP_CAPI_TEST_SEED=%d replays this run)", seed, seed)
	ns := newNamespace(t)
	name := fx.prefix + "-kill"
	ctx := context.Background()

	// Cleanups run last-registered first: a manager is running while the
	// objects are deleted, and stopped at the very end.
	var cur *testManager
	t.Cleanup(func() {
		if cur != nil {
			cur.stop(t)
		}
	})
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, name) })
	cur = runManager(t)
	_, osc := clusterObjects(t, ns, name, managedClusterSpec())
	t.Cleanup(func() {
		if cur.stopped {
			cur = runManager(t)
		}
	})

	// kill stops the manager after a random delay in [from, from+span).
	kill := func(phase string, i int, from, span time.Duration) {
		delay := from + time.Duration(rng.Int63n(int64(span)))
		lose := rng.Intn(2) == 0
		time.Sleep(delay)
		cur.stop(t)
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(osc), osc); apierrors.IsNotFound(err) {
			t.Logf("%s kill %d after %s: the cluster is gone", phase, i, delay.Round(time.Millisecond))
			cur = runManager(t)
			return
		} else if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s kill %d after %s: Ready %s; Deleting %s; losing the status: %v", phase, i, delay.Round(time.Millisecond),
			condition(osc, infrav1.ReadyCondition), condition(osc, clusterv1.DeletingCondition), lose)
		if lose {
			loseStatus(t, osc)
		}
		cur = runManager(t)
	}

	// Create: each manager lives a little longer than the one before, so
	// the kills land in different steps (the first pass creates the
	// network, router and groups and starts the load balancer; later ones
	// wait for Octavia, add the listener, pool and monitor, and the
	// floating IP).
	for i := range 4 {
		kill("create", i, time.Duration(i)*2*time.Second, 4*time.Second)
	}
	// The conditions survive a lost status; wait for the status too.
	Eventually(func(g Gomega) {
		get(t, osc)(g)
		g.Expect(capiconditions.IsTrue(osc, infrav1.ReadyCondition)).To(BeTrue(), condition(osc, infrav1.ReadyCondition))
		g.Expect(osc.Status.Initialization).NotTo(BeNil())
		g.Expect(osc.Status.Network).NotTo(BeNil())
		g.Expect(osc.Status.Router).NotTo(BeNil())
		g.Expect(osc.Status.ControlPlaneSecurityGroup).NotTo(BeNil())
		g.Expect(osc.Status.APIServerLoadBalancer).NotTo(BeNil(), "the local cloud has Octavia; the endpoint must be the load balancer")
	}, 3*wait, 500*time.Millisecond).Should(Succeed())

	want := map[string]int{
		"network": 1, "subnet": 1, "router": 1, "router interface": 1,
		"security group controlplane": 1, "security group worker": 1,
		"API floating IP": 1, "load balancer": 1, "listener": 1, "pool": 1, "health monitor": 1,
	}
	Expect(clusterResourceCounts(t, ns, name)).To(Equal(want))

	calls, writes := steadyResync(t, osc)
	t.Logf("steady resync after the kills: %d OpenStack calls, %d writes\n%s", calls, writes, proxy.Summary())
	Expect(calls).To(BeNumerically("<=", 2))
	Expect(writes).To(BeZero())

	// Delete, with kills on the way.
	Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	for i := range 3 {
		kill("delete", i, time.Duration(i)*time.Second, 3*time.Second)
		if apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), osc)) {
			break
		}
	}
	waitGone(t, osc, 3*wait, func() string { return "Deleting " + condition(osc, clusterv1.DeletingCondition) })
	left := clusterResourceCounts(t, ns, name)
	for k, v := range left {
		if v == 0 {
			delete(left, k)
		}
	}
	Expect(left).To(BeEmpty())
	expectNoClusterLeftovers(t, ns, name)
}

// clusterFigures creates a cluster, waits until it is provisioned, checks
// a steady resync, deletes it and waits until it is gone, and logs the
// OpenStack calls and the time of each phase.
func clusterFigures(t *testing.T, label, name string, spec infrav1.OpenStackClusterSpec) {
	t.Helper()
	ctx := context.Background()
	startManager(t)
	ns := newNamespace(t)
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, name) })
	// The time is the controller's, not the manager's start-up.
	time.Sleep(3 * time.Second)

	proxy.Reset()
	start := time.Now()
	_, osc := clusterObjects(t, ns, name, spec)
	Eventually(func(g Gomega) {
		get(t, osc)(g)
		g.Expect(osc.Status.Initialization).NotTo(BeNil(), "APIEndpointReady %s", condition(osc, infrav1.APIEndpointReadyCondition))
		g.Expect(ptr.Deref(osc.Status.Initialization.Provisioned, false)).To(BeTrue())
	}, 3*wait, 100*time.Millisecond).Should(Succeed())
	provisioned := time.Since(start)
	createR := proxy.CountFunc(func(c openstackproxy.Call) bool { return notIdentity(c) && !isWrite(c) })
	createW := proxy.CountFunc(isWrite)
	createK := proxy.Count(openstackproxy.Match{Service: openstackproxy.ServiceIdentity})
	createSummary, createTimeline := proxy.Summary(), timeline(start, proxy.Calls())
	waitClusterReady(t, osc)

	steady, steadyW := steadyResync(t, osc)
	steadySummary := proxy.Summary()
	Expect(steady).To(BeNumerically("<=", 2), steadySummary)
	Expect(steadyW).To(BeZero(), steadySummary)

	proxy.Reset()
	start = time.Now()
	Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	waitGone(t, osc, 3*wait, func() string { return "Deleting " + condition(osc, clusterv1.DeletingCondition) })
	gone := time.Since(start)
	deleteR := proxy.CountFunc(func(c openstackproxy.Call) bool { return notIdentity(c) && !isWrite(c) })
	deleteW := proxy.CountFunc(isWrite)
	t.Logf("FIGURES %s: create→provisioned %d calls (%d R + %d W, +%d Keystone) in %s; steady resync %d calls, %d writes; delete→gone %d calls (%d R + %d W) in %s",
		label, createR+createW, createR, createW, createK, provisioned.Round(100*time.Millisecond), steady, steadyW,
		deleteR+deleteW, deleteR, deleteW, gone.Round(100*time.Millisecond))
	t.Logf("%s create calls:\n%s\ncreate timeline: %s\nsteady resync calls:\n%s\ndelete calls:\n%s\ndelete timeline: %s", label,
		createSummary, createTimeline, steadySummary, proxy.Summary(), timeline(start, proxy.Calls()))
}

// timeline tells where the time went: when the first and the last call
// arrived, the longest pause between two calls, and the slowest call.
func timeline(start time.Time, calls []openstackproxy.Call) string {
	if len(calls) == 0 {
		return "no calls"
	}
	gap, before := time.Duration(0), ""
	for i := 1; i < len(calls); i++ {
		if d := calls[i].Time.Sub(calls[i-1].Time); d > gap {
			gap, before = d, calls[i].Method+" "+calls[i].Path
		}
	}
	slowest := calls[0]
	for _, c := range calls {
		if c.Duration > slowest.Duration {
			slowest = c
		}
	}
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
	return fmt.Sprintf("first call at +%s, last at +%s, longest pause %s (before %s), slowest call %s %s (%s)",
		r(calls[0].Time.Sub(start)), r(calls[len(calls)-1].Time.Sub(start)), r(gap), before,
		slowest.Method, slowest.Path, r(slowest.Duration))
}

// TestClusterFigures measures, for docs/openstack/cluster.md, the
// OpenStack calls and the time from create to provisioned and from delete
// to gone of a managed cluster (network, router, security groups, no
// bastion) with a load balancer endpoint and with a floating-IP endpoint,
// and checks that a steady resync costs at most 2 calls and no write.
// The times are logged, not asserted.
func TestClusterFigures(t *testing.T) {
	RegisterTestingT(t)
	t.Run("load balancer", func(t *testing.T) {
		RegisterTestingT(t)
		clusterFigures(t, "load balancer endpoint", fx.prefix+"-figlb", managedClusterSpec())
	})
	t.Run("floating IP", func(t *testing.T) {
		RegisterTestingT(t)
		clusterFigures(t, "floating-IP endpoint", fx.prefix+"-figfip", fipClusterSpec(t))
	})
}
