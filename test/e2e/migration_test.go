//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// Migration to Cluster API and back on the real local OpenStack. The test
// plays the OpenShift cluster (namespaces, Infrastructure "cluster", the
// Cluster and externally managed OpenStackCluster cluster-capi-operator
// makes), the installer (network, subnet, security group, user data and
// credentials Secrets), the Machine API operator (the Paused condition and
// the machine finalizer) and the Machine API's OpenStack actuator, MAPO:
// it makes each Machine's Nova server, port and trunk with MAPO's names
// (<machine>, <machine>-0), tags and description, and sets the Machine's
// providerID, annotations, labels and status as MAPO does. The add-on and
// the OpenStack provider run in the management cluster; the provider
// reaches OpenStack through the counting proxy (the credentials the
// machines use name the proxy), so the proxy counts every call it makes.
var _ = Describe("Migration to Cluster API and back (add-on), OpenStack", func() {
	It("adopts MAPO's servers with no create or delete, scales under Cluster API, rolls back touching no server, and leaks nothing", func() {
		ctx := suiteCtx
		c := mgmt.GetClient()
		infra := "mig-" + util.RandomString(5)
		msName := infra + "-worker-0"
		m := newMigrationWorld(ctx, c, infra)
		DeferCleanup(m.close)

		By("Playing the OpenShift cluster, the installer's network and Secrets, and cluster-capi-operator's Cluster (" + infra + ")")
		m.setUp(ctx)

		By("Creating the MAPI MachineSet " + msName + " with 2 Machines, and playing MAPO: their servers, ports and trunks")
		m.createMachineSet(ctx, msName, 2, m.providerSpec())
		machines := m.createMachines(ctx, msName, 2)
		for _, name := range machines {
			m.playMAPOCreate(ctx, name)
		}
		m.waitSynced(ctx, msName, machines, mapiv1beta1.SynchronizedAPIMachineAPI)
		before := m.cloudState(ctx)
		Expect(before["server"]).To(HaveLen(2))

		By("Switching the MachineSet and its Machines to Cluster API: the OpenStackServers adopt MAPO's resources")
		m.proxy.Reset()
		start := time.Now()
		m.setAuthority(ctx, msName, machines, mapiv1beta1.MachineAuthorityClusterAPI)
		m.waitAuthority(ctx, msName, machines, mapiv1beta1.MachineAuthorityClusterAPI)
		for _, name := range machines {
			m.waitAdopted(ctx, name, before)
		}
		m.record("switch to ClusterAPI", start, m.writes())
		Expect(m.creates()).To(BeZero(), "a migration makes no server, port, volume or trunk:\n%s", m.proxy.Summary())
		Expect(m.deletes()).To(BeZero(), "a migration deletes no server, port, volume or trunk:\n%s", m.proxy.Summary())
		Expect(m.cloudState(ctx)).To(Equal(before), "the same resources after the switch")

		By("Scaling the CAPI MachineSet to 3: one server is made, and the MAPI mirror shows 3")
		m.proxy.Reset()
		start = time.Now()
		Eventually(func() error {
			ms := &clusterv1.MachineSet{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: capiNS, Name: msName}, ms); err != nil {
				return err
			}
			base := ms.DeepCopy()
			ms.Spec.Replicas = ptr.To[int32](3)
			return c.Patch(ctx, ms, client.MergeFrom(base))
		}, time.Minute, time.Second).Should(Succeed())
		machines = m.waitScaled(ctx, msName, 3)
		m.record("scale the CAPI MachineSet to 3", start, m.writes())
		Expect(m.count("POST", "/v2.1/servers")).To(Equal(1), m.proxy.Summary())
		Expect(m.deletes()).To(BeZero(), m.proxy.Summary())

		By("Rolling back to the Machine API: no server is touched")
		afterScale := m.cloudState(ctx)
		m.proxy.Reset()
		start = time.Now()
		m.setAuthority(ctx, msName, machines, mapiv1beta1.MachineAuthorityMachineAPI)
		m.waitAuthority(ctx, msName, machines, mapiv1beta1.MachineAuthorityMachineAPI)
		m.waitSynced(ctx, msName, machines, mapiv1beta1.SynchronizedAPIMachineAPI)
		for _, name := range machines {
			m.waitPaused(ctx, name)
		}
		m.record("roll back to MachineAPI", start, m.writes())
		Expect(m.creates()).To(BeZero(), m.proxy.Summary())
		Expect(m.deletes()).To(BeZero(), m.proxy.Summary())
		Expect(m.serverWrites()).To(BeZero(), "a rollback touches no server:\n%s", m.proxy.Summary())
		Expect(m.cloudState(ctx)).To(Equal(afterScale))

		By("Deleting the MachineSet (MAPO deletes the servers), then the cluster, and checking for leaks")
		m.deleteAll(ctx, msName)
		m.leakCheck(ctx)
	})
})

const (
	mapiNS = "openshift-machine-api"
	capiNS = "openshift-cluster-api"
	// proxyPortOffset: the counting proxy listens for each service of the
	// local OpenStack on its port plus this (hack/make/e2e.mk forwards
	// them into the management node).
	proxyPortOffset = 20000
	// The MAPI machine finalizer (the Machine API operator's).
	mapiMachineFinalizer = "machine.machine.openshift.io"
)

// mapiWorld is what both migration suites play of the OpenShift cluster:
// the Machine API operator, for the MAPI objects of one infrastructure
// name.
type mapiWorld struct {
	c     client.Client
	infra string
	// mapiNS holds the MAPI objects, capiNS their CAPI partners.
	mapiNS, capiNS string
	stop           context.CancelFunc
	// timings recorded, for the report.
	timings []string
}

func newMAPIWorld(ctx context.Context, c client.Client, infra, mapiNamespace, capiNamespace string) *mapiWorld {
	mctx, stop := context.WithCancel(ctx)
	w := &mapiWorld{c: c, infra: infra, mapiNS: mapiNamespace, capiNS: capiNamespace, stop: stop}
	Expect(w.startPlayedMAO(mctx)).To(Succeed())
	return w
}

func (w *mapiWorld) close() {
	w.stop()
	for _, t := range w.timings {
		AddReportEntry("migration timing", t)
	}
}

// migrationWorld is what the OpenStack migration suite plays and measures.
type migrationWorld struct {
	*mapiWorld
	proxy  *openstackproxy.Proxy
	cloud  string
	os     *osClients
	netID  string
	subID  string
	sgID   string
	image  string
	flavor string
}

// osClients talk to the local OpenStack directly: what the test plays is
// not counted.
type osClients struct {
	compute, network, image *gophercloud.ServiceClient
}

func newMigrationWorld(ctx context.Context, c client.Client, infra string) *migrationWorld {
	cloud := e2eConfig.MustGetVariable("OPENSTACK_CLOUD")
	oc, err := openstackproxy.LoadCloud(*cloudsYAML, cloud)
	Expect(err).NotTo(HaveOccurred())
	p := newCountingProxy(cloud)
	provider, err := openstack.AuthenticatedClient(ctx, oc.AuthOptions())
	Expect(err).NotTo(HaveOccurred())
	o := &osClients{}
	o.compute, err = openstack.NewComputeV2(provider, oc.EndpointOpts())
	Expect(err).NotTo(HaveOccurred())
	o.compute.Microversion = "2.53" // tags in the create request, as MAPO's (vendored CAPO's) minimum
	o.network, err = openstack.NewNetworkV2(provider, oc.EndpointOpts())
	Expect(err).NotTo(HaveOccurred())
	o.image, err = openstack.NewImageV2(provider, oc.EndpointOpts())
	Expect(err).NotTo(HaveOccurred())
	return &migrationWorld{mapiWorld: newMAPIWorld(ctx, c, infra, mapiNS, capiNS), proxy: p, cloud: cloud, os: o}
}

func (w *migrationWorld) close() {
	w.mapiWorld.close()
	_ = w.proxy.Close()
}

// setUp plays the OpenShift cluster and its installer.
func (w *migrationWorld) setUp(ctx context.Context) {
	c := w.c
	for _, ns := range []string{w.mapiNS, w.capiNS} {
		Expect(client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
	}
	inf := &configv1.Infrastructure{}
	if err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, inf); apierrors.IsNotFound(err) {
		inf = &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
		Expect(c.Create(ctx, inf)).To(Succeed())
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(setInfrastructure(ctx, c, inf, w.infra)).To(Succeed())

	// The installer's network, subnet and worker security group.
	net, err := networks.Create(ctx, w.os.network, networks.CreateOpts{Name: w.infra + "-openshift"}).Extract()
	Expect(err).NotTo(HaveOccurred())
	w.netID = net.ID
	sub, err := subnets.Create(ctx, w.os.network, subnets.CreateOpts{NetworkID: net.ID, Name: w.infra + "-nodes", CIDR: "10.196.0.0/16", IPVersion: gophercloud.IPv4}).Extract()
	Expect(err).NotTo(HaveOccurred())
	w.subID = sub.ID
	sg, err := groups.Create(ctx, w.os.network, groups.CreateOpts{Name: w.infra + "-worker"}).Extract()
	Expect(err).NotTo(HaveOccurred())
	w.sgID = sg.ID
	w.image = w.lookupImage(ctx, e2eConfig.MustGetVariable("OPENSTACK_IMAGE_NAME"))
	w.flavor = e2eConfig.MustGetVariable("OPENSTACK_NODE_MACHINE_FLAVOR")

	// The Secrets the installer writes in the MAPI namespace; the
	// credentials name the counting proxy, so that every call the
	// provider makes for these machines is counted.
	clouds := w.cloudsYAML()
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: "openstack-cloud-credentials"}, Data: map[string][]byte{"clouds.yaml": clouds}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: "worker-user-data"}, Data: map[string][]byte{"userData": []byte(`{"ignition":{"version":"3.2.0"}}`)}},
	} {
		existing := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(s), existing); err == nil {
			existing.Data = s.Data
			Expect(c.Update(ctx, existing)).To(Succeed())
			continue
		}
		Expect(c.Create(ctx, s)).To(Succeed())
	}

	// cluster-capi-operator's Cluster and externally managed
	// OpenStackCluster, with the status it writes.
	osc := &infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.capiNS, Name: w.infra, Annotations: map[string]string{clusterv1.ManagedByAnnotation: "e2e"}},
		Spec: infrav1.OpenStackClusterSpec{
			IdentityRef:          infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: "openstack-cloud-credentials", CloudName: "openstack"},
			ControlPlaneEndpoint: &clusterv1.APIEndpoint{Host: "api-int." + w.infra + ".example.com", Port: 6443},
		},
	}
	Expect(c.Create(ctx, osc)).To(Succeed())
	osc.Status = infrav1.OpenStackClusterStatus{
		Initialization: &infrav1.OpenStackClusterInitializationStatus{Provisioned: ptr.To(true)},
		Network: &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{Name: net.Name, ID: net.ID},
			Subnets: []infrav1.Subnet{{Name: sub.Name, ID: sub.ID, CIDR: sub.CIDR}}},
		WorkerSecurityGroup: &infrav1.SecurityGroupStatus{Name: sg.Name, ID: sg.ID},
	}
	Expect(c.Status().Update(ctx, osc)).To(Succeed())
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.capiNS, Name: w.infra},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: w.infra}},
	}
	Expect(c.Create(ctx, cluster)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		g.Expect(ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false)).To(BeTrue())
	}, 2*time.Minute, time.Second).Should(Succeed())
}

// cloudsYAML is the test cloud's clouds.yaml, as cloud "openstack" (MAPI's
// cloudName), with auth_url the proxy's.
func (w *migrationWorld) cloudsYAML() []byte {
	return cloudsYAMLVia(w.proxy, w.cloud, "openstack")
}

// newCountingProxy starts the counting proxy (test/openstackproxy) in front
// of the local OpenStack's cloud, one listener per service at the service's
// port plus proxyPortOffset, which every e2e node forwards.
func newCountingProxy(cloud string) *openstackproxy.Proxy {
	oc, err := openstackproxy.LoadCloud(*cloudsYAML, cloud)
	Expect(err).NotTo(HaveOccurred())
	p, err := openstackproxy.NewListening(oc.Auth.AuthURL, func(origin string) string {
		_, port, ok := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(origin, "http://"), "https://"), ":")
		if !ok {
			return ""
		}
		var n int
		if _, err := fmt.Sscan(port, &n); err != nil {
			return ""
		}
		return fmt.Sprintf("127.0.0.1:%d", n+proxyPortOffset)
	})
	Expect(err).NotTo(HaveOccurred())
	return p
}

// cloudsYAMLVia is the clouds.yaml of the test cloud, with auth_url the
// proxy's, so that every call made with it is counted; the entry is named
// as.
func cloudsYAMLVia(p *openstackproxy.Proxy, cloud, as string) []byte {
	raw, err := localenv.SingleCloudYAML(*cloudsYAML, cloud)
	Expect(err).NotTo(HaveOccurred())
	var doc struct {
		Clouds map[string]map[string]any `json:"clouds"`
	}
	Expect(yaml.Unmarshal(raw, &doc)).To(Succeed())
	entry := doc.Clouds[cloud]
	auth, _ := entry["auth"].(map[string]any)
	auth["auth_url"] = p.AuthURL()
	out, err := yaml.Marshal(map[string]any{"clouds": map[string]any{as: entry}})
	Expect(err).NotTo(HaveOccurred())
	return out
}

func (w *migrationWorld) lookupImage(ctx context.Context, name string) string {
	pages, err := images.List(w.os.image, images.ListOpts{Name: name}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	list, err := images.ExtractImages(pages)
	Expect(err).NotTo(HaveOccurred())
	Expect(list).NotTo(BeEmpty(), "image %s", name)
	return list[0].ID
}

// providerSpec is a worker providerSpec as the installer writes one, on
// the test's network (by ID, with its subnet) and security group.
func (w *migrationWorld) providerSpec() string {
	return fmt.Sprintf(`{"apiVersion":"machine.openshift.io/v1alpha1","kind":"OpenstackProviderSpec","cloudName":"openstack",
"cloudsSecret":{"name":"openstack-cloud-credentials","namespace":"openshift-machine-api"},"flavor":%q,"image":%q,
"networks":[{"uuid":%q,"subnets":[{"uuid":%q}]}],"securityGroups":[{"uuid":%q}],
"serverMetadata":{"Name":"%s-worker","openshiftClusterID":%q},"tags":["openshiftClusterID=%s"],"trunk":true,
"userDataSecret":{"name":"worker-user-data"}}`,
		w.flavor, e2eConfig.MustGetVariable("OPENSTACK_IMAGE_NAME"), w.netID, w.subID, w.sgID, w.infra, w.infra, w.infra)
}

func (w *mapiWorld) selector(msName string) map[string]string {
	return map[string]string{"machine.openshift.io/cluster-api-cluster": w.infra, "machine.openshift.io/cluster-api-machineset": msName}
}

func (w *mapiWorld) templateLabels(msName string) map[string]string {
	l := w.selector(msName)
	l["machine.openshift.io/cluster-api-machine-role"] = "worker"
	l["machine.openshift.io/cluster-api-machine-type"] = "worker"
	return l
}

func (w *mapiWorld) createMachineSet(ctx context.Context, msName string, replicas int32, providerSpec string) {
	ms := &mapiv1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: msName, Labels: map[string]string{"machine.openshift.io/cluster-api-cluster": w.infra}},
		Spec: mapiv1beta1.MachineSetSpec{
			Replicas: ptr.To(replicas), DeletePolicy: "Random",
			Selector: metav1.LabelSelector{MatchLabels: w.selector(msName)},
			Template: mapiv1beta1.MachineTemplateSpec{
				ObjectMeta: mapiv1beta1.ObjectMeta{Labels: w.templateLabels(msName)},
				Spec:       mapiv1beta1.MachineSpec{ProviderSpec: mapiv1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(providerSpec)}}},
			},
		},
	}
	Expect(w.c.Create(ctx, ms)).To(Succeed())
}

// createMachines plays the Machine API's MachineSet controller: n Machines
// of the MachineSet, named as it names them.
func (w *mapiWorld) createMachines(ctx context.Context, msName string, n int) []string {
	ms := &mapiv1beta1.MachineSet{}
	Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: msName}, ms)).To(Succeed())
	var names []string
	for range n {
		m := &mapiv1beta1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: msName + "-" + util.RandomString(5), Labels: w.templateLabels(msName),
				Finalizers:      []string{mapiMachineFinalizer},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: mapiv1beta1.GroupVersion.String(), Kind: "MachineSet", Name: msName, UID: ms.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: *ms.Spec.Template.Spec.DeepCopy(),
		}
		Expect(w.c.Create(ctx, m)).To(Succeed())
		names = append(names, m.Name)
	}
	return names
}

// mapoTags are the tags MAPO puts on a machine's server, ports and trunks:
// the providerSpec's, cluster-api-provider-openstack and
// openshift-machine-api-<infrastructure name>.
func (w *migrationWorld) mapoTags() []string {
	return []string{"openshiftClusterID=" + w.infra, "cluster-api-provider-openstack", "openshift-machine-api-" + w.infra}
}

// playMAPOCreate makes a Machine's server as MAPO does, and writes back
// on the Machine what MAPO writes.
func (w *migrationWorld) playMAPOCreate(ctx context.Context, name string) {
	desc := "Created by cluster-api-provider-openstack cluster openshift-machine-api-" + w.infra
	port, err := ports.Create(ctx, w.os.network, ports.CreateOpts{
		NetworkID: w.netID, Name: name + "-0", Description: desc,
		FixedIPs: []ports.IP{{SubnetID: w.subID}}, SecurityGroups: &[]string{w.sgID},
	}).Extract()
	Expect(err).NotTo(HaveOccurred())
	_, err = attributestags.ReplaceAll(ctx, w.os.network, "ports", port.ID, attributestags.ReplaceAllOpts{Tags: w.mapoTags()}).Extract()
	Expect(err).NotTo(HaveOccurred())
	trunk, err := trunks.Create(ctx, w.os.network, trunks.CreateOpts{Name: name + "-0", PortID: port.ID, Description: desc}).Extract()
	Expect(err).NotTo(HaveOccurred())
	_, err = attributestags.ReplaceAll(ctx, w.os.network, "trunks", trunk.ID, attributestags.ReplaceAllOpts{Tags: w.mapoTags()}).Extract()
	Expect(err).NotTo(HaveOccurred())
	flavorID, err := flavorIDByName(ctx, w.os.compute, w.flavor)
	Expect(err).NotTo(HaveOccurred())
	srv, err := servers.Create(ctx, w.os.compute, servers.CreateOpts{
		Name: name, ImageRef: w.image, FlavorRef: flavorID, Networks: []servers.Network{{Port: port.ID}},
		Metadata: map[string]string{"Name": w.infra + "-worker", "openshiftClusterID": w.infra},
		UserData: []byte(`{"ignition":{"version":"3.2.0"}}`), Tags: w.mapoTags(),
	}, nil).Extract()
	Expect(err).NotTo(HaveOccurred())
	var active *servers.Server
	Eventually(func(g Gomega) {
		s, err := servers.Get(ctx, w.os.compute, srv.ID).Extract()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(s.Status).To(Equal("ACTIVE"))
		active = s
	}, 2*time.Minute, 2*time.Second).Should(Succeed())

	Eventually(func() error {
		m := &mapiv1beta1.Machine{}
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: name}, m); err != nil {
			return err
		}
		base := m.DeepCopy()
		m.Spec.ProviderID = ptr.To("openstack:///" + srv.ID)
		annotations.AddAnnotations(m, map[string]string{"openstack-resourceId": srv.ID, "machine.openshift.io/instance-state": active.Status})
		m.Labels["machine.openshift.io/instance-type"] = w.flavor
		return w.c.Patch(ctx, m, client.MergeFrom(base))
	}, time.Minute, time.Second).Should(Succeed())
	Eventually(func() error {
		m := &mapiv1beta1.Machine{}
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: name}, m); err != nil {
			return err
		}
		base := m.DeepCopy()
		m.Status.Phase = ptr.To("Running")
		m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: port.FixedIPs[0].IPAddress}, {Type: corev1.NodeHostName, Address: name}}
		return w.c.Status().Patch(ctx, m, client.MergeFrom(base))
	}, time.Minute, time.Second).Should(Succeed())
}

func flavorIDByName(ctx context.Context, c *gophercloud.ServiceClient, name string) (string, error) {
	pages, err := flavors.ListDetail(c, nil).AllPages(ctx)
	if err != nil {
		return "", err
	}
	list, err := flavors.ExtractFlavors(pages)
	if err != nil {
		return "", err
	}
	for _, f := range list {
		if f.Name == name {
			return f.ID, nil
		}
	}
	return "", fmt.Errorf("no flavor %s", name)
}

// playMAPODelete deletes a Machine's server, trunk and port as MAPO does,
// then lets the Machine go.
func (w *migrationWorld) playMAPODelete(ctx context.Context, m *mapiv1beta1.Machine) {
	if id := strings.TrimPrefix(ptr.Deref(m.Spec.ProviderID, ""), "openstack:///"); id != "" {
		if err := servers.Delete(ctx, w.os.compute, id).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(func() bool {
			_, err := servers.Get(ctx, w.os.compute, id).Extract()
			return gophercloud.ResponseCodeIs(err, 404)
		}, 2*time.Minute, 2*time.Second).Should(BeTrue(), "server %s deleted", id)
	}
	pages, err := ports.List(w.os.network, ports.ListOpts{Name: m.Name + "-0"}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	ps, err := ports.ExtractPorts(pages)
	Expect(err).NotTo(HaveOccurred())
	for _, p := range ps {
		tpages, err := trunks.List(w.os.network, trunks.ListOpts{PortID: p.ID}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		ts, err := trunks.ExtractTrunks(tpages)
		Expect(err).NotTo(HaveOccurred())
		for _, t := range ts {
			Expect(trunks.Delete(ctx, w.os.network, t.ID).ExtractErr()).To(Succeed())
		}
		Expect(ports.Delete(ctx, w.os.network, p.ID).ExtractErr()).To(Succeed())
	}
	Eventually(func() error {
		cur := &mapiv1beta1.Machine{}
		if err := w.c.Get(ctx, client.ObjectKeyFromObject(m), cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		base := cur.DeepCopy()
		controllerutil.RemoveFinalizer(cur, mapiMachineFinalizer)
		return w.c.Patch(ctx, cur, client.MergeFrom(base))
	}, time.Minute, time.Second).Should(Succeed())
}

// startPlayedMAO plays the Machine API operator for this cluster's MAPI
// MachineSets and Machines: the Paused condition (True while
// status.authoritativeAPI is not MachineAPI) and, on a MachineAPI
// Machine, its finalizer.
func (w *mapiWorld) startPlayedMAO(ctx context.Context) error {
	mgr, err := ctrl.NewManager(mgmt.GetRESTConfig(), mgrOptions(mgmt.GetScheme()))
	if err != nil {
		return err
	}
	mine := func(o client.Object) bool {
		return o.GetLabels()["machine.openshift.io/cluster-api-cluster"] == w.infra
	}
	for _, o := range []client.Object{&mapiv1beta1.MachineSet{}, &mapiv1beta1.Machine{}} {
		kind := o
		err := ctrl.NewControllerManagedBy(mgr).Named(fmt.Sprintf("e2e-mao-%T-%s", o, w.infra)).For(o).
			Complete(reconcileFunc(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
				obj := kind.DeepCopyObject().(client.Object)
				if err := w.c.Get(ctx, req.NamespacedName, obj); err != nil || !mine(obj) {
					return ctrl.Result{}, client.IgnoreNotFound(err)
				}
				return ctrl.Result{}, playMAO(ctx, w.c, obj)
			}))
		if err != nil {
			return err
		}
	}
	go func() { _ = mgr.Start(ctx) }()
	return nil
}

// playMAO sets MAO's Paused condition, and its finalizer on a MachineAPI
// Machine.
func playMAO(ctx context.Context, c client.Client, obj client.Object) error {
	var status mapiv1beta1.MachineAuthority
	var conds *[]mapiv1beta1.Condition
	switch t := obj.(type) {
	case *mapiv1beta1.MachineSet:
		status, conds = t.Status.AuthoritativeAPI, &t.Status.Conditions
	case *mapiv1beta1.Machine:
		status, conds = t.Status.AuthoritativeAPI, &t.Status.Conditions
		if status == mapiv1beta1.MachineAuthorityMachineAPI && t.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(t, mapiMachineFinalizer) {
			base := t.DeepCopy()
			controllerutil.AddFinalizer(t, mapiMachineFinalizer)
			return c.Patch(ctx, t, client.MergeFrom(base))
		}
	}
	if status == "" {
		return nil
	}
	want := mapiv1beta1.Condition{Type: mapiv1beta1.PausedCondition, Status: corev1.ConditionTrue, Reason: mapiv1beta1.PausedReasonNotMachineAPI,
		LastTransitionTime: metav1.Now()}
	if status == mapiv1beta1.MachineAuthorityMachineAPI {
		want.Status, want.Reason, want.Severity = corev1.ConditionFalse, mapiv1beta1.PausedReasonMachineAPI, mapiv1beta1.ConditionSeverityInfo
	}
	base := obj.DeepCopyObject().(client.Object)
	for i := range *conds {
		if (*conds)[i].Type == want.Type {
			if (*conds)[i].Status == want.Status {
				return nil
			}
			(*conds)[i] = want
			return c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		}
	}
	*conds = append(*conds, want)
	return c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// waitSynced waits until the MachineSet and Machines are synchronized from
// side, and, from the Machine API, the CAPI side is paused.
func (w *mapiWorld) waitSynced(ctx context.Context, msName string, machines []string, side mapiv1beta1.SynchronizedAPI) {
	Eventually(func(g Gomega) {
		ms := &mapiv1beta1.MachineSet{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: msName}, ms)).To(Succeed())
		g.Expect(synchronizedFrom(ms.Status.Conditions, ms.Status.SynchronizedAPI)).To(Equal(string(side)))
		for _, name := range machines {
			m := &mapiv1beta1.Machine{}
			g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: name}, m)).To(Succeed())
			g.Expect(synchronizedFrom(m.Status.Conditions, m.Status.SynchronizedAPI)).To(Equal(string(side)), "Machine %s", name)
			if side == mapiv1beta1.SynchronizedAPIMachineAPI {
				capi := &clusterv1.Machine{}
				g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: name}, capi)).To(Succeed())
				g.Expect(annotations.HasPaused(capi)).To(BeTrue())
			}
		}
	}, 3*time.Minute, 2*time.Second).Should(Succeed())
}

func synchronizedFrom(cs []mapiv1beta1.Condition, api mapiv1beta1.SynchronizedAPI) string {
	for _, c := range cs {
		if c.Type == "Synchronized" {
			if c.Status != corev1.ConditionTrue {
				return string(c.Status) + ": " + c.Message
			}
			return string(api)
		}
	}
	return "no Synchronized condition"
}

// setAuthority sets spec.authoritativeAPI of the MachineSet and Machines.
func (w *mapiWorld) setAuthority(ctx context.Context, msName string, machines []string, a mapiv1beta1.MachineAuthority) {
	objs := []client.Object{&mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: msName}}}
	for _, n := range machines {
		objs = append(objs, &mapiv1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: n}})
	}
	patch := []byte(fmt.Sprintf(`{"spec":{"authoritativeAPI":%q}}`, a))
	for _, o := range objs {
		Expect(w.c.Patch(ctx, o, client.RawPatch("application/merge-patch+json", patch))).To(Succeed())
	}
}

// waitAuthority waits until the status of the MachineSet and Machines
// says a, and the CAPI side is unpaused when a is ClusterAPI.
func (w *mapiWorld) waitAuthority(ctx context.Context, msName string, machines []string, a mapiv1beta1.MachineAuthority) {
	Eventually(func(g Gomega) {
		ms := &mapiv1beta1.MachineSet{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: msName}, ms)).To(Succeed())
		g.Expect(ms.Status.AuthoritativeAPI).To(Equal(a), "MachineSet conditions %+v", ms.Status.Conditions)
		for _, name := range machines {
			m := &mapiv1beta1.Machine{}
			g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: name}, m)).To(Succeed())
			g.Expect(m.Status.AuthoritativeAPI).To(Equal(a), "Machine %s conditions %+v", name, m.Status.Conditions)
			if a == mapiv1beta1.MachineAuthorityClusterAPI {
				capi := &clusterv1.Machine{}
				g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: name}, capi)).To(Succeed())
				g.Expect(annotations.HasPaused(capi)).To(BeFalse())
			}
		}
	}, 3*time.Minute, 2*time.Second).Should(Succeed())
}

// waitAdopted waits until the Machine's OpenStackServer runs the server
// MAPO made, with its port.
func (w *migrationWorld) waitAdopted(ctx context.Context, name string, before map[string][]string) {
	Eventually(func(g Gomega) {
		oss := &infrav1alpha1.OpenStackServer{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: name}, oss)).To(Succeed())
		g.Expect(ptr.Deref(oss.Status.InstanceID, "")).NotTo(BeEmpty(), "OpenStackServer conditions %+v", oss.Status.Conditions)
		g.Expect(before["server"]).To(ContainElement(name+"/"+*oss.Status.InstanceID), "the server MAPO made")
		g.Expect(oss.Status.Resources).NotTo(BeNil())
		g.Expect(oss.Status.Resources.Ports).To(HaveLen(1))
		g.Expect(before["port"]).To(ContainElement(name+"-0/"+oss.Status.Resources.Ports[0].ID), "the port MAPO made")
		osm := &infrav1.OpenStackMachine{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: name}, osm)).To(Succeed())
		g.Expect(osm.Status.Initialization).NotTo(BeNil())
		g.Expect(ptr.Deref(osm.Status.Initialization.Provisioned, false)).To(BeTrue())
	}, 3*time.Minute, 2*time.Second).Should(Succeed())
}

// waitScaled waits until the CAPI MachineSet runs n provisioned machines
// and the MAPI MachineSet mirrors it (n replicas, n Machines); it returns
// the Machines' names.
func (w *migrationWorld) waitScaled(ctx context.Context, msName string, n int) []string {
	var names []string
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(w.c.List(ctx, list, client.InNamespace(w.capiNS), client.MatchingLabels(w.selector(msName)))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		names = nil
		for _, m := range list.Items {
			osm := &infrav1.OpenStackMachine{}
			g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: m.Spec.InfrastructureRef.Name}, osm)).To(Succeed())
			g.Expect(osm.Status.Initialization).NotTo(BeNil(), "OpenStackMachine %s", osm.Name)
			g.Expect(ptr.Deref(osm.Status.Initialization.Provisioned, false)).To(BeTrue())
			mapi := &mapiv1beta1.Machine{}
			g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: m.Name}, mapi)).To(Succeed(), "MAPI mirror of %s", m.Name)
			g.Expect(synchronizedFrom(mapi.Status.Conditions, mapi.Status.SynchronizedAPI)).To(Equal("ClusterAPI"))
			names = append(names, m.Name)
		}
		ms := &mapiv1beta1.MachineSet{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: msName}, ms)).To(Succeed())
		g.Expect(ptr.Deref(ms.Spec.Replicas, 0)).To(BeEquivalentTo(n))
		g.Expect(ms.Status.Replicas).To(BeEquivalentTo(n))
	}, 4*time.Minute, 2*time.Second).Should(Succeed())
	sort.Strings(names)
	return names
}

// waitPaused waits until the CAPI Machine, OpenStackMachine and
// OpenStackServer of a rolled back machine are paused.
func (w *migrationWorld) waitPaused(ctx context.Context, name string) {
	Eventually(func(g Gomega) {
		for _, o := range []client.Object{&clusterv1.Machine{}, &infrav1.OpenStackMachine{}, &infrav1alpha1.OpenStackServer{}} {
			g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: name}, o)).To(Succeed())
			g.Expect(annotations.HasPaused(o)).To(BeTrue(), "%T %s", o, name)
		}
	}, 3*time.Minute, 2*time.Second).Should(Succeed())
}

// deleteAll deletes the MAPI MachineSet; MAPO (played) deletes each
// Machine's server, trunk and port; then the cluster and the installer's
// network go.
func (w *migrationWorld) deleteAll(ctx context.Context, msName string) {
	Expect(w.c.Delete(ctx, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: msName}})).To(Succeed())
	Eventually(func(g Gomega) {
		list := &mapiv1beta1.MachineList{}
		g.Expect(w.c.List(ctx, list, client.InNamespace(w.mapiNS), client.MatchingLabels(w.selector(msName)))).To(Succeed())
		for i := range list.Items {
			m := &list.Items[i]
			if m.DeletionTimestamp.IsZero() {
				// The MachineSet's machines go with it (garbage collection).
				continue
			}
			if controllerutil.ContainsFinalizer(m, mapiMachineFinalizer) {
				w.playMAPODelete(ctx, m)
			}
		}
		g.Expect(list.Items).To(BeEmpty())
		err := w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: msName}, &mapiv1beta1.MachineSet{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "MAPI MachineSet still there: %v", err)
		capi := &clusterv1.MachineList{}
		g.Expect(w.c.List(ctx, capi, client.InNamespace(w.capiNS), client.MatchingLabels(w.selector(msName)))).To(Succeed())
		g.Expect(capi.Items).To(BeEmpty())
		err = w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: msName}, &clusterv1.MachineSet{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "CAPI MachineSet still there: %v", err)
	}, 4*time.Minute, 3*time.Second).Should(Succeed())

	Expect(w.c.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.capiNS, Name: w.infra}})).To(Succeed())
	Eventually(func() bool {
		err := w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: w.infra}, &clusterv1.Cluster{})
		return apierrors.IsNotFound(err)
	}, 3*time.Minute, 2*time.Second).Should(BeTrue())
	Expect(groups.Delete(ctx, w.os.network, w.sgID).ExtractErr()).To(Succeed())
	Expect(subnets.Delete(ctx, w.os.network, w.subID).ExtractErr()).To(Succeed())
	Expect(networks.Delete(ctx, w.os.network, w.netID).ExtractErr()).To(Succeed())
	for _, s := range []string{"openstack-cloud-credentials", "worker-user-data"} {
		_ = w.c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: s}})
	}
}

// leakCheck: nothing of this cluster is left in OpenStack.
func (w *migrationWorld) leakCheck(ctx context.Context) {
	o, err := localenv.NewOpenStack(ctx, *cloudsYAML, w.cloud)
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) {
		all, err := o.All(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(localenv.ClusterResources(all, w.infra, nil)).To(BeEmpty(), "OpenStack resources of %s left", w.infra)
	}, 2*time.Minute, 5*time.Second).Should(Succeed())
}

// cloudState is name/ID of every server, port, trunk and volume of the
// cluster, by kind, sorted.
func (w *migrationWorld) cloudState(ctx context.Context) map[string][]string {
	o, err := localenv.NewOpenStack(ctx, *cloudsYAML, w.cloud)
	Expect(err).NotTo(HaveOccurred())
	all, err := o.All(ctx)
	Expect(err).NotTo(HaveOccurred())
	out := map[string][]string{}
	for _, r := range localenv.ClusterResources(all, w.infra, nil) {
		switch r.Kind {
		case "server", "port", "trunk", "volume":
			out[r.Kind] = append(out[r.Kind], r.Name+"/"+r.ID)
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// Proxy counts of the provider's calls.

var resourcePaths = map[string][2]string{ // kind: create path, delete path template
	"servers": {"/v2.1/servers", "/v2.1/servers/{id}"},
	"ports":   {"/v2.0/ports", "/v2.0/ports/{id}"},
	"trunks":  {"/v2.0/trunks", "/v2.0/trunks/{id}"},
	"volumes": {"/v3/{id}/volumes", "/v3/{id}/volumes/{id}"},
}

func (w *migrationWorld) count(method, path string) int {
	return w.proxy.Count(openstackproxy.Match{Method: method, Path: path})
}

func (w *migrationWorld) creates() int {
	n := 0
	for _, p := range resourcePaths {
		n += w.count("POST", p[0])
	}
	return n
}

func (w *migrationWorld) deletes() int {
	n := 0
	for _, p := range resourcePaths {
		n += w.count("DELETE", p[1])
	}
	return n
}

// serverWrites are the calls that change a server (create, delete,
// actions, metadata, tags).
func (w *migrationWorld) serverWrites() int {
	return w.proxy.CountFunc(func(c openstackproxy.Call) bool {
		return c.Service == openstackproxy.ServiceCompute && c.Method != "GET" && strings.HasPrefix(c.Path, "/v2.1/servers")
	})
}

// writes are the create and delete counts by kind, for the report.
func (w *migrationWorld) writes() string {
	var parts []string
	for _, kind := range []string{"servers", "ports", "trunks", "volumes"} {
		p := resourcePaths[kind]
		parts = append(parts, fmt.Sprintf("%s %d created / %d deleted", kind, w.count("POST", p[0]), w.count("DELETE", p[1])))
	}
	return strings.Join(parts, ", ")
}

func (w *migrationWorld) record(step string, start time.Time, writes string) {
	w.mapiWorld.record(step, start, fmt.Sprintf("proxy: %s; all calls: %d", writes, len(w.proxy.Calls())))
}

func (w *mapiWorld) record(step string, start time.Time, what string) {
	line := fmt.Sprintf("%s: %s in %s; %s", w.infra, step, time.Since(start).Round(100*time.Millisecond), what)
	w.timings = append(w.timings, line)
	GinkgoWriter.Println(line)
}

// mgrOptions are the options of a manager of stand-ins in the test
// process: no metrics or probe listener, names may repeat.
func mgrOptions(s *runtime.Scheme) ctrl.Options {
	return ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}}
}

type reconcileFunc func(context.Context, ctrl.Request) (ctrl.Result, error)

func (f reconcileFunc) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return f(ctx, req)
}
