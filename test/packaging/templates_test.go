package packaging

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	bootstrapwebhooks "github.com/ocp-capi/ocp-capi/bootstrap/webhooks"
	controlplanewebhooks "github.com/ocp-capi/ocp-capi/controlplane/webhooks"
	infrawebhooks "github.com/ocp-capi/ocp-capi/internal/openstack/webhooks"
	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/scheme"
)

// flavors are the cluster templates of templates/, by flavor. topology is
// a Cluster of the ClusterClass openstack-agent, which clusterctl adds from
// clusterclass-openstack-agent.yaml.
var flavors = []string{"openstack-agent", "metal3-agent", "topology"}

// templateVars are values for every required variable of the templates, as a
// user would export them.
func templateVars() []string {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	return []string{
		"OPENSHIFT_BASE_DOMAIN=example.com",
		"OPENSHIFT_PULL_SECRET_B64=" + b64(`{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`),
		"OPENSHIFT_SSH_AUTHORIZED_KEY=ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA demo@example.com",
		"OPENSTACK_CLOUD_YAML_B64=" + b64("clouds:\n  openstack:\n    auth:\n      auth_url: https://keystone.example.com:5000/v3\n"),
		"OPENSTACK_DNS_NAMESERVERS=10.0.0.53,10.0.0.54",
		"OPENSHIFT_API_VIP=192.168.111.5",
		"OPENSHIFT_INGRESS_VIP=192.168.111.4",
	}
}

// generateCluster runs clusterctl generate cluster against the release
// repository, as the docs tell users to.
func generateCluster(t *testing.T, flavor, ns string, extra ...string) []byte {
	t.Helper()
	args := append([]string{"generate", "cluster", "demo", "--config", filepath.Join(outDir, "clusterctl.yaml"),
		"--infrastructure", "openstack:" + releaseVersion, "--flavor", flavor, "--target-namespace", ns}, extra...)
	return runWithEnv(t, templateVars(), "clusterctl", args...)
}

// TestTemplatesListVariables: clusterctl lists each template's variables,
// and every one is documented in docs/templates.md (and nothing documented
// is missing from the templates). Required ones have no default there.
func TestTemplatesListVariables(t *testing.T) {
	g := NewWithT(t)
	doc := string(readFile(t, filepath.Join(root, "docs", "templates.md")))
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z0-9_]+)` \\| (yes|no)").FindAllStringSubmatch(doc, -1) {
		documented[m[1]] = m[2] == "yes"
	}
	g.Expect(documented).NotTo(BeEmpty(), "docs/templates.md has no variable tables")

	seen := map[string]bool{}
	for _, flavor := range flavors {
		out := string(run(t, "clusterctl", "generate", "cluster", "demo", "--config", filepath.Join(outDir, "clusterctl.yaml"),
			"--infrastructure", "openstack:"+releaseVersion, "--flavor", flavor, "--target-namespace", "demo", "--list-variables"))
		required, optional := parseVariableList(t, out)
		g.Expect(required).NotTo(BeEmpty(), flavor)
		for _, v := range required {
			seen[v] = true
			g.Expect(documented).To(HaveKeyWithValue(v, true), "%s: required variable %s is not documented as required", flavor, v)
		}
		for _, v := range optional {
			seen[v] = true
			g.Expect(documented).To(HaveKey(v), "%s: variable %s is not documented", flavor, v)
		}
	}
	var stale []string
	for v := range documented {
		if !seen[v] {
			stale = append(stale, v)
		}
	}
	sort.Strings(stale)
	g.Expect(stale).To(BeEmpty(), "documented but in no template")
}

// parseVariableList reads clusterctl's --list-variables output.
func parseVariableList(t *testing.T, out string) (required, optional []string) {
	t.Helper()
	var section *[]string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Required Variables:"):
			section = &required
		case strings.HasPrefix(l, "Optional Variables:"):
			section = &optional
		case strings.HasPrefix(strings.TrimSpace(l), "- ") && section != nil:
			*section = append(*section, strings.Fields(strings.TrimSpace(l))[1])
		}
	}
	if len(required)+len(optional) == 0 {
		t.Fatalf("no variables in clusterctl output:\n%s", out)
	}
	return required, optional
}

// TestTemplatesGenerate: the generated manifests have the objects the docs
// promise, in the target namespace, with the counts asked for, and the
// Secrets that `clusterctl move` must carry are labelled for it.
func TestTemplatesGenerate(t *testing.T) {
	want := map[string][]string{
		"openstack-agent": {"Cluster", "OpenStackCluster", "OpenshiftAssistedControlPlane", "OpenStackMachineTemplate",
			"OpenStackMachineTemplate", "MachineDeployment", "OpenshiftAssistedConfigTemplate", "Secret", "Secret"},
		"metal3-agent": {"Cluster", "Metal3Cluster", "OpenshiftAssistedControlPlane", "Metal3MachineTemplate",
			"Metal3MachineTemplate", "MachineDeployment", "OpenshiftAssistedConfigTemplate", "Secret"},
	}
	bootMode := map[string]string{"openstack-agent": "DiscoveryIgnition", "metal3-agent": "LiveISO"}
	for _, flavor := range flavors {
		if flavor == "topology" {
			continue // TestTemplatesGenerateTopology
		}
		t.Run(flavor, func(t *testing.T) {
			g := NewWithT(t)
			objs := parseObjects(t, generateCluster(t, flavor, "team-a",
				"--control-plane-machine-count", "3", "--worker-machine-count", "2"))
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.kind())
				g.Expect(o.namespace()).To(Equal("team-a"), o.key())
				if o.kind() == "Secret" {
					g.Expect(o.label("clusterctl.cluster.x-k8s.io/move")).To(Equal("true"), o.key())
				}
			}
			g.Expect(kinds).To(ConsistOf(want[flavor]))
			cp := findObj(t, objs, "OpenshiftAssistedControlPlane")
			g.Expect(nested(cp, "spec", "replicas")).To(BeNumerically("==", 3))
			g.Expect(nested(cp, "spec", "openshiftAssistedConfigSpec", "bootMode")).To(Equal(bootMode[flavor]))
			g.Expect(nested(cp, "spec", "config", "baseDomain")).To(Equal("example.com"))
			md := findObj(t, objs, "MachineDeployment")
			g.Expect(nested(md, "spec", "replicas")).To(BeNumerically("==", 2))
			cfg := findObj(t, objs, "OpenshiftAssistedConfigTemplate")
			g.Expect(nested(cfg, "spec", "template", "spec", "bootMode")).To(Equal(bootMode[flavor]))
			if flavor == "openstack-agent" {
				osc := findObj(t, objs, "OpenStackCluster")
				subnets, _ := nested(osc, "spec", "managedSubnets").([]any)
				g.Expect(subnets).To(HaveLen(1))
				g.Expect(subnets[0].(map[string]any)["dnsNameservers"]).To(Equal([]any{"10.0.0.53", "10.0.0.54"}))
			}
		})
	}
}

func findObj(t *testing.T, objs []obj, kind string) obj {
	t.Helper()
	for _, o := range objs {
		if o.kind() == kind {
			return o
		}
	}
	t.Fatalf("no %s", kind)
	return nil
}

// nested reads a field of an object by path (nil when absent).
func nested(o obj, path ...string) any {
	var cur any = map[string]any(o)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// TestTemplatesDryRun: the API server, with every CRD (ours, CAPI core's
// and the consumed APIs', Metal3's included) and our providers' validating
// and defaulting webhooks served, accepts every generated manifest through
// `kubectl apply --dry-run=server --validate=strict` (unknown fields fail).
func TestTemplatesDryRun(t *testing.T) {
	kc := templateAPIServer(t)
	for _, flavor := range flavors {
		t.Run(flavor, func(t *testing.T) {
			ns := "tpl-" + flavor
			NewWithT(t).Expect(templateEnv.env.Client.Create(context.Background(),
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			file := writeScratch(t, flavor+"-*.yaml", generateCluster(t, flavor, ns,
				"--control-plane-machine-count", "3", "--worker-machine-count", "2"))
			out, err := runErr("kubectl", "--kubeconfig", kc, "apply", "--dry-run=server", "--validate=strict", "-f", file)
			if err != nil {
				t.Fatalf("kubectl apply --dry-run=server: %v", err)
			}
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if !strings.HasSuffix(l, "(server dry run)") {
					t.Errorf("kubectl apply --dry-run=server: %s", l)
				}
			}
		})
	}
}

// TestTemplatesDryRunCallsControlPlaneWebhook: the dry run above does reach
// the control-plane provider's webhook. An OpenShift version the provider
// does not install (a check only the webhook makes) is refused, naming the
// field.
func TestTemplatesDryRunCallsControlPlaneWebhook(t *testing.T) {
	kc := templateAPIServer(t)
	ns := "tpl-old-version"
	NewWithT(t).Expect(templateEnv.env.Client.Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	manifests := runWithEnv(t, append(templateVars(), "OPENSHIFT_VERSION=4.12.0"), "clusterctl", "generate", "cluster", "demo",
		"--config", filepath.Join(outDir, "clusterctl.yaml"), "--infrastructure", "openstack:"+releaseVersion,
		"--flavor", "metal3-agent", "--target-namespace", ns)
	file := writeScratch(t, "old-version-*.yaml", manifests)
	out, err := runErr("kubectl", "--kubeconfig", kc, "apply", "--dry-run=server", "-f", file)
	if err == nil {
		t.Fatalf("OpenShift 4.12.0 was accepted:\n%s", out)
	}
	if msg := err.Error(); !strings.Contains(msg, "spec.distributionVersion") || !strings.Contains(msg, "OpenshiftAssistedControlPlane") {
		t.Errorf("want the control-plane webhook's error on spec.distributionVersion, got: %s", msg)
	}
}

// templateEnv is an API server with all CRDs and our webhooks, started on
// first use and stopped by TestMain.
var templateEnv struct {
	once       sync.Once
	err        error
	env        *envtest.Environment
	kubeconfig string
	stop       func()
}

func templateAPIServer(t *testing.T) string {
	t.Helper()
	templateEnv.once.Do(func() { templateEnv.err = startTemplateAPIServer() })
	if templateEnv.err != nil {
		t.Fatal(templateEnv.err)
	}
	return templateEnv.kubeconfig
}

func stopTemplateAPIServer() {
	if templateEnv.stop != nil {
		templateEnv.stop()
	}
}

func startTemplateAPIServer() error {
	env, err := envtest.Start(envtest.Options{
		BinDir:           assetsDir(),
		WebhookManifests: webhookManifestDirs(),
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	started := false
	templateEnv.stop = func() {
		cancel()
		if started {
			if err := <-done; err != nil {
				fmt.Fprintln(os.Stderr, "template webhooks:", err)
			}
		}
		_ = env.Stop()
	}
	ctrl.SetLogger(logr.Discard())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 scheme.New(),
		WebhookServer:          webhook.NewServer(env.WebhookServerOptions()),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	for _, w := range templateWebhooks {
		if err := w.setup(mgr); err != nil {
			return err
		}
	}
	go func() { done <- mgr.Start(ctx) }()
	started = true
	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	if err := env.WaitForWebhookServer(waitCtx); err != nil {
		return err
	}
	kc, err := env.KubeConfig()
	if err != nil {
		return err
	}
	templateEnv.kubeconfig = filepath.Join(scratch, "template-kubeconfig")
	if err := os.WriteFile(templateEnv.kubeconfig, kc, 0o600); err != nil {
		return err
	}
	templateEnv.env = env
	return nil
}

// templateWebhooks are the webhooks of every provider whose objects the
// templates hold: the generated configurations and the setup that serves
// them.
var templateWebhooks = []struct {
	dir   string
	setup func(ctrl.Manager) error
}{
	{"internal/openstack/config/webhook", infrawebhooks.SetupWebhooks},
	{"bootstrap/config/webhook", bootstrapwebhooks.SetupWebhooks},
	{"controlplane/config/webhook", controlplanewebhooks.SetupWebhooks},
}

func webhookManifestDirs() []string {
	var dirs []string
	for _, w := range templateWebhooks {
		dirs = append(dirs, w.dir)
	}
	return dirs
}
