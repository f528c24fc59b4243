package controllers_test

// Self-healing of an OpenStackCluster whose resources change out of band,
// against the fake cloud: what is gone is recreated (when the provider
// made it) or reported (when the user gave it), on the condition of the
// step it belongs to, and the controller settles after a handful of
// writes. A reconcile must never undo the previous one: each status write
// triggers a pass, so two passes that disagree write for ever (hundreds of
// stored versions in seconds, with Ready flapping).

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// settleWindow is how long a cluster is watched after an out-of-band
// change; maxWrites is the most stored versions it may cause in that
// time (the poke, the pass that reports or repairs, the passes of a
// repair's steps). A pass that undoes the previous one makes hundreds.
const (
	settleWindow = 4 * time.Second
	maxWrites    = 8
)

// clusterObjects creates a Cluster and its OpenStackCluster with spec,
// owned by it as CAPI core would make them (CAPI core does not run here).
func (e *cloudEnv) clusterObjects(name string, spec infrav1.OpenStackClusterSpec) *infrav1.OpenStackCluster {
	e.t.Helper()
	c := labelled(&clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name}},
	})
	e.create(c)
	spec.IdentityRef = identity()
	osc := labelled(&infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: c.UID}}},
		Spec: spec,
	})
	e.createDeletedOnCleanup(osc)
	return osc
}

// openstack is an OpenStack client of the test's own, for changes made
// out of band.
func (e *cloudEnv) openstack() scope.Scope {
	e.t.Helper()
	c, err := clients.NewFactory(clients.Options{}).For(context.Background(), clients.Identity{
		Key: "test/out-of-band", Version: "1", CloudsYAML: e.cloud.Clouds("openstack"), CloudName: "openstack"})
	if err != nil {
		e.t.Fatal(err)
	}
	return scope.Scope{Clients: c, Log: logr.Discard()}
}

func waitClusterReady(g Gomega, osc *infrav1.OpenStackCluster) {
	g.Eventually(func(g Gomega) {
		get(g, osc)
		g.Expect(cond(osc, infrav1.ReadyCondition)).To(HavePrefix("True/"))
		g.Expect(osc.Status.Initialization).NotTo(BeNil())
		g.Expect(ptr.Deref(osc.Status.Initialization.Provisioned, false)).To(BeTrue())
	}, wait, tick).Should(Succeed())
}

// versions counts the stored versions of one object from now on, and
// keeps each version's conditions. Versions the test itself wrote (a
// poke) can be ignored: they carry the conditions from before the change.
type versions struct {
	mu      sync.Mutex
	rvs     []string
	conds   [][]metav1.Condition
	ignored map[string]bool
}

// ignore leaves the version rv out of saw: the test wrote it.
func (v *versions) ignore(rv string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ignored == nil {
		v.ignored = map[string]bool{}
	}
	v.ignored[rv] = true
}

func watchVersions(t *testing.T, obj client.Object, list client.ObjectList) *versions {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), list, client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{"metadata.name": obj.GetName()})
	if err != nil {
		t.Fatal(err)
	}
	v := &versions{}
	done := make(chan struct{})
	first := true
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			if first && ev.Type == watch.Added {
				first = false // the version that exists when the watch starts
				continue
			}
			o, ok := ev.Object.(interface {
				capiconditions.Getter
				GetResourceVersion() string
			})
			if !ok {
				continue
			}
			v.mu.Lock()
			v.rvs = append(v.rvs, o.GetResourceVersion())
			v.conds = append(v.conds, o.GetConditions())
			v.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return v
}

func (v *versions) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.conds)
}

// saw reports whether a version had condition t with this status.
func (v *versions) saw(t string, status metav1.ConditionStatus) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, cs := range v.conds {
		if v.ignored[v.rvs[i]] {
			continue
		}
		for _, c := range cs {
			if c.Type == t && c.Status == status {
				return true
			}
		}
	}
	return false
}

// poke makes the controller look at the cluster (as any event or the
// periodic resync would). The version it writes is the test's, so v
// ignores it.
func poke(g Gomega, v *versions, osc *infrav1.OpenStackCluster, value string) {
	update(g, osc, func() {
		if osc.Annotations == nil {
			osc.Annotations = map[string]string{}
		}
		osc.Annotations["test.ocp-capi.io/poke"] = value
	})
	v.ignore(osc.ResourceVersion)
}

// settles watches the cluster for settleWindow: it must make at most
// maxWrites versions and few OpenStack reads.
func (e *cloudEnv) settles(g Gomega, v *versions, reads0 int) {
	e.t.Helper()
	time.Sleep(settleWindow)
	gets := 0
	for _, r := range e.cloud.Requests()[reads0:] {
		if r.Method == "GET" {
			gets++
		}
	}
	e.t.Logf("after the change: %d stored versions and %d OpenStack GETs in %s", v.count(), gets, settleWindow)
	g.Expect(v.count()).To(BeNumerically("<=", maxWrites), "the cluster did not settle: %d stored versions in %s", v.count(), settleWindow)
	g.Expect(gets).To(BeNumerically("<=", 40), "the cluster did not settle: %d OpenStack GETs in %s", gets, settleWindow)
}

// TestClusterNetworkGoneIsRecreated: the provider's own network deleted
// out of band is created again (with the router's interface), and the
// cluster is Ready again after a handful of writes.
func TestClusterNetworkGoneIsRecreated(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	e.cloud.HideService("load-balancer")
	e.cloud.AddExternalNetwork("public", "172.24.4.0/24")
	osc := e.clusterObjects("net-gone", infrav1.OpenStackClusterSpec{
		ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
	})
	waitClusterReady(g, osc)
	old := osc.Status.Network.DeepCopy()
	g.Expect(osc.Status.Router).NotTo(BeNil())

	// Out of band: detach the router and delete the network.
	os := e.openstack()
	ctx := context.Background()
	g.Expect(os.Clients.NetworkInfra.RemoveRouterInterface(ctx, osc.Status.Router.ID, old.Subnets[0].ID)).To(Succeed())
	g.Expect(os.Clients.NetworkInfra.DeleteNetwork(ctx, old.ID)).To(Succeed())

	v := watchVersions(t, osc, &infrav1.OpenStackClusterList{})
	reads0 := len(e.cloud.Requests())
	poke(g, v, osc, "network deleted")
	e.settles(g, v, reads0)

	get(g, osc)
	g.Expect(cond(osc, infrav1.NetworkReadyCondition)).To(HavePrefix("True/"))
	g.Expect(cond(osc, infrav1.ReadyCondition)).To(HavePrefix("True/"))
	g.Expect(osc.Status.Network.ID).NotTo(Equal(old.ID), "the network was not recreated")
	g.Expect(e.cloud.Names(fakeopenstack.Networks)).To(ConsistOf("machines", "public", "k8s-clusterapi-cluster-"+e.ns+"-net-gone"))
	var attached bool
	for _, p := range e.cloud.Objects(fakeopenstack.Ports) {
		if p["device_id"] == osc.Status.Router.ID && p["network_id"] == osc.Status.Network.ID {
			attached = true
		}
	}
	g.Expect(attached).To(BeTrue(), "the router has no interface on the recreated network")
}

// TestClusterUserNetworkGoneStaysFalse: a network the user gave, deleted
// out of band, is reported (NetworkReady False/NotFound, Ready False) and
// stays so; it is never recreated, and the controller does not flap.
func TestClusterUserNetworkGoneStaysFalse(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	e.cloud.HideService("load-balancer")
	osc := e.clusterObjects("user-net-gone", infrav1.OpenStackClusterSpec{
		Network:   &infrav1.NetworkParam{ID: ptr.To(e.netID)},
		APIServer: &infrav1.APIServer{FixedIP: ptr.To("10.0.0.5")},
	})
	waitClusterReady(g, osc)

	g.Expect(e.openstack().Clients.NetworkInfra.DeleteNetwork(context.Background(), e.netID)).To(Succeed())
	v := watchVersions(t, osc, &infrav1.OpenStackClusterList{})
	reads0 := len(e.cloud.Requests())
	poke(g, v, osc, "network deleted")
	e.settles(g, v, reads0)

	get(g, osc)
	g.Expect(cond(osc, infrav1.NetworkReadyCondition)).To(HavePrefix("False/"+infrav1.NotFoundReason), "NetworkReady")
	g.Expect(cond(osc, infrav1.NetworkReadyCondition)).To(ContainSubstring("no longer exists"))
	g.Expect(cond(osc, infrav1.ReadyCondition)).To(HavePrefix("False/"))
	g.Expect(v.saw(infrav1.NetworkReadyCondition, metav1.ConditionTrue)).To(BeFalse(), "NetworkReady went back to True on a missing network")
	g.Expect(e.cloud.Names(fakeopenstack.Networks)).To(BeEmpty(), "a network the user gave was recreated")
}

// TestClusterLoadBalancerErrorAndGone: a load balancer in ERROR is
// reported on APIEndpointReady (the network is fine) without flapping;
// once deleted, it is recreated with its listener, pool and monitor, and
// the floating IP moves to it.
func TestClusterLoadBalancerErrorAndGone(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	e.cloud.SetLoadBalancerSteps(0) // Octavia applies each change by the next request
	e.cloud.AddExternalNetwork("public", "172.24.4.0/24")
	osc := e.clusterObjects("lb", infrav1.OpenStackClusterSpec{
		ManagedSubnets: []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
	})
	waitClusterReady(g, osc)
	lb := osc.Status.APIServerLoadBalancer.DeepCopy()
	g.Expect(lb).NotTo(BeNil())
	endpoint := *osc.Spec.ControlPlaneEndpoint

	e.cloud.Set(fakeopenstack.LoadBalancers, lb.ID, "provisioning_status", "ERROR")
	v := watchVersions(t, osc, &infrav1.OpenStackClusterList{})
	reads0 := len(e.cloud.Requests())
	poke(g, v, osc, "load balancer in ERROR")
	e.settles(g, v, reads0)

	get(g, osc)
	g.Expect(cond(osc, infrav1.APIEndpointReadyCondition)).To(HavePrefix("False/"), "APIEndpointReady")
	g.Expect(cond(osc, infrav1.APIEndpointReadyCondition)).To(ContainSubstring("ERROR"))
	g.Expect(cond(osc, infrav1.NetworkReadyCondition)).To(HavePrefix("True/"), "NetworkReady")
	g.Expect(v.saw(infrav1.NetworkReadyCondition, metav1.ConditionFalse)).To(BeFalse(), "the load balancer's ERROR was reported on NetworkReady")
	g.Expect(cond(osc, infrav1.ReadyCondition)).To(HavePrefix("False/"))

	// The user deletes it, as the message says.
	g.Expect(e.openstack().Clients.LoadBalancer.DeleteLoadBalancer(context.Background(), lb.ID)).To(Succeed())
	poke(g, v, osc, "load balancer deleted")
	waitClusterReady(g, osc)
	g.Expect(osc.Status.APIServerLoadBalancer.ID).NotTo(Equal(lb.ID))
	g.Expect(*osc.Spec.ControlPlaneEndpoint).To(Equal(endpoint))
	g.Expect(e.cloud.Len(fakeopenstack.LoadBalancers)).To(Equal(1))
	g.Expect(e.cloud.Len(fakeopenstack.Listeners)).To(Equal(1))
	g.Expect(e.cloud.Len(fakeopenstack.HealthMonitors)).To(Equal(1))
	fips := e.cloud.Objects(fakeopenstack.FloatingIPs)
	g.Expect(fips).To(HaveLen(1))
	g.Expect(fips[0]["port_id"]).To(Equal(e.cloud.Object(fakeopenstack.LoadBalancers, osc.Status.APIServerLoadBalancer.ID)["vip_port_id"]))

	// Settled again: nothing more is written.
	v2 := watchVersions(t, osc, &infrav1.OpenStackClusterList{})
	g.Consistently(v2.count, 2*time.Second, tick).Should(BeZero())
}

// TestClusterDeletionWithoutOptionalAPIs: a cluster that uses no floating
// IP, no router and no load balancer is deleted on a cloud whose Neutron
// has no layer-3 extension (routers and floating IPs answer 404) and whose
// load-balancer endpoint answers 404, without calling those APIs.
func TestClusterDeletionWithoutOptionalAPIs(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	e.cloud.SetExtensions("port-security", "security-group", "standard-attr-tag", "tag-creation")
	e.cloud.DisableService("load-balancer")
	osc := e.clusterObjects("no-l3", infrav1.OpenStackClusterSpec{
		Network: &infrav1.NetworkParam{ID: ptr.To(e.netID)},
		APIServer: &infrav1.APIServer{FixedIP: ptr.To("10.0.0.5"),
			ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
	})
	waitClusterReady(g, osc)

	e.cloud.ResetRequests()
	e.deleteAndWait(osc)
	for _, r := range e.cloud.Requests() {
		g.Expect(r.Path).NotTo(ContainSubstring("/floatingips"), "deletion called the floating-IP API: %v", e.cloud.Calls())
		g.Expect(r.Path).NotTo(ContainSubstring("/lbaas/"), "deletion called the load-balancer API: %v", e.cloud.Calls())
	}
	g.Expect(e.cloud.Names(fakeopenstack.SecurityGroups)).To(Equal([]string{"default"}))
	g.Expect(e.cloud.Names(fakeopenstack.Networks)).To(Equal([]string{"machines"}), "the user's network is left alone")
}
