package controllers_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/yaml"

	infrav1beta1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/test/fakecapi"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// capoTemplate is CAPO v0.14.7's default cluster template, as published
// (the webhook tests apply the same copy through the API server).
const capoTemplate = "../webhooks/testdata/capo/v0.14.7_templates_cluster-template.yaml"

var templateVar = regexp.MustCompile(`\$\{([A-Z0-9_]+)\}`)

// capoInfraObjects returns the v1beta1 infrastructure objects of CAPO's
// template, by kind and name, with the clusterctl variables set from vars
// (every variable they use must be in vars). Each is decoded strictly: a
// field our v1beta1 types do not know fails the test.
func capoInfraObjects(t *testing.T, vars map[string]string) (map[string]*infrav1beta1.OpenStackCluster, map[string]*infrav1beta1.OpenStackMachineTemplate) {
	t.Helper()
	data, err := os.ReadFile(capoTemplate)
	if err != nil {
		t.Fatal(err)
	}
	clusters := map[string]*infrav1beta1.OpenStackCluster{}
	templates := map[string]*infrav1beta1.OpenStackMachineTemplate{}
	for _, doc := range strings.Split(string(data), "\n---") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		if meta.APIVersion != infrav1beta1.GroupVersion.String() {
			continue
		}
		doc = templateVar.ReplaceAllStringFunc(doc, func(m string) string {
			v, ok := vars[templateVar.FindStringSubmatch(m)[1]]
			if !ok {
				t.Fatalf("template variable %s has no value", m)
			}
			return v
		})
		switch meta.Kind {
		case "OpenStackCluster":
			o := &infrav1beta1.OpenStackCluster{}
			if err := yaml.UnmarshalStrict([]byte(doc), o); err != nil {
				t.Fatal(err)
			}
			clusters[o.Name] = o
		case "OpenStackMachineTemplate":
			o := &infrav1beta1.OpenStackMachineTemplate{}
			if err := yaml.UnmarshalStrict([]byte(doc), o); err != nil {
				t.Fatal(err)
			}
			templates[o.Name] = o
		default:
			t.Fatalf("unexpected v1beta1 kind %s", meta.Kind)
		}
	}
	return clusters, templates
}

// TestCAPOTemplateReconciled: the infrastructure objects of CAPO's
// published v1beta1 cluster template, unchanged but for clusterctl's
// variables, converted to v1beta2 by the conversion the webhook serves
// (internal/openstack/webhooks' TestCAPOFixturesApply sends the same file
// through the API server and its webhooks), are reconciled: the cluster
// gets its network, router, API load balancer and security groups with
// CAPO's BGP and IP-in-IP rules, a machine template its capacity (read
// with the credentials of its Cluster's OpenStackCluster, as in CAPO), and
// a control-plane machine of the template its server, with the
// credentials of the cluster (CAPO's machine templates name none).
func TestCAPOTemplateReconciled(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	e := newCloudEnv(t)
	extID, _ := e.cloud.AddExternalNetwork("public", "172.24.4.0/24")
	const name = "capo"
	clusters, templates := capoInfraObjects(t, map[string]string{
		"CLUSTER_NAME":                           name,
		"OPENSTACK_EXTERNAL_NETWORK_ID":          extID,
		"OPENSTACK_CLOUD":                        "openstack",
		"OPENSTACK_DNS_NAMESERVERS":              "192.0.2.53",
		"OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR": "m1.medium",
		"OPENSTACK_NODE_MACHINE_FLAVOR":          "m1.medium",
		"OPENSTACK_IMAGE_NAME":                   "rhcos",
		"OPENSTACK_SSH_KEY_NAME":                 "",
	})
	g.Expect(clusters).To(HaveKey(name))
	g.Expect(templates).To(HaveKey(name + "-control-plane"))
	g.Expect(templates).To(HaveKey(name + "-md-0"))

	// The credentials, as CAPO's template expects them.
	e.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-cloud-config", Namespace: e.ns},
		Data: map[string][]byte{clients.CloudsYAMLKey: e.cloud.Clouds("openstack")}})

	cluster := labelled(&clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name}},
	})
	e.create(cluster)
	osc := &infrav1.OpenStackCluster{}
	g.Expect(clusters[name].ConvertTo(osc)).To(Succeed())
	osc.Namespace = e.ns
	osc.Labels = map[string]string{clusterv1.ClusterNameLabel: name}
	osc.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: cluster.UID}}
	e.createDeletedOnCleanup(labelled(osc))
	waitClusterReady(g, osc)

	g.Expect(osc.Status.Network).NotTo(BeNil())
	g.Expect(osc.Status.Network.Name).To(Equal("k8s-clusterapi-cluster-" + e.ns + "-" + name))
	g.Expect(osc.Status.Router).NotTo(BeNil())
	g.Expect(osc.Status.APIServerLoadBalancer).NotTo(BeNil())
	g.Expect(osc.Spec.ControlPlaneEndpoint).NotTo(BeNil())
	g.Expect(osc.Spec.ControlPlaneEndpoint.Host).To(Equal(osc.Status.APIServerLoadBalancer.IP))
	g.Expect(osc.Status.ControlPlaneSecurityGroup).NotTo(BeNil())
	g.Expect(osc.Status.WorkerSecurityGroup).NotTo(BeNil())
	// allNodesSecurityGroupRules (v1beta1) applied to both groups.
	for _, sg := range []string{osc.Status.ControlPlaneSecurityGroup.ID, osc.Status.WorkerSecurityGroup.ID} {
		var bgp, ipip bool
		for _, r := range e.cloud.Objects(fakeopenstack.SecurityGroupRules) {
			if r["security_group_id"] != sg || r["direction"] != "ingress" {
				continue
			}
			bgp = bgp || (r["protocol"] == "tcp" && r["port_range_min"] == float64(179))
			ipip = ipip || r["protocol"] == "4"
		}
		g.Expect(bgp).To(BeTrue(), "BGP rule in group %s", sg)
		g.Expect(ipip).To(BeTrue(), "IP-in-IP rule in group %s", sg)
	}

	// CAPO's templates name no identityRef: like CAPO, the controller then
	// reads the flavor with the credentials of the OpenStackCluster of the
	// Cluster that owns the template (CAPI makes the Cluster the owner of
	// the templates its MachineDeployments and control plane use). A
	// template no Cluster owns yet says why it has no capacity.
	for _, tc := range []struct {
		template string
		owned    bool
		want     string
	}{
		{name + "-md-0", true, "True/"},
		{name + "-control-plane", false, "False/" + infrav1.WaitingForDependenciesReason +
			": spec.template.spec.identityRef is not set and no Cluster owning the template has an OpenStackCluster"},
	} {
		osmt := &infrav1.OpenStackMachineTemplate{}
		g.Expect(templates[tc.template].ConvertTo(osmt)).To(Succeed())
		osmt.Namespace = e.ns
		if tc.owned {
			osmt.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: cluster.UID}}
		}
		e.createDeletedOnCleanup(labelled(osmt))
		g.Eventually(func(g Gomega) {
			get(g, osmt)
			g.Expect(cond(osmt, infrav1.CapacityResolvedCondition)).To(HavePrefix(tc.want))
		}, wait, tick).Should(Succeed(), tc.template)
		if tc.owned {
			g.Expect(osmt.Status.Capacity).To(HaveKey(corev1.ResourceCPU))
		}
	}

	// A control-plane machine of CAPO's template, as KubeadmControlPlane
	// would make it.
	g.Expect(fakecapi.ProvisionCluster(ctx, env.Client, cluster)).To(Succeed())
	e.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-cp-0-bootstrap", Namespace: e.ns},
		Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")}, Type: clusterv1.ClusterSecretType})
	cpLabels := map[string]string{clusterv1.ClusterNameLabel: name, clusterv1.MachineControlPlaneLabel: ""}
	machine := labelled(&clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-cp-0", Namespace: e.ns, Labels: cpLabels},
		Spec: clusterv1.MachineSpec{
			ClusterName: name,
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-cp-0-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: name + "-cp-0"},
		},
	})
	e.create(machine)
	cpTemplate := &infrav1.OpenStackMachineTemplate{}
	g.Expect(templates[name+"-control-plane"].ConvertTo(cpTemplate)).To(Succeed())
	osm := labelled(&infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-cp-0", Namespace: e.ns, Labels: cpLabels,
			OwnerReferences: []metav1.OwnerReference{fakecapi.MachineOwner(machine)}},
		Spec: cpTemplate.Spec.Template.Spec,
	})
	g.Expect(osm.Spec.IdentityRef).To(BeNil(), "CAPO's machine templates name no credentials")
	e.createDeletedOnCleanup(osm)
	waitMachineReady(g, osm)
	g.Expect(e.cloud.Names(fakeopenstack.Servers)).To(ContainElement(name + "-cp-0"))
	g.Expect(e.cloud.Len(fakeopenstack.Members)).To(Equal(1), "the control-plane machine is a member of the API load balancer")
}
