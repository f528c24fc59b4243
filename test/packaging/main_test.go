// Package packaging tests the release artifacts as users consume them: the
// kustomize trees, the clusterctl local repository that `make release`
// writes, and the Helm charts. It shells out to the tools in bin/ (kustomize,
// helm, clusterctl, kubectl; `make tools` builds them) and installs into a
// real kube-apiserver (test/envtest).
//
// What it checks:
//   - every chart renders, with its default values, exactly the objects of
//     its kustomize tree after clusterctl's substitution of the variables'
//     defaults (charts are generated from that output by hack/chartgen; this
//     catches a stale charts/ and generator bugs), and the packaged charts of
//     a release equal that release's components;
//   - RBAC: no wildcards, no cluster-wide Secret writes (the reviewed
//     exceptions carry their reasons), no escalation verbs;
//   - every object carries its provider label and namespaced ones sit in the
//     provider namespace; one Namespace per components file;
//   - every Deployment runs the container manager hardened, with probes,
//     resources, leader election, --namespace and --watch-filter;
//   - every clusterctl variable has a default and is documented;
//   - clusterctl reads the repository (generate provider) and the API
//     server accepts every components file (kubectl apply --dry-run=server);
//   - helm install of every chart and of the umbrella chart creates every
//     object, and helm uninstall leaves nothing of ours behind.
package packaging

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// The release that TestMain builds: not the default version or registry, so
// that the release-time overrides are what is tested.
const (
	releaseVersion  = "v0.9.0"
	releaseRegistry = "registry.test/ocp-capi"
	releaseTag      = "v0.9.0-rc.1"
)

// Set up once by TestMain.
var (
	root    string // the repository
	binDir  string
	outDir  string // the release (hack/release.sh with OUT=outDir)
	toolEnv []string
	// scratch holds files the tests write (kubeconfig, rendered YAML).
	scratch string
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test/packaging:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	var err error
	if root, err = envtest.FindRepoRoot(); err != nil {
		return 0, err
	}
	binDir = filepath.Join(root, "bin")
	for _, tool := range []string{"kustomize", "helm", "clusterctl", "kubectl"} {
		if _, err := os.Stat(filepath.Join(binDir, tool)); err != nil {
			return 0, fmt.Errorf("bin/%s is missing: run `make tools`", tool)
		}
	}
	if scratch, err = os.MkdirTemp("", "ocp-capi-packaging-"); err != nil {
		return 0, err
	}
	defer os.RemoveAll(scratch)

	// The tools get a clean environment: no clusterctl variable or Helm
	// setting of the developer's shell may change what they render.
	home := filepath.Join(scratch, "home")
	toolEnv = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"HELM_CACHE_HOME=" + filepath.Join(home, "helm-cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "helm-config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "helm-data"),
		"GOTOOLCHAIN=local",
		"GOFLAGS=" + os.Getenv("GOFLAGS"),
		"GOPROXY=" + os.Getenv("GOPROXY"),
		"GOMODCACHE=" + goEnv("GOMODCACHE"),
		"GOCACHE=" + goEnv("GOCACHE"),
	}

	outDir = filepath.Join(scratch, "out")
	cmd := exec.Command("hack/release.sh", "release")
	cmd.Dir = root
	cmd.Env = append(append([]string(nil), toolEnv...), "OUT="+outDir, "VERSION="+releaseVersion, "IMAGE_REGISTRY="+releaseRegistry,
		"IMAGE_TAG="+releaseTag, "RELEASE_SKIP_CHARTS_CHECK=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("hack/release.sh: %w\n%s", err, out)
	}
	code := m.Run()
	stopAPIServer()
	stopTemplateAPIServer()
	return code, nil
}

func goEnv(name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return string(trimNewline(out))
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// run runs a tool from bin/ (or any command) in the repository with the
// clean environment and returns its standard output.
func run(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	out, err := runErr(name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}

func runErr(name string, args ...string) ([]byte, error) {
	return runEnv(nil, name, args...)
}

// runEnv is runErr with variables added to the clean environment.
func runEnv(env []string, name string, args ...string) ([]byte, error) {
	path := name
	if _, err := os.Stat(filepath.Join(binDir, name)); err == nil {
		path = filepath.Join(binDir, name)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = root
	cmd.Env = append(append([]string(nil), toolEnv...), env...)
	var stderr stringsBuilder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return out, nil
}

// stringsBuilder is an io.Writer that keeps the last 64 KiB.
type stringsBuilder struct{ b []byte }

func (s *stringsBuilder) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	if len(s.b) > 64<<10 {
		s.b = s.b[len(s.b)-64<<10:]
	}
	return len(p), nil
}

func (s *stringsBuilder) String() string { return string(s.b) }
