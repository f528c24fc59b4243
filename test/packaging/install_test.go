package packaging

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// certManagerVersion is the cert-manager release whose CRDs the API server
// gets, so that Issuers and Certificates are accepted: the release the local
// management cluster runs (it is served whole by the module proxy).
const certManagerVersion = "v1.9.2"

// The namespaces of the add-on's RoleBindings (build-rbac.yaml): the build
// namespace and the CAPI namespace. Both exist on OpenShift, so the tests
// create them as the cluster would have them.
const (
	buildNamespace = "openshift-machine-config-operator"
	capiNamespace  = "openshift-cluster-api"
)

// crdDeletionTimeout bounds the wait for helm uninstall's deletions: the
// API server removes a CRD asynchronously, which takes long on a loaded
// machine.
const crdDeletionTimeout = 3 * time.Minute

var (
	apiOnce    sync.Once
	apiEnv     *envtest.Environment
	apiErr     error
	kubeconfig string
)

// apiServer starts, once, a real kube-apiserver with CAPI core's and the
// consumed APIs' CRDs and cert-manager's, but without ours: those come with
// the charts and components under test.
func apiServer(t *testing.T) *envtest.Environment {
	t.Helper()
	apiOnce.Do(func() { apiEnv, apiErr = startAPIServer() })
	if apiErr != nil {
		t.Fatal(apiErr)
	}
	return apiEnv
}

// assetsDir holds kube-apiserver and etcd.
func assetsDir() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	return binDir
}

func stopAPIServer() {
	if apiEnv != nil {
		_ = apiEnv.Stop()
	}
}

func startAPIServer() (*envtest.Environment, error) {
	cm, err := certManagerCRDs()
	if err != nil {
		return nil, err
	}
	// The API server must not have our CRDs: the charts and components
	// under test create them (Helm refuses to adopt existing ones). envtest
	// installs the CRDs of the repository it is given, so it gets an empty
	// one: CAPI core's CRDs (from the module cache) and cert-manager's only.
	fakeRoot := filepath.Join(scratch, "envtest-root")
	if err := os.MkdirAll(filepath.Join(fakeRoot, "test", "crds", "consumed"), 0o755); err != nil {
		return nil, err
	}
	capiCRDs, err := envtest.CAPICoreCRDDir(root)
	if err != nil {
		return nil, err
	}
	if err := os.Setenv("OCP_CAPI_CAPI_CRDS", capiCRDs); err != nil { // read by envtest for the empty repository
		return nil, err
	}
	env, err := envtest.Start(envtest.Options{RepoRoot: fakeRoot, BinDir: assetsDir(), UpstreamCRDs: "none", ExtraCRDs: cm})
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = env.Stop()
		}
	}()
	ctx := context.Background()
	for _, ns := range []string{buildNamespace, capiNamespace} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, err
		}
	}
	kc, err := env.KubeConfig()
	if err != nil {
		return nil, err
	}
	kubeconfig = filepath.Join(scratch, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return nil, err
	}
	ok = true
	return env, nil
}

// certManagerCRDs reads the CRDs of cert-manager's module, downloaded
// through the module proxy into the module cache (outside our go.mod).
func certManagerCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	tmp, err := os.MkdirTemp(scratch, "gomod-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/cert-manager/cert-manager@"+certManagerVersion)
	cmd.Dir = tmp // not our module: nothing is added to go.mod
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("downloading cert-manager %s for its CRDs (Issuer and Certificate) from the module proxy: %w\n%s", certManagerVersion, err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(mod.Dir, "deploy", "crds", "crd-*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no CRDs in %s/deploy/crds", mod.Dir)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		read, err := envtest.ReadCRDFile(f)
		if err != nil {
			return nil, err
		}
		for _, c := range read {
			// The files are Helm templates; their labels are template text.
			c.Object.Labels = nil
			crds = append(crds, c.Object)
		}
	}
	return crds, nil
}

// TestHelmInstallUninstall: every chart, and the umbrella chart with every
// provider, installs into a real API server (no pods run there, so without
// --wait) and uninstalls without leaving anything of ours behind.
func TestHelmInstallUninstall(t *testing.T) {
	apiServer(t)
	for _, p := range providers {
		t.Run(p.chart, func(t *testing.T) {
			// Own namespaces per test: the API server has no namespace
			// controller, so a deleted namespace stays Terminating.
			installAndUninstall(t, "pkgtest-"+p.key, filepath.Join("charts", p.chart), "namespace=pkgtest-"+p.key)
		})
	}
	t.Run("crds.keep", func(t *testing.T) {
		g := NewWithT(t)
		ctx := context.Background()
		chart := "charts/ocp-capi-infrastructure-openstack"
		set := []string{"namespace=pkgtest-keep", "crds.keep=true"}
		want := helmTemplate(t, chart, set...)
		args := []string{"install", "pkgtest-keep", chart, "--kubeconfig", kubeconfig, "--namespace", "default"}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		run(t, "helm", args...)
		run(t, "helm", "uninstall", "pkgtest-keep", "--kubeconfig", kubeconfig, "--namespace", "default")
		// Only the CRDs stay; the check that the other subtests rely on sees them.
		var crds []string
		for _, o := range want {
			if o.kind() == "CustomResourceDefinition" {
				crds = append(crds, o.key())
			}
		}
		left := leftovers(ctx, t, map[string]bool{"infrastructure-openstack": true}, want)
		g.Expect(left).To(ContainElements(crds))
		g.Expect(left).To(HaveLen(2*len(crds)), "each CRD, by name and by label") // nothing else
		for _, o := range want {
			if o.kind() == "CustomResourceDefinition" {
				g.Expect(deleteObject(ctx, o)).To(Succeed())
			}
		}
		g.Eventually(func() []string { return leftovers(ctx, t, map[string]bool{"infrastructure-openstack": true}, want) }).
			WithTimeout(crdDeletionTimeout).WithPolling(200 * time.Millisecond).Should(BeEmpty())
	})
	t.Run("ocp-capi", func(t *testing.T) {
		var set []string
		for _, p := range providers {
			set = append(set, p.umbrellaAlias+".enabled=true")
		}
		installAndUninstall(t, "ocp-capi", "charts/ocp-capi", set...)
	})
}

func installAndUninstall(t *testing.T, release, chart string, set ...string) {
	g := NewWithT(t)
	ctx := context.Background()
	c := apiEnv.Client
	want := helmTemplate(t, chart, set...)

	args := []string{"install", release, chart, "--kubeconfig", kubeconfig, "--namespace", "default", "--skip-crds=false"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	run(t, "helm", args...)
	for _, o := range want {
		u := unstructuredOf(o)
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed(), "helm install created %s", o.key())
	}

	run(t, "helm", "uninstall", release, "--kubeconfig", kubeconfig, "--namespace", "default")
	labels := map[string]bool{}
	for _, o := range want {
		labels[o.label("cluster.x-k8s.io/provider")] = true
	}
	g.Eventually(func() []string { return leftovers(ctx, t, labels, want) }).WithTimeout(crdDeletionTimeout).WithPolling(200*time.Millisecond).
		Should(BeEmpty(), "helm uninstall left these behind")
}

// deleteObject deletes the object.
func deleteObject(ctx context.Context, o obj) error {
	return apiEnv.Client.Delete(ctx, unstructuredOf(o))
}

func unstructuredOf(o obj) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(o.str("apiVersion"))
	u.SetKind(o.kind())
	u.SetName(o.name())
	u.SetNamespace(o.namespace())
	return u
}

// leftovers lists what still exists of the objects, and anything else that
// carries one of the provider labels. A namespace being deleted counts as
// gone: in a real cluster the namespace controller finishes it.
func leftovers(ctx context.Context, t *testing.T, labels map[string]bool, objs []obj) []string {
	c := apiEnv.Client
	var left []string
	gvks := map[schema.GroupVersionKind]bool{}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Version: "v1", Kind: "Service"},
		{Version: "v1", Kind: "ServiceAccount"},
		{Version: "v1", Kind: "Namespace"},
		{Group: "cert-manager.io", Version: "v1", Kind: "Issuer"},
		{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"},
	} {
		gvks[gvk] = true
	}
	for _, o := range objs {
		u := unstructuredOf(o)
		gvks[u.GroupVersionKind()] = true
		err := c.Get(ctx, client.ObjectKeyFromObject(u), u)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			left = append(left, fmt.Sprintf("%s: %v", o.key(), err))
		case o.kind() == "Namespace" && u.GetDeletionTimestamp() != nil:
		default:
			if o.kind() == "CustomResourceDefinition" {
				retryCRDDeletion(ctx, t, u)
			}
			left = append(left, o.key())
		}
	}
	keys := make([]string, 0, len(labels))
	for l := range labels {
		keys = append(keys, l)
	}
	sel, err := k8slabels.Parse("cluster.x-k8s.io/provider in (" + strings.Join(keys, ",") + ")")
	if err != nil {
		t.Fatal(err)
	}
	for gvk := range gvks {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
			if apierrors.IsNotFound(err) || strings.Contains(err.Error(), "no matches for kind") {
				continue // one of our CRDs, already gone
			}
			left = append(left, fmt.Sprintf("listing %s: %v", gvk.Kind, err))
			continue
		}
		for _, u := range list.Items {
			if u.GetKind() == "Namespace" && u.GetDeletionTimestamp() != nil {
				continue
			}
			left = append(left, fmt.Sprintf("%s %s/%s (labelled)", gvk.Kind, u.GetNamespace(), u.GetName()))
		}
	}
	return left
}

// retryCRDDeletion works around the API server's CRD finalizer: when it
// lists a CRD's objects while the CRD's storage is being re-initialized (as
// right after the CRD changed), it fails with "storage is (re)initializing"
// and retries only after an exponential backoff, minutes later
// (https://github.com/operator-framework/operator-controller/issues/1437).
// Any update of the CRD makes it try again at once.
func retryCRDDeletion(ctx context.Context, t *testing.T, crd *unstructured.Unstructured) {
	if crd.GetDeletionTimestamp() == nil {
		return
	}
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Terminating" && m["reason"] == "InstanceDeletionFailed" {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.ocp-capi.io/retry-deletion":"%d"}}}`, time.Now().UnixNano())
			err := apiEnv.Client.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(patch)))
			t.Logf("CRD %s: the API server's finalizer failed (%v) and backs off; nudged it (error: %v)", crd.GetName(), m["message"], err)
			return
		}
	}
}

// TestComponentsDryRun: the API server accepts every components file as
// clusterctl would apply it (generate provider: variables substituted,
// objects moved to a target namespace), and the add-on's build RoleBinding.
func TestComponentsDryRun(t *testing.T) {
	apiServer(t)
	cfg := filepath.Join(outDir, "clusterctl.yaml")
	type item struct{ name, flag, ref string }
	items := []item{{"cluster-api", "--core", "cluster-api:" + capiVersion(t)}}
	for _, p := range providers {
		items = append(items, item{p.key, p.clusterctlFlag, p.clusterctlName + ":" + releaseVersion})
	}
	for _, it := range items {
		t.Run(it.name, func(t *testing.T) {
			ns := "pkgdry-" + it.name
			comps := run(t, "clusterctl", "generate", "provider", it.flag, it.ref, "--config", cfg, "--target-namespace", ns)
			// A server-side dry run creates nothing, so the namespace
			// objects of the file would not exist for the rest of it.
			NewWithT(t).Expect(apiEnv.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			kubectlDryRun(t, writeScratch(t, it.name+"-*.yaml", comps))
		})
	}
	t.Run("addon build-rbac", func(t *testing.T) {
		kubectlDryRun(t, filepath.Join(outDir, "addon-openshift", releaseVersion, "build-rbac.yaml"))
	})
}

func kubectlDryRun(t *testing.T, file string) {
	t.Helper()
	out := string(run(t, "kubectl", "--kubeconfig", kubeconfig, "apply", "--dry-run=server", "-f", file))
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasSuffix(l, "(server dry run)") {
			t.Errorf("kubectl apply --dry-run=server: %s", l)
		}
	}
}
