package controlplane_test

// This test compares the CRD we generate for OpenshiftAssistedControlPlane
// with the reference provider's (openshift-assisted/cluster-api-provider-
// openshift-assisted, CAPOA) at its storage version v1alpha3, so that CAPOA
// manifests keep applying unchanged: every CAPOA spec field exists here with
// the same type, validation and list semantics (none is silently pruned),
// we invent no spec fields but the documented ones, and the status and name
// differences are the documented ones. CAPOA has no template kind; ours is
// checked to carry the control plane's spec schema unchanged. It reads YAML
// only; no API server.

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
	ownCRDDir     = "controlplane/config/crd/bases"
	upstreamEnv   = "OCP_CAPI_UPSTREAM_CRDS"
	capoaSubdir   = "cluster-api-provider-openshift-assisted"
	servedVersion = "v1alpha3"
	contractLabel = "cluster.x-k8s.io/v1beta2"

	controlPlaneKind = "OpenshiftAssistedControlPlane"
	templateKind     = "OpenshiftAssistedControlPlaneTemplate"
)

// allowed is a documented difference: a path (covering everything under it)
// and why it is intended.
type allowed struct{ path, reason string }

var specAdditions = []allowed{
	{"spec.version", "the Kubernetes version: CAPI's contract field, which a ClusterClass topology sets (without it the " +
		"topology controller cannot manage the control plane), and the override of the built-in OpenShift-to-Kubernetes table the issue asks for " +
		"(CAPOA pulls the release image instead); optional"},
	{"spec.config.releaseImage", "the release image override the issue asks for (CAPOA has only the repository " +
		"annotation, which is supported too); optional"},
	{"spec.openshiftAssistedConfigSpec.bootMode", "the bootstrap API's bootMode (api/bootstrap), so control-plane " +
		"machines can choose LiveISO or DiscoveryIgnition; optional, unset follows the infrastructure machine"},
}

var statusAdditions = []allowed{
	{"status.clusterDeploymentRef", "names the hive ClusterDeployment (CAPOA v1alpha2 had it)"},
	{"status.clusterImageSetRef", "names the cluster-scoped ClusterImageSet, whose name is a hash (collision-free " +
		"across namespaces, unlike CAPOA's)"},
}

// validationDifferences are spec fields whose validation (default, CEL
// rules, maxLength) is ours and not CAPOA's. Each is stricter or fills in
// what CAPOA's controller assumed, so CAPOA's valid manifests still apply;
// docs/controlplane.md lists them.
var validationDifferences = []allowed{
	{"spec", "transition rules (control plane only, not the template): baseDomain and clusterName are immutable, " +
		"and replicas cannot move between 1 and more; in the schema so that kubectl scale cannot bypass them"},
	{"spec.replicas", "default 3 (CAPOA's controller treated unset as 3, but the Desired column, kubectl scale and " +
		"CAPI's desired-replicas count showed nothing) and a CEL rule allowing 1, 3, 4 or 5 (the OpenShift topologies), " +
		"which holds through the scale subresource"},
	{"spec.config.baseDomain", "maxLength 253, a DNS name's (and a bound for the CEL immutability rule's cost)"},
	{"spec.config.clusterName", "maxLength 63, a DNS label's (and a bound for the CEL immutability rule's cost)"},
}

var nameDifferences = map[string][]allowed{
	controlPlaneKind: {
		{"categories", "in the cluster-api category like every CAPI provider's kinds (kubectl get cluster-api)"},
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
	maxItems int64
	maxLen   int64
	rules    []string
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
	if s.MaxItems != nil {
		n.maxItems = *s.MaxItems
	}
	if s.MaxLength != nil {
		n.maxLen = *s.MaxLength
	}
	for _, r := range s.XValidations {
		n.rules = append(n.rules, r.Rule)
	}
	sort.Strings(n.rules)
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

func matchExact(list []allowed, used map[string]bool, path string) bool {
	for _, a := range list {
		if a.path == path {
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

func versionOf(crd *apiextensionsv1.CustomResourceDefinition, version string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func TestCRDIsCompatibleWithCAPOA(t *testing.T) {
	root := repoRoot(t)
	capoa := crdsByKind(t, capoaCRDDir(t, root))[controlPlaneKind]
	ours := crdsByKind(t, filepath.Join(root, ownCRDDir))[controlPlaneKind]
	if capoa == nil {
		t.Fatalf("CAPOA's CRDs have no %s", controlPlaneKind)
	}
	if ours == nil {
		t.Fatalf("no %s CRD in %s", controlPlaneKind, ownCRDDir)
	}
	var problems []string
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	compareNames(controlPlaneKind, capoa, ours, report)
	cs, os := versionSchema(capoa, servedVersion), versionSchema(ours, servedVersion)
	if cs == nil || os == nil {
		t.Fatalf("%s not served: CAPOA %v, ours %v", servedVersion, cs != nil, os != nil)
	}
	compareSchemas(cs, os, report)

	// The scale subresource and the printer columns: CAPOA's, plus ours
	// shown with -o wide only.
	cv, ov := versionOf(capoa, servedVersion), versionOf(ours, servedVersion)
	if fmt.Sprint(cv.Subresources) != fmt.Sprint(ov.Subresources) {
		report("subresources: CAPOA %v, ours %v", cv.Subresources, ov.Subresources)
	}
	ourCols := map[string]apiextensionsv1.CustomResourceColumnDefinition{}
	for _, c := range ov.AdditionalPrinterColumns {
		ourCols[c.Name] = c
	}
	for _, c := range cv.AdditionalPrinterColumns {
		o, ok := ourCols[c.Name]
		switch {
		case !ok:
			report("printer column %q (CAPOA's) is missing", c.Name)
		case o.JSONPath != c.JSONPath || o.Type != c.Type || o.Priority != c.Priority:
			report("printer column %q: CAPOA %s %s p%d, ours %s %s p%d", c.Name, c.JSONPath, c.Type, c.Priority, o.JSONPath, o.Type, o.Priority)
		}
		delete(ourCols, c.Name)
	}
	for name, c := range ourCols {
		if c.Priority == 0 {
			report("printer column %q is ours and shown by default; extra columns must be -o wide only", name)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("our CRD differs from CAPOA's (%d problems):\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
}

func compareNames(kind string, c, o *apiextensionsv1.CustomResourceDefinition, report func(string, ...any)) {
	if c.Name != o.Name || c.Spec.Group != o.Spec.Group || c.Spec.Scope != o.Spec.Scope {
		report("name/group/scope: CAPOA %s %s %s, ours %s %s %s", c.Name, c.Spec.Group, c.Spec.Scope, o.Name, o.Spec.Group, o.Spec.Scope)
	}
	cn, on := c.Spec.Names, o.Spec.Names
	if cn.Plural != on.Plural || cn.Singular != on.Singular || cn.ListKind != on.ListKind {
		report("names: CAPOA %s/%s/%s, ours %s/%s/%s", cn.Plural, cn.Singular, cn.ListKind, on.Plural, on.Singular, on.ListKind)
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
		for _, s := range a {
			if !slices.Contains(b, s) {
				report("%s: CAPOA's %q is missing in ours", f.name, s)
			}
		}
		if !matchAllowed(nameDifferences[kind], used, f.name) {
			report("%s: CAPOA %v, ours %v, and not in nameDifferences", f.name, a, b)
		}
	}
	for _, a := range nameDifferences[kind] {
		if !used[a.path] {
			report("nameDifferences entry %s matches no difference; remove it", a.path)
		}
	}
}

func compareSchemas(capoaSchema, ourSchema *apiextensionsv1.JSONSchemaProps, report func(string, ...any)) {
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
				report("%s (%s) is CAPOA's and missing in ours: the API server would prune it", p, c.typ)
			case inStatus:
				report("%s (%s) is CAPOA's and missing in ours", p, c.typ)
			}
			continue
		case inOurs && !inCAPOA:
			switch {
			case inSpec && !matchAllowed(specAdditions, used, p):
				report("%s (%s) is ours and not CAPOA's, and not in specAdditions", p, o.typ)
			case inStatus && !matchAllowed(statusAdditions, used, p):
				report("%s (%s) is ours and not CAPOA's, and not in statusAdditions", p, o.typ)
			}
			continue
		}
		if c.typ != o.typ {
			report("%s: type CAPOA %q, ours %q", p, c.typ, o.typ)
		}
		if !inSpec {
			continue // status is written by our controllers only
		}
		if !slices.Equal(c.required, o.required) {
			report("%s: required CAPOA %v, ours %v", p, c.required, o.required)
		}
		if c.listType != o.listType || !slices.Equal(c.mapKeys, o.mapKeys) {
			report("%s: list type CAPOA %s%v, ours %s%v", p, c.listType, c.mapKeys, o.listType, o.mapKeys)
		}
		if !slices.Equal(c.enum, o.enum) {
			report("%s: enum CAPOA %v, ours %v", p, c.enum, o.enum)
		}
		if c.pattern != o.pattern {
			report("%s: pattern CAPOA %q, ours %q", p, c.pattern, o.pattern)
		}
		if c.minProps != o.minProps {
			report("%s: minProperties CAPOA %d, ours %d", p, c.minProps, o.minProps)
		}
		if c.maxItems != o.maxItems {
			report("%s: maxItems CAPOA %d, ours %d", p, c.maxItems, o.maxItems)
		}
		// Defaults, CEL rules and maxLength may differ only where
		// validationDifferences says why (exact path: a rule on spec says
		// nothing about spec.config).
		if c.deflt != o.deflt || !slices.Equal(c.rules, o.rules) || c.maxLen != o.maxLen {
			if !matchExact(validationDifferences, used, p) {
				report("%s: validation CAPOA default=%s rules=%q maxLength=%d, ours default=%s rules=%q maxLength=%d, "+
					"and not in validationDifferences", p, c.deflt, c.rules, c.maxLen, o.deflt, o.rules, o.maxLen)
			}
		}
	}
	for _, list := range [][]allowed{specAdditions, statusAdditions, validationDifferences} {
		for _, a := range list {
			if !used[a.path] {
				report("allow-list entry %s matches no difference; remove it", a.path)
			}
		}
	}
}

// TestTemplateCarriesTheSpec checks that the template's spec.template.spec
// is exactly the control plane's spec schema: a ClusterClass gets every
// field, with the same validation.
func TestTemplateCarriesTheSpec(t *testing.T) {
	crds := crdsByKind(t, filepath.Join(repoRoot(t), ownCRDDir))
	cp, tmpl := crds[controlPlaneKind], crds[templateKind]
	if cp == nil || tmpl == nil {
		t.Fatalf("missing CRDs: %s %v, %s %v", controlPlaneKind, cp != nil, templateKind, tmpl != nil)
	}
	want, got := map[string]schemaNode{}, map[string]schemaNode{}
	cs := versionSchema(cp, servedVersion).Properties["spec"]
	ts := versionSchema(tmpl, servedVersion).Properties["spec"].Properties["template"].Properties["spec"]
	flatten(&cs, "spec", want)
	flatten(&ts, "spec", got)
	// The transition rules on spec itself are the control plane's: a
	// template stays mutable.
	for p, n := range want {
		n.rules = slices.DeleteFunc(n.rules, func(r string) bool { return p == "spec" && strings.Contains(r, "oldSelf") })
		if len(n.rules) == 0 {
			n.rules = nil
		}
		want[p] = n
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		for _, p := range slices.Sorted(maps.Keys(want)) {
			if fmt.Sprint(want[p]) != fmt.Sprint(got[p]) {
				t.Errorf("%s: control plane %v, template %v", p, want[p], got[p])
			}
		}
		for p := range got {
			if _, ok := want[p]; !ok {
				t.Errorf("%s is in the template only", p)
			}
		}
	}
	names := tmpl.Spec.Names
	if !slices.Equal(slices.Sorted(slices.Values(names.ShortNames)), []string{"oacpt", "oacpts"}) {
		t.Errorf("template short names %v, want oacpt, oacpts", names.ShortNames)
	}
}

// TestContractLabels checks the CAPI contract label: cluster.x-k8s.io/v1beta2
// lists exactly the versions each CRD serves.
func TestContractLabels(t *testing.T) {
	crds, err := envtest.ReadCRDDir(filepath.Join(repoRoot(t), ownCRDDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 2 {
		t.Fatalf("%d CRDs in %s, want 2", len(crds), ownCRDDir)
	}
	for _, c := range crds {
		var served []string
		for _, v := range c.Object.Spec.Versions {
			if v.Served {
				served = append(served, v.Name)
			}
		}
		if got, want := c.Object.Labels[contractLabel], strings.Join(served, "_"); got != want || want != servedVersion {
			t.Errorf("%s: label %s=%q, want %q", c.Object.Name, contractLabel, got, servedVersion)
		}
	}
}

func TestAllowListsHaveReasons(t *testing.T) {
	lists := map[string][]allowed{"specAdditions": specAdditions, "statusAdditions": statusAdditions,
		"validationDifferences": validationDifferences}
	for kind, l := range nameDifferences {
		lists["nameDifferences["+kind+"]"] = l
	}
	for name, list := range lists {
		for _, a := range list {
			if strings.TrimSpace(a.reason) == "" {
				t.Errorf("%s: %s has no reason", name, a.path)
			}
		}
	}
}
