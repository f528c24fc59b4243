package openstack

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1beta1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	osprovider "github.com/ocp-capi/ocp-capi/internal/openstack"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	infrawebhooks "github.com/ocp-capi/ocp-capi/internal/openstack/webhooks"
	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// The take-over of a cluster that CAPO v0.14 created (issue 19, item 3;
// docs/openstack/from-capo.md). The test plays CAPO: it makes the
// OpenStack resources as CAPO names, describes and tags them, and stores
// the objects as CAPO stores them, at v1beta1 with CAPO's status, through
// an API server that runs this provider's conversion webhook. Then this
// provider's controllers start and must adopt everything: no create and
// no delete of any OpenStack resource, counted at the proxy.

// capoCloud is what the played CAPO made in OpenStack.
type capoCloud struct {
	base, desc                     string // k8s-clusterapi-cluster-<ns>-<name>; CAPO's description
	tags                           []string
	networkID, subnetID, routerID  string
	routerIP                       string
	cpSG, workerSG, bastionSG      string
	lbID, vip, vipPortID           string
	fipID, fip                     string
	extNetID                       string
	servers, serverPorts, serverIP map[string]string // by machine name (and the bastion's)
	bastion, bastionFIPID          string            // the bastion server's name; its floating IP
	bastionFIP                     string
	trunkID, volumeID              string // of the first worker ("" for a cloud without Cinder)
	rootVolumeID                   string // of the first control-plane machine, with capoShape.rootVolume
}

// capoShape is what a played CAPO cluster has beyond the default.
type capoShape struct {
	// rootVolume: the first control-plane machine boots from a root
	// volume (spec.rootVolume), when the cloud has Cinder.
	rootVolume bool
	// noLoadBalancer: no API load balancer (v1beta1
	// apiServerLoadBalancer absent); the API endpoint is a floating IP on
	// the first control-plane machine.
	noLoadBalancer bool
}

// capoCluster makes, as CAPO v0.14 would, the network, subnet and router
// (k8s-clusterapi-cluster-<ns>-<name>), the control-plane and worker
// security groups (k8s-cluster-<ns>-<name>-secgroup-*), the API load
// balancer (<base>-kubeapi; listener, pool and monitor <lb>-<port>) with a
// floating IP on its VIP, and per machine a port <machine>-0 and a server
// <machine>; control-plane machines join the pool as <pool>-<machine>.
// The first worker's port is a trunk parent (the trunk has the port's
// name), and, when the cloud has Cinder, the worker has an additional
// volume <machine>-data that CAPO creates before the server. The bastion
// is the server <cluster>-bastion with its port <cluster>-bastion-0 in the
// bastion security group, and a floating IP on that port. With
// shape.noLoadBalancer there is no load balancer, and the API floating IP
// is on the first control-plane machine's port. With shape.rootVolume the first control-plane machine boots from the volume
// <machine>-root that CAPO creates from the image before the server.
func capoCluster(t *testing.T, lbc *gophercloud.ServiceClient, ns, name string, cp, workers []string, shape capoShape) *capoCloud {
	t.Helper()
	ctx := context.Background()
	c := &capoCloud{
		base: clusterBase(ns, name), desc: "Created by cluster-api-provider-openstack cluster " + ns + "-" + name,
		tags: []string{"capo-" + fx.prefix}, extNetID: externalNetworkID(t),
		servers: map[string]string{}, serverPorts: map[string]string{}, serverIP: map[string]string{},
	}
	tag := func(kind, id string) {
		_, err := attributestags.ReplaceAll(ctx, direct.network, kind, id, attributestags.ReplaceAllOpts{Tags: c.tags}).Extract()
		Expect(err).NotTo(HaveOccurred(), "tagging %s %s", kind, id)
	}
	n, err := networks.Create(ctx, direct.network, networks.CreateOpts{Name: c.base, AdminStateUp: ptr.To(true)}).Extract()
	Expect(err).NotTo(HaveOccurred())
	c.networkID = n.ID
	tag("networks", n.ID)
	sn, err := subnets.Create(ctx, direct.network, subnets.CreateOpts{NetworkID: n.ID, Name: c.base, Description: c.desc,
		CIDR: "10.6.0.0/24", IPVersion: gophercloud.IPv4}).Extract()
	Expect(err).NotTo(HaveOccurred())
	c.subnetID = sn.ID
	tag("subnets", sn.ID)
	r, err := routers.Create(ctx, direct.network, routers.CreateOpts{Name: c.base, Description: c.desc,
		GatewayInfo: &routers.GatewayInfo{NetworkID: c.extNetID}}).Extract()
	Expect(err).NotTo(HaveOccurred())
	c.routerID = r.ID
	for _, ip := range r.GatewayInfo.ExternalFixedIPs {
		c.routerIP = ip.IPAddress
	}
	tag("routers", r.ID)
	_, err = routers.AddInterface(ctx, direct.network, r.ID, routers.AddInterfaceOpts{SubnetID: sn.ID}).Extract()
	Expect(err).NotTo(HaveOccurred())

	sg := func(role string) string {
		g, err := groups.Create(ctx, direct.network, groups.CreateOpts{
			Name: "k8s-cluster-" + ns + "-" + name + "-secgroup-" + role, Description: "Cluster API managed group"}).Extract()
		Expect(err).NotTo(HaveOccurred())
		tag("security-groups", g.ID)
		return g.ID
	}
	c.cpSG, c.workerSG, c.bastionSG = sg("controlplane"), sg("worker"), sg("bastion")
	rule := func(group, desc string, proto rules.RuleProtocol, min, max int, remoteGroup, prefix string) {
		_, err := rules.Create(ctx, direct.network, rules.CreateOpts{SecGroupID: group, Description: desc, Direction: rules.DirIngress,
			EtherType: rules.EtherType4, Protocol: proto, PortRangeMin: min, PortRangeMax: max, RemoteGroupID: remoteGroup, RemoteIPPrefix: prefix}).Extract()
		Expect(err).NotTo(HaveOccurred())
	}
	// Some of CAPO v0.14's default rules, as CAPO describes them.
	rule(c.cpSG, "Kubernetes API", rules.ProtocolTCP, 6443, 6443, "", "")
	rule(c.cpSG, "Etcd", rules.ProtocolTCP, 2379, 2380, c.cpSG, "")
	for _, g := range []string{c.cpSG, c.workerSG} {
		rule(g, "Kubelet API", rules.ProtocolTCP, 10250, 10250, c.cpSG, "")
		rule(g, "Kubelet API", rules.ProtocolTCP, 10250, 10250, c.workerSG, "")
	}
	rule(c.workerSG, "Node Port Services", rules.ProtocolTCP, 30000, 32767, c.workerSG, "")
	rule(c.workerSG, "Node Port Services", rules.ProtocolTCP, 30000, 32767, c.cpSG, "")
	rule(c.bastionSG, "SSH", rules.ProtocolTCP, 22, 22, "", "0.0.0.0/0")

	// The API endpoint: the load balancer's floating IP or, without a
	// load balancer, the floating IP that CAPO's cluster controller
	// allocates (tagged with the cluster's tags) and its machine
	// controller puts on the first control-plane machine's first port.
	var addMember func(m string)
	if shape.noLoadBalancer {
		f, err := floatingips.Create(ctx, direct.network, floatingips.CreateOpts{FloatingNetworkID: c.extNetID, Description: c.desc}).Extract()
		Expect(err).NotTo(HaveOccurred())
		c.fipID, c.fip = f.ID, f.FloatingIP
		tag("floatingips", f.ID)
	} else {
		addMember = capoLoadBalancer(lbc, c, sn.ID)
	}

	// CAPO v0.14 makes a machine's volumes through Cinder and waits for
	// them before it creates the server.
	volume := func(opts volumes.CreateOpts) string {
		v, err := volumes.Create(ctx, direct.volume, opts, nil).Extract()
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			got, err := volumes.Get(ctx, direct.volume, v.ID).Extract()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Status).To(Equal("available"))
		}, 3*wait, time.Second).Should(Succeed(), "the played CAPO's volume %s", opts.Name)
		return v.ID
	}
	machine := func(m, sg string, extras, root bool) {
		port, err := ports.Create(ctx, direct.network, ports.CreateOpts{Name: m + "-0", Description: c.desc, NetworkID: n.ID,
			SecurityGroups: &[]string{sg}}).Extract()
		Expect(err).NotTo(HaveOccurred())
		tag("ports", port.ID)
		c.serverPorts[m] = port.ID
		c.serverIP[m] = port.FixedIPs[0].IPAddress
		opts := servers.CreateOpts{Name: m, FlavorRef: fx.flavorID, ImageRef: fx.imageID,
			Networks: []servers.Network{{Port: port.ID}}, Tags: c.tags}
		if extras {
			tr, err := trunks.Create(ctx, direct.network, trunks.CreateOpts{PortID: port.ID, Name: m + "-0", Description: c.desc}).Extract()
			Expect(err).NotTo(HaveOccurred())
			c.trunkID = tr.ID
			tag("trunks", tr.ID)
		}
		if extras && direct.volume != nil {
			// CAPO creates the volume, then boots with it (and the image)
			// in the block device mapping, deleted on termination.
			c.volumeID = volume(volumes.CreateOpts{Name: m + "-data", Size: 1, Description: "Additional block device for " + m})
			opts.BlockDevice = []servers.BlockDevice{
				{SourceType: servers.SourceImage, UUID: fx.imageID, DestinationType: servers.DestinationLocal, BootIndex: 0, DeleteOnTermination: true},
				{SourceType: servers.SourceVolume, UUID: c.volumeID, DestinationType: servers.DestinationVolume, BootIndex: -1, DeleteOnTermination: true},
			}
		}
		if root && direct.volume != nil {
			// The root volume, made from the image; the server has no
			// image of its own and boots from the volume, deleted on
			// termination.
			c.rootVolumeID = volume(volumes.CreateOpts{Name: m + "-root", Size: 1, Description: "Root volume for " + m, ImageID: fx.imageID})
			opts.ImageRef = ""
			opts.BlockDevice = []servers.BlockDevice{
				{SourceType: servers.SourceVolume, UUID: c.rootVolumeID, DestinationType: servers.DestinationVolume, BootIndex: 0, DeleteOnTermination: true},
			}
		}
		srv, err := servers.Create(ctx, direct.compute, opts, nil).Extract()
		Expect(err).NotTo(HaveOccurred())
		c.servers[m] = srv.ID
	}
	for i, m := range cp {
		machine(m, c.cpSG, false, i == 0 && shape.rootVolume)
	}
	for i, m := range workers {
		machine(m, c.workerSG, i == 0, false)
	}
	c.bastion = name + "-bastion"
	machine(c.bastion, c.bastionSG, false, false)
	for m, id := range c.servers {
		Eventually(func(g Gomega) {
			s, err := servers.Get(ctx, direct.compute, id).Extract()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Status).To(Equal("ACTIVE"), "server %s", m)
		}, 3*wait, time.Second).Should(Succeed())
	}
	bf, err := floatingips.Create(ctx, direct.network, floatingips.CreateOpts{FloatingNetworkID: c.extNetID,
		PortID: c.serverPorts[c.bastion], Description: c.desc}).Extract()
	Expect(err).NotTo(HaveOccurred())
	c.bastionFIPID, c.bastionFIP = bf.ID, bf.FloatingIP
	if addMember == nil {
		_, err := floatingips.Update(ctx, direct.network, c.fipID, floatingips.UpdateOpts{PortID: ptr.To(c.serverPorts[cp[0]])}).Extract()
		Expect(err).NotTo(HaveOccurred())
		return c
	}
	for _, m := range cp {
		addMember(m)
	}
	return c
}

// capoLoadBalancer makes CAPO's API load balancer on the subnet, with a
// floating IP on its VIP, and returns what adds a control-plane machine
// to its pool.
func capoLoadBalancer(lbc *gophercloud.ServiceClient, c *capoCloud, subnetID string) func(m string) {
	ctx := context.Background()
	lbName := c.base + "-kubeapi"
	lb, err := loadbalancers.Create(ctx, lbc, loadbalancers.CreateOpts{Name: lbName, Description: c.desc, VipSubnetID: subnetID, Tags: c.tags}).Extract()
	Expect(err).NotTo(HaveOccurred())
	c.lbID = lb.ID
	waitLB := func() {
		Eventually(func(g Gomega) {
			got, err := loadbalancers.Get(ctx, lbc, c.lbID).Extract()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.ProvisioningStatus).To(Equal("ACTIVE"))
			c.vip, c.vipPortID = got.VipAddress, got.VipPortID
		}, 3*wait, time.Second).Should(Succeed(), "the played CAPO's load balancer")
	}
	waitLB()
	pool := fmt.Sprintf("%s-%d", lbName, 6443)
	l, err := listeners.Create(ctx, lbc, listeners.CreateOpts{Name: pool, Protocol: listeners.ProtocolTCP, ProtocolPort: 6443,
		LoadbalancerID: lb.ID, Tags: c.tags}).Extract()
	Expect(err).NotTo(HaveOccurred())
	waitLB()
	p, err := pools.Create(ctx, lbc, pools.CreateOpts{Name: pool, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin,
		ListenerID: l.ID, Tags: c.tags}).Extract()
	Expect(err).NotTo(HaveOccurred())
	waitLB()
	_, err = monitors.Create(ctx, lbc, monitors.CreateOpts{Name: pool, PoolID: p.ID, Type: monitors.TypeTCP,
		Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3}).Extract()
	Expect(err).NotTo(HaveOccurred())
	waitLB()
	f, err := floatingips.Create(ctx, direct.network, floatingips.CreateOpts{FloatingNetworkID: c.extNetID, PortID: c.vipPortID,
		Description: c.desc}).Extract()
	Expect(err).NotTo(HaveOccurred())
	c.fipID, c.fip = f.ID, f.FloatingIP
	return func(m string) {
		_, err := pools.CreateMember(ctx, lbc, p.ID, pools.CreateMemberOpts{Name: pool + "-" + m, Address: c.serverIP[m],
			ProtocolPort: 6443, Tags: c.tags}).Extract()
		Expect(err).NotTo(HaveOccurred())
		waitLB()
	}
}

// removeCAPOCluster deletes what capoCluster made, for a test that failed
// before the provider deleted it.
func removeCAPOCluster(c *capoCloud, lbc *gophercloud.ServiceClient) {
	ctx := context.Background()
	for _, id := range c.servers {
		_ = servers.Delete(ctx, direct.compute, id).ExtractErr()
	}
	_ = floatingips.Delete(ctx, direct.network, c.fipID).ExtractErr()
	_ = floatingips.Delete(ctx, direct.network, c.bastionFIPID).ExtractErr()
	if c.trunkID != "" {
		_ = trunks.Delete(ctx, direct.network, c.trunkID).ExtractErr()
	}
	if c.lbID != "" {
		_ = loadbalancers.Delete(ctx, lbc, c.lbID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr()
	}
	for i := 0; i < 60; i++ {
		if _, err := servers.Get(ctx, direct.compute, firstValue(c.servers)).Extract(); err != nil {
			if c.lbID == "" {
				break
			}
			if _, err := loadbalancers.Get(ctx, lbc, c.lbID).Extract(); err != nil {
				break
			}
		}
		time.Sleep(time.Second)
	}
	_, _ = routers.RemoveInterface(ctx, direct.network, c.routerID, routers.RemoveInterfaceOpts{SubnetID: c.subnetID}).Extract()
	_ = routers.Delete(ctx, direct.network, c.routerID).ExtractErr()
	// The servers' ports, and the VIP port a load balancer driver may
	// leave behind.
	if pages, err := ports.List(direct.network, ports.ListOpts{NetworkID: c.networkID}).AllPages(ctx); err == nil {
		pl, _ := ports.ExtractPorts(pages)
		for _, p := range pl {
			_ = ports.Delete(ctx, direct.network, p.ID).ExtractErr()
		}
	}
	_ = networks.Delete(ctx, direct.network, c.networkID).ExtractErr()
	_ = groups.Delete(ctx, direct.network, c.cpSG).ExtractErr()
	_ = groups.Delete(ctx, direct.network, c.workerSG).ExtractErr()
	_ = groups.Delete(ctx, direct.network, c.bastionSG).ExtractErr()
	for _, id := range []string{c.volumeID, c.rootVolumeID} {
		if id != "" {
			_ = volumes.Delete(ctx, direct.volume, id, volumes.DeleteOpts{}).ExtractErr()
		}
	}
}

func neutronTags(tags []string) []infrav1.NeutronTag {
	out := make([]infrav1.NeutronTag, 0, len(tags))
	for _, t := range tags {
		out = append(out, infrav1.NeutronTag(t))
	}
	return out
}

func firstValue(m map[string]string) string {
	for _, v := range m {
		return v
	}
	return ""
}

// capoEnv is an API server whose CRDs convert through this provider's
// conversion webhook, served in this process with the other webhooks.
func capoEnv(t *testing.T) *envtest.Environment {
	t.Helper()
	e, stop, err := envtest.StartWithWebhooks(context.Background(), envtest.WebhookEnvOptions{
		Manifests:   []string{"internal/openstack/config/webhook"},
		AddToScheme: osprovider.AddToScheme,
		Setup:       infrawebhooks.SetupWebhooks,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return e
}

// startManagerOn runs the provider's controllers against e (as
// startManager does against the suite's API server).
func startManagerOn(t *testing.T, e *envtest.Environment) {
	t.Helper()
	mgr, err := ctrl.NewManager(e.ControllerConfig(), ctrl.Options{
		Scheme:                 e.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	for _, c := range osprovider.Controllers(osprovider.Options{}) {
		if err := c.Setup(ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: 10}); err != nil {
			cancel()
			t.Fatal(err)
		}
	}
	tm := &testManager{cancel: cancel, done: make(chan error, 1)}
	go func() { tm.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { tm.stop(t) })
}

// v1beta1Condition is a CAPI v1beta1 condition as CAPO v0.14 writes it
// (MarkTrue: no reason, no severity).
func v1beta1Condition(typ string) infrav1beta1.Condition {
	return infrav1beta1.Condition{Type: infrav1beta1.ConditionType(typ), Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))}
}

// createCAPOServer stores the OpenStackServer that CAPO v0.14 keeps for
// server name of cluster (a machine's or the bastion), owned (not
// controlled) by owner, as CAPO writes it once the server is ACTIVE: one
// port on the cluster network with group sg, the cluster's tags; edit adds
// what this server has of its own.
func createCAPOServer(ctx context.Context, cl client.Client, c *capoCloud, ns, cluster, name, sg string, owner metav1.OwnerReference,
	addresses []clusterv1.MachineAddress, edit func(*infrav1alpha1.OpenStackServerSpec)) {
	oss := &infrav1alpha1.OpenStackServer{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster},
			Finalizers: []string{infrav1alpha1.OpenStackServerFinalizer}, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: infrav1alpha1.OpenStackServerSpec{
			Flavor: ptr.To(fx.flavorName), Image: infrav1.ImageParam{ID: ptr.To(fx.imageID)},
			IdentityRef: infrav1.OpenStackIdentityReference{Type: "Secret", Name: "cloud", CloudName: testCloud},
			Ports: []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(c.networkID)},
				SecurityGroups: []infrav1.SecurityGroupParam{{ID: ptr.To(sg)}}}},
			Tags: c.tags,
		},
	}
	edit(&oss.Spec)
	Expect(cl.Create(ctx, oss)).To(Succeed())
	status := infrav1alpha1.OpenStackServerStatus{
		InstanceID: ptr.To(c.servers[name]), InstanceState: ptr.To(infrav1.InstanceState("ACTIVE")),
		Addresses: addresses,
		Resolved: &infrav1alpha1.ResolvedServerSpec{ImageID: fx.imageID, FlavorID: fx.flavorID, Ports: []infrav1.ResolvedPortSpec{{
			Name: name + "-0", Description: c.desc, NetworkID: c.networkID, Tags: neutronTags(c.tags), SecurityGroups: []string{sg}}}},
		Resources: &infrav1alpha1.ServerResources{Ports: []infrav1.PortStatus{{ID: c.serverPorts[name]}}},
	}
	// CAPO v0.14's status of an ACTIVE server: ready, and CAPI v1beta1
	// conditions, which the typed object cannot carry: Ready summarising
	// InstanceReady, both True, so without reason, message or severity.
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(oss)
	Expect(err).NotTo(HaveOccurred())
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&status)
	Expect(err).NotTo(HaveOccurred())
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	st["ready"] = true
	st["conditions"] = []any{
		map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": since},
		map[string]any{"type": "InstanceReady", "status": "True", "lastTransitionTime": since},
	}
	u["status"] = st
	obj := &unstructured.Unstructured{Object: u}
	obj.SetGroupVersionKind(infrav1alpha1.GroupVersion.WithKind("OpenStackServer"))
	// Refused until CAPO's schema is in effect (ours wants a reason).
	Eventually(func() error { return cl.Status().Update(ctx, obj) }, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

// capoServerCRD puts CAPO v0.14's status schema on the OpenStackServer CRD
// (CAPI v1beta1 conditions: only type, status and lastTransitionTime
// required; status.ready required), so that servers can be stored as CAPO
// stored them; the v1beta1 conditions schema is the one this provider
// serves for OpenStackMachine at v1beta1. The returned func puts this
// provider's CRD back, as the switch does, and returns once a server reads
// as ours (status.ready pruned).
func capoServerCRD(ctx context.Context, cl client.Client) func(server client.ObjectKey) {
	machines := &apiextensionsv1.CustomResourceDefinition{}
	Expect(cl.Get(ctx, client.ObjectKey{Name: "openstackmachines." + infrav1.GroupVersion.Group}, machines)).To(Succeed())
	var v1beta1Conditions apiextensionsv1.JSONSchemaProps
	for _, v := range machines.Spec.Versions {
		if v.Name == infrav1beta1.GroupVersion.Version {
			v1beta1Conditions = v.Schema.OpenAPIV3Schema.Properties["status"].Properties["conditions"]
		}
	}
	Expect(v1beta1Conditions.Items).NotTo(BeNil())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	Expect(cl.Get(ctx, client.ObjectKey{Name: "openstackservers." + infrav1.GroupVersion.Group}, crd)).To(Succeed())
	ours := crd.Spec.DeepCopy()
	Expect(crd.Spec.Versions).To(HaveLen(1))
	st := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	st.Properties["conditions"] = v1beta1Conditions
	st.Properties["ready"] = apiextensionsv1.JSONSchemaProps{Type: "boolean", Default: &apiextensionsv1.JSON{Raw: []byte("false")}}
	st.Required = []string{"ready"}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"] = st
	Expect(cl.Update(ctx, crd)).To(Succeed())
	return func(server client.ObjectKey) {
		Expect(cl.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
		crd.Spec = *ours
		Expect(cl.Update(ctx, crd)).To(Succeed())
		Eventually(func(g Gomega) {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(infrav1alpha1.GroupVersion.WithKind("OpenStackServer"))
			g.Expect(cl.Get(ctx, server, u)).To(Succeed())
			_, found, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "ready")
			g.Expect(found).To(BeFalse(), "status.ready is still served")
		}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	}
}

// capoObjects stores, as CAPO v0.14 and CAPI core would have left them:
// the Cluster (paused), the OpenStackCluster (v1beta1), and per machine the
// bootstrap Secret, the Machine, the OpenStackMachine (v1beta1) and the
// OpenStackServer (v1alpha1) CAPO's machine controller made. It checks
// that each v1beta1 object reads back exactly as written.
func capoObjects(t *testing.T, e *envtest.Environment, ns, name string, c *capoCloud, cp, workers []string) (*infrav1beta1.OpenStackCluster, map[string]*infrav1beta1.OpenStackMachine) {
	t.Helper()
	ctx := context.Background()
	cl := e.Client
	Expect(cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	Expect(cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: ns},
		Data: map[string][]byte{clients.CloudsYAMLKey: fx.identitySecretYAML}})).To(Succeed())

	endpoint := clusterv1.APIEndpoint{Host: c.fip, Port: 6443}
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		// Paused, as step 1 of the switch leaves it.
		Spec: clusterv1.ClusterSpec{Paused: ptr.To(true), ControlPlaneEndpoint: endpoint, InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name}},
	}
	Expect(cl.Create(ctx, cluster)).To(Succeed())
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	Expect(cl.Status().Update(ctx, cluster)).To(Succeed())

	subnet := infrav1beta1.Subnet{Name: c.base, ID: c.subnetID, CIDR: "10.6.0.0/24", Tags: c.tags}
	network := &infrav1beta1.NetworkStatusWithSubnets{NetworkStatus: infrav1beta1.NetworkStatus{Name: c.base, ID: c.networkID, Tags: c.tags},
		Subnets: []infrav1beta1.Subnet{subnet}}
	osc := &infrav1beta1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name},
			Finalizers:      []string{infrav1.OpenStackClusterFinalizer},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: cluster.UID}}},
		// CAPO v0.14.7's default template (templates/cluster-template.yaml).
		Spec: infrav1beta1.OpenStackClusterSpec{
			IdentityRef:           infrav1beta1.OpenStackIdentityReference{Type: "Secret", Name: "cloud", CloudName: testCloud},
			APIServerLoadBalancer: &infrav1beta1.APIServerLoadBalancer{Enabled: ptr.To(true)},
			ExternalNetwork:       &infrav1beta1.NetworkParam{ID: ptr.To(c.extNetID)},
			ManagedSecurityGroups: &infrav1beta1.ManagedSecurityGroups{},
			ManagedSubnets:        []infrav1beta1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
			Tags:                  c.tags,
			ControlPlaneEndpoint:  &infrav1beta1.APIEndpoint{Host: c.fip, Port: 6443},
			Bastion: &infrav1beta1.Bastion{Enabled: ptr.To(true), Spec: &infrav1beta1.OpenStackMachineSpec{
				Flavor: ptr.To(fx.flavorName), Image: infrav1beta1.ImageParam{ID: ptr.To(fx.imageID)}}},
		},
	}
	if c.lbID == "" {
		// CAPO's without-lb template: no apiServerLoadBalancer.
		osc.Spec.APIServerLoadBalancer = nil
	}
	Expect(cl.Create(ctx, osc)).To(Succeed())
	osc.Status = infrav1beta1.OpenStackClusterStatus{
		Ready:           true,
		Initialization:  &infrav1beta1.ClusterInitialization{Provisioned: true},
		Network:         network,
		ExternalNetwork: &infrav1beta1.NetworkStatus{ID: c.extNetID, Name: "public"},
		Router:          &infrav1beta1.Router{Name: c.base, ID: c.routerID, Tags: c.tags, IPs: []string{c.routerIP}},
		APIServerLoadBalancer: &infrav1beta1.LoadBalancer{Name: c.base + "-kubeapi", ID: c.lbID, IP: c.fip, InternalIP: c.vip,
			Tags: c.tags, LoadBalancerNetwork: network},
		FailureDomains:            infrav1beta1.FailureDomains{"nova": {ControlPlane: true}},
		ControlPlaneSecurityGroup: &infrav1beta1.SecurityGroupStatus{Name: "k8s-cluster-" + ns + "-" + name + "-secgroup-controlplane", ID: c.cpSG},
		WorkerSecurityGroup:       &infrav1beta1.SecurityGroupStatus{Name: "k8s-cluster-" + ns + "-" + name + "-secgroup-worker", ID: c.workerSG},
		BastionSecurityGroup:      &infrav1beta1.SecurityGroupStatus{Name: "k8s-cluster-" + ns + "-" + name + "-secgroup-bastion", ID: c.bastionSG},
		Bastion: &infrav1beta1.BastionStatus{ID: c.servers[c.bastion], Name: c.bastion, State: "ACTIVE", IP: c.serverIP[c.bastion],
			FloatingIP: c.bastionFIP,
			Resolved: &infrav1beta1.ResolvedMachineSpec{ImageID: fx.imageID, FlavorID: fx.flavorID, Ports: []infrav1beta1.ResolvedPortSpec{{
				Name: c.bastion + "-0", Description: c.desc, NetworkID: c.networkID, Tags: c.tags, SecurityGroups: []string{c.bastionSG}}}},
			Resources: &infrav1beta1.MachineResources{Ports: []infrav1beta1.PortStatus{{ID: c.serverPorts[c.bastion]}}}},
		Conditions: infrav1beta1.Conditions{v1beta1Condition("Ready"), v1beta1Condition("APIEndpointReady"),
			v1beta1Condition("NetworkReady"), v1beta1Condition("SecurityGroupsReady")},
	}
	if c.lbID == "" {
		osc.Status.APIServerLoadBalancer = nil
	}
	Expect(cl.Status().Update(ctx, osc)).To(Succeed())
	expectReadBack(t, cl, osc, &infrav1beta1.OpenStackCluster{})

	// The OpenStackServers are stored under CAPO's CRD, replaced by this
	// provider's afterwards, as the switch does.
	restoreServerCRD := capoServerCRD(ctx, cl)
	osms := map[string]*infrav1beta1.OpenStackMachine{}
	add := func(m string, controlPlane bool, sg string, extras bool) {
		bootstrap := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: m + "-bootstrap", Namespace: ns},
			Data: map[string][]byte{"value": []byte("{}"), "format": []byte("ignition")}, Type: clusterv1.ClusterSecretType}
		Expect(cl.Create(ctx, bootstrap)).To(Succeed())
		labels := map[string]string{clusterv1.ClusterNameLabel: name}
		if controlPlane {
			labels[clusterv1.MachineControlPlaneLabel] = ""
		}
		providerID := "openstack:///" + c.servers[m]
		machine := &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Name: m, Namespace: ns, Labels: labels},
			Spec: clusterv1.MachineSpec{ClusterName: name, Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To(bootstrap.Name)},
				ProviderID:        providerID,
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: m}},
		}
		Expect(cl.Create(ctx, machine)).To(Succeed())
		port := infrav1beta1.ResolvedPortSpec{Name: m + "-0", Description: c.desc, NetworkID: c.networkID, Tags: c.tags, SecurityGroups: []string{sg}}
		addresses := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: c.serverIP[m]}, {Type: corev1.NodeInternalDNS, Address: m}}
		machineAddresses := []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: c.serverIP[m]}}
		if c.lbID == "" && m == cp[0] {
			// CAPO lists the floating IP on the machine's port as an
			// external address.
			addresses = slices.Insert(addresses, 1, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: c.fip})
			machineAddresses = append(machineAddresses, clusterv1.MachineAddress{Type: clusterv1.MachineExternalIP, Address: c.fip})
		}
		osm := &infrav1beta1.OpenStackMachine{
			ObjectMeta: metav1.ObjectMeta{Name: m, Namespace: ns, Labels: labels, Finalizers: []string{infrav1.OpenStackMachineFinalizer},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m, UID: machine.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: infrav1beta1.OpenStackMachineSpec{ProviderID: ptr.To(providerID), Flavor: ptr.To(fx.flavorName),
				Image: infrav1beta1.ImageParam{ID: ptr.To(fx.imageID)}},
		}
		var blockDevices []infrav1.AdditionalBlockDevice
		var rootVolume *infrav1.RootVolume
		if c.rootVolumeID != "" && m == cp[0] {
			osm.Spec.RootVolume = &infrav1beta1.RootVolume{SizeGiB: 1}
			rootVolume = &infrav1.RootVolume{SizeGiB: 1}
		}
		if extras {
			osm.Spec.Trunk = true
			if c.volumeID != "" {
				osm.Spec.AdditionalBlockDevices = []infrav1beta1.AdditionalBlockDevice{{Name: "data", SizeGiB: 1,
					Storage: infrav1beta1.BlockDeviceStorage{Type: "Volume"}}}
				blockDevices = []infrav1.AdditionalBlockDevice{{Name: "data", SizeGiB: 1,
					Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}}}
			}
		}
		Expect(cl.Create(ctx, osm)).To(Succeed())
		conds := infrav1beta1.Conditions{v1beta1Condition("Ready"), v1beta1Condition("InstanceReady")}
		if controlPlane {
			conds = append(conds, v1beta1Condition("APIServerIngressReady"))
		}
		osm.Status = infrav1beta1.OpenStackMachineStatus{
			Ready: true, Initialization: &infrav1beta1.MachineInitialization{Provisioned: true},
			InstanceID: ptr.To(c.servers[m]), Addresses: addresses, InstanceState: ptr.To(infrav1beta1.InstanceState("ACTIVE")),
			Resolved:   &infrav1beta1.ResolvedMachineSpec{ImageID: fx.imageID, FlavorID: fx.flavorID, Ports: []infrav1beta1.ResolvedPortSpec{port}},
			Resources:  &infrav1beta1.MachineResources{Ports: []infrav1beta1.PortStatus{{ID: c.serverPorts[m]}}},
			Conditions: conds,
		}
		Expect(cl.Status().Update(ctx, osm)).To(Succeed())
		expectReadBack(t, cl, osm, &infrav1beta1.OpenStackMachine{})
		osms[m] = osm

		// CAPO's machine controller made the machine's OpenStackServer:
		// owned (not controlled) by the OpenStackMachine, the spec derived
		// from the machine's with the cluster's network and group.
		owner := metav1.OwnerReference{APIVersion: infrav1beta1.GroupVersion.String(), Kind: "OpenStackMachine", Name: m, UID: osm.UID}
		createCAPOServer(ctx, cl, c, ns, name, m, sg, owner, machineAddresses, func(spec *infrav1alpha1.OpenStackServerSpec) {
			spec.UserDataRef = &corev1.LocalObjectReference{Name: bootstrap.Name}
			spec.AdditionalBlockDevices, spec.RootVolume = blockDevices, rootVolume
			if extras {
				spec.Trunk = ptr.To(true)
			}
		})
	}
	for _, m := range cp {
		add(m, true, c.cpSG, false)
	}
	for i, m := range workers {
		add(m, false, c.workerSG, i == 0)
	}

	// CAPO's cluster controller made the bastion's OpenStackServer, named
	// after the Cluster, owned (not controlled) by the OpenStackCluster;
	// its spec is CAPO's derivation of spec.bastion.spec: the cluster's
	// tags, one port on the cluster network with the bastion group.
	owner := metav1.OwnerReference{APIVersion: infrav1beta1.GroupVersion.String(), Kind: "OpenStackCluster", Name: name, UID: osc.UID}
	createCAPOServer(ctx, cl, c, ns, name, c.bastion, c.bastionSG, owner,
		[]clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: c.serverIP[c.bastion]}}, func(*infrav1alpha1.OpenStackServerSpec) {})
	restoreServerCRD(client.ObjectKey{Namespace: ns, Name: c.bastion})
	return osc, osms
}

// expectReadBack reads obj's key at obj's version into into and requires
// spec and status unchanged (the object went to v1beta2 storage and back
// through the conversion webhook).
func expectReadBack(t *testing.T, cl client.Client, obj, into client.Object) {
	t.Helper()
	Expect(cl.Get(context.Background(), client.ObjectKeyFromObject(obj), into)).To(Succeed())
	switch want := obj.(type) {
	case *infrav1beta1.OpenStackCluster:
		got := into.(*infrav1beta1.OpenStackCluster)
		Expect(equality.Semantic.DeepEqual(want.Spec, got.Spec)).To(BeTrue(), "v1beta1 spec read back: %+v", got.Spec)
		Expect(equality.Semantic.DeepEqual(want.Status, got.Status)).To(BeTrue(), "v1beta1 status read back: %+v", got.Status)
	case *infrav1beta1.OpenStackMachine:
		got := into.(*infrav1beta1.OpenStackMachine)
		Expect(equality.Semantic.DeepEqual(want.Spec, got.Spec)).To(BeTrue(), "v1beta1 spec read back: %+v", got.Spec)
		Expect(equality.Semantic.DeepEqual(want.Status, got.Status)).To(BeTrue(), "v1beta1 status read back: %+v", got.Status)
	}
}

// ours tells whether this provider's controller has written the object's
// conditions: the ones CAPO stored have no Paused condition, and their
// Ready, converted, has no reason of its own.
func ours(obj capiconditions.Getter) bool {
	ready := capiconditions.Get(obj, infrav1.ReadyCondition)
	return capiconditions.Get(obj, clusterv1.PausedCondition) != nil && ready != nil && ready.Reason != "NoReasonReported"
}

// reconcileErrors is how many reconciles of the named controller have
// returned an error in this process.
func reconcileErrors(controller string) float64 {
	families, err := crmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	n := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] == controller && labels["result"] == "error" {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// writesBy counts the write calls by method and path template.
func writesBy(calls []openstackproxy.Call) string {
	n := map[string]int{}
	for _, c := range calls {
		if isWrite(c) {
			n[c.Method+" "+c.Path]++
		}
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%d %s; ", n[k], k)
	}
	return b.String()
}

// playCAPO plays CAPO v0.14: an API server with this provider's webhooks,
// the cluster name in namespace capo-<prefix> made in OpenStack
// (capoCluster) and stored (capoObjects). What it made in OpenStack is
// removed if the test fails.
func playCAPO(t *testing.T, lbc *gophercloud.ServiceClient, name string, cp, workers []string, shape capoShape) (
	*envtest.Environment, *capoCloud, *infrav1beta1.OpenStackCluster, map[string]*infrav1beta1.OpenStackMachine) {
	t.Helper()
	e := capoEnv(t)
	ns := "capo-" + fx.prefix
	start := time.Now()
	c := capoCluster(t, lbc, ns, name, cp, workers, shape)
	t.Cleanup(func() {
		if t.Failed() {
			removeCAPOCluster(c, lbc)
		}
	})
	t.Logf("the played CAPO made its cluster in %s", time.Since(start).Round(time.Second))
	osc, osms := capoObjects(t, e, ns, name, c, cp, workers)
	return e, c, osc, osms
}

// takeOver starts this provider's controllers on e, unpauses the Cluster
// once the paused pass has written each OpenStackServer's conditions, and
// waits until the cluster and the machines CAPO made are Ready under it,
// with the servers' conditions this provider's; no OpenStack
// resource may have been created or deleted meanwhile (counted at the
// proxy). It returns the cluster, read at v1beta2.
func takeOver(t *testing.T, e *envtest.Environment, osc *infrav1beta1.OpenStackCluster, osms map[string]*infrav1beta1.OpenStackMachine) *infrav1.OpenStackCluster {
	t.Helper()
	ctx := context.Background()
	proxy.Reset()
	start := time.Now()
	errorsBefore := reconcileErrors("openstackserver")
	startManagerOn(t, e)
	cl := e.Client
	// Paused, each OpenStackServer gets this provider's conditions on top of
	// CAPO's (a Paused condition, every condition with a reason); then the
	// cluster is unpaused (step 4 of the switch).
	servers := &infrav1alpha1.OpenStackServerList{}
	Expect(cl.List(ctx, servers, client.InNamespace(osc.Namespace))).To(Succeed())
	Expect(servers.Items).To(HaveLen(len(osms) + 1))
	for i := range servers.Items {
		oss := &servers.Items[i]
		Eventually(func(g Gomega) {
			g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(oss), oss)).To(Succeed())
			g.Expect(capiconditions.IsTrue(oss, clusterv1.PausedCondition)).To(BeTrue(), "server %s, paused: %+v", oss.Name, oss.Status.Conditions)
		}, wait, 200*time.Millisecond).Should(Succeed())
		for _, c := range oss.Status.Conditions {
			Expect(c.Reason).NotTo(BeEmpty(), "server %s, paused: condition %s", oss.Name, c.Type)
		}
	}
	cluster := &clusterv1.Cluster{}
	Expect(cl.Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: osc.Name}, cluster)).To(Succeed())
	base := cluster.DeepCopy()
	cluster.Spec.Paused = nil
	Expect(cl.Patch(ctx, cluster, client.MergeFrom(base))).To(Succeed())
	t.Logf("paused pass done in %s", time.Since(start).Round(time.Millisecond))
	hub := &infrav1.OpenStackCluster{}
	Eventually(func(g Gomega) {
		g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(osc), hub)).To(Succeed())
		g.Expect(ours(hub)).To(BeTrue(), "not reconciled by this provider yet")
		g.Expect(capiconditions.IsTrue(hub, infrav1.ReadyCondition)).To(BeTrue(), "Ready: %s; Network: %s; Router: %s; SecurityGroups: %s; Endpoint: %s",
			condition(hub, infrav1.ReadyCondition), condition(hub, infrav1.NetworkReadyCondition), condition(hub, infrav1.RouterReadyCondition),
			condition(hub, infrav1.SecurityGroupsReadyCondition), condition(hub, infrav1.APIEndpointReadyCondition))
	}, 3*wait, 500*time.Millisecond).Should(Succeed())
	for m := range osms {
		osm := &infrav1.OpenStackMachine{}
		Eventually(func(g Gomega) {
			g.Expect(cl.Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: m}, osm)).To(Succeed())
			g.Expect(ours(osm)).To(BeTrue(), "machine %s not reconciled by this provider yet", m)
			oss := &infrav1alpha1.OpenStackServer{}
			_ = cl.Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: m}, oss)
			g.Expect(capiconditions.IsTrue(osm, infrav1.ReadyCondition)).To(BeTrue(), "machine %s: InstanceReady %s; APIServerIngressReady %s; server conditions %+v",
				m, condition(osm, infrav1.InstanceReadyCondition), condition(osm, infrav1.APIServerIngressReadyCondition), oss.Status.Conditions)
		}, 2*wait, 500*time.Millisecond).Should(Succeed())
	}
	// The servers' conditions are this provider's, with a reason each.
	for i := range servers.Items {
		oss := &servers.Items[i]
		Eventually(func(g Gomega) {
			g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(oss), oss)).To(Succeed())
			g.Expect(capiconditions.IsTrue(oss, infrav1.ReadyCondition)).To(BeTrue(), "server %s: %+v", oss.Name, oss.Status.Conditions)
			g.Expect(capiconditions.IsFalse(oss, clusterv1.PausedCondition)).To(BeTrue(), "server %s: %+v", oss.Name, oss.Status.Conditions)
		}, wait, 200*time.Millisecond).Should(Succeed())
		for _, c := range oss.Status.Conditions {
			Expect(c.Reason).NotTo(BeEmpty(), "server %s: condition %s", oss.Name, c.Type)
		}
		Expect(capiconditions.Get(oss, infrav1.InstanceReadyCondition)).To(HaveField("Status", metav1.ConditionTrue))
	}
	Expect(reconcileErrors("openstackserver")-errorsBefore).To(BeZero(), "reconcile errors of the OpenStackServer controller")
	t.Logf("taken over in %s", time.Since(start).Round(time.Millisecond))
	calls := proxy.Calls()
	t.Logf("OpenStack calls of the take-over: %d (%d writes: %s)\n%s", proxy.CountFunc(notIdentity), proxy.CountFunc(isWrite),
		writesBy(calls), proxy.Summary())
	Expect(openstackproxy.CreatesAndDeletes(calls)).To(BeEmpty(), "the take-over created or deleted OpenStack resources")
	return hub
}

// deleteTakenOver deletes what was taken over through this provider:
// machines first (CAPI deletes Machines, then the Cluster), then the
// cluster. Nothing may be left, CAPO's floating IPs included.
func deleteTakenOver(t *testing.T, cl client.Client, hub *infrav1.OpenStackCluster, osms map[string]*infrav1beta1.OpenStackMachine, c *capoCloud) {
	t.Helper()
	ctx := context.Background()
	proxy.Reset()
	start := time.Now()
	for m := range osms {
		Expect(cl.Delete(ctx, &infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{Namespace: hub.Namespace, Name: m}})).To(Succeed())
	}
	Expect(cl.Delete(ctx, hub)).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(cl.Get(ctx, client.ObjectKeyFromObject(hub), hub))
	}, 3*wait, 500*time.Millisecond).Should(BeTrue(), func() string {
		return "the OpenStackCluster was not deleted: Deleting " + condition(hub, clusterv1.DeletingCondition)
	})
	t.Logf("deleted in %s with %d OpenStack calls (%d writes)", time.Since(start).Round(time.Millisecond), proxy.CountFunc(notIdentity), proxy.CountFunc(isWrite))
	expectNoClusterLeftovers(t, hub.Namespace, hub.Name)
	Eventually(func() bool {
		_, err := floatingips.Get(ctx, direct.network, c.fipID).Extract()
		return gophercloud.ResponseCodeIs(err, 404)
	}, wait, time.Second).Should(BeTrue(), "CAPO's API floating IP %s was not released", c.fip)
	Eventually(func() bool {
		_, err := floatingips.Get(ctx, direct.network, c.bastionFIPID).Extract()
		return gophercloud.ResponseCodeIs(err, 404)
	}, wait, time.Second).Should(BeTrue(), "CAPO's bastion floating IP %s was not released", c.bastionFIP)
}

// TestTakeOverCAPOCluster: a cluster CAPO v0.14 made (load balancer with a
// floating IP, a bastion with a floating IP, a control-plane machine
// booted from a root volume and a worker with a trunk port and an
// additional volume) is taken over in place: the cluster and its machines
// become Ready under this provider with no OpenStack resource created or
// deleted; read at v1beta1 they still carry the IDs CAPO stored (what CAPO
// needs after a switch back). Then the cluster is deleted by this
// provider and nothing is left.
func TestTakeOverCAPOCluster(t *testing.T) {
	RegisterTestingT(t)
	needCloud(t)
	lbc := loadBalancerClient(t)
	if lbc == nil {
		t.Fatal("the local cloud has no Octavia (load-balancer) endpoint; hack/openstack/up.sh installs one")
	}
	ctx := context.Background()
	name := fx.prefix + "-capo"
	cp, workers := []string{name + "-control-plane-0"}, []string{name + "-md-0"}
	e, c, osc, osms := playCAPO(t, lbc, name, cp, workers, capoShape{rootVolume: true})
	ns := osc.Namespace
	hub := takeOver(t, e, osc, osms)
	cl := e.Client

	// The membership of the control-plane machine was adopted, not doubled.
	members, err := poolMembers(lbc, c.lbID)
	Expect(err).NotTo(HaveOccurred())
	t.Logf("pools: %v", members)
	Expect(members).To(Equal(map[string][]string{c.base + "-kubeapi-6443": {c.base + "-kubeapi-6443-" + cp[0]}}))

	// What CAPO stored is what this provider keeps: the same resources,
	// read at v1beta1 as CAPO reads them.
	Expect(hub.Spec.ControlPlaneEndpoint).NotTo(BeNil())
	Expect(hub.Spec.ControlPlaneEndpoint.Host).To(Equal(c.fip))
	back := &infrav1beta1.OpenStackCluster{}
	Expect(cl.Get(ctx, client.ObjectKeyFromObject(osc), back)).To(Succeed())
	Expect(back.Status.Ready).To(BeTrue())
	Expect(back.Status.Network.ID).To(Equal(c.networkID))
	Expect(back.Status.Network.Subnets).To(HaveLen(1))
	Expect(back.Status.Network.Subnets[0].ID).To(Equal(c.subnetID))
	Expect(back.Status.Router.ID).To(Equal(c.routerID))
	Expect(back.Status.APIServerLoadBalancer.ID).To(Equal(c.lbID))
	Expect(back.Status.APIServerLoadBalancer.IP).To(Equal(c.fip))
	Expect(back.Status.APIServerLoadBalancer.InternalIP).To(Equal(c.vip))
	Expect(back.Status.ControlPlaneSecurityGroup.ID).To(Equal(c.cpSG))
	Expect(back.Status.WorkerSecurityGroup.ID).To(Equal(c.workerSG))
	Expect(back.Spec.ControlPlaneEndpoint).To(Equal(osc.Spec.ControlPlaneEndpoint))
	for m := range osms {
		got := &infrav1beta1.OpenStackMachine{}
		Expect(cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: m}, got)).To(Succeed())
		Expect(got.Status.Ready).To(BeTrue(), m)
		Expect(ptr.Deref(got.Status.InstanceID, "")).To(Equal(c.servers[m]))
		Expect(ptr.Deref(got.Spec.ProviderID, "")).To(Equal("openstack:///" + c.servers[m]))
		// CAPO v0.14 reads a machine's ports and resolved spec from its
		// OpenStackServer only (controllers/openstackserver_controller.go),
		// where this provider keeps them.
		oss := &infrav1alpha1.OpenStackServer{}
		Expect(cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: m}, oss)).To(Succeed())
		Expect(ptr.Deref(oss.Status.InstanceID, "")).To(Equal(c.servers[m]))
		Expect(oss.Status.Resources).NotTo(BeNil(), m)
		Expect(oss.Status.Resources.Ports).To(Equal([]infrav1.PortStatus{{ID: c.serverPorts[m]}}))
		Expect(oss.Status.Resolved).NotTo(BeNil(), m)
		Expect(oss.Status.Resolved.ImageID).To(Equal(fx.imageID))
		Expect(oss.Status.Resolved.Ports).To(HaveLen(1))
		Expect(oss.Status.Resolved.Ports[0].Name).To(Equal(m + "-0"))
	}
	f, err := floatingips.Get(ctx, direct.network, c.fipID).Extract()
	Expect(err).NotTo(HaveOccurred())
	Expect(f.PortID).To(Equal(c.vipPortID), "the API floating IP stays on the load balancer's VIP")

	// CAPO's bastion is kept: the same server, its floating IP on its
	// port; the worker's trunk and volume stay.
	Expect(capiconditions.IsTrue(hub, infrav1.BastionReadyCondition)).To(BeTrue(), condition(hub, infrav1.BastionReadyCondition))
	Expect(hub.Status.Bastion).NotTo(BeNil())
	Expect(hub.Status.Bastion.ID).To(Equal(c.servers[c.bastion]))
	Expect(hub.Status.Bastion.FloatingIP).To(Equal(c.bastionFIP))
	Expect(back.Status.Bastion.ID).To(Equal(c.servers[c.bastion]))
	bf, err := floatingips.Get(ctx, direct.network, c.bastionFIPID).Extract()
	Expect(err).NotTo(HaveOccurred())
	Expect(bf.PortID).To(Equal(c.serverPorts[c.bastion]), "the bastion's floating IP stays on its port")
	tr, err := trunks.Get(ctx, direct.network, c.trunkID).Extract()
	Expect(err).NotTo(HaveOccurred())
	Expect(tr.PortID).To(Equal(c.serverPorts[workers[0]]))
	if c.volumeID != "" {
		srv, err := servers.Get(ctx, direct.compute, c.servers[workers[0]]).Extract()
		Expect(err).NotTo(HaveOccurred())
		Expect(srv.AttachedVolumes).To(ContainElement(servers.AttachedVolume{ID: c.volumeID}))
		srv, err = servers.Get(ctx, direct.compute, c.servers[cp[0]]).Extract()
		Expect(err).NotTo(HaveOccurred())
		Expect(srv.AttachedVolumes).To(Equal([]servers.AttachedVolume{{ID: c.rootVolumeID}}), "the control-plane machine boots from its root volume")
	} else {
		t.Log("the cloud has no Cinder: the worker has no volume, the control-plane machine no root volume")
	}

	deleteTakenOver(t, cl, hub, osms, c)
	_, err = trunks.Get(ctx, direct.network, c.trunkID).Extract()
	Expect(gophercloud.ResponseCodeIs(err, 404)).To(BeTrue(), "CAPO's trunk was not deleted: %v", err)
	if c.volumeID != "" {
		Eventually(func() bool {
			_, err := volumes.Get(ctx, direct.volume, c.volumeID).Extract()
			return gophercloud.ResponseCodeIs(err, 404)
		}, wait, time.Second).Should(BeTrue(), "CAPO's volume was not deleted")
		Eventually(func() bool {
			_, err := volumes.Get(ctx, direct.volume, c.rootVolumeID).Extract()
			return gophercloud.ResponseCodeIs(err, 404)
		}, wait, time.Second).Should(BeTrue(), "CAPO's root volume was not deleted")
	}
}

// TestTakeOverCAPOClusterWithoutLoadBalancer: a cluster CAPO v0.14 made
// without an API load balancer (apiServerLoadBalancer absent, as in CAPO's
// without-lb template): CAPO allocated a floating IP for the API, made it
// the control plane endpoint, and put it on the control-plane machine's
// port. It is taken over with no OpenStack resource created or deleted and
// the endpoint unchanged; deleting the cluster releases CAPO's floating
// IP.
func TestTakeOverCAPOClusterWithoutLoadBalancer(t *testing.T) {
	RegisterTestingT(t)
	needCloud(t)
	ctx := context.Background()
	name := fx.prefix + "-capo-nolb"
	cp := []string{name + "-control-plane-0"}
	e, c, osc, osms := playCAPO(t, nil, name, cp, nil, capoShape{noLoadBalancer: true})
	ns := osc.Namespace
	hub := takeOver(t, e, osc, osms)
	cl := e.Client

	// No load balancer, and the same endpoint: CAPO's floating IP, still
	// on the control-plane machine's port.
	Expect(hub.Spec.APIServer).NotTo(BeNil())
	Expect(hub.Spec.APIServer.ManagedLoadBalancer).NotTo(BeNil())
	Expect(hub.Spec.APIServer.ManagedLoadBalancer.Enabled).To(Equal(ptr.To(false)))
	Expect(hub.Status.APIServerLoadBalancer).To(BeNil())
	Expect(hub.Spec.ControlPlaneEndpoint).To(Equal(&clusterv1.APIEndpoint{Host: c.fip, Port: 6443}))
	cluster := &clusterv1.Cluster{}
	Expect(cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
	Expect(cluster.Spec.ControlPlaneEndpoint).To(Equal(clusterv1.APIEndpoint{Host: c.fip, Port: 6443}))
	f, err := floatingips.Get(ctx, direct.network, c.fipID).Extract()
	Expect(err).NotTo(HaveOccurred())
	Expect(f.PortID).To(Equal(c.serverPorts[cp[0]]), "the API floating IP stays on the control-plane machine's port")
	osm := &infrav1.OpenStackMachine{}
	Expect(cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: cp[0]}, osm)).To(Succeed())
	Expect(capiconditions.IsTrue(osm, infrav1.APIServerIngressReadyCondition)).To(BeTrue(), condition(osm, infrav1.APIServerIngressReadyCondition))

	// Read at v1beta1, still no load balancer and the same endpoint.
	back := &infrav1beta1.OpenStackCluster{}
	Expect(cl.Get(ctx, client.ObjectKeyFromObject(osc), back)).To(Succeed())
	Expect(back.Status.Ready).To(BeTrue())
	Expect(back.Spec.APIServerLoadBalancer).To(BeNil())
	Expect(back.Status.APIServerLoadBalancer).To(BeNil())
	Expect(back.Spec.ControlPlaneEndpoint).To(Equal(osc.Spec.ControlPlaneEndpoint))
	got := &infrav1beta1.OpenStackMachine{}
	Expect(cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: cp[0]}, got)).To(Succeed())
	Expect(ptr.Deref(got.Status.InstanceID, "")).To(Equal(c.servers[cp[0]]))

	deleteTakenOver(t, cl, hub, osms, c)
}
