package openstack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// clusterLeftovers lists what is left in OpenStack of a cluster: its
// network, router, security groups, load balancer, floating IPs, and
// servers/ports named after it.
func clusterLeftovers(t *testing.T, ns, name string) []string {
	t.Helper()
	ctx := context.Background()
	base := "k8s-clusterapi-cluster-" + ns + "-" + name
	var out []string
	np, err := networks.List(direct.network, networks.ListOpts{Name: base}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	nl, _ := networks.ExtractNetworks(np)
	for _, n := range nl {
		out = append(out, "network "+n.Name)
	}
	// A subnet goes with its network, unless it was made on another one.
	sp, err := subnets.List(direct.network, subnets.ListOpts{Name: base}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	sl, _ := subnets.ExtractSubnets(sp)
	for _, s := range sl {
		out = append(out, "subnet "+s.Name)
	}
	rp, err := routers.List(direct.network, routers.ListOpts{Name: base}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	rl, _ := routers.ExtractRouters(rp)
	for _, r := range rl {
		out = append(out, "router "+r.Name)
	}
	gp, err := groups.List(direct.network, groups.ListOpts{}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	gl, _ := groups.ExtractGroups(gp)
	for _, g := range gl {
		if strings.HasPrefix(g.Name, "k8s-cluster-"+ns+"-"+name+"-secgroup") {
			out = append(out, "security group "+g.Name)
		}
	}
	fp, err := floatingips.List(direct.network, floatingips.ListOpts{}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	fl, _ := floatingips.ExtractFloatingIPs(fp)
	for _, f := range fl {
		if strings.Contains(f.Description, "cluster "+ns+"/"+name+" ") {
			out = append(out, "floating IP "+f.FloatingIP+" ("+f.Description+")")
		}
	}
	if lbc := loadBalancerClient(t); lbc != nil {
		lp, err := loadbalancers.List(lbc, loadbalancers.ListOpts{Name: base + "-kubeapi"}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		ll, _ := loadbalancers.ExtractLoadBalancers(lp)
		for _, l := range ll {
			out = append(out, "load balancer "+l.Name+" ("+l.ProvisioningStatus+")")
		}
	}
	return append(out, leftovers(t, name)...)
}

func loadBalancerClient(t *testing.T) *gophercloud.ServiceClient {
	c, err := openstack.NewLoadBalancerV2(direct.compute.ProviderClient, cloud.EndpointOpts())
	if err != nil {
		return nil
	}
	return c
}

func expectNoClusterLeftovers(t *testing.T, ns, name string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		left := clusterLeftovers(t, ns, name)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("OpenStack resources left after the test: %v", left)
		}
		time.Sleep(time.Second)
	}
}

// clusterObjects makes a CAPI Cluster and its OpenStackCluster (owned by
// it, as CAPI core would set).
func clusterObjects(t *testing.T, ns, name string, spec infrav1.OpenStackClusterSpec) (*clusterv1.Cluster, *infrav1.OpenStackCluster) {
	t.Helper()
	ctx := context.Background()
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name}},
	}
	Expect(env.Client.Create(ctx, c)).To(Succeed())
	osc := &infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: c.UID}}},
		Spec: spec,
	}
	create(t, osc)
	return c, osc
}

// cpMachine makes a control-plane Machine and OpenStackMachine that take
// everything but flavor and image from the cluster.
func cpMachine(t *testing.T, ns, cluster, name string) *infrav1.OpenStackMachine {
	t.Helper()
	ctx := context.Background()
	bootstrap := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: ns},
		Data: map[string][]byte{"value": []byte("{}"), "format": []byte("ignition")}, Type: clusterv1.ClusterSecretType}
	Expect(env.Client.Create(ctx, bootstrap)).To(Succeed())
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			clusterv1.ClusterNameLabel: cluster, clusterv1.MachineControlPlaneLabel: ""}},
		Spec: clusterv1.MachineSpec{ClusterName: cluster, Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To(bootstrap.Name)},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: name}},
	}
	Expect(env.Client.Create(ctx, m)).To(Succeed())
	osm := &infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: m.UID}}},
		Spec: infrav1.OpenStackMachineSpec{
			Flavor: infrav1.FlavorParam{ID: ptr.To(fx.flavorID)},
			Image:  infrav1.ImageParam{ID: ptr.To(fx.imageID)},
		},
	}
	create(t, osm)
	return osm
}

func bastionSpec(flavor string) *infrav1.Bastion {
	return &infrav1.Bastion{Enabled: ptr.To(true), Spec: &infrav1.OpenStackMachineSpec{
		Flavor: infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To(flavor)}},
		Image:  infrav1.ImageParam{ID: ptr.To(fx.imageID)},
	}}
}

func managedClusterSpec() infrav1.OpenStackClusterSpec {
	return infrav1.OpenStackClusterSpec{
		IdentityRef:           identity(),
		ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.88.0.0/24", DNSNameservers: []string{"10.88.0.53"}}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		Tags:                  []string{"it-cluster"},
	}
}

func waitClusterReady(t *testing.T, osc *infrav1.OpenStackCluster) {
	t.Helper()
	Eventually(func(g Gomega) {
		get(t, osc)(g)
		g.Expect(capiconditions.IsTrue(osc, infrav1.ReadyCondition)).To(BeTrue(), "Ready: %s; Network: %s; Endpoint: %s; Bastion: %s",
			condition(osc, infrav1.ReadyCondition), condition(osc, infrav1.NetworkReadyCondition),
			condition(osc, infrav1.APIEndpointReadyCondition), condition(osc, infrav1.BastionReadyCondition))
		// CAPI's patch helper writes the conditions and the rest of the
		// status in separate requests: Ready can be read True before the
		// status fields of the same pass (network, external network,
		// initialization) land.
		g.Expect(osc.Status.Initialization).NotTo(BeNil(), "status.initialization")
		g.Expect(ptr.Deref(osc.Status.Initialization.Provisioned, false)).To(BeTrue(), "status.initialization.provisioned")
	}, 3*wait, 500*time.Millisecond).Should(Succeed())
}

// TestManagedClusterWithControlPlaneAndBastion: a managed-network cluster
// with a load balancer (or floating IP), 3 control-plane machines that
// join the endpoint, and a bastion; then a bastion flavor change (a new
// server, no leftovers), disabling the bastion, and deleting the cluster
// while its machines still exist.
func TestManagedClusterWithControlPlaneAndBastion(t *testing.T) {
	RegisterTestingT(t)
	startManager(t)
	ns := newNamespace(t)
	name := fx.prefix + "-mc"
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, name) })
	ctx := context.Background()

	spec := managedClusterSpec()
	spec.Bastion = bastionSpec("m1.tiny")
	proxy.Reset()
	start := time.Now()
	c, osc := clusterObjects(t, ns, name, spec)
	waitClusterReady(t, osc)
	t.Logf("cluster provisioned in %s with %d OpenStack calls\n%s", time.Since(start).Round(time.Millisecond),
		proxy.CountFunc(func(openstackproxy.Call) bool { return true }), proxy.Summary())
	c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	Expect(env.Client.Status().Update(ctx, c)).To(Succeed())

	// CAPI's patch helper writes the conditions first and the rest of the
	// status in a second request, so Ready can be read True just before
	// the bastion's floating IP, written in the same pass, lands.
	Eventually(func(g Gomega) {
		get(t, osc)(g)
		g.Expect(osc.Spec.ControlPlaneEndpoint).NotTo(BeNil())
		g.Expect(osc.Spec.ControlPlaneEndpoint.Host).NotTo(BeEmpty())
		g.Expect(osc.Spec.ControlPlaneEndpoint.Port).To(Equal(int32(6443)))
		g.Expect(osc.Status.Network).NotTo(BeNil())
		g.Expect(osc.Status.Network.Subnets).To(HaveLen(1))
		g.Expect(osc.Status.Router).NotTo(BeNil())
		g.Expect(osc.Status.ControlPlaneSecurityGroup).NotTo(BeNil())
		g.Expect(osc.Status.WorkerSecurityGroup).NotTo(BeNil())
		g.Expect(osc.Status.BastionSecurityGroup).NotTo(BeNil())
		g.Expect(osc.Status.FailureDomains).NotTo(BeEmpty())
		g.Expect(osc.Status.Bastion).NotTo(BeNil())
		g.Expect(osc.Status.Bastion.FloatingIP).NotTo(BeEmpty(), "bastion floating IP")
		g.Expect(ptr.Deref(osc.Status.Initialization.Provisioned, false)).To(BeTrue())
	}, 10*time.Second, 200*time.Millisecond).Should(Succeed())

	// The bastion's server reports the floating IP its cluster gave it, well
	// before a resync (10 min here) would read Nova again: the late write the
	// steady-state audit found (docs/reliability.md).
	Eventually(func(g Gomega) {
		oss := &infrav1alpha1.OpenStackServer{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: osc.Status.Bastion.Name}, oss)).To(Succeed())
		g.Expect(oss.Status.Addresses).To(ContainElement(clusterv1.MachineAddress{Type: clusterv1.MachineExternalIP, Address: osc.Status.Bastion.FloatingIP}))
	}, 20*time.Second, 200*time.Millisecond).Should(Succeed())

	// Steady state: a resync makes at most 2 OpenStack calls and no write.
	time.Sleep(4 * time.Second)
	get(t, osc)(NewWithT(t))
	rv := osc.ResourceVersion
	proxy.Reset()
	annotateToReconcile(t, osc)
	time.Sleep(3 * time.Second)
	calls := proxy.CountFunc(func(c openstackproxy.Call) bool { return c.Service != openstackproxy.ServiceIdentity })
	t.Logf("steady cluster resync: %d OpenStack calls\n%s", calls, proxy.Summary())
	Expect(calls).To(BeNumerically("<=", 2))
	get(t, osc)(NewWithT(t))
	Expect(resourceVersionsSince(rv, osc.ResourceVersion)).To(BeNumerically("<=", 1))

	// Three control-plane machines behind the endpoint.
	var machines []*infrav1.OpenStackMachine
	for _, n := range []string{"cp-0", "cp-1", "cp-2"} {
		machines = append(machines, cpMachine(t, ns, name, name+"-"+n))
	}
	for _, m := range machines {
		Eventually(func(g Gomega) {
			get(t, m)(g)
			g.Expect(capiconditions.IsTrue(m, infrav1.ReadyCondition)).To(BeTrue(), "machine %s: InstanceReady %s; APIServerIngressReady %s",
				m.Name, condition(m, infrav1.InstanceReadyCondition), condition(m, infrav1.APIServerIngressReadyCondition))
		}, 2*wait, 500*time.Millisecond).Should(Succeed())
	}
	if lb := osc.Status.APIServerLoadBalancer; lb != nil {
		lbc := loadBalancerClient(t)
		pp, err := pools.List(lbc, pools.ListOpts{LoadbalancerID: lb.ID}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		pl, _ := pools.ExtractPools(pp)
		Expect(pl).To(HaveLen(1))
		mp, err := pools.ListMembers(lbc, pl[0].ID, pools.ListMembersOpts{}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		ml, _ := pools.ExtractMembers(mp)
		Expect(ml).To(HaveLen(3), "load balancer members")
	}

	// Bastion flavor change: a new server, the old one gone.
	oldID := osc.Status.Bastion.ID
	Eventually(func() error {
		get(t, osc)(NewWithT(t))
		osc.Spec.Bastion.Spec.Flavor = infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.small")}}
		return env.Client.Update(ctx, osc)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	Eventually(func(g Gomega) {
		get(t, osc)(g)
		g.Expect(osc.Status.Bastion).NotTo(BeNil())
		g.Expect(osc.Status.Bastion.ID).NotTo(Or(BeEmpty(), Equal(oldID)))
		g.Expect(capiconditions.IsTrue(osc, infrav1.BastionReadyCondition)).To(BeTrue(), condition(osc, infrav1.BastionReadyCondition))
	}, 2*wait, 500*time.Millisecond).Should(Succeed())
	bastions := 0
	for _, l := range leftovers(t, name+"-bastion") {
		if strings.HasPrefix(l, "server ") {
			bastions++
		}
	}
	Expect(bastions).To(Equal(1), "bastion servers: %v", leftovers(t, name+"-bastion"))

	// Disable the bastion: server and floating IP go.
	Eventually(func() error {
		get(t, osc)(NewWithT(t))
		osc.Spec.Bastion.Enabled = ptr.To(false)
		return env.Client.Update(ctx, osc)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	Eventually(func(g Gomega) {
		get(t, osc)(g)
		g.Expect(condition(osc, infrav1.BastionReadyCondition)).To(HavePrefix("True/" + infrav1.NotRequiredReason))
		g.Expect(leftovers(t, name+"-bastion")).To(BeEmpty())
	}, 2*wait, 500*time.Millisecond).Should(Succeed())

	// Delete the cluster while the machines still exist: it waits for
	// them, then cleans up everything.
	Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	Eventually(func(g Gomega) {
		get(t, osc)(g)
		g.Expect(condition(osc, clusterv1.DeletingCondition)).To(ContainSubstring("OpenStackMachine"))
		g.Expect(capiconditions.IsFalse(osc, infrav1.ReadyCondition)).To(BeTrue())
	}, wait, 250*time.Millisecond).Should(Succeed())
	start = time.Now()
	proxy.Reset()
	for _, m := range machines {
		Expect(env.Client.Delete(ctx, m)).To(Succeed())
	}
	Eventually(func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(osc), osc) != nil
	}, 3*wait, 500*time.Millisecond).Should(BeTrue(), "the OpenStackCluster was not deleted: Deleting %s", condition(osc, clusterv1.DeletingCondition))
	t.Logf("cluster and 3 machines deleted in %s with %d OpenStack calls", time.Since(start).Round(time.Millisecond),
		proxy.CountFunc(func(openstackproxy.Call) bool { return true }))
	_ = infrav1alpha1.OpenStackServer{}
}
