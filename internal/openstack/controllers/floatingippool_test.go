package controllers_test

import (
	"context"
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackserver"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

var poolConditions = []string{infrav1.ReadyCondition, infrav1alpha1.FloatingIPNetworkReadyCondition,
	infrav1alpha1.ClaimsFulfilledCondition, clusterv1.DeletingCondition, clusterv1.PausedCondition}

// pool makes an OpenStackFloatingIPPool on the fake's external network.
func (e *cloudEnv) pool(name string, policy infrav1alpha1.ReclaimPolicy, mutate ...func(*infrav1alpha1.OpenStackFloatingIPPoolSpec)) *infrav1alpha1.OpenStackFloatingIPPool {
	p := labelled(&infrav1alpha1.OpenStackFloatingIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec:       infrav1alpha1.OpenStackFloatingIPPoolSpec{IdentityRef: identity(), ReclaimPolicy: policy},
	})
	for _, m := range mutate {
		m(&p.Spec)
	}
	e.create(p)
	return p
}

func (e *cloudEnv) claim(name, pool string) *ipamv1.IPAddressClaim {
	c := labelled(&ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: ipamv1.IPAddressClaimSpec{PoolRef: ipamv1.IPPoolReference{
			APIGroup: infrav1alpha1.GroupVersion.Group, Kind: "OpenStackFloatingIPPool", Name: pool}},
	})
	e.create(c)
	return c
}

// address waits for the claim's IPAddress and returns it.
func (e *cloudEnv) address(g Gomega, claim *ipamv1.IPAddressClaim) *ipamv1.IPAddress {
	a := &ipamv1.IPAddress{}
	g.Eventually(func(g Gomega) {
		get(g, claim)
		g.Expect(claim.Status.AddressRef.Name).NotTo(BeEmpty())
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: claim.Status.AddressRef.Name}, a)).To(Succeed())
	}, wait, tick).Should(Succeed())
	return a
}

// release deletes the claim and, playing the garbage collector (envtest
// runs none), nothing else: the pool drops the orphaned IPAddress itself.
func (e *cloudEnv) release(g Gomega, claim *ipamv1.IPAddressClaim, addr *ipamv1.IPAddress) {
	g.Expect(env.Client.Delete(context.Background(), claim)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(addr), &ipamv1.IPAddress{}))
	}, wait, tick).Should(BeTrue(), "IPAddress %s was not released", addr.Name)
}

// fips are the addresses of the floating IPs the fake holds, sorted.
func (e *cloudEnv) fips() []string {
	var out []string
	for _, f := range e.cloud.Objects(fakeopenstack.FloatingIPs) {
		out = append(out, f["floating_ip_address"].(string))
	}
	slices.Sort(out)
	return out
}

func waitPool(g Gomega, p *infrav1alpha1.OpenStackFloatingIPPool, f func(g Gomega)) {
	g.Eventually(func(g Gomega) {
		get(g, p)
		f(g)
	}, wait, tick).Should(Succeed())
}

// TestFloatingIPPoolDelete: a pre-allocated floating IP is handed out
// first, a new one (tagged with the pool's tag) next; with reclaimPolicy
// Delete a released new one is deleted, a released pre-allocated one kept;
// the pool's deletion leaves only the pre-allocated one in OpenStack.
func TestFloatingIPPoolDelete(t *testing.T) {
	g := NewWithT(t)
	e := newCloudEnv(t)
	extID, _ := e.cloud.AddExternalNetwork("public", "172.24.4.0/24")
	pre, err := e.openstack().Clients.NetworkInfra.CreateFloatingIP(context.Background(), floatingips.CreateOpts{FloatingNetworkID: extID})
	g.Expect(err).NotTo(HaveOccurred())

	p := e.pool("delete", infrav1alpha1.ReclaimDelete, func(s *infrav1alpha1.OpenStackFloatingIPPoolSpec) {
		s.PreAllocatedFloatingIPs = []string{pre.FloatingIP}
	})
	a := e.claim("a", p.Name)
	addrA := e.address(g, a)
	g.Expect(addrA.Spec.Address).To(Equal(pre.FloatingIP))
	g.Expect(ptr.Deref(addrA.Spec.Prefix, 0)).To(BeEquivalentTo(32))
	g.Expect(addrA.Spec.PoolRef).To(Equal(ipamv1.IPPoolReference{APIGroup: infrav1alpha1.GroupVersion.Group, Kind: "OpenStackFloatingIPPool", Name: p.Name}))
	g.Expect(addrA.Spec.ClaimRef.Name).To(Equal("a"))
	g.Expect(addrA.Finalizers).To(ContainElement(infrav1alpha1.DeleteFloatingIPFinalizer))
	g.Expect(addrA.OwnerReferences).To(ContainElement(HaveField("UID", a.UID)))

	b := e.claim("b", p.Name)
	addrB := e.address(g, b)
	g.Expect(addrB.Spec.Address).NotTo(Equal(pre.FloatingIP))
	g.Expect(e.fips()).To(ConsistOf(pre.FloatingIP, addrB.Spec.Address))
	for _, f := range e.cloud.Objects(fakeopenstack.FloatingIPs) {
		if f["floating_ip_address"] == addrB.Spec.Address {
			g.Expect(f["tags"]).To(ConsistOf(infrav1alpha1.FloatingIPPoolTagPrefix + p.Name))
		}
	}
	waitPool(g, p, func(g Gomega) {
		g.Expect(p.Status.ClaimedIPs).To(ConsistOf(pre.FloatingIP, addrB.Spec.Address))
		g.Expect(p.Status.AvailableIPs).To(BeEmpty())
		g.Expect(p.Status.FloatingIPNetwork).NotTo(BeNil())
		g.Expect(p.Status.FloatingIPNetwork.ID).To(Equal(extID))
		for _, c := range poolConditions {
			g.Expect(cond(p, c)).NotTo(Equal("<none>"), c)
		}
		g.Expect(cond(p, infrav1.ReadyCondition)).To(HavePrefix("True/"))
	})

	e.release(g, b, addrB)
	g.Expect(e.fips()).To(Equal([]string{pre.FloatingIP}), "the released floating IP the pool created is deleted")
	e.release(g, a, addrA)
	g.Expect(e.fips()).To(Equal([]string{pre.FloatingIP}), "a pre-allocated floating IP is never deleted")
	waitPool(g, p, func(g Gomega) {
		g.Expect(p.Status.ClaimedIPs).To(BeEmpty())
		g.Expect(p.Status.AvailableIPs).To(Equal([]string{pre.FloatingIP}))
	})
	e.deleteAndWait(p)
	g.Expect(e.fips()).To(Equal([]string{pre.FloatingIP}))
}

// TestFloatingIPPoolRetain: with reclaimPolicy Retain a released floating
// IP goes back to the pool and is the next claim's; deleting the pool
// deletes it. Every stored version of the pool with conditions has all it
// owns, each with a reason.
func TestFloatingIPPoolRetain(t *testing.T) {
	g := NewWithT(t)
	e := newCloudEnv(t)
	e.cloud.AddExternalNetwork("public", "172.24.4.0/24")
	h := watchHistory(t, e.ns, &infrav1alpha1.OpenStackFloatingIPPoolList{})
	p := e.pool("retain", infrav1alpha1.ReclaimRetain)
	t.Cleanup(func() {
		versions := h.of(p.Name)
		first := slices.IndexFunc(versions, func(v []metav1.Condition) bool { return len(v) > 0 })
		if first < 0 {
			t.Error("no stored version of the pool has conditions")
			return
		}
		for i, v := range versions[first:] {
			if !NewWithT(t).Expect(conditionTypes(v)).To(ContainElements(poolConditions), "pool version %d", first+i) {
				return
			}
			for _, c := range v {
				if c.Reason == "" {
					t.Errorf("pool version %d: condition %s has no reason", first+i, c.Type)
				}
			}
		}
	})
	c := e.claim("c", p.Name)
	addrC := e.address(g, c)
	e.release(g, c, addrC)
	g.Expect(e.fips()).To(Equal([]string{addrC.Spec.Address}), "Retain keeps the floating IP")
	waitPool(g, p, func(g Gomega) { g.Expect(p.Status.AvailableIPs).To(Equal([]string{addrC.Spec.Address})) })

	d := e.claim("d", p.Name)
	addrD := e.address(g, d)
	g.Expect(addrD.Spec.Address).To(Equal(addrC.Spec.Address), "the kept floating IP is handed out again")
	g.Expect(e.fips()).To(HaveLen(1))
	e.release(g, d, addrD)
	e.deleteAndWait(p)
	g.Expect(e.fips()).To(BeEmpty(), "the pool's deletion deletes the floating IPs it created")
}

// TestFloatingIPPoolMaxIPs: beyond maxIPs a claim waits with
// ClaimsFulfilled False/MaxIPsReached and nothing more is created in
// OpenStack; a released address lets it through.
func TestFloatingIPPoolMaxIPs(t *testing.T) {
	g := NewWithT(t)
	e := newCloudEnv(t)
	e.cloud.AddExternalNetwork("public", "172.24.4.0/24")
	p := e.pool("max", infrav1alpha1.ReclaimDelete, func(s *infrav1alpha1.OpenStackFloatingIPPoolSpec) { s.MaxIPs = ptr.To(1) })
	first := e.claim("first", p.Name)
	addrFirst := e.address(g, first)
	second := e.claim("second", p.Name)
	waitPool(g, p, func(g Gomega) {
		g.Expect(cond(p, infrav1alpha1.ClaimsFulfilledCondition)).To(HavePrefix("False/" + infrav1alpha1.MaxIPsReachedReason))
		g.Expect(cond(p, infrav1.ReadyCondition)).To(HavePrefix("False/"))
	})
	get(g, second)
	g.Expect(second.Status.AddressRef.Name).To(BeEmpty())
	g.Expect(e.fips()).To(Equal([]string{addrFirst.Spec.Address}), "no floating IP beyond maxIPs")
	g.Expect(e.cloud.Hits("POST", "/network/v2.0/floatingips")).To(Equal(1))

	e.release(g, first, addrFirst)
	addrSecond := e.address(g, second)
	g.Expect(e.fips()).To(Equal([]string{addrSecond.Spec.Address}))
	waitPool(g, p, func(g Gomega) { g.Expect(cond(p, infrav1alpha1.ClaimsFulfilledCondition)).To(HavePrefix("True/")) })
	e.release(g, second, addrSecond)
	e.deleteAndWait(p)
	g.Expect(e.fips()).To(BeEmpty())
}

// TestFloatingIPPoolDeletionWaitsForClaims: a pool being deleted keeps its
// finalizer, and the floating IP, while an IPAddress of it exists.
func TestFloatingIPPoolDeletionWaitsForClaims(t *testing.T) {
	g := NewWithT(t)
	e := newCloudEnv(t)
	e.cloud.AddExternalNetwork("public", "172.24.4.0/24")
	p := e.pool("busy", infrav1alpha1.ReclaimRetain)
	c := e.claim("held", p.Name)
	addr := e.address(g, c)
	g.Expect(env.Client.Delete(context.Background(), p)).To(Succeed())
	waitPool(g, p, func(g Gomega) {
		g.Expect(cond(p, clusterv1.DeletingCondition)).To(HavePrefix("True/" + infrav1alpha1.WaitingForIPAddressesReason))
		g.Expect(cond(p, infrav1.ReadyCondition)).To(HavePrefix("False/"))
	})
	g.Expect(e.fips()).To(Equal([]string{addr.Spec.Address}))
	e.release(g, c, addr)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), p))
	}, wait, tick).Should(BeTrue())
	g.Expect(e.fips()).To(BeEmpty(), "no floating IP outlives its pool")
}

// TestFloatingIPPoolPaused: a paused pool says so (Paused True, CAPI's
// annotation); unpaused, it serves the claim made meanwhile.
func TestFloatingIPPoolPaused(t *testing.T) {
	g := NewWithT(t)
	e := newCloudEnv(t)
	e.cloud.AddExternalNetwork("public", "172.24.4.0/24")
	p := e.pool("paused", infrav1alpha1.ReclaimDelete)
	waitPool(g, p, func(g Gomega) { g.Expect(cond(p, clusterv1.PausedCondition)).To(HavePrefix("False/")) })
	update(g, p, func() { p.Annotations = map[string]string{clusterv1.PausedAnnotation: ""} })
	waitPool(g, p, func(g Gomega) { g.Expect(cond(p, clusterv1.PausedCondition)).To(HavePrefix("True/")) })
	c := e.claim("waits", p.Name)
	update(g, p, func() { delete(p.Annotations, clusterv1.PausedAnnotation) })
	addr := e.address(g, c)
	e.release(g, c, addr)
	e.deleteAndWait(p)
	g.Expect(e.fips()).To(BeEmpty())
}

// TestMachineFloatingIPFromPool: a machine with floatingIPPoolRef waits
// (FloatingAddressFromPoolReady False/WaitingForIPAddress, nothing made in
// OpenStack) while its pool cannot serve it, then gets the pool's floating
// IP on its server's first port; its deletion releases the claim and the
// pool deletes (Delete) or keeps (Retain) the floating IP.
func TestMachineFloatingIPFromPool(t *testing.T) {
	for _, policy := range []infrav1alpha1.ReclaimPolicy{infrav1alpha1.ReclaimDelete, infrav1alpha1.ReclaimRetain} {
		t.Run(string(policy), func(t *testing.T) {
			g := NewWithT(t)
			e := newCloudEnv(t)
			extID, _ := e.cloud.AddExternalNetwork("public", "172.24.4.0/24")
			neutron := e.openstack().Clients.NetworkInfra
			router, err := neutron.CreateRouter(context.Background(), routers.CreateOpts{Name: "r", GatewayInfo: &routers.GatewayInfo{NetworkID: extID}})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(neutron.AddRouterInterface(context.Background(), router.ID, e.subnetID)).To(Succeed())

			p := e.pool("machines", policy, func(s *infrav1alpha1.OpenStackFloatingIPPoolSpec) { s.MaxIPs = ptr.To(0) })
			spec := e.machineSpec()
			spec.FloatingIPPoolRef = &corev1.TypedLocalObjectReference{APIGroup: ptr.To(infrav1alpha1.GroupVersion.Group), Kind: "OpenStackFloatingIPPool", Name: p.Name}
			_, osm := e.machineObjects("fip", spec, machineOpts{})

			oss := &infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Name: osm.Name, Namespace: e.ns}}
			g.Eventually(func(g Gomega) {
				get(g, oss)
				g.Expect(cond(oss, infrav1.FloatingAddressFromPoolReadyCondition)).To(HavePrefix("False/" + infrav1.WaitingForIPAddressReason))
			}, wait, tick).Should(Succeed())
			g.Expect(e.cloud.Len(fakeopenstack.Servers)).To(BeZero(), "nothing is made while the address is awaited")
			g.Expect(e.cloud.Hits("POST", "/network/v2.0/ports")).To(BeZero())
			claim := &ipamv1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Name: openstackserver.ClaimName(oss.Name), Namespace: e.ns}}
			get(g, claim)
			g.Expect(claim.OwnerReferences).To(ContainElement(HaveField("UID", oss.UID)))
			g.Expect(claim.Finalizers).To(ContainElement(infrav1alpha1.IPClaimFinalizer))
			g.Expect(claim.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, osm.Name))

			update(g, p, func() { p.Spec.MaxIPs = nil })
			waitMachineReady(g, osm)
			addr := e.address(g, claim)
			get(g, oss)
			g.Expect(cond(oss, infrav1.FloatingAddressFromPoolReadyCondition)).To(HavePrefix("True/"))
			port := oss.Status.Resources.Ports[0].ID
			fips := e.cloud.Objects(fakeopenstack.FloatingIPs)
			g.Expect(fips).To(HaveLen(1))
			g.Expect(fips[0]["floating_ip_address"]).To(Equal(addr.Spec.Address))
			g.Expect(fips[0]["port_id"]).To(Equal(port), "the floating IP is on the server's first port")

			e.deleteAndWait(osm)
			g.Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(addr), &ipamv1.IPAddress{}))
			}, wait, tick).Should(BeTrue(), "the machine's deletion releases the address")
			g.Expect(apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(claim), claim))).To(BeTrue())
			if policy == infrav1alpha1.ReclaimDelete {
				g.Expect(e.fips()).To(BeEmpty())
			} else {
				g.Expect(e.fips()).To(Equal([]string{addr.Spec.Address}))
				waitPool(g, p, func(g Gomega) { g.Expect(p.Status.AvailableIPs).To(Equal([]string{addr.Spec.Address})) })
			}
			e.deleteAndWait(p)
			g.Expect(e.fips()).To(BeEmpty(), "no floating IP outlives its pool")
		})
	}
}
