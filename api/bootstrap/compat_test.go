package bootstrap_test

// This test compares the CRDs we generate for the bootstrap API with the
// reference provider's (openshift-assisted/cluster-api-provider-openshift-
// assisted, CAPOA) at its storage version v1alpha2, so that CAPOA manifests
// keep applying unchanged: every CAPOA spec field exists here with the same
// type, validation and list semantics (none is silently pruned), we invent no
// spec fields but the documented ones, and the status and name differences
// are the documented ones. It reads YAML only; no API server.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

const (
	ownCRDDir     = "bootstrap/config/crd/bases"
	upstreamEnv   = "OCP_CAPI_UPSTREAM_CRDS"
	capoaSubdir   = "cluster-api-provider-openshift-assisted"
	servedVersion = "v1alpha2"
	contractLabel = "cluster.x-k8s.io/v1beta2"
)

var compatKinds = []string{"OpenshiftAssistedConfig", "OpenshiftAssistedConfigTemplate"}

// allowed is a documented difference: a path (covering everything under it)
// and why it is intended.
type allowed struct{ path, reason string }

const bootModeReason = "the boot mode (LiveISO or DiscoveryIgnition) the issue adds; optional, and when unset it " +
	"follows the infrastructure machine, so CAPOA manifests are unaffected"

var specAdditions = map[string][]allowed{
	"OpenshiftAssistedConfig":         {{"spec.bootMode", bootModeReason}},
	"OpenshiftAssistedConfigTemplate": {{"spec.template.spec.bootMode", bootModeReason}},
}

var statusAdditions = map[string][]allowed{
	"OpenshiftAssistedConfig": {
		{"status.bootMode", "the boot mode in effect, since spec.bootMode may be unset"},
		{"status.infraEnvRef", "the InfraEnv the machine boots from (CAPOA v1alpha1 had it); also what the " +
			"controllers index configs by"},
		{"status.agentRef", "the Agent bound to the machine (CAPOA v1alpha1 had it); written with an optimistic " +
			"lock, it is what keeps a machine to one approved Agent"},
	},
}

var statusOmissions = map[string][]allowed{
	"OpenshiftAssistedConfig": {
		{"status.v1beta1Conditions", "not part of the CAPI v1beta2 contract (which keeps legacy conditions under " +
			"status.deprecated.v1beta1); this API has v1beta2 conditions only"},
	},
}

// nameDifferences are the CRD name fields (shortNames, categories) that
// differ, with why.
var nameDifferences = map[string][]allowed{
	"OpenshiftAssistedConfig": {
		{"categories", "in the cluster-api category like every CAPI provider's kinds (kubectl get cluster-api)"},
	},
	"OpenshiftAssistedConfigTemplate": {
		{"categories", "in the cluster-api category like every CAPI provider's kinds (kubectl get cluster-api)"},
		{"shortNames", "oact added; CAPOA's template has no short name"},
	},
}

type schemaNode struct {
	typ      string
	required []string
	listType string
	mapKeys  []string
	enum     []string
	pattern  string
	deflt    string
	minProps int64
}

func flatten(s *apiextensionsv1.JSONSchemaProps, path string, out map[string]schemaNode) {
	n := schemaNode{typ: s.Type, pattern: s.Pattern}
	if s.Format != "" {
		n.typ += "/" + s.Format
	}
	if s.XIntOrString {
		n.typ = "int-or-string"
	}
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		n.typ += "+preserve-unknown-fields"
	}
	if s.XMapType != nil {
		n.typ += "+map-type=" + *s.XMapType
	}
	n.required = slices.Sorted(slices.Values(s.Required))
	if s.Type == "array" {
		n.listType = "atomic"
		if s.XListType != nil && *s.XListType != "" {
			n.listType = *s.XListType
		}
		n.mapKeys = s.XListMapKeys
	}
	for _, e := range s.Enum {
		n.enum = append(n.enum, string(e.Raw))
	}
	sort.Strings(n.enum)
	if s.Default != nil {
		n.deflt = string(s.Default.Raw)
	}
	if s.MinProperties != nil {
		n.minProps = *s.MinProperties
	}
	out[path] = n
	for name, p := range s.Properties {
		child := name
		if path != "" {
			child = path + "." + name
		}
		flatten(&p, child, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		flatten(s.Items.Schema, path+"[]", out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		flatten(s.AdditionalProperties.Schema, path+"{}", out)
	}
}

func under(path, prefix string) bool {
	if path == prefix {
		return true
	}
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && (strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "[]") || strings.HasPrefix(rest, "{}"))
}

func matchAllowed(list []allowed, used map[string]bool, path string) bool {
	for _, a := range list {
		if under(path, a.path) {
			used[a.path] = true
			return true
		}
	}
	return false
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := envtest.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// capoaCRDDir finds CAPOA's CRDs; absent, the test is skipped, except in CI.
func capoaCRDDir(t *testing.T, root string) string {
	t.Helper()
	base := os.Getenv(upstreamEnv)
	if base == "" {
		base = filepath.Join(root, "..", "shared", "upstream-crds")
	}
	dir := filepath.Join(base, capoaSubdir)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		msg := fmt.Sprintf("CAPOA CRDs not found in %s: set %s to the directory holding %s/", dir, upstreamEnv, capoaSubdir)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

func crdsByKind(t *testing.T, dir string) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds, err := envtest.ReadCRDDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range crds {
		out[c.Object.Spec.Names.Kind] = c.Object
	}
	return out
}

func versionSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) *apiextensionsv1.JSONSchemaProps {
	for i := range crd.Spec.Versions {
		if v := &crd.Spec.Versions[i]; v.Name == version && v.Served && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	return nil
}

func TestCRDsAreCompatibleWithCAPOA(t *testing.T) {
	root := repoRoot(t)
	capoa := crdsByKind(t, capoaCRDDir(t, root))
	ours := crdsByKind(t, filepath.Join(root, ownCRDDir))

	var problems []string
	report := func(kind, format string, args ...any) {
		problems = append(problems, kind+": "+fmt.Sprintf(format, args...))
	}
	for _, kind := range compatKinds {
		c, o := capoa[kind], ours[kind]
		if c == nil {
			t.Fatalf("CAPOA's CRDs have no %s", kind)
		}
		if o == nil {
			report(kind, "no CRD in %s", ownCRDDir)
			continue
		}
		compareNames(kind, c, o, report)
		cs, os := versionSchema(c, servedVersion), versionSchema(o, servedVersion)
		if cs == nil {
			t.Fatalf("CAPOA's %s does not serve %s", kind, servedVersion)
		}
		if os == nil {
			report(kind, "our CRD does not serve %s", servedVersion)
			continue
		}
		compareSchemas(kind, cs, os, report)
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("our CRDs differ from CAPOA's (%d problems):\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
}

func compareNames(kind string, c, o *apiextensionsv1.CustomResourceDefinition, report func(string, string, ...any)) {
	if c.Name != o.Name || c.Spec.Group != o.Spec.Group || c.Spec.Scope != o.Spec.Scope {
		report(kind, "name/group/scope: CAPOA %s %s %s, ours %s %s %s", c.Name, c.Spec.Group, c.Spec.Scope, o.Name, o.Spec.Group, o.Spec.Scope)
	}
	cn, on := c.Spec.Names, o.Spec.Names
	if cn.Plural != on.Plural || cn.Singular != on.Singular || cn.ListKind != on.ListKind {
		report(kind, "names: CAPOA %s/%s/%s, ours %s/%s/%s", cn.Plural, cn.Singular, cn.ListKind, on.Plural, on.Singular, on.ListKind)
	}
	used := map[string]bool{}
	for _, f := range []struct {
		name string
		c, o []string
	}{{"shortNames", cn.ShortNames, on.ShortNames}, {"categories", cn.Categories, on.Categories}} {
		a, b := slices.Sorted(slices.Values(f.c)), slices.Sorted(slices.Values(f.o))
		if slices.Equal(a, b) {
			continue
		}
		// Removing a CAPOA short name would break its users' kubectl habits.
		for _, s := range a {
			if !slices.Contains(b, s) {
				report(kind, "%s: CAPOA's %q is missing in ours", f.name, s)
			}
		}
		if !matchAllowed(nameDifferences[kind], used, f.name) {
			report(kind, "%s: CAPOA %v, ours %v, and not in nameDifferences", f.name, a, b)
		}
	}
	for _, a := range nameDifferences[kind] {
		if !used[a.path] {
			report(kind, "nameDifferences entry %s matches no difference; remove it", a.path)
		}
	}
}

func compareSchemas(kind string, capoaSchema, ourSchema *apiextensionsv1.JSONSchemaProps, report func(string, string, ...any)) {
	capoa, ours := map[string]schemaNode{}, map[string]schemaNode{}
	flatten(capoaSchema, "", capoa)
	flatten(ourSchema, "", ours)
	used := map[string]bool{}
	paths := map[string]bool{}
	for p := range capoa {
		paths[p] = true
	}
	for p := range ours {
		paths[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		c, inCAPOA := capoa[p]
		o, inOurs := ours[p]
		inSpec, inStatus := under(p, "spec"), under(p, "status")
		switch {
		case inCAPOA && !inOurs:
			switch {
			case inSpec:
				report(kind, "%s (%s) is CAPOA's and missing in ours: the API server would prune it", p, c.typ)
			case inStatus && !matchAllowed(statusOmissions[kind], used, p):
				report(kind, "%s (%s) is CAPOA's and missing in ours, and not in statusOmissions", p, c.typ)
			}
			continue
		case inOurs && !inCAPOA:
			switch {
			case inSpec && !matchAllowed(specAdditions[kind], used, p):
				report(kind, "%s (%s) is ours and not CAPOA's, and not in specAdditions", p, o.typ)
			case inStatus && !matchAllowed(statusAdditions[kind], used, p):
				report(kind, "%s (%s) is ours and not CAPOA's, and not in statusAdditions", p, o.typ)
			}
			continue
		}
		if c.typ != o.typ {
			report(kind, "%s: type CAPOA %q, ours %q", p, c.typ, o.typ)
		}
		if !inSpec {
			continue // status is written by our controllers only
		}
		if !slices.Equal(c.required, o.required) {
			report(kind, "%s: required CAPOA %v, ours %v", p, c.required, o.required)
		}
		if c.listType != o.listType || !slices.Equal(c.mapKeys, o.mapKeys) {
			report(kind, "%s: list type CAPOA %s%v, ours %s%v", p, c.listType, c.mapKeys, o.listType, o.mapKeys)
		}
		if !slices.Equal(c.enum, o.enum) {
			report(kind, "%s: enum CAPOA %v, ours %v", p, c.enum, o.enum)
		}
		if c.pattern != o.pattern {
			report(kind, "%s: pattern CAPOA %q, ours %q", p, c.pattern, o.pattern)
		}
		if c.deflt != o.deflt {
			report(kind, "%s: default CAPOA %s, ours %s", p, c.deflt, o.deflt)
		}
		if c.minProps != o.minProps {
			report(kind, "%s: minProperties CAPOA %d, ours %d", p, c.minProps, o.minProps)
		}
	}
	for _, list := range [][]allowed{specAdditions[kind], statusAdditions[kind], statusOmissions[kind]} {
		for _, a := range list {
			if !used[a.path] {
				report(kind, "allow-list entry %s matches no difference; remove it", a.path)
			}
		}
	}
}

// TestContractLabels checks the CAPI contract label: cluster.x-k8s.io/v1beta2
// lists exactly the versions each CRD serves.
func TestContractLabels(t *testing.T) {
	crds, err := envtest.ReadCRDDir(filepath.Join(repoRoot(t), ownCRDDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != len(compatKinds) {
		t.Fatalf("%d CRDs in %s, want %d", len(crds), ownCRDDir, len(compatKinds))
	}
	for _, c := range crds {
		var served []string
		for _, v := range c.Object.Spec.Versions {
			if v.Served {
				served = append(served, v.Name)
			}
		}
		if got, want := c.Object.Labels[contractLabel], strings.Join(served, "_"); got != want {
			t.Errorf("%s: label %s=%q, want %q", c.Object.Name, contractLabel, got, want)
		}
	}
}

func TestAllowListsHaveReasons(t *testing.T) {
	for name, lists := range map[string]map[string][]allowed{
		"specAdditions": specAdditions, "statusAdditions": statusAdditions,
		"statusOmissions": statusOmissions, "nameDifferences": nameDifferences,
	} {
		for kind, list := range lists {
			for _, a := range list {
				if strings.TrimSpace(a.reason) == "" {
					t.Errorf("%s[%s] %s has no reason", name, kind, a.path)
				}
			}
		}
	}
}

func TestUnder(t *testing.T) {
	for _, tc := range []struct {
		path, prefix string
		want         bool
	}{
		{"status.agentRef", "status.agentRef", true},
		{"status.agentRef.name", "status.agentRef", true},
		{"status.agentRefX", "status.agentRef", false},
		{"spec.kernelArguments[].value", "spec.kernelArguments", true},
		{"spec", "status", false},
	} {
		if got := under(tc.path, tc.prefix); got != tc.want {
			t.Errorf("under(%q, %q) = %v", tc.path, tc.prefix, got)
		}
	}
}
