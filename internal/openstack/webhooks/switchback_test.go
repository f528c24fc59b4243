package webhooks_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1beta1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	infrawebhooks "github.com/ocp-capi/ocp-capi/internal/openstack/webhooks"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// The four kinds docs/openstack/from-capo.md ("Switching back to CAPO")
// moves back to v1beta1 storage.
var switchBackKinds = []struct{ plural, kind string }{
	{"openstackclusters", "OpenStackCluster"},
	{"openstackclustertemplates", "OpenStackClusterTemplate"},
	{"openstackmachines", "OpenStackMachine"},
	{"openstackmachinetemplates", "OpenStackMachineTemplate"},
}

// TestSwitchBackToCAPO runs the storage steps of "Switching back to CAPO"
// (docs/openstack/from-capo.md) on an API server of its own: objects as
// this provider stores them (v1beta2) are rewritten at v1beta1, the CRDs'
// storedVersions become [v1beta1], and CAPO's CRDs (the v1beta1 version
// of CAPO's published CRDs, alone, without conversion, as CAPO v0.14
// serves them) replace this provider's. The API server must accept that,
// and the objects must then read, and take CAPO's writes, under CAPO's
// schema with what CAPO needs.
func TestSwitchBackToCAPO(t *testing.T) {
	envtest.RequireAPIServer(t)
	dir := os.Getenv("OCP_CAPI_UPSTREAM_CRDS")
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but OCP_CAPI_UPSTREAM_CRDS is not: CAPO's CRDs are needed")
		}
		t.Skip("OCP_CAPI_UPSTREAM_CRDS is not set: CAPO's CRDs are needed")
	}
	g := NewWithT(t)
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	e, stop, err := envtest.StartWithWebhooks(ctx, envtest.WebhookEnvOptions{
		Manifests:   []string{webhookManifests},
		AddToScheme: []func(*runtime.Scheme) error{infrav1.AddToScheme, infrav1alpha1.AddToScheme, infrav1beta1.AddToScheme},
		Setup:       infrawebhooks.SetupWebhooks,
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(stop)
	cl := e.Client
	ns := "switch-back"
	g.Expect(cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	// As this provider stores them: a cluster without a load-balancer
	// block that made one, a machine, templates (one with template
	// metadata, which v1beta1 keeps in the annotation).
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns},
		Spec: infrav1.OpenStackClusterSpec{
			IdentityRef:    infrav1.OpenStackIdentityReference{Type: "Secret", Name: "cloud", CloudName: "openstack"},
			ManagedSubnets: []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
		}}
	g.Expect(cl.Create(ctx, osc)).To(Succeed())
	when := metav1.NewTime(time.Now().Truncate(time.Second))
	osc.Status = infrav1.OpenStackClusterStatus{
		Initialization: &infrav1.OpenStackClusterInitializationStatus{Provisioned: ptr.To(true)},
		Network: &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{Name: "k8s-clusterapi-cluster-" + ns + "-c", ID: networkA},
			Subnets: []infrav1.Subnet{{Name: "k8s-clusterapi-cluster-" + ns + "-c", ID: networkB, CIDR: "10.6.0.0/24"}}},
		APIServerLoadBalancer: &infrav1.LoadBalancer{Name: "k8s-clusterapi-cluster-" + ns + "-c-kubeapi", ID: "lb1", IP: "172.24.4.10", InternalIP: "10.6.0.5"},
		FailureDomains:        []clusterv1.FailureDomain{{Name: "nova", ControlPlane: ptr.To(true)}},
		Conditions:            []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: when}},
	}
	g.Expect(cl.Status().Update(ctx, osc)).To(Succeed())
	osm := machine(ns, "m")
	g.Expect(cl.Create(ctx, osm)).To(Succeed())
	osm.Status = infrav1.OpenStackMachineStatus{
		Initialization: &infrav1.OpenStackMachineInitializationStatus{Provisioned: ptr.To(true)}, InstanceID: ptr.To("server-1"),
		Addresses:  []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "10.6.0.7"}},
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: when}},
	}
	g.Expect(cl.Status().Update(ctx, osm)).To(Succeed())
	osmt := template(ns, "t")
	osmt.Spec.Template.ObjectMeta.Labels = map[string]string{"node-role": "worker"}
	g.Expect(cl.Create(ctx, osmt)).To(Succeed())
	osct := &infrav1.OpenStackClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "ct", Namespace: ns}}
	osct.Spec.Template.Spec = *osc.Spec.DeepCopy()
	g.Expect(cl.Create(ctx, osct)).To(Succeed())

	crd := func(plural string) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(cl.Get(ctx, client.ObjectKey{Name: plural + "." + infrav1.GroupVersion.Group}, c)).To(Succeed())
		return c
	}
	// Step 2: v1beta1 becomes the storage version.
	for _, k := range switchBackKinds {
		c := crd(k.plural)
		for i := range c.Spec.Versions {
			c.Spec.Versions[i].Storage = c.Spec.Versions[i].Name == "v1beta1"
		}
		g.Expect(cl.Update(ctx, c)).To(Succeed(), k.plural)
	}
	// Step 3: every object rewritten, then storedVersions [v1beta1].
	for _, k := range switchBackKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(infrav1beta1.GroupVersion.WithKind(k.kind + "List"))
		g.Expect(cl.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1), k.kind)
		for i := range list.Items {
			g.Expect(cl.Update(ctx, &list.Items[i])).To(Succeed(), k.kind)
		}
		c := crd(k.plural)
		c.Status.StoredVersions = []string{"v1beta1"}
		g.Expect(cl.Status().Update(ctx, c)).To(Succeed(), k.plural)
	}
	// Step 4: this provider goes (its webhooks with it), CAPO's CRDs come.
	vw := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	g.Expect(cl.List(ctx, vw)).To(Succeed())
	for i := range vw.Items {
		g.Expect(cl.Delete(ctx, &vw.Items[i])).To(Succeed())
	}
	mw := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	g.Expect(cl.List(ctx, mw)).To(Succeed())
	for i := range mw.Items {
		g.Expect(cl.Delete(ctx, &mw.Items[i])).To(Succeed())
	}
	for _, k := range switchBackKinds {
		capo := capoV1beta1CRD(t, dir, k.plural)
		c := crd(k.plural)
		c.Spec = capo.Spec
		g.Expect(cl.Update(ctx, c)).To(Succeed(), "%s: CAPO's CRD in place of this provider's", k.plural)
	}
	for _, k := range switchBackKinds {
		g.Eventually(func(g Gomega) {
			c := crd(k.plural)
			g.Expect(c.Status.AcceptedNames.Kind).To(Equal(k.kind))
			served := []string{}
			for _, v := range c.Spec.Versions {
				served = append(served, v.Name)
			}
			g.Expect(served).To(Equal([]string{"v1beta1"}))
			// The v1beta2 endpoint is gone: nothing is converted now.
			u := &unstructured.UnstructuredList{}
			u.SetGroupVersionKind(infrav1.GroupVersion.WithKind(k.kind + "List"))
			g.Expect(cl.List(ctx, u, client.InNamespace(ns))).NotTo(Succeed())
		}, 30*time.Second, 200*time.Millisecond).Should(Succeed(), k.plural)
	}

	// What CAPO reads.
	get := func(kind, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(infrav1beta1.GroupVersion.WithKind(kind))
		g.Expect(cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed(), kind)
		return u
	}
	field := func(u *unstructured.Unstructured, path ...string) any {
		v, _, err := unstructured.NestedFieldNoCopy(u.Object, path...)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}
	c := get("OpenStackCluster", "c")
	g.Expect(field(c, "spec", "apiServerLoadBalancer", "enabled")).To(BeTrue(), "CAPO keeps the load balancer this provider made")
	g.Expect(field(c, "status", "ready")).To(BeTrue())
	g.Expect(field(c, "status", "network", "id")).To(Equal(networkA))
	g.Expect(field(c, "status", "apiServerLoadBalancer", "id")).To(Equal("lb1"))
	g.Expect(field(c, "status", "apiServerLoadBalancer", "ip")).To(Equal("172.24.4.10"))
	g.Expect(field(c, "status", "failureDomains", "nova", "controlPlane")).To(BeTrue())
	g.Expect(field(c, "status", "conditions")).To(HaveLen(1))
	g.Expect(field(c, "spec", "apiServer")).To(BeNil(), "a v1beta2 field")
	m := get("OpenStackMachine", "m")
	g.Expect(field(m, "status", "ready")).To(BeTrue())
	g.Expect(field(m, "status", "instanceID")).To(Equal("server-1"))
	g.Expect(field(m, "spec", "flavor")).To(Equal("m1.large"))
	mt := get("OpenStackMachineTemplate", "t")
	g.Expect(field(mt, "spec", "template", "spec", "flavor")).To(Equal("m1.large"))
	ct := get("OpenStackClusterTemplate", "ct")
	g.Expect(field(ct, "spec", "template", "spec", "managedSubnets")).To(HaveLen(1))
	g.Expect(field(ct, "spec", "template", "spec", "apiServerLoadBalancer")).To(BeNil(), "a template without a load balancer block")

	// And CAPO can write them under its schema: its status (conditions
	// with a severity) and an unchanged spec.
	g.Expect(unstructured.SetNestedSlice(c.Object, []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": when.UTC().Format(time.RFC3339)},
		map[string]any{"type": "NetworkReady", "status": "False", "severity": "Warning", "reason": "NetworkCreateFailed",
			"lastTransitionTime": when.UTC().Format(time.RFC3339)}}, "status", "conditions")).To(Succeed())
	g.Expect(cl.Status().Update(ctx, c)).To(Succeed())
	for _, u := range []*unstructured.Unstructured{get("OpenStackCluster", "c"), m, mt, ct} {
		g.Expect(cl.Update(ctx, u)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
	}
}

// capoV1beta1CRD is CAPO's CRD for plural reduced to its v1beta1 version,
// stored and without conversion: how CAPO v0.14 serves it (its v1beta1
// schema is that of the published CRD's v1beta1 but for spec.primarySubnet
// and the template's status.conditions, added later).
func capoV1beta1CRD(t *testing.T, dir, plural string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "cluster-api-provider-openstack", infrav1.GroupVersion.Group+"_"+plural+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, c); err != nil {
		t.Fatal(err)
	}
	var v1beta1 []apiextensionsv1.CustomResourceDefinitionVersion
	for _, v := range c.Spec.Versions {
		if v.Name == "v1beta1" {
			v.Storage, v.Served = true, true
			v.Deprecated, v.DeprecationWarning = false, nil
			v1beta1 = append(v1beta1, v)
		}
	}
	if len(v1beta1) != 1 {
		t.Fatalf("%s: CAPO's CRD has no v1beta1", plural)
	}
	c.Spec.Versions = v1beta1
	c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	return c
}
