package webhooks_test

// CAPO's v1beta1 through a real API server that calls this provider's
// webhooks, the conversion webhook among them: CAPO's published templates
// and e2e examples apply unchanged (server-side dry run), objects written
// at v1beta1 read back at v1beta2 and at v1beta1 without loss, the storage
// version stays v1beta2, `clusterctl move` carries objects written at
// v1beta1, and CAPO's own ClusterClass, whose patches use v1beta1 paths,
// drives CAPI's topology controller.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1beta1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

const capoFixtures = "testdata/capo"

// fixtureVars are the values of the clusterctl variables in CAPO's
// templates, as a user would set them.
var fixtureVars = map[string]string{
	"CLUSTER_NAME":                           "capo",
	"KUBERNETES_VERSION":                     "v1.32.2",
	"CONTROL_PLANE_MACHINE_COUNT":            "3",
	"WORKER_MACHINE_COUNT":                   "2",
	"OPENSTACK_CLOUD":                        "openstack",
	"OPENSTACK_CLOUD_YAML_B64":               base64.StdEncoding.EncodeToString([]byte("clouds: {openstack: {auth: {auth_url: https://keystone.example.com/v3}}}\n")),
	"OPENSTACK_CLOUD_CACERT_B64":             base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")),
	"OPENSTACK_EXTERNAL_NETWORK_ID":          "5d8ab1b2-4a2c-4a5e-9a0b-0c7e9c8c9f01",
	"OPENSTACK_DNS_NAMESERVERS":              "192.0.2.53",
	"OPENSTACK_FAILURE_DOMAIN":               "nova",
	"OPENSTACK_IMAGE_NAME":                   "ubuntu-2404-kube-v1.32.2",
	"OPENSTACK_FLATCAR_IMAGE_NAME":           "flatcar-stable",
	"OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR": "m1.medium",
	"OPENSTACK_NODE_MACHINE_FLAVOR":          "m1.small",
	"OPENSTACK_SSH_KEY_NAME":                 "ops",
	"OPENSTACK_BASTION_MACHINE_FLAVOR":       "m1.small",
	"OPENSTACK_BASTION_IMAGE_NAME":           "cirros",
	"OPENSTACK_BASTION_IMAGE_URL":            "https://images.example.com/cirros.img",
	"OPENSTACK_BASTION_IMAGE_HASH":           "0123456789abcdef0123456789abcdef",
	"OPENSTACK_BASTION_IMAGE_HASH_ALGORITHM": "md5",
	"OPENSTACK_IMAGE_URL":                    "https://images.example.com/node.img",
	"NODE_IMAGE_URL":                         "https://images.example.com/node.img",
	"BASTION_IMAGE_URL":                      "https://images.example.com/cirros.img",
	"CLUSTER_EXTRA_NET_1":                    "5d8ab1b2-4a2c-4a5e-9a0b-0c7e9c8c9f02",
	"CLUSTER_EXTRA_NET_2":                    "5d8ab1b2-4a2c-4a5e-9a0b-0c7e9c8c9f03",
}

// clusterctlVar is a clusterctl variable: ${NAME} or ${NAME:=default}; $$
// escapes a dollar sign.
var clusterctlVar = regexp.MustCompile(`\$\$|\$\{([A-Za-z0-9_]+)(:=([^}]*))?\}`)

// substitute does what `clusterctl generate` does with the variables of a
// template; vars override fixtureVars.
func substitute(t *testing.T, text string, vars map[string]string) string {
	t.Helper()
	return clusterctlVar.ReplaceAllStringFunc(text, func(m string) string {
		if m == "$$" {
			return "$"
		}
		sub := clusterctlVar.FindStringSubmatch(m)
		if v, ok := vars[sub[1]]; ok {
			return v
		}
		if v, ok := fixtureVars[sub[1]]; ok {
			return v
		}
		if sub[2] != "" {
			return sub[3]
		}
		t.Fatalf("template variable %s has no value", sub[1])
		return ""
	})
}

// fixture reads a CAPO file of testdata/capo with its variables set.
func fixture(t *testing.T, name string, vars map[string]string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(capoFixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(substitute(t, string(data), vars))
}

// fixtureObjects decodes the objects of a CAPO template.
func fixtureObjects(t *testing.T, name string, vars map[string]string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(fixture(t, name, vars)), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("%s: %v", name, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// kubeadmCRDs installs, once, the CRDs of CAPI's kubeadm bootstrap and
// control-plane providers, which CAPO's templates use, from the
// cluster-api module at the version go.mod pins.
var kubeadmCRDs struct {
	once sync.Once
	err  error
}

func installKubeadmCRDs(t *testing.T, cl client.Client) {
	t.Helper()
	kubeadmCRDs.once.Do(func() {
		core, err := envtest.CAPICoreCRDDir(webhookEnv.env.Paths.RepoRoot)
		if err != nil {
			kubeadmCRDs.err = err
			return
		}
		module := filepath.Join(core, "..", "..", "..", "..")
		for _, dir := range []string{"bootstrap/kubeadm/config/crd/bases", "controlplane/kubeadm/config/crd/bases"} {
			crds, err := envtest.ReadCRDDir(filepath.Join(module, dir))
			if err != nil {
				kubeadmCRDs.err = err
				return
			}
			for _, c := range crds {
				// The contract labels CAPI's release puts on them (the
				// files in the module have none).
				c.Object.Labels = map[string]string{}
				for _, v := range c.Object.Spec.Versions {
					if v.Served {
						c.Object.Labels["cluster.x-k8s.io/"+v.Name] = v.Name
					}
				}
				if err := cl.Create(context.Background(), c.Object); err != nil && !apierrors.IsAlreadyExists(err) {
					kubeadmCRDs.err = err
					return
				}
				if err := waitEstablished(cl, c.Object.Name); err != nil {
					kubeadmCRDs.err = err
					return
				}
			}
		}
	})
	if kubeadmCRDs.err != nil {
		t.Fatal(kubeadmCRDs.err)
	}
}

func waitEstablished(cl client.Client, name string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := cl.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("CRD " + name + " not established")
}

// notServedYet are kinds of CAPO's fixtures without a CRD here, and why.
var notServedYet = map[string]string{
	"Image": "ORC's Image: ORC is installed beside this provider and serves it (the Image's wire types are checked against ORC's CRD in internal/consumed)",
}

// dryRun creates obj with a server-side dry run in ns (unless it is
// cluster-scoped) and returns what the API server answered.
func dryRun(t *testing.T, cl client.Client, ns string, obj *unstructured.Unstructured) error {
	t.Helper()
	if obj.GetKind() != "OpenStackClusterIdentity" {
		obj.SetNamespace(ns)
	}
	return cl.Create(context.Background(), obj, client.DryRunAll)
}

// TestCAPOFixturesApply applies CAPO's published templates (v0.14.7, every
// infrastructure object at v1beta1, and main's, at v1beta2) and the
// patches of CAPO's e2e flavors onto its default template, unchanged, with
// a server-side dry run: the API server validates them with every webhook
// of this provider, converting the v1beta1 ones with the conversion
// webhook. What comes back at v1beta1 carries no conversion annotation:
// nothing of CAPO's manifests is lost on the way.
func TestCAPOFixturesApply(t *testing.T) {
	cl, ns := startWebhookEnv(t)
	installKubeadmCRDs(t, cl)

	files, err := filepath.Glob(filepath.Join(capoFixtures, "*templates_*.yaml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	applied := 0
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			for _, obj := range fixtureObjects(t, name, nil) {
				if why, skip := notServedYet[obj.GetKind()]; skip {
					t.Logf("%s %s not applied: %s", obj.GetKind(), obj.GetName(), why)
					continue
				}
				if err := dryRun(t, cl, ns, obj); err != nil {
					if strings.Contains(err.Error(), "not supported by this provider yet") {
						t.Logf("%s %s %s refused as not supported yet: %v", obj.GetAPIVersion(), obj.GetKind(), obj.GetName(), err)
						continue
					}
					t.Errorf("%s %s %s: %v", obj.GetAPIVersion(), obj.GetKind(), obj.GetName(), err)
					continue
				}
				applied++
				if obj.GetAPIVersion() == infrav1beta1.GroupVersion.String() {
					if _, ok := obj.GetAnnotations()[infrav1beta1.ConversionDataAnnotation]; ok {
						t.Errorf("%s %s came back with a conversion annotation: the conversion lost something of it", obj.GetKind(), obj.GetName())
					}
				}
			}
		})
	}

	// CAPO's e2e flavors: patches of its default template.
	patches := []struct{ file, kind, name string }{
		{"v0.14.7_e2e-kustomize_cluster-identity_patch-openstackcluster-identityref.yaml", "OpenStackCluster", "capo"},
		{"v0.14.7_e2e-kustomize_components_common_patch-cluster.yaml", "OpenStackCluster", "capo"},
		{"v0.14.7_e2e-kustomize_health-monitor_patch-cluster-health-monitor.yaml", "OpenStackCluster", "capo"},
		{"v0.14.7_e2e-kustomize_multi-az_patch-machine-template-control-plane.yaml", "OpenStackMachineTemplate", "capo-control-plane"},
		{"v0.14.7_e2e-kustomize_multi-network_patch-machine-template-networks.yaml", "OpenStackMachineTemplate", "capo-md-0"},
		{"v0.14.7_e2e-kustomize_with-tags_patch-cluster.yaml", "OpenStackCluster", "capo"},
		{"v0.14.7_e2e-kustomize_with-tags_patch-machine-template-worker.yaml", "OpenStackMachineTemplate", "capo-md-0"},
	}
	for _, p := range patches {
		t.Run(p.file, func(t *testing.T) {
			var base *unstructured.Unstructured
			for _, o := range fixtureObjects(t, "v0.14.7_templates_cluster-template.yaml", nil) {
				if o.GetKind() == p.kind && o.GetName() == p.name {
					base = o
				}
			}
			if base == nil {
				t.Fatalf("no %s %s in the default template", p.kind, p.name)
			}
			if p.file == "v0.14.7_e2e-kustomize_components_common_patch-cluster.yaml" {
				// The no-bastion flavor removes what this one adds.
				applyPatch(t, base, p.file)
				if err := dryRun(t, cl, ns, base.DeepCopy()); err != nil {
					t.Errorf("with %s: %v", p.file, err)
				}
				applyPatch(t, base, "v0.14.7_e2e-kustomize_no-bastion_patch-no-bastion.yaml")
			} else {
				applyPatch(t, base, p.file)
			}
			if err := dryRun(t, cl, ns, base); err != nil {
				t.Errorf("%v", err)
			}
			applied++
		})
	}
	for _, f := range []string{"v0.14.7_e2e-kustomize_cluster-identity_openstackclusteridentity.yaml", "v0.14.7_e2e-kustomize_components_images_images.yaml"} {
		t.Run(f, func(t *testing.T) {
			for _, obj := range fixtureObjects(t, f, map[string]string{"NAMESPACE": ns}) {
				if why, skip := notServedYet[obj.GetKind()]; skip {
					t.Logf("%s %s not applied: %s", obj.GetKind(), obj.GetName(), why)
					continue
				}
				if err := dryRun(t, cl, ns, obj); err != nil {
					t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
			}
		})
	}
	t.Logf("%d objects applied", applied)
}

// applyPatch applies a CAPO e2e patch (a JSON patch, or a merge patch
// when it is an object) to obj.
func applyPatch(t *testing.T, obj *unstructured.Unstructured, file string) {
	t.Helper()
	patchJSON, err := yaml.YAMLToJSON(fixture(t, file, nil))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	var patched []byte
	if bytes.HasPrefix(bytes.TrimSpace(patchJSON), []byte("[")) {
		p, err := jsonpatch.DecodePatch(patchJSON)
		if err != nil {
			t.Fatal(err)
		}
		if patched, err = p.Apply(doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	} else if patched, err = jsonpatch.MergePatch(doc, patchJSON); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	obj.Object = map[string]any{}
	if err := json.Unmarshal(patched, &obj.Object); err != nil {
		t.Fatal(err)
	}
}

// TestV1beta1ThroughAPIServer writes an OpenStackCluster as CAPO v0.14
// stores it, spec and status, and reads it at both versions.
func TestV1beta1ThroughAPIServer(t *testing.T) {
	cl, ns := startWebhookEnv(t)
	ctx := context.Background()
	g := NewWithT(t)

	var osc *unstructured.Unstructured
	for _, o := range fixtureObjects(t, "v0.14.7_templates_cluster-template.yaml", nil) {
		if o.GetKind() == "OpenStackCluster" {
			osc = o
		}
	}
	osc.SetNamespace(ns)
	g.Expect(cl.Create(ctx, osc)).To(Succeed())

	// v1beta2, as the controllers read it.
	hub := &infrav1.OpenStackCluster{}
	g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(osc), hub)).To(Succeed())
	g.Expect(hub.Annotations).NotTo(HaveKey(infrav1beta1.ConversionDataAnnotation))
	g.Expect(hub.Spec.APIServer).NotTo(BeNil())
	g.Expect(hub.Spec.APIServer.ManagedLoadBalancer.Enabled).To(HaveValue(BeTrue()))
	g.Expect(hub.Spec.ManagedSecurityGroups.ClusterNodesSecurityGroupRules).To(HaveLen(2))
	g.Expect(hub.Spec.ManagedSecurityGroups.ClusterNodesSecurityGroupRules[0].Name).To(Equal("BGP (Calico)"))
	g.Expect(hub.Spec.ExternalNetwork.ID).To(HaveValue(Equal(fixtureVars["OPENSTACK_EXTERNAL_NETWORK_ID"])))
	g.Expect(hub.Spec.ManagedSubnets).To(Equal([]infrav1.SubnetSpec{{CIDR: "10.6.0.0/24", DNSNameservers: []string{"192.0.2.53"}}}))

	// CAPO's template without a load balancer has no
	// apiServerLoadBalancer, which is none in CAPO; v1beta2 says so, and
	// v1beta1 reads back as written.
	withoutLB := 0
	for _, o := range fixtureObjects(t, "v0.14.7_templates_cluster-template-without-lb.yaml", nil) {
		if o.GetKind() != "OpenStackCluster" {
			continue
		}
		o.SetNamespace(ns)
		o.SetName("without-lb")
		g.Expect(cl.Create(ctx, o)).To(Succeed())
		noLB := &infrav1.OpenStackCluster{}
		g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(o), noLB)).To(Succeed())
		g.Expect(noLB.Spec.APIServer.ManagedLoadBalancer).To(Equal(&infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}))
		noLBv1beta1 := &infrav1beta1.OpenStackCluster{}
		g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(o), noLBv1beta1)).To(Succeed())
		g.Expect(noLBv1beta1.Spec.APIServerLoadBalancer).To(BeNil())
		g.Expect(noLBv1beta1.Annotations).NotTo(HaveKey(infrav1beta1.ConversionDataAnnotation))
		withoutLB++
	}
	g.Expect(withoutLB).To(Equal(1), "OpenStackClusters in the without-lb template")

	// CAPO writes its status at v1beta1: ready, a failure-domain map,
	// conditions with severities and a failure message.
	spoke := &infrav1beta1.OpenStackCluster{}
	g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(osc), spoke)).To(Succeed())
	when := metav1.NewTime(time.Now().Truncate(time.Second))
	spoke.Status = infrav1beta1.OpenStackClusterStatus{
		Ready:          true,
		Initialization: &infrav1beta1.ClusterInitialization{Provisioned: true},
		Network:        &infrav1beta1.NetworkStatusWithSubnets{NetworkStatus: infrav1beta1.NetworkStatus{Name: "k8s-clusterapi-cluster-" + ns + "-capo", ID: "n1"}},
		FailureDomains: infrav1beta1.FailureDomains{"az2": {ControlPlane: true}, "az1": {ControlPlane: true}},
		APIServerLoadBalancer: &infrav1beta1.LoadBalancer{Name: "k8s-clusterapi-cluster-" + ns + "-capo-kubeapi", ID: "lb1",
			IP: "172.24.4.10", InternalIP: "10.6.0.5"},
		FailureMessage: ptr.To("an old failure"),
		Conditions: infrav1beta1.Conditions{
			{Type: "Ready", Status: corev1.ConditionTrue, LastTransitionTime: when},
			{Type: "NetworkReady", Status: corev1.ConditionFalse, Severity: "Warning",
				Reason: "NetworkCreateFailed", Message: "quota", LastTransitionTime: when},
		},
	}
	g.Expect(cl.Status().Update(ctx, spoke)).To(Succeed())

	hub = &infrav1.OpenStackCluster{}
	g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(osc), hub)).To(Succeed())
	g.Expect(hub.Status.FailureDomains).To(Equal([]clusterv1.FailureDomain{
		{Name: "az1", ControlPlane: ptr.To(true)}, {Name: "az2", ControlPlane: ptr.To(true)}}))
	g.Expect(hub.Status.APIServerLoadBalancer.ID).To(Equal("lb1"))
	g.Expect(hub.Status.Conditions).To(HaveLen(2))
	g.Expect(hub.Status.Conditions[0].Reason).To(Equal(infrav1beta1.NoReasonReported))
	g.Expect(hub.Annotations).To(HaveKey(infrav1beta1.ConversionDataAnnotation), "the severity and the failure message only fit there")

	again := &infrav1beta1.OpenStackCluster{}
	g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(osc), again)).To(Succeed())
	g.Expect(again.Status).To(Equal(spoke.Status), "what CAPO wrote at v1beta1 reads back unchanged")
	g.Expect(again.Annotations).NotTo(HaveKey(infrav1beta1.ConversionDataAnnotation))

	// A v1beta2 writer sets what v1beta1 cannot hold (a template's
	// metadata); a v1beta1 writer then changes the object; the first
	// write survives.
	osmt := template(ns, "v1beta2-only")
	osmt.Spec.Template.ObjectMeta.Labels = map[string]string{"node-role": "worker"}
	g.Expect(cl.Create(ctx, osmt)).To(Succeed())
	old := &infrav1beta1.OpenStackMachineTemplate{}
	g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(osmt), old)).To(Succeed())
	g.Expect(old.Annotations).To(HaveKey(infrav1beta1.ConversionDataAnnotation))
	g.Expect(old.Spec.Template.Spec.Flavor).To(HaveValue(Equal("m1.large")))
	old.Labels = map[string]string{"edited": "at-v1beta1"}
	g.Expect(cl.Update(ctx, old)).To(Succeed())
	g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(osmt), osmt)).To(Succeed())
	g.Expect(osmt.Labels).To(HaveKeyWithValue("edited", "at-v1beta1"))
	g.Expect(osmt.Spec.Template.ObjectMeta.Labels).To(Equal(map[string]string{"node-role": "worker"}))
	g.Expect(osmt.Annotations).NotTo(HaveKey(infrav1beta1.ConversionDataAnnotation))

	// The immutability webhook judges v1beta1 updates as v1beta2 ones.
	old = &infrav1beta1.OpenStackMachineTemplate{}
	g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(osmt), old)).To(Succeed())
	old.Spec.Template.Spec.Flavor = ptr.To("m1.xlarge")
	wantInvalid(t, cl.Update(ctx, old), "spec.template.spec.flavor")

	// Whatever version is written, objects are stored at v1beta2.
	for _, plural := range []string{"openstackclusters", "openstackmachinetemplates"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(cl.Get(ctx, client.ObjectKey{Name: plural + ".infrastructure.cluster.x-k8s.io"}, crd)).To(Succeed())
		g.Expect(crd.Status.StoredVersions).To(Equal([]string{"v1beta2"}), plural)
		g.Expect(crd.Spec.Conversion.Strategy).To(Equal(apiextensionsv1.WebhookConverter))
	}
}

// clusterctlBinary is bin/clusterctl (or $KUBEBUILDER_ASSETS/clusterctl).
func clusterctlBinary(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{os.Getenv("KUBEBUILDER_ASSETS"), filepath.Join(webhookEnv.env.Paths.RepoRoot, "bin")} {
		if p := filepath.Join(dir, "clusterctl"); dir != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no clusterctl in bin/ (make test-tools)")
	}
	t.Skip("no clusterctl in bin/ (make test-tools)")
	return ""
}

// TestClusterctlMoveCarriesV1beta1Objects moves, with clusterctl (its
// backup to a directory and restore from it: the same discovery and the
// same reads and writes as a move between clusters), a Cluster whose
// infrastructure was written at v1beta1. clusterctl reads and writes the
// storage version, v1beta2, of the CRDs it finds by the label clusterctl
// init puts on them; what v1beta2 cannot hold travels in the conversion
// annotation, so the objects read back at v1beta1 as they were written.
func TestClusterctlMoveCarriesV1beta1Objects(t *testing.T) {
	cl, _ := startWebhookEnv(t)
	clusterctl := clusterctlBinary(t)
	ctx := context.Background()
	g := NewWithT(t)
	// A namespace of its own: clusterctl moves whole namespaces.
	nsObj, err := webhookEnv.env.NewNamespace(ctx, "move")
	g.Expect(err).NotTo(HaveOccurred())
	ns := nsObj.Name

	// What `clusterctl init` does to the providers' CRDs.
	for _, name := range []string{"clusters.cluster.x-k8s.io", "openstackclusters.infrastructure.cluster.x-k8s.io",
		"openstackmachinetemplates.infrastructure.cluster.x-k8s.io"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(cl.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
		base := crd.DeepCopy()
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		crd.Labels["clusterctl.cluster.x-k8s.io"] = ""
		g.Expect(cl.Patch(ctx, crd, client.MergeFrom(base))).To(Succeed())
	}

	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "capo", Namespace: ns}, Spec: clusterv1.ClusterSpec{
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: "capo"},
	}}
	g.Expect(cl.Create(ctx, cluster)).To(Succeed())
	// Provisioned, as clusterctl requires before a move.
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	cluster.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionTrue,
		Reason: clusterv1.ClusterControlPlaneInitializedReason, LastTransitionTime: metav1.Now()}}
	g.Expect(cl.Status().Update(ctx, cluster)).To(Succeed())
	owner := []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "capo", UID: cluster.UID}}
	var written []*unstructured.Unstructured
	for _, o := range fixtureObjects(t, "v0.14.7_templates_cluster-template.yaml", nil) {
		if o.GetAPIVersion() != infrav1beta1.GroupVersion.String() {
			continue
		}
		o.SetNamespace(ns)
		o.SetOwnerReferences(owner)
		if o.GetKind() == "OpenStackMachineTemplate" && o.GetName() == "capo-md-0" {
			// Both flavor and flavorID: v1beta2 keeps the ID only, the
			// annotation the rest.
			g.Expect(unstructured.SetNestedField(o.Object, "4f0f4a2b-0000-4000-8000-000000000001", "spec", "template", "spec", "flavorID")).To(Succeed())
		}
		g.Expect(cl.Create(ctx, o)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
		written = append(written, o)
	}

	dir := t.TempDir()
	kc, err := webhookEnv.env.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig, config, backup := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "clusterctl.yaml"), filepath.Join(dir, "backup")
	g.Expect(os.WriteFile(kubeconfig, kc, 0o600)).To(Succeed())
	g.Expect(os.WriteFile(config, []byte("{}\n"), 0o600)).To(Succeed())
	g.Expect(os.Mkdir(backup, 0o700)).To(Succeed())
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(clusterctl, append(args, "--config", config, "-v", "2")...)
		cmd.Env = append(os.Environ(), "CLUSTERCTL_DISABLE_VERSIONCHECK=true", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("clusterctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("move", "-n", ns, "--kubeconfig", kubeconfig, "--to-directory", backup)

	// The files hold the storage version.
	files, err := filepath.Glob(filepath.Join(backup, "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	kinds := map[string]string{}
	for _, f := range files {
		u := &unstructured.Unstructured{}
		data, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(yaml.Unmarshal(data, &u.Object)).To(Succeed())
		kinds[u.GetKind()+"/"+u.GetName()] = u.GetAPIVersion()
	}
	g.Expect(kinds).To(HaveKeyWithValue("OpenStackCluster/capo", infrav1.GroupVersion.String()))
	g.Expect(kinds).To(HaveKeyWithValue("OpenStackMachineTemplate/capo-md-0", infrav1.GroupVersion.String()))

	// The source's objects go (clusterctl move deletes them).
	for _, o := range append(slices.Clone(written), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1.GroupVersion.String(), "kind": "Cluster", "metadata": map[string]any{"name": "capo", "namespace": ns}}}) {
		g.Expect(cl.Delete(ctx, o.DeepCopy())).To(Succeed())
	}
	run("move", "--to-kubeconfig", kubeconfig, "--from-directory", backup)

	for _, w := range written {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(w.GroupVersionKind())
		g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(w), got)).To(Succeed())
		g.Expect(got.Object["spec"]).To(Equal(w.Object["spec"]), "%s %s after the move", w.GetKind(), w.GetName())
		g.Expect(got.GetAnnotations()).NotTo(HaveKey(infrav1beta1.ConversionDataAnnotation))
	}
	hub := &infrav1.OpenStackMachineTemplate{}
	g.Expect(cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "capo-md-0"}, hub)).To(Succeed())
	g.Expect(hub.Spec.Template.Spec.Flavor.ID).To(HaveValue(Equal("4f0f4a2b-0000-4000-8000-000000000001")))
	g.Expect(hub.Annotations).To(HaveKey(infrav1beta1.ConversionDataAnnotation))
}

// TestCAPOClusterClass runs CAPI core's topology controller (the real
// cluster-api manager) on CAPO's own ClusterClass and topology Cluster
// (v0.14.7): infrastructure templates at v1beta1, and patches whose paths
// are v1beta1's (apiServerLoadBalancer, a flavor given as a string, the
// bastion). The topology controller reads the templates, patches and
// creates the OpenStackCluster and the control plane's machine template at
// v1beta1; the conversion webhook stores them at v1beta2, where the patched
// values are found.
func TestCAPOClusterClass(t *testing.T) {
	capi := envtest.CAPIManagerBinary()
	if capi == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no cluster-api manager in bin/ (make bin/capi-manager)")
		}
		t.Skip("no cluster-api manager in bin/ (make bin/capi-manager): the ClusterClass topology is not exercised")
	}
	cl, ns := startWebhookEnv(t)
	installKubeadmCRDs(t, cl)
	ctx := context.Background()
	g := NewWithT(t)

	vars := map[string]string{
		"OPENSTACK_API_SERVER_ALLOWED_CIDRS": `["10.0.0.0/8"]`,
		"OPENSTACK_BASTION_ENABLED":          "true",
		"OPENSTACK_BASTION_IMAGE_NAME":       "bastion-image",
		"OPENSTACK_EXTERNAL_NETWORK_NAME":    "public",
		"CLUSTER_NAME":                       "dev",
	}
	for _, f := range []string{"v0.14.7_templates_clusterclass-dev-test.yaml", "v0.14.7_templates_cluster-template-topology.yaml"} {
		for _, o := range fixtureObjects(t, f, vars) {
			o.SetNamespace(ns)
			g.Expect(cl.Create(ctx, o)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
		}
	}

	m, err := webhookEnv.env.StartCAPIManager(capi, t.TempDir(), "--feature-gates=ClusterTopology=true")
	g.Expect(err).NotTo(HaveOccurred())
	defer m.Stop()
	// The manager's start on a loaded machine is not what is measured here.
	g.Expect(m.WaitForControllers(5*time.Minute, "clusterclass", "topology/cluster")).To(Succeed())

	cluster := &clusterv1.Cluster{}
	osc := &infrav1.OpenStackCluster{}
	g.Eventually(func(g Gomega) {
		if err, exited := m.Exited(); exited {
			g.Expect(err).NotTo(HaveOccurred(), "the cluster-api manager exited")
		}
		g.Expect(cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "dev"}, cluster)).To(Succeed())
		g.Expect(cluster.Spec.InfrastructureRef.IsDefined()).To(BeTrue(), "conditions: %+v", cluster.Status.Conditions)
		g.Expect(cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster.Spec.InfrastructureRef.Name}, osc)).To(Succeed())
	}, 2*time.Minute, 250*time.Millisecond).Should(Succeed(), func() string { return "cluster-api manager log:\n" + m.LogTail() })

	// The patches, with v1beta1 paths, reached the v1beta2 object.
	g.Expect(osc.Spec.IdentityRef.Name).To(Equal("dev-test-cloud-config"), "patch identityRef")
	g.Expect(osc.Spec.APIServer.ManagedLoadBalancer.AllowedCIDRs).To(Equal([]string{"10.0.0.0/8"}), "patch allowedCIDRs: /spec/template/spec/apiServerLoadBalancer/allowedCIDRs")
	g.Expect(osc.Spec.Bastion).NotTo(BeNil(), "patch bastion")
	g.Expect(osc.Spec.Bastion.Spec.Flavor.Filter.Name).To(HaveValue(Equal("m1.small")), "the bastion's flavor, a v1beta1 string")
	g.Expect(osc.Spec.Bastion.Spec.Image.ImageRef.Name).To(Equal("bastion-image"))
	g.Expect(osc.Spec.ManagedSecurityGroups.ClusterNodesSecurityGroupRules).To(HaveLen(2))

	// The control plane's machine template, cloned from the class's and
	// patched (imageRef).
	cpTemplates := &infrav1.OpenStackMachineTemplateList{}
	g.Eventually(func(g Gomega) {
		g.Expect(cl.List(ctx, cpTemplates, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterTopologyOwnedLabel: ""})).To(Succeed())
		g.Expect(cpTemplates.Items).NotTo(BeEmpty())
	}, time.Minute, 250*time.Millisecond).Should(Succeed(), func() string { return "cluster-api manager log:\n" + m.LogTail() })
	for _, tmpl := range cpTemplates.Items {
		g.Expect(tmpl.Spec.Template.Spec.Image.ImageRef).NotTo(BeNil(), tmpl.Name)
		g.Expect(tmpl.Spec.Template.Spec.Image.ImageRef.Name).To(Equal("node-image"), "patch imageRef: /spec/template/spec/image/imageRef/name")
	}

	// And at v1beta1, the version the topology controller works in.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: infrav1.GroupVersion.Group, Version: "v1beta1", Kind: "OpenStackCluster"})
	g.Expect(cl.Get(ctx, client.ObjectKeyFromObject(osc), u)).To(Succeed())
	cidrs, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "apiServerLoadBalancer", "allowedCIDRs")
	g.Expect(cidrs).To(Equal([]string{"10.0.0.0/8"}))
	flavor, _, _ := unstructured.NestedString(u.Object, "spec", "bastion", "spec", "flavor")
	g.Expect(flavor).To(Equal("m1.small"))
}
