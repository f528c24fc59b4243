// Package install installs the release the way users do, on a real
// single-node management cluster (test/cmd/mgmt --size node) where the
// controllers run as pods from the images of `make images`:
//
//   - clusterctl: `clusterctl init --config out/clusterctl.yaml` with CAPI
//     core, our bootstrap, control-plane and infrastructure providers and
//     the add-on; cert-manager comes from the release's local render.
//     Then `clusterctl delete --include-crd --include-namespace`.
//   - Helm: CAPI core from `clusterctl generate provider`, then `helm install`
//     of the umbrella chart with every provider; then `helm uninstall`.
//
// After each install every controller is a Running, Ready pod whose image was
// imported (pull policy IfNotPresent), and each provider's webhook, served
// through its Service with a cert-manager certificate, refuses an invalid
// object with a field-named error and admits a valid one. After each
// uninstall no object labelled with one of our providers is left, of any
// kind.
//
// It needs root and the node size's prerequisites, and `make release
// images`. Outside CI it skips when they are missing; in CI (make test builds
// them there) it fails.
package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/images"
	"github.com/ocp-capi/ocp-capi/test/localnode"
)

// provider is one of ours as clusterctl and the charts name it.
type provider struct {
	flag      string // clusterctl init/delete flag
	name      string // clusterctl provider name
	label     string // cluster.x-k8s.io/provider value
	namespace string
}

// providers in the order they are deleted: the add-on (no CRDs) first, the
// bootstrap provider, whose objects the others reference, last.
var providers = []provider{
	{"--addon", "openshift", "addon-openshift", "ocp-capi-addon-system"},
	{"--infrastructure", "openstack", "infrastructure-openstack", "ocp-capi-infrastructure-system"},
	{"--control-plane", "openshift-agent", "control-plane-openshift-agent", "ocp-capi-controlplane-system"},
	{"--bootstrap", "openshift-agent", "bootstrap-openshift-agent", "ocp-capi-bootstrap-system"},
}

const (
	providerLabel = "cluster.x-k8s.io/provider"
	// buildNamespace is the add-on's default --build-namespace (the MCO's
	// namespace on OpenShift), where its RoleBinding goes.
	buildNamespace = "openshift-machine-config-operator"
	// capiNamespace is the add-on's default --capi-namespace, where the
	// Secret sync's RoleBinding goes (OpenShift has it).
	capiNamespace = "openshift-cluster-api"
	helmRelease   = "ocp-capi"
	certManagerNS = "cert-manager"
	capiNS        = "capi-system"
)

func TestInstall(t *testing.T) {
	g := NewWithT(t)
	root, err := envtest.FindRepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	binDir := filepath.Join(root, "bin")
	out := filepath.Join(root, "out")
	release := requirePrerequisites(t, binDir, out)
	start := time.Now()

	k := upCluster(t, root, binDir, filepath.Join(out, "images"))
	t.Logf("[%6.1fs] node cluster up (instance %d)", time.Since(start).Seconds(), k.index)

	// The add-on works in the build namespace, which exists on OpenShift.
	k.kubectl(t, "create", "namespace", buildNamespace)
	k.kubectl(t, "create", "namespace", capiNamespace)

	t.Run("clusterctl", func(t *testing.T) {
		phase := time.Now()
		args := []string{"init", "--config", release.clusterctlConfig, "--core", "cluster-api", "--wait-providers", "--wait-provider-timeout", "300"}
		for _, p := range providers {
			args = append(args, p.flag, p.name)
		}
		t.Log(k.run(t, "clusterctl", args...))
		k.kubectl(t, "apply", "-f", release.buildRBAC)
		t.Logf("[%6.1fs] clusterctl init (+ build-rbac.yaml)", time.Since(phase).Seconds())
		k.checkInstalled(t, release)
		t.Logf("[%6.1fs] clusterctl: pods, webhooks and build RBAC checked", time.Since(phase).Seconds())

		k.kubectl(t, "delete", "-f", release.buildRBAC)
		k.clusterctlDelete(t, release)
		t.Logf("[%6.1fs] clusterctl delete", time.Since(phase).Seconds())
		k.expectNothingLeft(t)
		t.Logf("[%6.1fs] clusterctl: nothing of ours left", time.Since(phase).Seconds())
	})
	if t.Failed() {
		return
	}

	t.Run("helm", func(t *testing.T) {
		phase := time.Now()
		// cert-manager stays from the clusterctl run (clusterctl delete
		// keeps it, as documented). clusterctl init cannot install CAPI core
		// alone (it adds kubeadm's providers on a first init), so it comes
		// from the same repository through `clusterctl generate provider`.
		core := k.stdout(t, "clusterctl", "generate", "provider", "--core", "cluster-api", "--config", release.clusterctlConfig)
		coreFile := filepath.Join(t.TempDir(), "core-components.yaml")
		NewWithT(t).Expect(os.WriteFile(coreFile, []byte(core), 0o600)).To(Succeed())
		k.kubectl(t, "apply", "--server-side", "-f", coreFile)
		t.Log(k.run(t, "helm", "install", helmRelease, release.umbrellaChart, "--namespace", helmRelease, "--create-namespace",
			"--set", "addon.enabled=true", "--wait", "--timeout", "5m"))
		t.Logf("[%6.1fs] CAPI core applied, helm install", time.Since(phase).Seconds())
		k.checkInstalled(t, release)
		t.Logf("[%6.1fs] helm: pods, webhooks and build RBAC checked", time.Since(phase).Seconds())

		t.Log(k.run(t, "helm", "uninstall", helmRelease, "--namespace", helmRelease, "--wait", "--timeout", "5m"))
		k.kubectl(t, "delete", "namespace", helmRelease)
		t.Logf("[%6.1fs] helm uninstall", time.Since(phase).Seconds())
		k.expectNothingLeft(t)
		t.Logf("[%6.1fs] helm: nothing of ours left", time.Since(phase).Seconds())
	})
	t.Logf("[%6.1fs] total, before mgmt down", time.Since(start).Seconds())
}

// releaseFiles are the parts of out/ the test installs.
type releaseFiles struct {
	clusterctlConfig string
	buildRBAC        string
	umbrellaChart    string
	// imageTags are the tags out/images holds.
	imageTags map[string]bool
}

// requirePrerequisites fails in CI (where make test runs node-prereqs,
// release and images first) and skips elsewhere, saying what is missing.
func requirePrerequisites(t *testing.T, binDir, out string) releaseFiles {
	t.Helper()
	rel, err := checkPrerequisites(binDir, out)
	if err == nil {
		return rel
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI: the install test's prerequisites must be there (make node-prereqs release images): %v", err)
	}
	t.Skipf("skipping the live install test (outside CI; run as root after make node-prereqs release images): %v", err)
	return rel
}

func checkPrerequisites(binDir, out string) (releaseFiles, error) {
	var rel releaseFiles
	if err := localnode.CheckPrerequisites(binDir, filepath.Join(binDir, "images")); err != nil {
		return rel, err
	}
	var problems []string
	for _, b := range []string{"clusterctl", "helm", "kubectl"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			problems = append(problems, fmt.Sprintf("no %s (make test-tools)", filepath.Join(binDir, b)))
		}
	}
	rel.clusterctlConfig = filepath.Join(out, "clusterctl.yaml")
	if _, err := os.Stat(rel.clusterctlConfig); err != nil {
		problems = append(problems, fmt.Sprintf("no %s (make release)", rel.clusterctlConfig))
	}
	if m, _ := filepath.Glob(filepath.Join(out, "addon-openshift", "*", "build-rbac.yaml")); len(m) == 1 {
		rel.buildRBAC = m[0]
	} else {
		problems = append(problems, fmt.Sprintf("want one %s/addon-openshift/<version>/build-rbac.yaml (make release), found %d", out, len(m)))
	}
	if m, _ := filepath.Glob(filepath.Join(out, "charts", "ocp-capi-[0-9]*.tgz")); len(m) == 1 {
		rel.umbrellaChart = m[0]
	} else {
		problems = append(problems, fmt.Sprintf("want one %s/charts/ocp-capi-<version>.tgz (make release), found %d", out, len(m)))
	}
	list, err := os.ReadFile(filepath.Join(out, "images", "images.txt"))
	if err == nil {
		var entries []images.ListEntry
		if entries, err = images.ParseImageList(list); err == nil {
			rel.imageTags = map[string]bool{}
			for _, e := range entries {
				rel.imageTags[e.Tag] = true
			}
		}
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf("out/images/images.txt: %v (make images)", err))
	}
	if len(problems) > 0 {
		return rel, errors.New(strings.Join(problems, "; "))
	}
	return rel, nil
}

// cluster is the test's own node cluster and the tools run against it.
type cluster struct {
	root, binDir string
	index        int
	env          []string
	cfg          *rest.Config
	cs           *kubernetes.Clientset
	dyn          dynamic.Interface
	disc         discovery.DiscoveryInterface
}

// upCluster starts a node cluster on an instance index of its own, with a
// temporary state dir, the consumed APIs' CRDs (the providers watch them)
// and out/images imported, and stops it when the test ends.
func upCluster(t *testing.T, root, binDir, imagesDir string) *cluster {
	t.Helper()
	g := NewWithT(t)
	mgmt := filepath.Join(t.TempDir(), "mgmt")
	build := exec.Command("go", "build", "-o", mgmt, "./test/cmd/mgmt")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./test/cmd/mgmt: %v\n%s", err, b)
	}
	// Short: the kubelet's sockets under it must fit in sun_path.
	state, err := os.MkdirTemp("", "mgmt-install-")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if b, err := exec.Command(mgmt, "down", "--state-dir", state).CombinedOutput(); err != nil {
			t.Errorf("cleanup: mgmt down: %v\n%s", err, b)
		}
		_ = os.RemoveAll(state)
	})
	var (
		out   []byte
		index int
	)
	for attempt := 1; ; attempt++ {
		index = freeInstance(t)
		cmd := exec.Command(mgmt, "up", "--size", "node", "--state-dir", state, "--instance", strconv.Itoa(index), "--port", strconv.Itoa(freePort(t)),
			"--bin-dir", binDir, "--node-images", filepath.Join(binDir, "images"), "--images", imagesDir,
			"--forward-host-ports", "none", "--crds", "consumed")
		cmd.Dir = root
		out, err = cmd.CombinedOutput()
		taken := bytes.Contains(out, []byte("is already running from another state dir")) || bytes.Contains(out, []byte("is in use"))
		if err == nil || !taken || attempt == 3 {
			break
		}
		t.Logf("instance %d was taken meanwhile, trying another: %s", index, out)
	}
	log, _ := os.ReadFile(filepath.Join(state, "mgmt.log"))
	g.Expect(err).NotTo(HaveOccurred(), "mgmt up: %s\nlog:\n%s", out, tail(string(log), 40))
	t.Log(string(out))

	kubeconfig := filepath.Join(state, "kubeconfig")
	home := t.TempDir()
	k := &cluster{root: root, binDir: binDir, index: index, env: append(os.Environ(),
		"KUBECONFIG="+kubeconfig,
		// clusterctl and helm keep caches and settings under these; the
		// test's must not touch the user's.
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "HELM_CONFIG_HOME="+filepath.Join(home, "helm"),
		"HELM_CACHE_HOME="+filepath.Join(home, "helm-cache"), "HELM_DATA_HOME="+filepath.Join(home, "helm-data"),
	)}
	k.cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	// Listing every kind names deprecated ones (v1 Endpoints, ComponentStatus).
	k.cfg.WarningHandler = rest.NoWarnings{}
	k.cs, err = kubernetes.NewForConfig(k.cfg)
	g.Expect(err).NotTo(HaveOccurred())
	k.dyn, err = dynamic.NewForConfig(k.cfg)
	g.Expect(err).NotTo(HaveOccurred())
	k.disc = k.cs.Discovery()
	return k
}

// freeInstance picks an index from the upper half of the range (people use
// 0, 1, ...; test/cmd/mgmt's test takes the top 32) whose lock and cgroup
// are free. `mgmt up` takes the lock itself, so a race fails loudly.
func freeInstance(t *testing.T) int {
	t.Helper()
	for i := localnode.MaxIndex - 32; i > localnode.MaxIndex-96; i-- {
		inst, err := localnode.NewInstance(i, 0)
		if err != nil {
			t.Fatal(err)
		}
		// `mgmt up` holds the abstract socket @<instance name> while it runs.
		ln, err := net.Listen("unix", "@"+inst.Name())
		if err != nil {
			continue
		}
		_ = ln.Close()
		if len(localnode.CgroupDirs(inst.CgroupRoot())) == 0 {
			return i
		}
	}
	t.Fatal("no free instance index")
	return 0
}

// freePort is a port on 127.0.0.1 free now, for the API server's forward
// (6443+index may be taken by something else).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port
}

// run runs a tool of bin/ against the cluster and returns its output.
func (k *cluster) run(t *testing.T, tool string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(k.binDir, tool), args...)
	cmd.Dir = k.root
	cmd.Env = k.env
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s\n%s", tool, strings.Join(args, " "), err, b, k.describe(t))
	}
	return string(b)
}

// stdout runs a tool of bin/ and returns its standard output alone (a
// manifest, without the warnings a tool writes to stderr).
func (k *cluster) stdout(t *testing.T, tool string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(k.binDir, tool), args...)
	cmd.Dir = k.root
	cmd.Env = k.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, stderr.String())
	}
	return string(b)
}

func (k *cluster) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	return k.run(t, "kubectl", args...)
}

// describe says what runs, for a failure message.
func (k *cluster) describe(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(k.binDir, "kubectl"), "get", "pods,deployments", "-A", "-o", "wide")
	cmd.Env = k.env
	b, _ := cmd.CombinedOutput()
	return "cluster state:\n" + string(b)
}

// checkInstalled: every controller runs as a Ready pod from an imported
// image, every webhook is served, and the add-on has its namespaced
// permissions and no Secret writes elsewhere.
func (k *cluster) checkInstalled(t *testing.T, rel releaseFiles) {
	t.Helper()
	g := NewWithT(t)
	namespaces := []string{certManagerNS, capiNS}
	for _, p := range providers {
		namespaces = append(namespaces, p.namespace)
	}
	for _, ns := range namespaces {
		k.expectDeploymentsRunning(t, ns, rel)
	}
	k.expectWebhooksServed(t)
	for _, c := range webhookCases {
		k.expectWebhook(t, c)
	}
	// The add-on's namespaced permissions (the RoleBindings of
	// build-rbac.yaml, or the chart's): Jobs in the build namespace, Secret
	// writes in the CAPI namespace and nowhere else.
	for _, c := range []struct {
		ns, group, resource string
		allowed             bool
	}{
		{buildNamespace, "batch", "jobs", true},
		{capiNamespace, "", "secrets", true},
		{"default", "", "secrets", false},
	} {
		sar, err := k.cs.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               "system:serviceaccount:ocp-capi-addon-system:ocp-capi-addon-manager",
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: c.ns, Verb: "create", Group: c.group, Resource: c.resource},
			},
		}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(sar.Status.Allowed).To(Equal(c.allowed), "the add-on may create %s in %s: %t (%s)", c.resource, c.ns, c.allowed, sar.Status.Reason)
	}
}

// expectDeploymentsRunning waits until every Deployment of ns is available
// and each of its pods Running and Ready, then checks their containers.
func (k *cluster) expectDeploymentsRunning(t *testing.T, ns string, rel releaseFiles) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	g.Eventually(func(g Gomega) {
		deps, err := k.cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(deps.Items).NotTo(BeEmpty(), "Deployments in %s", ns)
		for _, d := range deps.Items {
			g.Expect(available(&d)).To(BeTrue(), "Deployment %s/%s available", ns, d.Name)
		}
		pods, err := k.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods.Items).NotTo(BeEmpty())
		for _, p := range pods.Items {
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s/%s", ns, p.Name)
			g.Expect(ready(&p)).To(BeTrue(), "pod %s/%s Ready", ns, p.Name)
		}
	}).WithTimeout(4*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return k.describe(t) })

	pods, err := k.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range pods.Items {
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent), "pod %s/%s container %s", ns, p.Name, c.Name)
			g.Expect(rel.imageTags).To(HaveKey(c.Image), "pod %s/%s container %s runs an image that make images does not build", ns, p.Name, c.Name)
		}
		for _, s := range p.Status.ContainerStatuses {
			if s.RestartCount > 0 {
				t.Logf("pod %s/%s container %s restarted %d times", ns, p.Name, s.Name, s.RestartCount)
			}
		}
	}
}

func available(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want &&
		d.Status.AvailableReplicas == want && d.Status.Replicas == want
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// expectWebhooksServed: each of our webhook configurations calls a Service
// of its provider's namespace whose endpoints are ready, with the CA that
// cert-manager injected, and that provider's Certificate is Ready.
func (k *cluster) expectWebhooksServed(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	sel := metav1.ListOptions{LabelSelector: ourSelector()}
	vwcs, err := k.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, sel)
	g.Expect(err).NotTo(HaveOccurred())
	seen := map[string]bool{}
	certGVR := schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}
	for _, c := range vwcs.Items {
		label := c.Labels[providerLabel]
		seen[label] = true
		for _, w := range c.Webhooks {
			svc := w.ClientConfig.Service
			g.Expect(svc).NotTo(BeNil(), "%s: webhook %s is served through a Service", c.Name, w.Name)
			g.Expect(svc.Namespace).To(Equal(namespaceOf(label)), "%s: webhook %s", c.Name, w.Name)
			g.Expect(w.ClientConfig.CABundle).NotTo(BeEmpty(), "%s: webhook %s has the CA cert-manager injects", c.Name, w.Name)
			g.Eventually(func(g Gomega) {
				eps, err := k.cs.DiscoveryV1().EndpointSlices(svc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svc.Name})
				g.Expect(err).NotTo(HaveOccurred())
				n := 0
				for _, s := range eps.Items {
					for _, e := range s.Endpoints {
						if e.Conditions.Ready != nil && *e.Conditions.Ready {
							n++
						}
					}
				}
				g.Expect(n).To(BeNumerically(">", 0), "ready endpoints of Service %s/%s", svc.Namespace, svc.Name)
			}).WithTimeout(time.Minute).Should(Succeed())
		}
		certs, err := k.dyn.Resource(certGVR).Namespace(namespaceOf(label)).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(certs.Items).To(HaveLen(1), "one cert-manager Certificate in %s", namespaceOf(label))
		conds, _, _ := unstructured.NestedSlice(certs.Items[0].Object, "status", "conditions")
		g.Expect(conds).To(ContainElement(And(HaveKeyWithValue("type", "Ready"), HaveKeyWithValue("status", "True"))),
			"Certificate %s/%s Ready", namespaceOf(label), certs.Items[0].GetName())
	}
	for _, want := range []string{"bootstrap-openshift-agent", "control-plane-openshift-agent", "infrastructure-openstack"} {
		g.Expect(seen).To(HaveKey(want), "a ValidatingWebhookConfiguration of %s", want)
	}
}

func namespaceOf(label string) string {
	for _, p := range providers {
		if p.label == label {
			return p.namespace
		}
	}
	return ""
}

func ourSelector() string {
	labels := make([]string, 0, len(providers))
	for _, p := range providers {
		labels = append(labels, p.label)
	}
	sort.Strings(labels)
	return fmt.Sprintf("%s in (%s)", providerLabel, strings.Join(labels, ","))
}

// webhookCase is an object a provider's webhook refuses, naming a field
// with a message only the webhook writes (not the CRD's schema), and the
// same object made valid.
type webhookCase struct {
	invalid, valid string
	field, message string
}

var webhookCases = []webhookCase{
	{
		invalid: `
apiVersion: bootstrap.cluster.x-k8s.io/v1alpha2
kind: OpenshiftAssistedConfig
metadata: {name: webhook-check, namespace: default}
spec:
  nodeRegistration: {name: Not_A_Host}`,
		valid: `
apiVersion: bootstrap.cluster.x-k8s.io/v1alpha2
kind: OpenshiftAssistedConfig
metadata: {name: webhook-check, namespace: default}
spec:
  nodeRegistration: {name: worker-0}`,
		field: "spec.nodeRegistration.name", message: "not a hostname",
	},
	{
		invalid: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: OpenStackMachine
metadata: {name: webhook-check, namespace: default}
spec:
  flavor: {filter: {name: m1.tiny}}
  image: {filter: {name: cirros}}
  ports:
  - enablePortSecurity: false
    securityGroups: [{filter: {name: default}}]`,
		valid: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: OpenStackMachine
metadata: {name: webhook-check, namespace: default}
spec:
  flavor: {filter: {name: m1.tiny}}
  image: {filter: {name: cirros}}
  ports:
  - enablePortSecurity: true
    securityGroups: [{filter: {name: default}}]`,
		field: "spec.ports[0].securityGroups", message: "must be empty when enablePortSecurity is false",
	},
	{
		invalid: `
apiVersion: controlplane.cluster.x-k8s.io/v1alpha3
kind: OpenshiftAssistedControlPlane
metadata: {name: webhook-check, namespace: default}
spec:
  distributionVersion: "4.17.0"
  replicas: 4
  machineTemplate:
    infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackMachineTemplate, name: cp}
  config: {baseDomain: example.com}`,
		valid: `
apiVersion: controlplane.cluster.x-k8s.io/v1alpha3
kind: OpenshiftAssistedControlPlane
metadata: {name: webhook-check, namespace: default}
spec:
  distributionVersion: "4.19.0"
  replicas: 3
  machineTemplate:
    infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackMachineTemplate, name: cp}
  config: {baseDomain: example.com}`,
		field: "spec.replicas", message: "control-plane nodes need OpenShift",
	},
}

// expectWebhook creates both objects with dryRun=All: the request goes
// through admission (our webhooks declare sideEffects None) and stores
// nothing, so no controller reconciles a test object.
func (k *cluster) expectWebhook(t *testing.T, c webhookCase) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	create := func(doc string) error {
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
		gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
		g.Expect(err).NotTo(HaveOccurred())
		gvr := schema.GroupVersionResource{Group: gv.Group, Version: gv.Version, Resource: strings.ToLower(u.GetKind()) + "s"}
		_, err = k.dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	err := create(c.invalid)
	g.Expect(err).To(HaveOccurred(), "the webhook refuses:%s", c.invalid)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "an Invalid error: %v", err)
	var fields []string
	if st, ok := err.(apierrors.APIStatus); ok && st.Status().Details != nil {
		for _, cause := range st.Status().Details.Causes {
			fields = append(fields, cause.Field)
		}
	}
	g.Expect(fields).To(ContainElement(c.field), "error %v", err)
	g.Expect(err.Error()).To(ContainSubstring(c.message))
	g.Expect(create(c.valid)).To(Succeed(), "the webhook admits:%s", c.valid)
}

// clusterctlDelete removes our providers, then CAPI core, with their CRDs
// and namespaces, one provider per clusterctl call. `clusterctl delete
// --all` in one call lists each provider's objects through discovery right
// after deleting the previous provider's CRDs: when discovery still names a
// CRD that the CRD list no longer has, the list fails ("no matches for
// kind") and clusterctl stops with CAPI core already gone, which leaves the
// rest beyond clusterctl's reach. So each call waits until discovery has
// dropped the CRDs of the one before.
func (k *cluster) clusterctlDelete(t *testing.T, rel releaseFiles) {
	t.Helper()
	g := NewWithT(t)
	steps := make([][]string, 0, len(providers)+1)
	for _, p := range providers {
		steps = append(steps, []string{p.flag, p.name, p.label})
	}
	steps = append(steps, []string{"--core", "cluster-api", "cluster-api"})
	for _, s := range steps {
		crds := k.crdKinds(t, s[2])
		t.Log(k.run(t, "clusterctl", "delete", "--config", rel.clusterctlConfig, s[0], s[1], "--include-crd", "--include-namespace"))
		g.Eventually(func() []string { return k.servedKinds(t, crds) }).WithTimeout(3*time.Minute).WithPolling(500*time.Millisecond).
			Should(BeEmpty(), "discovery drops the CRDs of %s", s[2])
	}
	// clusterctl deletes only the ClusterRoles and ClusterRoleBindings whose
	// names start with "<provider namespace>-" (ours do). CAPI core's are
	// named capi-*, and stay: remove them as a user would.
	k.kubectl(t, "delete", "clusterroles,clusterrolebindings", "-l", providerLabel+"=cluster-api", "--ignore-not-found")
}

// crdKinds are "<group>/<version>/<kind>" of every CRD labelled provider.
func (k *cluster) crdKinds(t *testing.T, provider string) []string {
	t.Helper()
	g := NewWithT(t)
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	l, err := k.dyn.Resource(gvr).List(t.Context(), metav1.ListOptions{LabelSelector: providerLabel + "=" + provider})
	g.Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, crd := range l.Items {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			if m, ok := v.(map[string]any); ok && m["served"] == true {
				out = append(out, fmt.Sprintf("%s/%s/%s", group, m["name"], kind))
			}
		}
	}
	return out
}

// servedKinds returns those of kinds that discovery still serves.
func (k *cluster) servedKinds(t *testing.T, kinds []string) []string {
	t.Helper()
	g := NewWithT(t)
	var out []string
	for _, gvk := range kinds {
		parts := strings.Split(gvk, "/")
		l, err := k.disc.ServerResourcesForGroupVersion(parts[0] + "/" + parts[1])
		if apierrors.IsNotFound(err) {
			continue
		}
		g.Expect(err).NotTo(HaveOccurred())
		for _, r := range l.APIResources {
			if r.Kind == parts[2] {
				out = append(out, gvk)
			}
		}
	}
	return out
}

// expectNothingLeft waits until no object of any kind carries one of our
// providers' labels (namespaces finish terminating, CRDs their cleanup).
func (k *cluster) expectNothingLeft(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func() ([]string, error) { return k.ours(t.Context()) }).WithTimeout(5*time.Minute).WithPolling(2*time.Second).
		Should(BeEmpty(), "objects of ours left")
}

// ours lists every object, of every kind the API server serves, labelled
// with one of our providers.
func (k *cluster) ours(ctx context.Context) ([]string, error) {
	lists, err := discovery.ServerPreferredResources(k.disc)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list"}}, lists)
	var out []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range l.APIResources {
			objs, err := k.dyn.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{LabelSelector: ourSelector()})
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				continue // gone since discovery
			}
			if err != nil {
				return nil, fmt.Errorf("listing %s %s: %w", l.GroupVersion, r.Name, err)
			}
			for _, o := range objs.Items {
				name := o.GetName()
				if o.GetNamespace() != "" {
					name = o.GetNamespace() + "/" + name
				}
				out = append(out, fmt.Sprintf("%s %s (%s)", r.Kind, name, o.GetLabels()[providerLabel]))
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
