package openstack

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackserver"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// floatingIPsWith lists the addresses of the cloud's floating IPs that
// match opts, asked directly (not through the proxy).
func floatingIPsWith(t *testing.T, opts floatingips.ListOpts) []string {
	t.Helper()
	pages, err := floatingips.List(direct.network, opts).AllPages(context.Background())
	Expect(err).NotTo(HaveOccurred())
	fl, err := floatingips.ExtractFloatingIPs(pages)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, f := range fl {
		out = append(out, f.FloatingIP)
	}
	return out
}

// TestFloatingIPPoolOnTheCloud: on the real cloud a pool hands out its
// pre-allocated floating IP first and a new, tagged one next; releasing the
// new one (reclaimPolicy Delete) deletes it, releasing the pre-allocated
// one keeps it; after the pool's deletion the OpenStack API shows no
// floating IP with the pool's tag, and the pre-allocated one still there.
func TestFloatingIPPoolOnTheCloud(t *testing.T) {
	RegisterTestingT(t)
	startManager(t)
	ns := newNamespace(t)
	ctx := context.Background()
	extID := externalNetworkID(t)

	pre, err := floatingips.Create(ctx, direct.network, floatingips.CreateOpts{FloatingNetworkID: extID, Description: fx.prefix + " pre-allocated"}).Extract()
	Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = floatingips.Delete(ctx, direct.network, pre.ID).ExtractErr() })

	pool := &infrav1alpha1.OpenStackFloatingIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: fx.prefix + "-pool", Namespace: ns},
		Spec: infrav1alpha1.OpenStackFloatingIPPoolSpec{
			IdentityRef:             identity(),
			ReclaimPolicy:           infrav1alpha1.ReclaimDelete,
			FloatingIPNetwork:       &infrav1.NetworkParam{ID: ptr.To(extID)},
			PreAllocatedFloatingIPs: []string{pre.FloatingIP},
		},
	}
	create(t, pool)
	tag := pool.FloatingIPTag()
	t.Cleanup(func() {
		Expect(floatingIPsWith(t, floatingips.ListOpts{Tags: tag})).To(BeEmpty(), "floating IPs with the pool's tag are left")
	})

	claim := func(name string) (*ipamv1.IPAddressClaim, *ipamv1.IPAddress) {
		c := &ipamv1.IPAddressClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: ipamv1.IPAddressClaimSpec{PoolRef: ipamv1.IPPoolReference{
				APIGroup: infrav1alpha1.GroupVersion.Group, Kind: "OpenStackFloatingIPPool", Name: pool.Name}},
		}
		create(t, c)
		a := &ipamv1.IPAddress{}
		Eventually(func(g Gomega) {
			get(t, c)(g)
			g.Expect(c.Status.AddressRef.Name).NotTo(BeEmpty(), "pool: %s", condition(pool, infrav1.ReadyCondition))
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Status.AddressRef.Name}, a)).To(Succeed())
		}, wait, 250*time.Millisecond).Should(Succeed())
		return c, a
	}
	release := func(c *ipamv1.IPAddressClaim, a *ipamv1.IPAddress) {
		Expect(env.Client.Delete(ctx, c)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(a), &ipamv1.IPAddress{}))
		}, wait, 250*time.Millisecond).Should(BeTrue(), "IPAddress %s was not released", a.Name)
	}

	first, addrFirst := claim("first")
	Expect(addrFirst.Spec.Address).To(Equal(pre.FloatingIP), "the pre-allocated floating IP goes first")
	second, addrSecond := claim("second")
	Expect(addrSecond.Spec.Address).NotTo(Equal(pre.FloatingIP))
	Expect(floatingIP(t, addrSecond.Spec.Address).Tags).To(ContainElement(tag))
	Expect(floatingIP(t, addrSecond.Spec.Address).FloatingNetworkID).To(Equal(extID))

	release(second, addrSecond)
	Expect(floatingIPsWith(t, floatingips.ListOpts{FloatingIP: addrSecond.Spec.Address})).To(BeEmpty(), "Delete: the released floating IP is deleted")
	release(first, addrFirst)
	Expect(floatingIPsWith(t, floatingips.ListOpts{FloatingIP: pre.FloatingIP})).To(HaveLen(1), "a pre-allocated floating IP is kept")

	deleteAndWait(t, pool)
	Expect(floatingIPsWith(t, floatingips.ListOpts{Tags: tag})).To(BeEmpty(), "no floating IP with the pool's tag outlives it")
	Expect(floatingIPsWith(t, floatingips.ListOpts{FloatingIP: pre.FloatingIP})).To(HaveLen(1))
}

// TestMachineFloatingIPFromPoolOnTheCloud: on the real cloud a machine
// naming a pool gets the pool's floating IP on its server's first port (read
// through the OpenStack API); a steady reconcile of the pool writes nothing
// and asks OpenStack nothing; deleting the machine releases the claim and,
// with reclaimPolicy Delete, the floating IP is gone from the API.
func TestMachineFloatingIPFromPoolOnTheCloud(t *testing.T) {
	RegisterTestingT(t)
	ns := newNamespace(t)
	name := fx.prefix + "-fipm"
	t.Cleanup(func() { expectNoLeftovers(t, name) })
	ctx := context.Background()
	extID := externalNetworkID(t)

	// The test network reaches the external one through a router of the
	// test's own, as a floating IP needs.
	r, err := routers.Create(ctx, direct.network, routers.CreateOpts{Name: name + "-router", GatewayInfo: &routers.GatewayInfo{NetworkID: extID}}).Extract()
	Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = routers.Delete(ctx, direct.network, r.ID).ExtractErr() })
	_, err = routers.AddInterface(ctx, direct.network, r.ID, routers.AddInterfaceOpts{SubnetID: fx.subnetID}).Extract()
	Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		_, _ = routers.RemoveInterface(ctx, direct.network, r.ID, routers.RemoveInterfaceOpts{SubnetID: fx.subnetID}).Extract()
	})

	startManager(t)
	pool := &infrav1alpha1.OpenStackFloatingIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-pool", Namespace: ns},
		Spec: infrav1alpha1.OpenStackFloatingIPPoolSpec{IdentityRef: identity(), ReclaimPolicy: infrav1alpha1.ReclaimDelete,
			FloatingIPNetwork: &infrav1.NetworkParam{ID: ptr.To(extID)}},
	}
	create(t, pool)
	tag := pool.FloatingIPTag()
	t.Cleanup(func() {
		Expect(floatingIPsWith(t, floatingips.ListOpts{Tags: tag})).To(BeEmpty(), "floating IPs with the pool's tag are left")
	})

	spec := machineSpec()
	spec.FloatingIPPoolRef = &corev1.TypedLocalObjectReference{APIGroup: ptr.To(infrav1alpha1.GroupVersion.Group), Kind: "OpenStackFloatingIPPool", Name: pool.Name}
	_, _, osm := machineObjects(t, ns, name, spec, true)
	waitMachineReady(t, osm)
	oss := &infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	Eventually(func(g Gomega) {
		get(t, oss)(g)
		g.Expect(condition(oss, infrav1.FloatingAddressFromPoolReadyCondition)).To(HavePrefix("True/"))
	}, wait, 250*time.Millisecond).Should(Succeed())
	claim := &ipamv1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Name: openstackserver.ClaimName(name), Namespace: ns}}
	get(t, claim)(NewWithT(t))
	addr := &ipamv1.IPAddress{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim.Status.AddressRef.Name}, addr)).To(Succeed())
	fip := floatingIP(t, addr.Spec.Address)
	Expect(fip.PortID).To(Equal(oss.Status.Resources.Ports[0].ID), "the floating IP is on the server's first port")
	Expect(fip.Tags).To(ContainElement(tag))

	// Steady state: a poke of the pool is one pass that writes nothing
	// and makes no OpenStack call.
	time.Sleep(3 * time.Second) // let the provisioning passes settle
	get(t, pool)(NewWithT(t))
	poolRV := pool.ResourceVersion
	proxy.Reset()
	annotateToReconcile(t, pool)
	time.Sleep(3 * time.Second)
	get(t, pool)(NewWithT(t))
	Expect(resourceVersionsSince(poolRV, pool.ResourceVersion)).To(BeNumerically("<=", 1), "OpenStackFloatingIPPool written during a steady reconcile")
	Expect(proxy.CountFunc(func(c openstackproxy.Call) bool { return c.Service != openstackproxy.ServiceIdentity })).To(BeZero(), proxy.Summary())

	deleteAndWait(t, osm)
	Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(addr), &ipamv1.IPAddress{}))
	}, wait, 250*time.Millisecond).Should(BeTrue(), "the machine's deletion releases the address")
	Expect(floatingIPsWith(t, floatingips.ListOpts{FloatingIP: addr.Spec.Address})).To(BeEmpty(), "Delete: the released floating IP is deleted")
	deleteAndWait(t, pool)
}
