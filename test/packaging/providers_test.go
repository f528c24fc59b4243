package packaging

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// provider is what the tests expect of one provider's packaging.
type provider struct {
	key   string
	label string // cluster.x-k8s.io/provider
	// dirs are the kustomize trees the chart renders: default first, then
	// the extra ones released beside the components.
	dirs           []string
	chart          string
	namespace      string
	varPrefix      string
	image          string // manager image name
	clusterctlFlag string // e.g. --infrastructure
	clusterctlName string
	componentsFile string
	umbrellaAlias  string
	inUmbrella     bool // installed by the umbrella chart's defaults
	// extraNamespaces may hold objects of the extra trees (not clusterctl's).
	extraNamespaces []string
}

var providers = []provider{
	{
		key: "infrastructure", label: "infrastructure-openstack", dirs: []string{"internal/openstack/config/default"},
		chart: "ocp-capi-infrastructure-openstack", namespace: "ocp-capi-infrastructure-system", varPrefix: "OCP_CAPI_INFRASTRUCTURE_",
		image: "infrastructure-manager", clusterctlFlag: "--infrastructure", clusterctlName: "openstack",
		componentsFile: "infrastructure-components.yaml", umbrellaAlias: "infrastructure", inUmbrella: true,
	},
	{
		key: "bootstrap", label: "bootstrap-openshift-agent", dirs: []string{"bootstrap/config/default"},
		chart: "ocp-capi-bootstrap", namespace: "ocp-capi-bootstrap-system", varPrefix: "OCP_CAPI_BOOTSTRAP_",
		image: "bootstrap-manager", clusterctlFlag: "--bootstrap", clusterctlName: "openshift-agent",
		componentsFile: "bootstrap-components.yaml", umbrellaAlias: "bootstrap", inUmbrella: true,
	},
	{
		key: "controlplane", label: "control-plane-openshift-agent", dirs: []string{"controlplane/config/default"},
		chart: "ocp-capi-controlplane", namespace: "ocp-capi-controlplane-system", varPrefix: "OCP_CAPI_CONTROLPLANE_",
		image: "controlplane-manager", clusterctlFlag: "--control-plane", clusterctlName: "openshift-agent",
		componentsFile: "control-plane-components.yaml", umbrellaAlias: "controlplane", inUmbrella: true,
	},
	{
		key: "addon", label: "addon-openshift", dirs: []string{"internal/addon/config/default", "internal/addon/config/build-rbac"},
		chart: "ocp-capi-addon", namespace: "ocp-capi-addon-system", varPrefix: "OCP_CAPI_ADDON_",
		image: "addon-manager", clusterctlFlag: "--addon", clusterctlName: "openshift",
		componentsFile: "addon-components.yaml", umbrellaAlias: "addon", inUmbrella: false,
		extraNamespaces: []string{"openshift-machine-config-operator", "openshift-cluster-api"},
	},
}

// releasedComponents is the provider's components file in the release.
func (p provider) releasedComponents() string {
	return filepath.Join(outDir, p.label, releaseVersion, p.componentsFile)
}

// obj is one Kubernetes object as decoded from YAML.
type obj map[string]any

func (o obj) str(path ...string) string {
	v, _ := o.get(path...).(string)
	return v
}

func (o obj) get(path ...string) any {
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

func (o obj) kind() string      { return o.str("kind") }
func (o obj) name() string      { return o.str("metadata", "name") }
func (o obj) namespace() string { return o.str("metadata", "namespace") }
func (o obj) label(k string) string {
	return o.str("metadata", "labels", k)
}

func (o obj) key() string {
	return fmt.Sprintf("%s %s %s/%s", o.str("apiVersion"), o.kind(), o.namespace(), o.name())
}

// clusterScoped lists the cluster-scoped kinds our artifacts contain.
var clusterScoped = map[string]bool{
	"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
}

// parseObjects decodes a multi-document YAML stream.
func parseObjects(t testing.TB, data []byte) []obj {
	t.Helper()
	objs, err := decodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func decodeObjects(data []byte) ([]obj, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []obj
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var o obj
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return nil, fmt.Errorf("%w in:\n%s", err, firstLines(doc, 20))
		}
		if len(o) == 0 {
			continue
		}
		out = append(out, o)
	}
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// kustomize builds dir (relative to the repository).
func kustomize(t testing.TB, dir string) []byte {
	t.Helper()
	return run(t, "kustomize", "build", dir)
}

// substitute applies clusterctl's variable processing (every variable at its
// default) to YAML, as `clusterctl init` does with components.
func substitute(t testing.TB, data []byte) []byte {
	t.Helper()
	f := writeScratch(t, "substitute-*.yaml", data)
	return run(t, "clusterctl", "generate", "yaml", "--from", f)
}

// kustomizeObjects is what clusterctl would install from the provider's
// kustomize trees with default variables (the extra trees too).
func kustomizeObjects(t testing.TB, p provider) []obj {
	t.Helper()
	var all []obj
	for _, d := range p.dirs {
		all = append(all, parseObjects(t, substitute(t, kustomize(t, d)))...)
	}
	return all
}

// helmTemplate renders a chart with --set values.
func helmTemplate(t testing.TB, chart string, set ...string) []obj {
	t.Helper()
	out, err := helmTemplateErr(chart, set...)
	if err != nil {
		t.Fatal(err)
	}
	return parseObjects(t, out)
}

func helmTemplateErr(chart string, set ...string) ([]byte, error) {
	args := []string{"template", "release-name", chart}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return runErr("helm", args...)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeScratch(t testing.TB, pattern string, data []byte) string {
	t.Helper()
	f, err := os.CreateTemp(scratch, pattern)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// diffObjects compares two object sets regardless of order and returns a
// readable difference ("" when equal).
func diffObjects(want, got []obj) string {
	index := func(objs []obj) (map[string]obj, []string) {
		m := map[string]obj{}
		var dups []string
		for _, o := range objs {
			if _, ok := m[o.key()]; ok {
				dups = append(dups, o.key())
			}
			m[o.key()] = o
		}
		return m, dups
	}
	w, wd := index(want)
	g, gd := index(got)
	var b strings.Builder
	for _, d := range wd {
		fmt.Fprintf(&b, "duplicate on the kustomize side: %s\n", d)
	}
	for _, d := range gd {
		fmt.Fprintf(&b, "duplicate on the Helm side: %s\n", d)
	}
	keys := map[string]bool{}
	for k := range w {
		keys[k] = true
	}
	for k := range g {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		wo, inW := w[k]
		go_, inG := g[k]
		switch {
		case !inG:
			fmt.Fprintf(&b, "only in kustomize: %s\n", k)
		case !inW:
			fmt.Fprintf(&b, "only in Helm: %s\n", k)
		default:
			if d := cmp.Diff(map[string]any(wo), map[string]any(go_)); d != "" {
				fmt.Fprintf(&b, "%s differs (-kustomize +helm):\n%s\n", k, d)
			}
		}
	}
	return b.String()
}
