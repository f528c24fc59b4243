package openstack

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
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
