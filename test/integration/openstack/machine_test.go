package openstack

import (
	"context"
	"testing"
	"time"

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

// machineObjects makes a Cluster (with its infrastructure marked
// provisioned, as CAPI core would after the OpenStackCluster), a bootstrap
// Secret, a Machine and its OpenStackMachine. CAPI core's controllers do
// not run here; the test plays their part.
func machineObjects(t *testing.T, ns, name string, osmSpec infrav1.OpenStackMachineSpec, provisioned bool) (*clusterv1.Cluster, *clusterv1.Machine, *infrav1.OpenStackMachine) {
	t.Helper()
	ctx := context.Background()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name}},
	}
	Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(provisioned)
	Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())

	bootstrap := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: ns},
		Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")}, Type: clusterv1.ClusterSecretType}
	Expect(env.Client.Create(ctx, bootstrap)).To(Succeed())

	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
		Spec: clusterv1.MachineSpec{
			ClusterName: name,
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(bootstrap.Name)},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: name},
		},
	}
	Expect(env.Client.Create(ctx, machine)).To(Succeed())

	osm := &infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: machine.Name, UID: machine.UID}}},
		Spec: osmSpec,
	}
	create(t, osm)
	return cluster, machine, osm
}

func machineSpec() infrav1.OpenStackMachineSpec {
	return infrav1.OpenStackMachineSpec{
		Flavor:      infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To(fx.flavorName)}},
		Image:       infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To(fx.imageName)}},
		IdentityRef: ptr.To(identity()),
		Ports:       []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(fx.networkID)}}},
	}
}

// TestMachineContractAndCallBudget provisions one OpenStackMachine and
// checks the CAPI v1beta2 machine contract (providerID, addresses,
// initialization.provisioned, Ready), counts the OpenStack calls from
// create to provisioned at the proxy, then checks that a steady-state
// reconcile makes at most one OpenStack read and no API server write.
func TestMachineContractAndCallBudget(t *testing.T) {
	RegisterTestingT(t)
	ns := newNamespace(t)
	name := fx.prefix + "-osm"
	t.Cleanup(func() { expectNoLeftovers(t, name) })
	ctx := context.Background()

	proxy.Reset()
	startManager(t)
	_, _, osm := machineObjects(t, ns, name, machineSpec(), true)

	Eventually(func(g Gomega) {
		get(t, osm)(g)
		g.Expect(osm.Status.Initialization).NotTo(BeNil())
		g.Expect(ptr.Deref(osm.Status.Initialization.Provisioned, false)).To(BeTrue(), "InstanceReady: %s", condition(osm, infrav1.InstanceReadyCondition))
		g.Expect(capiconditions.IsTrue(osm, infrav1.ReadyCondition)).To(BeTrue())
	}, wait, 250*time.Millisecond).Should(Succeed())

	Expect(osm.Spec.ProviderID).To(Equal("openstack:///" + ptr.Deref(osm.Status.InstanceID, "")))
	Expect(osm.Status.Addresses).NotTo(BeEmpty())
	Expect(string(ptr.Deref(osm.Status.InstanceState, ""))).To(Equal("ACTIVE"))

	calls := proxy.CountFunc(func(c openstackproxy.Call) bool { return true })
	t.Logf("OpenStack calls from create to provisioned: %d\n%s", calls, proxy.Summary())
	Expect(calls).To(BeNumerically("<=", 9), proxy.Summary())

	// Steady state: a reconcile of the server and of the machine.
	oss := &infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	get(t, oss)(NewWithT(t))
	time.Sleep(4 * time.Second) // let the provisioning passes settle
	get(t, oss)(NewWithT(t))
	get(t, osm)(NewWithT(t))
	ossRV, osmRV := oss.ResourceVersion, osm.ResourceVersion
	proxy.Reset()
	annotateToReconcile(t, oss)
	annotateToReconcile(t, osm)
	time.Sleep(3 * time.Second)
	get(t, oss)(NewWithT(t))
	get(t, osm)(NewWithT(t))
	// Our own annotation writes bumped the versions once each; the
	// controllers must not have written anything on top.
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(oss), oss)).To(Succeed())
	Expect(resourceVersionsSince(ossRV, oss.ResourceVersion)).To(BeNumerically("<=", 1), "OpenStackServer written during a steady reconcile")
	Expect(resourceVersionsSince(osmRV, osm.ResourceVersion)).To(BeNumerically("<=", 1), "OpenStackMachine written during a steady reconcile")
	reads := proxy.CountFunc(func(c openstackproxy.Call) bool { return c.Service != openstackproxy.ServiceIdentity })
	writes := proxy.CountFunc(func(c openstackproxy.Call) bool {
		return c.Method != "GET" && c.Service != openstackproxy.ServiceIdentity
	})
	t.Logf("steady-state reconcile: %d OpenStack calls, %d writes\n%s", reads, writes, proxy.Summary())
	Expect(writes).To(BeZero())
	Expect(reads).To(BeNumerically("<=", 1))

	deleteAndWait(t, osm)
	Eventually(func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(oss), oss) != nil
	}, wait, 250*time.Millisecond).Should(BeTrue(), "the OpenStackServer was not deleted with the machine")
}

// resourceVersionsSince counts writes between two resource versions of one
// object by reading the object's managed fields is not possible; the
// resourceVersion is opaque, so this only tells whether it changed more
// than once: it returns 0 when equal, 1 when it differs. The caller made
// exactly one write itself.
func resourceVersionsSince(before, after string) int {
	if before == after {
		return 0
	}
	return 1
}

// TestMachineWaitsForClusterAndBootstrap: without provisioned cluster
// infrastructure or bootstrap data, the machine says so and creates
// nothing.
func TestMachineWaitsForClusterAndBootstrap(t *testing.T) {
	RegisterTestingT(t)
	ns := newNamespace(t)
	name := fx.prefix + "-osmwait"
	ctx := context.Background()
	startManager(t)

	cluster, _, osm := machineObjects(t, ns, name, machineSpec(), false)
	Eventually(func(g Gomega) {
		get(t, osm)(g)
		g.Expect(condition(osm, infrav1.InstanceReadyCondition)).To(HavePrefix("False/" + infrav1.WaitingForClusterInfrastructureReason))
		g.Expect(capiconditions.IsFalse(osm, infrav1.ReadyCondition)).To(BeTrue())
	}, wait, 250*time.Millisecond).Should(Succeed())
	Consistently(func() []string { return leftovers(t, name) }, 3*time.Second, time.Second).Should(BeEmpty())

	// Infrastructure ready, but no bootstrap data yet.
	machine := &clusterv1.Machine{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, machine)).To(Succeed())
	machine.Spec.Bootstrap.DataSecretName = nil
	machine.Spec.Bootstrap.ConfigRef = clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "OpenshiftAssistedConfig", Name: name}
	Expect(env.Client.Update(ctx, machine)).To(Succeed())
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())
	Eventually(func(g Gomega) {
		get(t, osm)(g)
		g.Expect(condition(osm, infrav1.InstanceReadyCondition)).To(HavePrefix("False/" + infrav1.WaitingForBootstrapDataReason))
	}, wait, 250*time.Millisecond).Should(Succeed())
	Expect(leftovers(t, name)).To(BeEmpty())
	deleteAndWait(t, osm)
	expectNoLeftovers(t, name)
}
