package openstack

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

const wait = 90 * time.Second

func identity() infrav1.OpenStackIdentityReference {
	return infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: "cloud", CloudName: testCloud}
}

// basicServer is an OpenStackServer with one port on the test network.
func basicServer(ns, name string) *infrav1alpha1.OpenStackServer {
	return &infrav1alpha1.OpenStackServer{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: infrav1alpha1.OpenStackServerSpec{
			IdentityRef: identity(),
			FlavorID:    ptr.To(fx.flavorID),
			Image:       infrav1.ImageParam{ID: ptr.To(fx.imageID)},
			Ports:       []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(fx.networkID)}}},
		},
	}
}

func get(t *testing.T, obj client.Object) func(Gomega) {
	return func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	}
}

func condition(obj capiconditions.Getter, t string) string {
	c := capiconditions.Get(obj, t)
	if c == nil {
		return "<none>"
	}
	return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
}

func waitReady(t *testing.T, oss *infrav1alpha1.OpenStackServer) {
	t.Helper()
	Eventually(func(g Gomega) {
		get(t, oss)(g)
		g.Expect(capiconditions.IsTrue(oss, infrav1.ReadyCondition)).To(BeTrue(), "Ready: %s; InstanceReady: %s", condition(oss, infrav1.ReadyCondition), condition(oss, infrav1.InstanceReadyCondition))
	}, wait, 250*time.Millisecond).Should(Succeed())
}

func deleteAndWait(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
	}, wait, 250*time.Millisecond).Should(BeTrue(), "the object was not deleted")
}

// create creates obj and makes sure it is deleted (and its OpenStack
// resources gone) when the test ends, whether it passed or not.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	Expect(env.Client.Create(context.Background(), obj)).To(Succeed())
	deleteOnCleanup(t, obj)
}

// deleteOnCleanup deletes obj when the test ends, before the managers
// started earlier stop.
func deleteOnCleanup(t *testing.T, obj client.Object) {
	t.Cleanup(func() {
		ctx := context.Background()
		if err := env.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
			return
		}
		deadline := time.Now().Add(wait)
		for time.Now().Before(deadline) {
			if apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)) {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Errorf("cleanup: %s was not deleted", obj.GetName())
	})
}

// TestServerWithPortsTrunkAndVolumes builds a server with two ports (one a
// trunk, one found by filter with a security group by name), a root
// volume and an extra volume, checks it in OpenStack, then deletes it.
func TestServerWithPortsTrunkAndVolumes(t *testing.T) {
	RegisterTestingT(t)
	startManager(t)
	ns := newNamespace(t)
	name := fx.prefix + "-full"
	t.Cleanup(func() { expectNoLeftovers(t, name) })

	oss := basicServer(ns, name)
	oss.Spec.Ports = []infrav1.PortOpts{
		{
			Network:        &infrav1.NetworkParam{ID: ptr.To(fx.networkID)},
			FixedIPs:       []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{ID: ptr.To(fx.subnetID)}}},
			SecurityGroups: []infrav1.SecurityGroupParam{{Filter: &infrav1.SecurityGroupFilter{Name: fx.secGroupName}}},
			Tags:           []infrav1.NeutronTag{"role-a"},
		},
		{
			Network:    &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: fx.networkName}},
			NameSuffix: ptr.To("trunk"),
			Trunk:      ptr.To(true),
		},
	}
	oss.Spec.Tags = []string{"it"}
	oss.Spec.ServerMetadata = []infrav1.ServerMetadata{{Key: "k", Value: "v"}}
	if direct.volume != nil {
		oss.Spec.RootVolume = &infrav1.RootVolume{SizeGiB: 1}
		oss.Spec.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
			{Name: "data", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}},
		}
	}
	ctx := context.Background()
	create(t, oss)
	waitReady(t, oss)

	Expect(oss.Status.Initialization).NotTo(BeNil())
	Expect(ptr.Deref(oss.Status.Initialization.Provisioned, false)).To(BeTrue())
	Expect(oss.Status.Addresses).NotTo(BeEmpty())
	Expect(oss.Status.Resources.Ports).To(HaveLen(2))
	for _, p := range oss.Status.Resources.Ports {
		Expect(p.MACAddress).NotTo(BeEmpty())
	}
	for _, c := range []string{infrav1.ReferencesResolvedCondition, infrav1.PortsReadyCondition, infrav1.VolumesReadyCondition, infrav1.InstanceReadyCondition} {
		Expect(capiconditions.IsTrue(oss, c)).To(BeTrue(), c)
	}

	// What OpenStack says.
	srv, err := servers.Get(ctx, direct.compute, *oss.Status.InstanceID).Extract()
	Expect(err).NotTo(HaveOccurred())
	Expect(srv.Status).To(Equal("ACTIVE"))
	Expect(srv.Metadata).To(HaveKeyWithValue("k", "v"))
	p0, err := ports.Get(ctx, direct.network, oss.Status.Resources.Ports[0].ID).Extract()
	Expect(err).NotTo(HaveOccurred())
	Expect(p0.Name).To(Equal(name + "-0"))
	Expect(p0.SecurityGroups).To(ConsistOf(fx.secGroupID))
	Expect(p0.Tags).To(ContainElements("it", "role-a"))
	Expect(p0.DeviceID).To(Equal(srv.ID))
	tp, err := trunks.List(direct.network, trunks.ListOpts{PortID: oss.Status.Resources.Ports[1].ID}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	tl, _ := trunks.ExtractTrunks(tp)
	Expect(tl).To(HaveLen(1))
	Expect(tl[0].Name).To(Equal(name + "-trunk"))
	if direct.volume != nil {
		Expect(srv.AttachedVolumes).To(HaveLen(2))
		Expect(oss.Status.Resources.Volumes).To(HaveLen(2))
	}

	deleteAndWait(t, oss)
}

// TestDeleteDuringCreate deletes the server while it is being built.
func TestDeleteDuringCreate(t *testing.T) {
	RegisterTestingT(t)
	startManager(t)
	ns := newNamespace(t)
	name := fx.prefix + "-delcreate"
	t.Cleanup(func() { expectNoLeftovers(t, name) })

	oss := basicServer(ns, name)
	create(t, oss)
	// As soon as ports exist (before or while Nova builds), delete.
	Eventually(func(g Gomega) {
		get(t, oss)(g)
		g.Expect(oss.Status.Resources).NotTo(BeNil())
		g.Expect(oss.Status.Resources.Ports).NotTo(BeEmpty())
	}, wait, 50*time.Millisecond).Should(Succeed())
	deleteAndWait(t, oss)
}

// TestLostCreateResponseAndManagerKill: the create of the server reaches
// Nova but its answer is lost, and the manager is killed while ports
// exist. The restarted manager must adopt by name: one server, no extra
// port.
func TestLostCreateResponseAndManagerKill(t *testing.T) {
	RegisterTestingT(t)
	ns := newNamespace(t)
	name := fx.prefix + "-crash"
	t.Cleanup(func() { expectNoLeftovers(t, name) })
	ctx := context.Background()

	// Nova creates the server; the client sees a reset connection.
	lost := proxy.AddFault(openstackproxy.Fault{
		Match: openstackproxy.Match{Service: openstackproxy.ServiceCompute, Method: "POST", Path: "/v2.1/servers"},
		Kind:  openstackproxy.FaultDropAfterForward, Times: 1,
	})
	defer proxy.RemoveFault(lost)

	m := startManager(t)
	oss := basicServer(ns, name)
	oss.Spec.Ports = append(oss.Spec.Ports, infrav1.PortOpts{Network: &infrav1.NetworkParam{ID: ptr.To(fx.networkID)}})
	create(t, oss)
	// Kill the manager once the ports exist.
	Eventually(func(g Gomega) {
		get(t, oss)(g)
		g.Expect(oss.Status.Resources).NotTo(BeNil())
		g.Expect(oss.Status.Resources.Ports).To(HaveLen(2))
	}, wait, 50*time.Millisecond).Should(Succeed())
	m.stop(t)

	// Forget what was recorded, as a lost status write would.
	Eventually(func() error {
		get(t, oss)(NewWithT(t))
		oss.Status.Resources = nil
		oss.Status.InstanceID = nil
		return env.Client.Status().Update(ctx, oss)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())

	startManager(t)
	deleteOnCleanup(t, oss)
	waitReady(t, oss)
	Expect(lost.Fired()).To(Equal(1), "the lost-response fault did not fire")

	pages, err := servers.List(direct.compute, servers.ListOpts{Name: "^" + name + "$"}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	all, _ := servers.ExtractServers(pages)
	Expect(all).To(HaveLen(1), "duplicate servers")
	n := 0
	for _, l := range leftovers(t, name) {
		if strings.HasPrefix(l, "port ") {
			n++
		}
	}
	Expect(n).To(Equal(2), "ports: %v", leftovers(t, name))

	deleteAndWait(t, oss)
}

// TestBadFlavorAndImage: a flavor or image that does not exist is a
// terminal, clearly named reason, with no hot loop.
func TestBadFlavorAndImage(t *testing.T) {
	RegisterTestingT(t)
	startManager(t)
	ns := newNamespace(t)

	badFlavor := basicServer(ns, fx.prefix+"-badflavor")
	badFlavor.Spec.FlavorID = nil
	badFlavor.Spec.Flavor = ptr.To("no-such-flavor")
	badImage := basicServer(ns, fx.prefix+"-badimage")
	badImage.Spec.Image = infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("no-such-image")}}
	create(t, badFlavor)
	create(t, badImage)

	for _, o := range []*infrav1alpha1.OpenStackServer{badFlavor, badImage} {
		Eventually(func(g Gomega) {
			get(t, o)(g)
			c := capiconditions.Get(o, infrav1.ReferencesResolvedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(infrav1.NotFoundReason))
			g.Expect(capiconditions.IsFalse(o, infrav1.ReadyCondition)).To(BeTrue())
		}, wait, 250*time.Millisecond).Should(Succeed())
	}
	Expect(condition(badFlavor, infrav1.ReferencesResolvedCondition)).To(ContainSubstring("no-such-flavor"))
	Expect(condition(badImage, infrav1.ReferencesResolvedCondition)).To(ContainSubstring("no-such-image"))

	// No hot loop: in the next 10 s, no lookups are repeated.
	proxy.Reset()
	time.Sleep(10 * time.Second)
	Expect(proxy.CountFunc(func(c openstackproxy.Call) bool { return c.Service != openstackproxy.ServiceIdentity })).To(BeNumerically("<=", 0), proxy.Summary())

	deleteAndWait(t, badFlavor)
	deleteAndWait(t, badImage)
	expectNoLeftovers(t, fx.prefix+"-bad")
}

// TestFaultsConverge injects 429 with Retry-After, 503 and dropped
// connections; the server must still converge, and the retry after the
// 429 must wait for Retry-After.
func TestFaultsConverge(t *testing.T) {
	RegisterTestingT(t)
	ns := newNamespace(t)
	name := fx.prefix + "-faults"
	t.Cleanup(func() { expectNoLeftovers(t, name) })

	limited := proxy.AddFault(openstackproxy.Fault{
		Match: openstackproxy.Match{Service: openstackproxy.ServiceNetwork, Method: "POST", PathPrefix: "/v2.0/ports"},
		Kind:  openstackproxy.FaultRateLimit, RetryAfter: 3 * time.Second, Times: 1,
	})
	unavailable := proxy.AddFault(openstackproxy.Fault{
		Match: openstackproxy.Match{Service: openstackproxy.ServiceCompute, Method: "POST", Path: "/v2.1/servers"},
		Kind:  openstackproxy.FaultUnavailable, Times: 2,
	})
	dropped := proxy.AddFault(openstackproxy.Fault{
		Match: openstackproxy.Match{Service: openstackproxy.ServiceCompute, Method: "GET", PathPrefix: "/v2.1/servers/"},
		Kind:  openstackproxy.FaultDrop, Times: 2,
	})
	defer func() { proxy.RemoveFault(limited); proxy.RemoveFault(unavailable); proxy.RemoveFault(dropped) }()

	proxy.Reset()
	startManager(t)
	oss := basicServer(ns, name)
	create(t, oss)
	waitReady(t, oss)
	Expect(limited.Fired()).To(Equal(1))
	Expect(unavailable.Fired()).To(Equal(2))

	// The port create after the 429 came no earlier than Retry-After.
	var first, retry time.Time
	for _, c := range proxy.Calls() {
		if c.Service == openstackproxy.ServiceNetwork && c.Method == "POST" && strings.HasPrefix(c.Path, "/v2.0/ports") {
			if first.IsZero() {
				first = c.Time
			} else if retry.IsZero() {
				retry = c.Time
			}
		}
	}
	Expect(retry.Sub(first)).To(BeNumerically(">=", 3*time.Second-100*time.Millisecond), "retry after %s", retry.Sub(first))

	deleteAndWait(t, oss)
}

// annotateToReconcile triggers a reconcile without changing the spec.
func annotateToReconcile(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		a := obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a["test.ocp-capi.io/poke"] = time.Now().Format(time.RFC3339Nano)
		obj.SetAnnotations(a)
		return env.Client.Update(ctx, obj)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

var _ = corev1.EventTypeNormal

// TestQuotaExceeded: with the project's instance quota used up, the server
// reports QuotaExceeded (terminal: no hot loop); once the quota is raised,
// a change to the object retries at once and the server converges.
func TestQuotaExceeded(t *testing.T) {
	RegisterTestingT(t)
	adminCompute := adminComputeClient(t)
	ctx := context.Background()
	project := demoProjectID(t)
	before, err := quotasets.Get(ctx, adminCompute, project).Extract()
	Expect(err).NotTo(HaveOccurred())
	usage, err := quotasets.GetDetail(ctx, adminCompute, project).Extract()
	Expect(err).NotTo(HaveOccurred())
	// No room for one more instance.
	_, err = quotasets.Update(ctx, adminCompute, project, quotasets.UpdateOpts{Instances: ptr.To(usage.Instances.InUse + usage.Instances.Reserved)}).Extract()
	Expect(err).NotTo(HaveOccurred())
	restore := func() {
		_, _ = quotasets.Update(ctx, adminCompute, project, quotasets.UpdateOpts{Instances: ptr.To(before.Instances)}).Extract()
	}
	t.Cleanup(restore)

	startManager(t)
	ns := newNamespace(t)
	name := fx.prefix + "-quota"
	t.Cleanup(func() { expectNoLeftovers(t, name) })
	oss := basicServer(ns, name)
	create(t, oss)
	Eventually(func(g Gomega) {
		get(t, oss)(g)
		g.Expect(condition(oss, infrav1.InstanceReadyCondition)).To(HavePrefix("False/" + infrav1.QuotaExceededReason))
		g.Expect(capiconditions.IsFalse(oss, infrav1.ReadyCondition)).To(BeTrue())
	}, wait, 250*time.Millisecond).Should(Succeed())
	t.Logf("InstanceReady: %s", condition(oss, infrav1.InstanceReadyCondition))

	proxy.Reset()
	time.Sleep(5 * time.Second)
	Expect(proxy.Count(openstackproxy.Match{Service: openstackproxy.ServiceCompute, Method: "POST"})).To(BeZero(), "server create retried in a hot loop:\n%s", proxy.Summary())

	restore()
	annotateToReconcile(t, oss)
	waitReady(t, oss)
}
