package infrastructure_test

// This test compares the CRDs we generate for the OpenStack infrastructure
// API with Cluster API Provider OpenStack's (CAPO), so that CAPO manifests
// keep applying unchanged: every CAPO spec field exists here with the same
// type (none is silently pruned), we invent no spec fields, and the status
// differences are the documented ones. It reads YAML only; no API server.

import (
	"encoding/json"
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
	// ownCRDDir holds the CRDs generated from api/infrastructure.
	ownCRDDir = "config/infrastructure/crd/bases"
	// upstreamEnv names the directory of upstream CRDs (as for envtest).
	upstreamEnv = "OCP_CAPI_UPSTREAM_CRDS"
	// capoSubdir is CAPO's directory inside it.
	capoSubdir = "cluster-api-provider-openstack"
	// contractLabel is the CAPI v1beta2 contract label of provider CRDs.
	contractLabel = "cluster.x-k8s.io/v1beta2"
)

// compatKinds are the kinds we serve with CAPO's JSON, at CAPO's version.
var compatKinds = []struct{ kind, version string }{
	{"OpenStackServer", "v1alpha1"},
	{"OpenStackMachine", "v1beta2"},
	{"OpenStackMachineTemplate", "v1beta2"},
	{"OpenStackCluster", "v1beta2"},
	{"OpenStackClusterTemplate", "v1beta2"},
}

// allowed is a documented difference: a path (it covers everything under
// it) and why the difference is intended.
type allowed struct{ path, reason string }

// specAdditions are the spec fields we have and CAPO has not.
var specAdditions = map[string][]allowed{
	"OpenStackMachineTemplate": {
		{"spec.template.metadata", "the CAPI v1beta2 InfraMachineTemplate shape (labels and annotations for the machines " +
			"made from the template, as in CAPI's own templates); optional, so CAPO manifests are unaffected"},
	},
}

// statusAdditions are the status fields we have and CAPO has not.
var statusAdditions = map[string][]allowed{
	"OpenStackServer": {
		{"status.initialization", "CAPI v1beta2 contract shape (initialization.provisioned), replacing status.ready"},
		{"status.resources.volumes", "the Cinder volumes created for the server, so that deletion finds them by ID " +
			"rather than by name only"},
		{"status.resources.ports[].macAddress", "the MAC address of each created port, for hosts that register by MAC"},
	},
}

// statusOmissions are CAPO's status fields we do not have.
var statusOmissions = map[string][]allowed{
	"OpenStackServer": {
		{"status.ready", "v1beta1-era boolean; CAPO keeps it only for its own predicates. Replaced by " +
			"status.initialization.provisioned and the Ready condition"},
	},
	"OpenStackMachine": {
		{"status.resolved", "lives on the OpenStackServer of the same name, the single source of truth"},
		{"status.resources", "lives on the OpenStackServer of the same name, the single source of truth"},
	},
	"OpenStackCluster": {
		{"status.bastion.resolved", "lives on the bastion's OpenStackServer, the single source of truth"},
		{"status.bastion.resources", "lives on the bastion's OpenStackServer, the single source of truth"},
	},
}

// schemaNode is what the test compares at one path of a schema.
type schemaNode struct {
	typ      string   // type[/format], int-or-string, plus preserve-unknown-fields
	required []string // sorted
	listType string   // arrays only; an absent list type is atomic
	mapKeys  []string
	enum     []string // JSON of each value, sorted
}

// flatten records every node of s under path. Array items are path+"[]",
// additionalProperties values path+"{}".
func flatten(s *apiextensionsv1.JSONSchemaProps, path string, out map[string]schemaNode) {
	n := schemaNode{typ: s.Type}
	if s.Format != "" {
		n.typ += "/" + s.Format
	}
	if s.XIntOrString {
		n.typ = "int-or-string"
	}
	if ptrTrue(s.XPreserveUnknownFields) {
		n.typ += "+preserve-unknown-fields"
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

func ptrTrue(b *bool) bool { return b != nil && *b }

// under tells whether path is prefix or below it.
func under(path, prefix string) bool {
	if path == prefix {
		return true
	}
	return strings.HasPrefix(path, prefix) &&
		(strings.HasPrefix(path[len(prefix):], ".") || strings.HasPrefix(path[len(prefix):], "[]") ||
			strings.HasPrefix(path[len(prefix):], "{}"))
}

// matchAllowed returns the allow-list entry covering path, marking it used.
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

// capoCRDDir finds CAPO's CRDs, skipping the test when they are absent,
// except in CI, where their absence is a failure.
func capoCRDDir(t *testing.T, root string) string {
	t.Helper()
	base := os.Getenv(upstreamEnv)
	if base == "" {
		base = filepath.Join(root, "..", "shared", "upstream-crds")
	}
	dir := filepath.Join(base, capoSubdir)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		msg := fmt.Sprintf("CAPO CRDs not found in %s: set %s to the directory holding %s/", dir, upstreamEnv, capoSubdir)
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
		v := &crd.Spec.Versions[i]
		if v.Name == version && v.Served && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	return nil
}

func sortedCopy(s []string) []string {
	return slices.Sorted(slices.Values(s))
}

func TestCRDsAreCompatibleWithCAPO(t *testing.T) {
	root := repoRoot(t)
	capo := crdsByKind(t, capoCRDDir(t, root))
	ours := crdsByKind(t, filepath.Join(root, ownCRDDir))

	var problems []string
	report := func(kind, format string, args ...any) {
		problems = append(problems, kind+": "+fmt.Sprintf(format, args...))
	}

	for _, k := range compatKinds {
		c, o := capo[k.kind], ours[k.kind]
		if c == nil {
			t.Fatalf("CAPO's CRDs have no %s", k.kind)
		}
		if o == nil {
			report(k.kind, "no CRD in %s", ownCRDDir)
			continue
		}
		compareNames(k.kind, c, o, report)

		capoSchema, ourSchema := versionSchema(c, k.version), versionSchema(o, k.version)
		if capoSchema == nil {
			t.Fatalf("CAPO's %s does not serve %s", k.kind, k.version)
		}
		if ourSchema == nil {
			report(k.kind, "our CRD does not serve %s", k.version)
			continue
		}
		compareSchemas(k.kind, capoSchema, ourSchema, report)
	}

	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("our CRDs differ from CAPO's (%d problems):\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
}

func compareNames(kind string, c, o *apiextensionsv1.CustomResourceDefinition, report func(string, string, ...any)) {
	if c.Name != o.Name {
		report(kind, "CRD name: CAPO %q, ours %q", c.Name, o.Name)
	}
	if c.Spec.Group != o.Spec.Group {
		report(kind, "group: CAPO %q, ours %q", c.Spec.Group, o.Spec.Group)
	}
	if c.Spec.Scope != o.Spec.Scope {
		report(kind, "scope: CAPO %q, ours %q", c.Spec.Scope, o.Spec.Scope)
	}
	cn, on := c.Spec.Names, o.Spec.Names
	for _, f := range []struct{ name, c, o string }{
		{"plural", cn.Plural, on.Plural},
		{"singular", cn.Singular, on.Singular},
		{"listKind", cn.ListKind, on.ListKind},
	} {
		if f.c != f.o {
			report(kind, "names.%s: CAPO %q, ours %q", f.name, f.c, f.o)
		}
	}
	if a, b := sortedCopy(cn.ShortNames), sortedCopy(on.ShortNames); !slices.Equal(a, b) {
		report(kind, "shortNames: CAPO %v, ours %v", a, b)
	}
	if a, b := sortedCopy(cn.Categories), sortedCopy(on.Categories); !slices.Equal(a, b) {
		report(kind, "categories: CAPO %v, ours %v", a, b)
	}
}

func compareSchemas(kind string, capoSchema, ourSchema *apiextensionsv1.JSONSchemaProps, report func(string, string, ...any)) {
	capo, ours := map[string]schemaNode{}, map[string]schemaNode{}
	flatten(capoSchema, "", capo)
	flatten(ourSchema, "", ours)

	used := map[string]bool{}
	paths := map[string]bool{}
	for p := range capo {
		paths[p] = true
	}
	for p := range ours {
		paths[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		c, inCAPO := capo[p]
		o, inOurs := ours[p]
		inSpec, inStatus := under(p, "spec"), under(p, "status")
		switch {
		case inCAPO && !inOurs:
			switch {
			case inSpec:
				report(kind, "%s (%s) is CAPO's and missing in ours: the API server would prune it", p, c.typ)
			case inStatus && !matchAllowed(statusOmissions[kind], used, p):
				report(kind, "%s (%s) is CAPO's and missing in ours, and not in statusOmissions", p, c.typ)
			}
			continue
		case inOurs && !inCAPO:
			switch {
			case inSpec && !matchAllowed(specAdditions[kind], used, p):
				report(kind, "%s (%s) is ours and not CAPO's, and not in specAdditions", p, o.typ)
			case inStatus && !matchAllowed(statusAdditions[kind], used, p):
				report(kind, "%s (%s) is ours and not CAPO's, and not in statusAdditions", p, o.typ)
			}
			continue
		}

		// In both.
		if c.typ != o.typ {
			report(kind, "%s: type CAPO %q, ours %q", p, c.typ, o.typ)
		}
		if !inSpec {
			// Status is written by our controllers only; its list types,
			// enums and required fields are ours to choose.
			continue
		}
		if !slices.Equal(c.required, o.required) {
			report(kind, "%s: required CAPO %v, ours %v", p, c.required, o.required)
		}
		if c.listType != o.listType {
			report(kind, "%s: x-kubernetes-list-type CAPO %q, ours %q", p, c.listType, o.listType)
		}
		if !slices.Equal(c.mapKeys, o.mapKeys) {
			report(kind, "%s: x-kubernetes-list-map-keys CAPO %v, ours %v", p, c.mapKeys, o.mapKeys)
		}
		if !slices.Equal(c.enum, o.enum) {
			report(kind, "%s: enum CAPO %v, ours %v", p, c.enum, o.enum)
		}
	}

	// An allow-list entry that matches nothing is stale: the difference is
	// gone, or the path is misspelt.
	for _, list := range [][]allowed{specAdditions[kind], statusAdditions[kind], statusOmissions[kind]} {
		for _, a := range list {
			if !used[a.path] {
				report(kind, "allow-list entry %s matches no difference; remove it", a.path)
			}
		}
	}
}

// TestContractLabels checks the CAPI contract label of every CRD we serve
// for the infrastructure provider: cluster.x-k8s.io/v1beta2 lists, joined by
// underscores, exactly the versions the CRD serves. CAPI reads it to pick
// the apiVersion of references to our kinds.
func TestContractLabels(t *testing.T) {
	crds, err := envtest.ReadCRDDir(filepath.Join(repoRoot(t), ownCRDDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) == 0 {
		t.Fatalf("no CRDs in %s", ownCRDDir)
	}
	for _, c := range crds {
		var served []string
		for _, v := range c.Object.Spec.Versions {
			if v.Served {
				served = append(served, v.Name)
			}
		}
		value, ok := c.Object.Labels[contractLabel]
		if !ok {
			t.Errorf("%s (%s): no %s label; want %q", c.Object.Name, c.Source, contractLabel, strings.Join(served, "_"))
			continue
		}
		listed := strings.Split(value, "_")
		if dup := duplicates(listed); len(dup) > 0 {
			t.Errorf("%s: label %s=%q lists %v more than once", c.Object.Name, contractLabel, value, dup)
		}
		if !slices.Equal(sortedCopy(listed), sortedCopy(served)) {
			t.Errorf("%s: label %s=%q, but the CRD serves %v", c.Object.Name, contractLabel, value, served)
		}
	}
}

func duplicates(s []string) []string {
	seen := map[string]int{}
	for _, v := range s {
		seen[v]++
	}
	var out []string
	for v, n := range seen {
		if n > 1 {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// TestAllowListsHaveReasons keeps every documented difference documented.
func TestAllowListsHaveReasons(t *testing.T) {
	for name, lists := range map[string]map[string][]allowed{
		"specAdditions": specAdditions, "statusAdditions": statusAdditions, "statusOmissions": statusOmissions,
	} {
		for kind, list := range lists {
			for _, a := range list {
				if strings.TrimSpace(a.reason) == "" {
					t.Errorf("%s[%s] %s has no reason", name, kind, a.path)
				}
				if !under(a.path, "spec") && !under(a.path, "status") {
					t.Errorf("%s[%s] %s is neither under spec nor status", name, kind, a.path)
				}
			}
		}
	}
}

// TestFlatten pins the path syntax the messages use.
func TestFlatten(t *testing.T) {
	var s apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(`{
		"type": "object",
		"properties": {
			"spec": {"type": "object", "required": ["b", "a"], "properties": {
				"ports": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string", "format": "uuid"}}}},
				"tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
				"labels": {"type": "object", "additionalProperties": {"type": "string"}},
				"size": {"type": "integer", "format": "int32"},
				"kind": {"type": "string", "enum": ["B", "A"]}
			}}
		}
	}`), &s); err != nil {
		t.Fatal(err)
	}
	got := map[string]schemaNode{}
	flatten(&s, "", got)
	want := map[string]string{
		"":                "object",
		"spec":            "object",
		"spec.ports":      "array",
		"spec.ports[]":    "object",
		"spec.ports[].id": "string/uuid",
		"spec.tags":       "array",
		"spec.tags[]":     "string",
		"spec.labels":     "object",
		"spec.labels{}":   "string",
		"spec.size":       "integer/int32",
		"spec.kind":       "string",
	}
	if len(got) != len(want) {
		t.Errorf("paths %v, want %v", slices.Sorted(maps.Keys(got)), want)
	}
	for p, typ := range want {
		if got[p].typ != typ {
			t.Errorf("%q: type %q, want %q", p, got[p].typ, typ)
		}
	}
	if got["spec.ports"].listType != "atomic" || got["spec.tags"].listType != "set" {
		t.Errorf("list types: ports %q (want atomic: absent means atomic), tags %q", got["spec.ports"].listType, got["spec.tags"].listType)
	}
	if !slices.Equal(got["spec"].required, []string{"a", "b"}) {
		t.Errorf("required %v, want sorted [a b]", got["spec"].required)
	}
	if !slices.Equal(got["spec.kind"].enum, []string{`"A"`, `"B"`}) {
		t.Errorf("enum %v", got["spec.kind"].enum)
	}
	for _, tc := range []struct {
		path, prefix string
		want         bool
	}{
		{"spec.template.metadata", "spec.template.metadata", true},
		{"spec.template.metadata.labels{}", "spec.template.metadata", true},
		{"status.resources.ports[].macAddress", "status.resources.ports", true},
		{"spec.template.metadataX", "spec.template.metadata", false},
		{"spec", "status", false},
	} {
		if got := under(tc.path, tc.prefix); got != tc.want {
			t.Errorf("under(%q, %q) = %v", tc.path, tc.prefix, got)
		}
	}
}
