package webhooks_test

// TestClusterClassFile runs CAPI core's topology controller (the real
// cluster-api manager) on the ClusterClass that the release ships
// (templates/clusterclass-openstack-agent.yaml) and a Cluster of the topology
// flavor (templates/cluster-template-topology.yaml), both rendered by
// clusterctl's own variable processor: the control plane is made with the
// cloned OpenStackMachineTemplate at spec.machineTemplate.spec.infrastructureRef
// and the OpenShift release of the variable openshiftVersion; a change of
// openshiftVersion alone to another minor is refused; and one patch of the
// Cluster changing spec.topology.version and openshiftVersion reaches the
// control plane as one write carrying both.

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	"sigs.k8s.io/cluster-api/core/webhooks/admission"
	"sigs.k8s.io/cluster-api/feature"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

var controlPlaneV1beta1 = schema.GroupVersionResource{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1",
	Resource: "openshiftassistedcontrolplanes"}

// renderTemplate substitutes the clusterctl variables of a file of
// templates/ as `clusterctl generate cluster` does, and splits it into
// objects.
func renderTemplate(t *testing.T, name string, vars map[string]string) []*unstructured.Unstructured {
	t.Helper()
	root, err := envtest.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "templates", name))
	if err != nil {
		t.Fatal(err)
	}
	out, err := yamlprocessor.NewSimpleProcessor().Process(raw, func(v string) (string, error) {
		if val, ok := vars[v]; ok {
			return val, nil
		}
		return "", fmt.Errorf("variable %s not set", v)
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(out), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

func TestClusterClassFile(t *testing.T) {
	capi := envtest.CAPIManagerBinary()
	if capi == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no cluster-api manager in bin/ (make bin/capi-manager)")
		}
		t.Skip("no cluster-api manager in bin/ (make bin/capi-manager): the shipped ClusterClass is not exercised")
	}
	g := NewWithT(t)
	ctrl.SetLogger(logr.Discard())
	ctx := context.Background()
	env, stop, err := startWithWebhooks(ctx, clusterv1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()
	capiMgr, err := env.StartCAPIManager(capi, t.TempDir(), "--feature-gates=ClusterTopology=true")
	g.Expect(err).NotTo(HaveOccurred())
	defer capiMgr.Stop()
	// The manager's start on a loaded machine is not what is measured here.
	g.Expect(capiMgr.WaitForControllers(5*time.Minute, "clusterclass", "topology/cluster")).To(Succeed())
	running := func() {
		if err, exited := capiMgr.Exited(); exited {
			g.Expect(err).NotTo(HaveOccurred(), "the cluster-api manager exited:\n%s", capiMgr.LogTail())
		}
	}

	ns, err := env.NewNamespace(ctx, "cc-file")
	g.Expect(err).NotTo(HaveOccurred())
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	vars := map[string]string{
		"CLUSTER_NAME": "demo", "CONTROL_PLANE_MACHINE_COUNT": "3", "WORKER_MACHINE_COUNT": "1",
		"OPENSHIFT_BASE_DOMAIN": "example.com", "OPENSHIFT_PULL_SECRET_B64": b64(`{"auths":{}}`),
		"OPENSHIFT_SSH_AUTHORIZED_KEY":  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA demo@example.com",
		"OPENSTACK_CLOUD_YAML_B64":      b64("clouds: {}\n"),
		"OPENSTACK_DNS_NAMESERVERS":     "10.0.0.53,10.0.0.54",
		"OPENSTACK_NODE_MACHINE_FLAVOR": "m1.medium",
	}
	var cluster *unstructured.Unstructured
	for _, o := range append(renderTemplate(t, "clusterclass-openstack-agent.yaml", vars),
		renderTemplate(t, "cluster-template-topology.yaml", vars)...) {
		o.SetNamespace(ns.Name)
		if o.GetKind() == "Cluster" {
			cluster = o
			continue
		}
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
	}
	g.Expect(cluster).NotTo(BeNil())

	// CAPI's ClusterClass controller reconciles the class (its templates
	// exist, its variables go to status.variables); then CAPI's own
	// validation of the Cluster's variables (the code of its Cluster
	// webhook, which is not installed here) accepts them. CAPI's patch
	// helper writes the conditions before the rest of the status, so
	// VariablesReady can be True while status.variables is still empty:
	// the reconcile is complete once status.observedGeneration, written
	// with status.variables, has caught up.
	cc := &clusterv1.ClusterClass{}
	g.Eventually(func(g Gomega) {
		running()
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "openstack-agent"}, cc)).To(Succeed())
		g.Expect(capiconditions.Get(cc, clusterv1.ClusterClassVariablesReadyCondition)).To(HaveField("Status", metav1.ConditionTrue))
		g.Expect(cc.Status.ObservedGeneration).To(Equal(cc.Generation))
		g.Expect(cc.Status.Variables).To(HaveLen(len(cc.Spec.Variables)))
	}, 2*time.Minute, 250*time.Millisecond).Should(Succeed(), func() string {
		return fmt.Sprintf("ClusterClass status %+v\ncluster-api manager log:\n%s", cc.Status, capiMgr.LogTail())
	})
	typed := &clusterv1.Cluster{}
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(cluster.Object, typed)).To(Succeed())
	g.Expect(feature.MutableGates.Set("ClusterTopology=true")).To(Succeed())
	g.Expect((&admission.Cluster{Client: env.Client}).DefaultAndValidateVariables(ctx, typed, nil, cc)).To(BeEmpty(),
		"ClusterClass generation %d, status %+v", cc.Generation, cc.Status)
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())

	key := client.ObjectKey{Namespace: ns.Name, Name: "demo"}
	topology := func() *metav1.Condition {
		running()
		g.Expect(env.Client.Get(ctx, key, typed)).To(Succeed())
		return capiconditions.Get(typed, clusterv1.ClusterTopologyReconciledCondition)
	}
	g.Eventually(topology, 2*time.Minute, 250*time.Millisecond).Should(And(Not(BeNil()),
		HaveField("Status", metav1.ConditionTrue)), func() string {
		return fmt.Sprintf("Cluster conditions %+v\ncluster-api manager's errors:\n%s", typed.Status.Conditions, capiErrors(capiMgr))
	})

	// The control plane, read at v1beta1: the contract's fields, the
	// patched install configuration and the per-cluster clone of the
	// control plane's machine template.
	dyn, err := dynamic.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	cps := dyn.Resource(controlPlaneV1beta1).Namespace(ns.Name)
	cp, err := cps.Get(ctx, typed.Spec.ControlPlaneRef.Name, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	str := func(o *unstructured.Unstructured, path ...string) string {
		v, _, _ := unstructured.NestedString(o.Object, path...)
		return v
	}
	g.Expect(str(cp, "spec", "version")).To(Equal("v1.32.0"))
	g.Expect(str(cp, "spec", "distributionVersion")).To(Equal("4.19.0"))
	g.Expect(cp.Object).To(HaveKeyWithValue("spec", HaveKeyWithValue("replicas", BeEquivalentTo(3))))
	g.Expect(str(cp, "spec", "config", "clusterName")).To(Equal("demo"))
	g.Expect(str(cp, "spec", "config", "baseDomain")).To(Equal("example.com"))
	g.Expect(str(cp, "spec", "config", "pullSecretRef", "name")).To(Equal("demo-pull-secret"))
	g.Expect(str(cp, "spec", "openshiftAssistedConfigSpec", "pullSecretRef", "name")).To(Equal("demo-pull-secret"))
	g.Expect(str(cp, "spec", "openshiftAssistedConfigSpec", "sshAuthorizedKey")).To(HavePrefix("ssh-ed25519 "))
	g.Expect(str(cp, "spec", "machineTemplate", "spec", "infrastructureRef", "apiGroup")).To(Equal("infrastructure.cluster.x-k8s.io"))
	g.Expect(str(cp, "spec", "machineTemplate", "spec", "infrastructureRef", "kind")).To(Equal("OpenStackMachineTemplate"))
	cpMachines := str(cp, "spec", "machineTemplate", "spec", "infrastructureRef", "name")
	g.Expect(cpMachines).To(HavePrefix("demo-"), "the topology's clone, not the class's template")
	machineTemplate := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta2")
		u.SetKind("OpenStackMachineTemplate")
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, u)).To(Succeed())
		return u
	}
	osmt := machineTemplate(cpMachines)
	g.Expect(str(osmt, "spec", "template", "spec", "flavor", "filter", "name")).To(Equal("m1.xlarge"))
	tags, _, _ := unstructured.NestedStringSlice(osmt.Object, "spec", "template", "spec", "tags")
	g.Expect(tags).To(Equal([]string{"demo"}))

	osc := &unstructured.Unstructured{}
	osc.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta2")
	osc.SetKind("OpenStackCluster")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: typed.Spec.InfrastructureRef.Name}, osc)).To(Succeed())
	g.Expect(str(osc, "spec", "identityRef", "name")).To(Equal("demo-cloud-config"))
	g.Expect(str(osc, "spec", "identityRef", "cloudName")).To(Equal("openstack"))
	subnets, _, _ := unstructured.NestedSlice(osc.Object, "spec", "managedSubnets")
	g.Expect(subnets).To(Equal([]any{map[string]any{"cidr": "10.6.0.0/24", "dnsNameservers": []any{"10.0.0.53", "10.0.0.54"}}}))

	mds := &clusterv1.MachineDeploymentList{}
	g.Expect(env.Client.List(ctx, mds, client.InNamespace(ns.Name))).To(Succeed())
	g.Expect(mds.Items).To(HaveLen(1))
	md := mds.Items[0]
	g.Expect(md.Spec.Template.Spec.Version).To(Equal("v1.32.0"))
	g.Expect(md.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)))
	workerMachines := machineTemplate(md.Spec.Template.Spec.InfrastructureRef.Name)
	g.Expect(str(workerMachines, "spec", "template", "spec", "flavor", "filter", "name")).To(Equal("m1.medium"))
	g.Expect(str(workerMachines, "spec", "template", "spec", "image", "filter", "name")).To(Equal("rhcos"))
	workerConfig := &unstructured.Unstructured{}
	workerConfig.SetAPIVersion("bootstrap.cluster.x-k8s.io/v1alpha2")
	workerConfig.SetKind("OpenshiftAssistedConfigTemplate")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: md.Spec.Template.Spec.Bootstrap.ConfigRef.Name}, workerConfig)).To(Succeed())
	g.Expect(str(workerConfig, "spec", "template", "spec", "pullSecretRef", "name")).To(Equal("demo-pull-secret"))

	// The control plane reports itself installed and stable, as the
	// controller would (it does not run here): the topology controller
	// holds version changes back while a control plane provisions or
	// upgrades.
	markStable := func(version, distribution string) {
		cp, err := cps.Get(ctx, cp.GetName(), metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		status := map[string]any{
			"initialization": map[string]any{"controlPlaneInitialized": true},
			"version":        version, "distributionVersion": distribution,
			"replicas": int64(3), "readyReplicas": int64(3), "availableReplicas": int64(3), "upToDateReplicas": int64(3),
		}
		g.Expect(unstructured.SetNestedMap(cp.Object, status, "status")).To(Succeed())
		_, err = cps.UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}
	markStable("v1.32.0", "4.19.0")

	setVariable := func(c *clusterv1.Cluster, name, value string) {
		for i := range c.Spec.Topology.Variables {
			if c.Spec.Topology.Variables[i].Name == name {
				c.Spec.Topology.Variables[i].Value = apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf("%q", value))}
			}
		}
	}

	// openshiftVersion alone moved to another minor: the control plane's
	// webhook refuses the pair, and the Cluster says so.
	base := typed.DeepCopy()
	setVariable(typed, "openshiftVersion", "4.20.0")
	g.Expect(env.Client.Patch(ctx, typed, client.MergeFrom(base))).To(Succeed())
	g.Eventually(topology, 2*time.Minute, 250*time.Millisecond).Should(And(
		HaveField("Status", metav1.ConditionFalse), HaveField("Reason", clusterv1.ClusterTopologyReconciledFailedReason)),
		"cluster-api manager log:\n%s", capiMgr.LogTail())
	g.Eventually(func() (string, error) {
		data, err := os.ReadFile(capiMgr.Log)
		return string(data), err
	}, time.Minute, 250*time.Millisecond).Should(ContainSubstring("OpenShift 4.20.0 ships Kubernetes 1.33"),
		"the webhook's refusal, in the topology controller's error")
	cp, err = cps.Get(ctx, cp.GetName(), metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(str(cp, "spec", "distributionVersion")).To(Equal("4.19.0"))
	// Back, and the topology reconciles again.
	base = typed.DeepCopy()
	setVariable(typed, "openshiftVersion", "4.19.0")
	g.Expect(env.Client.Patch(ctx, typed, client.MergeFrom(base))).To(Succeed())
	g.Eventually(topology, 2*time.Minute, 250*time.Millisecond).Should(HaveField("Status", metav1.ConditionTrue),
		"cluster-api manager log:\n%s", capiMgr.LogTail())

	// The upgrade: one patch of the Cluster. Every write of the control
	// plane from now on is watched; the first that changes its spec
	// carries both versions.
	cp, err = cps.Get(ctx, cp.GetName(), metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := cps.Watch(ctx, metav1.ListOptions{ResourceVersion: cp.GetResourceVersion(),
		FieldSelector: "metadata.name=" + cp.GetName()})
	g.Expect(err).NotTo(HaveOccurred())
	defer w.Stop()
	base = typed.DeepCopy()
	typed.Spec.Topology.Version = "v1.33.0"
	setVariable(typed, "openshiftVersion", "4.20.0")
	g.Expect(env.Client.Patch(ctx, typed, client.MergeFrom(base))).To(Succeed())
	var upgraded *unstructured.Unstructured
	deadline := time.After(2 * time.Minute)
	for upgraded == nil {
		select {
		case ev, ok := <-w.ResultChan():
			g.Expect(ok).To(BeTrue(), "the watch ended")
			g.Expect(ev.Type).To(Equal(watch.Modified), "%v", ev.Object)
			o := ev.Object.(*unstructured.Unstructured)
			v, dv := str(o, "spec", "version"), str(o, "spec", "distributionVersion")
			if v == "v1.32.0" && dv == "4.19.0" {
				continue // a write of something else (metadata, status)
			}
			g.Expect([]string{v, dv}).To(Equal([]string{"v1.33.0", "4.20.0"}), "a write of the control plane with one version changed")
			upgraded = o
		case <-deadline:
			running()
			t.Fatalf("the control plane was not upgraded; cluster-api manager log:\n%s", capiMgr.LogTail())
		}
	}
	// The workers wait for the control plane's upgrade (status.version is
	// still v1.32.0).
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&md), &md)).To(Succeed())
	g.Expect(md.Spec.Template.Spec.Version).To(Equal("v1.32.0"))
}

// capiErrors are the last errors the cluster-api manager logged.
func capiErrors(m *envtest.CAPIManager) string {
	data, _ := os.ReadFile(m.Log)
	var errs []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "E") {
			errs = append(errs, l)
		}
	}
	return strings.Join(errs[max(0, len(errs)-5):], "\n")
}
