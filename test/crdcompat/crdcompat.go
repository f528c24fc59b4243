// Package crdcompat compares the CRDs this project generates with an upstream
// provider's, path by path, so that the upstream provider's manifests keep
// applying unchanged: every upstream spec field exists in ours with the same
// type, validation and list semantics (none is silently pruned), we invent no
// spec fields but documented ones, and every other difference is documented
// with its reason. It reads YAML only; no API server. Only tests import it:
// each API's compat_test.go describes its kinds and documented differences
// in a Suite and calls its checks.
package crdcompat

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
	// UpstreamEnv names the directory holding one subdirectory of CRDs per
	// upstream project (as for envtest).
	UpstreamEnv = "OCP_CAPI_UPSTREAM_CRDS"
	// ContractLabel is the CAPI v1beta2 contract label of provider CRDs.
	ContractLabel = "cluster.x-k8s.io/v1beta2"
	// contractLabelPrefix starts every CAPI contract label.
	contractLabelPrefix = "cluster.x-k8s.io/"
	// defaultContract is the contract of a served version that
	// Suite.Contracts does not name.
	defaultContract = "v1beta2"
)

// Allowed is a documented difference: a path (covering everything under it,
// unless the table says otherwise) and why the difference is intended.
type Allowed struct{ Path, Reason string }

// Kind is a kind compared with the upstream provider's, at a version both
// serve.
type Kind struct{ Name, Version string }

// Suite is one API's comparison with its upstream provider. The tables are
// keyed by kind; a kind absent from a table has no such difference.
type Suite struct {
	// Upstream names the upstream provider in messages, e.g. "CAPO".
	Upstream string
	// UpstreamSubdir is its directory of CRDs under $OCP_CAPI_UPSTREAM_CRDS.
	UpstreamSubdir string
	// OwnCRDDir holds our generated CRDs, relative to the repository root.
	OwnCRDDir string
	// Kinds are compared with the upstream provider's.
	Kinds []Kind
	// OwnOnlyKinds are our other kinds in OwnCRDDir, with no upstream
	// counterpart, and the version each serves; only the contract label
	// check covers them (the calling test checks the rest).
	OwnOnlyKinds []Kind

	// SpecAdditions are spec fields we have and the upstream has not.
	// (Every upstream spec field missing in ours is a problem: the API
	// server would prune it from upstream manifests.)
	SpecAdditions map[string][]Allowed
	// StatusAdditions are status fields we have and the upstream has not.
	StatusAdditions map[string][]Allowed
	// StatusOmissions are the upstream's status fields we do not have.
	StatusOmissions map[string][]Allowed
	// ValidationDifferences are spec paths whose default, CEL rules,
	// maxLength or required fields differ (a field required by a CEL rule
	// rather than by the schema's required list, for example). Matched
	// exactly, not with what is under them: a rule on spec says nothing
	// about spec.config.
	ValidationDifferences map[string][]Allowed
	// NameDifferences are the CRD name lists ("shortNames", "categories")
	// that differ. The upstream's entries must stay in ours regardless.
	NameDifferences map[string][]Allowed

	// Unchecked are the checks of spec fields both CRDs have that this
	// suite does not make, each with why. Every other check is made.
	Unchecked map[Check]string

	// ComparePrinting also compares, for every kind, the subresources and
	// the printer columns: the upstream's columns unchanged, ours extra
	// only with -o wide (priority > 0).
	ComparePrinting bool
	// OnlyComparedVersion requires each of our CRDs to serve only the
	// version compared (or given in OwnOnlyKinds).
	OnlyComparedVersion bool
	// Contracts maps an API version we serve to the CAPI contract it
	// fulfils, for versions kept for an older contract (v1beta1 served for
	// CAPO's users). Versions it does not name fulfil v1beta2.
	Contracts map[string]string
}

// Check is one check of a spec field both CRDs have that a Suite may leave
// out (Suite.Unchecked).
type Check string

const (
	// Pattern compares the regular expression of strings.
	Pattern Check = "pattern"
	// Rules compares the CEL rules (x-kubernetes-validations).
	Rules Check = "CEL rules"
)

// Node is what is compared at one path of a schema.
type Node struct {
	Type     string   // type[/format], int-or-string, plus preserve-unknown-fields and map-type
	Required []string // sorted
	ListType string   // arrays only; an absent list type is atomic
	MapKeys  []string
	Enum     []string // JSON of each value, sorted
	Pattern  string
	Default  string // JSON
	MinProps int64
	MaxItems int64
	MaxLen   int64
	Rules    []string // CEL rules, sorted
}

// Flatten returns every node of s by path, s itself at path. Properties are
// joined with ".", array items are path+"[]", additionalProperties values
// path+"{}".
func Flatten(s *apiextensionsv1.JSONSchemaProps, path string) map[string]Node {
	out := map[string]Node{}
	flatten(s, path, out)
	return out
}

func flatten(s *apiextensionsv1.JSONSchemaProps, path string, out map[string]Node) {
	n := Node{Type: s.Type, Pattern: s.Pattern}
	if s.Format != "" {
		n.Type += "/" + s.Format
	}
	if s.XIntOrString {
		n.Type = "int-or-string"
	}
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		n.Type += "+preserve-unknown-fields"
	}
	if s.XMapType != nil {
		n.Type += "+map-type=" + *s.XMapType
	}
	n.Required = slices.Sorted(slices.Values(s.Required))
	if s.Type == "array" {
		n.ListType = "atomic"
		if s.XListType != nil && *s.XListType != "" {
			n.ListType = *s.XListType
		}
		n.MapKeys = s.XListMapKeys
	}
	for _, e := range s.Enum {
		n.Enum = append(n.Enum, string(e.Raw))
	}
	sort.Strings(n.Enum)
	if s.Default != nil {
		n.Default = string(s.Default.Raw)
	}
	if s.MinProperties != nil {
		n.MinProps = *s.MinProperties
	}
	if s.MaxItems != nil {
		n.MaxItems = *s.MaxItems
	}
	if s.MaxLength != nil {
		n.MaxLen = *s.MaxLength
	}
	for _, r := range s.XValidations {
		n.Rules = append(n.Rules, r.Rule)
	}
	sort.Strings(n.Rules)
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

// Under tells whether path is prefix or below it.
func Under(path, prefix string) bool {
	if path == prefix {
		return true
	}
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && (strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "[]") || strings.HasPrefix(rest, "{}"))
}

// ServedSchema is crd's schema at version, nil unless that version is
// served with a schema.
func ServedSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) *apiextensionsv1.JSONSchemaProps {
	if v := servedVersion(crd, version); v != nil && v.Schema != nil {
		return v.Schema.OpenAPIV3Schema
	}
	return nil
}

func servedVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if v := &crd.Spec.Versions[i]; v.Name == version && v.Served {
			return v
		}
	}
	return nil
}

// RepoRoot is the repository's root directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := envtest.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// ByKind reads the CRDs of dir, by kind.
func ByKind(t testing.TB, dir string) map[string]*apiextensionsv1.CustomResourceDefinition {
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

// OwnCRDs reads our CRDs, by kind.
func (s *Suite) OwnCRDs(t testing.TB) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	return ByKind(t, filepath.Join(RepoRoot(t), s.OwnCRDDir))
}

// UpstreamDir finds the upstream provider's CRDs: $OCP_CAPI_UPSTREAM_CRDS,
// or ../shared/upstream-crds beside the repository. Absent, the test is
// skipped, except in CI, where their absence is a failure.
func (s *Suite) UpstreamDir(t testing.TB) string {
	t.Helper()
	base := os.Getenv(UpstreamEnv)
	if base == "" {
		base = filepath.Join(RepoRoot(t), "..", "shared", "upstream-crds")
	}
	dir := filepath.Join(base, s.UpstreamSubdir)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		msg := fmt.Sprintf("%s CRDs not found in %s: set %s to the directory holding %s/", s.Upstream, dir, UpstreamEnv, s.UpstreamSubdir)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// CheckCompatible compares our CRDs with the upstream provider's and fails
// t with every undocumented difference. The documented ones it met are
// logged with their reasons.
func (s *Suite) CheckCompatible(t testing.TB) {
	t.Helper()
	upstream := ByKind(t, s.UpstreamDir(t))
	problems, allowed := s.Compare(upstream, s.OwnCRDs(t))
	for _, a := range allowed {
		t.Logf("documented difference: %s", a)
	}
	if len(problems) > 0 {
		t.Errorf("our CRDs differ from %s's (%d problems):\n  %s", s.Upstream, len(problems), strings.Join(problems, "\n  "))
	}
}

// differences collects the problems of one kind, and the documented
// differences met, each table's entries marked as used when they match.
type differences struct {
	kind     string
	upstream string
	problems []string
	allowed  []string
	used     map[string]bool // table name + "\x00" + path
}

func (d *differences) report(format string, args ...any) {
	d.problems = append(d.problems, d.kind+": "+fmt.Sprintf(format, args...))
}

// match tells whether an entry of the named table covers path (exactly
// when exact), marking that entry used.
func (d *differences) match(table string, list []Allowed, path string, exact bool) bool {
	for _, a := range list {
		if a.Path == path || (!exact && Under(path, a.Path)) {
			if !d.used[table+"\x00"+a.Path] {
				d.allowed = append(d.allowed, fmt.Sprintf("%s: %s %s: %s", d.kind, table, a.Path, a.Reason))
			}
			d.used[table+"\x00"+a.Path] = true
			return true
		}
	}
	return false
}

// stale reports the entries of a table that matched nothing: the
// difference is gone, or the path is misspelt.
func (d *differences) stale(table string, list []Allowed) {
	for _, a := range list {
		if !d.used[table+"\x00"+a.Path] {
			d.report("%s entry %s matches no difference; remove it", table, a.Path)
		}
	}
}

// Compare returns the undocumented differences between the upstream's
// CRDs and ours (both by kind), and the documented differences it met, both
// sorted.
func (s *Suite) Compare(upstream, ours map[string]*apiextensionsv1.CustomResourceDefinition) (problems, allowed []string) {
	for _, k := range s.Kinds {
		d := &differences{kind: k.Name, upstream: s.Upstream, used: map[string]bool{}}
		s.compareKind(d, k, upstream[k.Name], ours[k.Name])
		problems = append(problems, d.problems...)
		allowed = append(allowed, d.allowed...)
	}
	sort.Strings(problems)
	sort.Strings(allowed)
	return problems, allowed
}

func (s *Suite) compareKind(d *differences, k Kind, u, o *apiextensionsv1.CustomResourceDefinition) {
	switch {
	case u == nil:
		d.report("%s's CRDs have no such kind", s.Upstream)
		return
	case o == nil:
		d.report("no CRD in %s", s.OwnCRDDir)
		return
	}
	s.compareNames(d, u, o)
	uSchema, oSchema := ServedSchema(u, k.Version), ServedSchema(o, k.Version)
	switch {
	case uSchema == nil:
		d.report("%s's CRD does not serve %s", s.Upstream, k.Version)
		return
	case oSchema == nil:
		d.report("our CRD does not serve %s", k.Version)
		return
	}
	s.compareSchemas(d, uSchema, oSchema)
	if s.ComparePrinting {
		comparePrinting(d, servedVersion(u, k.Version), servedVersion(o, k.Version))
	}
}

func (s *Suite) compareNames(d *differences, u, o *apiextensionsv1.CustomResourceDefinition) {
	un, on := u.Spec.Names, o.Spec.Names
	for _, f := range []struct{ name, u, o string }{
		{"CRD name", u.Name, o.Name},
		{"group", u.Spec.Group, o.Spec.Group},
		{"scope", string(u.Spec.Scope), string(o.Spec.Scope)},
		{"names.plural", un.Plural, on.Plural},
		{"names.singular", un.Singular, on.Singular},
		{"names.listKind", un.ListKind, on.ListKind},
	} {
		if f.u != f.o {
			d.report("%s: %s %q, ours %q", f.name, d.upstream, f.u, f.o)
		}
	}
	for _, f := range []struct {
		name string
		u, o []string
	}{{"shortNames", un.ShortNames, on.ShortNames}, {"categories", un.Categories, on.Categories}} {
		a, b := slices.Sorted(slices.Values(f.u)), slices.Sorted(slices.Values(f.o))
		if slices.Equal(a, b) {
			continue
		}
		// Removing an upstream short name or category would break its
		// users' kubectl habits, documented or not.
		for _, name := range a {
			if !slices.Contains(b, name) {
				d.report("%s: %s's %q is missing in ours", f.name, d.upstream, name)
			}
		}
		if !d.match("nameDifferences", s.NameDifferences[d.kind], f.name, true) {
			d.report("%s: %s %v, ours %v, and not in nameDifferences", f.name, d.upstream, a, b)
		}
	}
	d.stale("nameDifferences", s.NameDifferences[d.kind])
}

func (s *Suite) compareSchemas(d *differences, upstreamSchema, ourSchema *apiextensionsv1.JSONSchemaProps) {
	upstream, ours := Flatten(upstreamSchema, ""), Flatten(ourSchema, "")
	paths := slices.Sorted(maps.Keys(upstream))
	for p := range ours {
		if _, ok := upstream[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		u, inUpstream := upstream[p]
		o, inOurs := ours[p]
		inSpec, inStatus := Under(p, "spec"), Under(p, "status")
		switch {
		case inUpstream && !inOurs:
			switch {
			case inSpec:
				d.report("%s (%s) is %s's and missing in ours: the API server would prune it", p, u.Type, d.upstream)
			case inStatus && !d.match("statusOmissions", s.StatusOmissions[d.kind], p, false):
				d.report("%s (%s) is %s's and missing in ours, and not in statusOmissions", p, u.Type, d.upstream)
			}
			continue
		case inOurs && !inUpstream:
			switch {
			case inSpec && !d.match("specAdditions", s.SpecAdditions[d.kind], p, false):
				d.report("%s (%s) is ours and not %s's, and not in specAdditions", p, o.Type, d.upstream)
			case inStatus && !d.match("statusAdditions", s.StatusAdditions[d.kind], p, false):
				d.report("%s (%s) is ours and not %s's, and not in statusAdditions", p, o.Type, d.upstream)
			}
			continue
		}

		// In both.
		if u.Type != o.Type {
			d.report("%s: type %s %q, ours %q", p, d.upstream, u.Type, o.Type)
		}
		if !inSpec {
			// Status is written by our controllers only; its list types,
			// enums, required fields and validation are ours to choose.
			continue
		}
		if !slices.Equal(u.Required, o.Required) && !d.match("validationDifferences", s.ValidationDifferences[d.kind], p, true) {
			d.report("%s: required %s %v, ours %v, and not in validationDifferences", p, d.upstream, u.Required, o.Required)
		}
		if u.ListType != o.ListType {
			d.report("%s: x-kubernetes-list-type %s %q, ours %q", p, d.upstream, u.ListType, o.ListType)
		}
		if !slices.Equal(u.MapKeys, o.MapKeys) {
			d.report("%s: x-kubernetes-list-map-keys %s %v, ours %v", p, d.upstream, u.MapKeys, o.MapKeys)
		}
		if !slices.Equal(u.Enum, o.Enum) {
			d.report("%s: enum %s %v, ours %v", p, d.upstream, u.Enum, o.Enum)
		}
		if _, skip := s.Unchecked[Pattern]; !skip && u.Pattern != o.Pattern {
			d.report("%s: pattern %s %q, ours %q", p, d.upstream, u.Pattern, o.Pattern)
		}
		if u.MinProps != o.MinProps {
			d.report("%s: minProperties %s %d, ours %d", p, d.upstream, u.MinProps, o.MinProps)
		}
		if u.MaxItems != o.MaxItems {
			d.report("%s: maxItems %s %d, ours %d", p, d.upstream, u.MaxItems, o.MaxItems)
		}
		_, skipRules := s.Unchecked[Rules]
		if u.Default != o.Default || (!skipRules && !slices.Equal(u.Rules, o.Rules)) || u.MaxLen != o.MaxLen {
			if !d.match("validationDifferences", s.ValidationDifferences[d.kind], p, true) {
				d.report("%s: validation %s default=%s rules=%q maxLength=%d, ours default=%s rules=%q maxLength=%d, "+
					"and not in validationDifferences", p, d.upstream, u.Default, u.Rules, u.MaxLen, o.Default, o.Rules, o.MaxLen)
			}
		}
	}
	for _, t := range []struct {
		name string
		list []Allowed
	}{
		{"specAdditions", s.SpecAdditions[d.kind]},
		{"statusAdditions", s.StatusAdditions[d.kind]},
		{"statusOmissions", s.StatusOmissions[d.kind]},
		{"validationDifferences", s.ValidationDifferences[d.kind]},
	} {
		d.stale(t.name, t.list)
	}
}

// comparePrinting compares the subresources (the scale subresource's paths
// among them) and the printer columns: the upstream's unchanged, ours extra
// only with -o wide.
func comparePrinting(d *differences, u, o *apiextensionsv1.CustomResourceDefinitionVersion) {
	if fmt.Sprint(u.Subresources) != fmt.Sprint(o.Subresources) {
		d.report("subresources: %s %v, ours %v", d.upstream, u.Subresources, o.Subresources)
	}
	ourCols := map[string]apiextensionsv1.CustomResourceColumnDefinition{}
	for _, c := range o.AdditionalPrinterColumns {
		ourCols[c.Name] = c
	}
	for _, c := range u.AdditionalPrinterColumns {
		oc, ok := ourCols[c.Name]
		switch {
		case !ok:
			d.report("printer column %q (%s's) is missing", c.Name, d.upstream)
		case oc.JSONPath != c.JSONPath || oc.Type != c.Type || oc.Priority != c.Priority:
			d.report("printer column %q: %s %s %s p%d, ours %s %s p%d", c.Name, d.upstream, c.JSONPath, c.Type, c.Priority,
				oc.JSONPath, oc.Type, oc.Priority)
		}
		delete(ourCols, c.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(ourCols)) {
		if ourCols[name].Priority == 0 {
			d.report("printer column %q is ours and shown by default; extra columns must be -o wide only", name)
		}
	}
}

// CheckContractLabels checks the CAPI contract labels of every CRD in
// OwnCRDDir: cluster.x-k8s.io/<contract> lists, joined by underscores in
// the CRD's order, exactly the served versions that fulfil that contract
// (v1beta2 unless Contracts says otherwise). CAPI reads them to pick the
// apiVersion of references to our kinds, and to know which contract an
// object of a given version follows.
func (s *Suite) CheckContractLabels(t testing.TB) {
	t.Helper()
	crds, err := envtest.ReadCRDDir(filepath.Join(RepoRoot(t), s.OwnCRDDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.ContractLabelProblems(crds) {
		t.Error(p)
	}
}

// ContractLabelProblems returns what CheckContractLabels reports. The CRDs
// must be exactly Kinds and OwnOnlyKinds, each serving its version.
func (s *Suite) ContractLabelProblems(crds []envtest.CRD) []string {
	var problems []string
	want := map[string]string{}
	for _, k := range slices.Concat(s.Kinds, s.OwnOnlyKinds) {
		want[k.Name] = k.Version
	}
	for _, c := range crds {
		kind := c.Object.Spec.Names.Kind
		version, known := want[kind]
		if !known {
			problems = append(problems, fmt.Sprintf("%s (%s): kind %s is neither in Kinds nor in OwnOnlyKinds", c.Object.Name, c.Source, kind))
		}
		delete(want, kind)
		var served []string
		byContract := map[string][]string{}
		for _, v := range c.Object.Spec.Versions {
			if v.Served {
				served = append(served, v.Name)
				contract := s.Contracts[v.Name]
				if contract == "" {
					contract = defaultContract
				}
				byContract[contract] = append(byContract[contract], v.Name)
			}
		}
		if known && !slices.Contains(served, version) {
			problems = append(problems, fmt.Sprintf("%s: serves %v, not %s", c.Object.Name, served, version))
		}
		if known && s.OnlyComparedVersion && !slices.Equal(served, []string{version}) {
			problems = append(problems, fmt.Sprintf("%s: serves %v; want %s only", c.Object.Name, served, version))
		}
		if _, ok := byContract[defaultContract]; !ok {
			byContract[defaultContract] = nil // the label is required
		}
		for _, contract := range slices.Sorted(maps.Keys(byContract)) {
			key, versions := contractLabelPrefix+contract, strings.Join(byContract[contract], "_")
			value, ok := c.Object.Labels[key]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s (%s): no %s label; want %q", c.Object.Name, c.Source, key, versions))
			case value != versions:
				problems = append(problems, fmt.Sprintf("%s: label %s=%q, want %q (the served versions of that contract)", c.Object.Name, key, value, versions))
			}
		}
		for _, key := range slices.Sorted(maps.Keys(c.Object.Labels)) {
			contract, isContract := strings.CutPrefix(key, contractLabelPrefix)
			if _, ok := byContract[contract]; isContract && strings.HasPrefix(contract, "v") && !ok {
				problems = append(problems, fmt.Sprintf("%s: label %s, but no served version fulfils that contract", c.Object.Name, key))
			}
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(want)) {
		problems = append(problems, fmt.Sprintf("no CRD for %s in %s", kind, s.OwnCRDDir))
	}
	return problems
}

// CheckAllowLists checks the tables: every entry has a reason, and its path
// is where its table can match (spec or status, or a name list), under a
// kind that is compared; every unchecked check has a reason.
func (s *Suite) CheckAllowLists(t testing.TB) {
	t.Helper()
	for _, p := range s.AllowListProblems() {
		t.Error(p)
	}
}

// AllowListProblems returns what CheckAllowLists reports.
func (s *Suite) AllowListProblems() []string {
	compared := map[string]bool{}
	for _, k := range s.Kinds {
		compared[k.Name] = true
	}
	var problems []string
	for _, t := range []struct {
		name  string
		table map[string][]Allowed
		valid func(path string) bool
	}{
		{"specAdditions", s.SpecAdditions, func(p string) bool { return Under(p, "spec") }},
		{"statusAdditions", s.StatusAdditions, func(p string) bool { return Under(p, "status") }},
		{"statusOmissions", s.StatusOmissions, func(p string) bool { return Under(p, "status") }},
		{"validationDifferences", s.ValidationDifferences, func(p string) bool { return Under(p, "spec") }},
		{"nameDifferences", s.NameDifferences, func(p string) bool { return p == "shortNames" || p == "categories" }},
	} {
		for _, kind := range slices.Sorted(maps.Keys(t.table)) {
			if !compared[kind] {
				problems = append(problems, fmt.Sprintf("%s[%s]: the kind is not compared", t.name, kind))
			}
			for _, a := range t.table[kind] {
				if strings.TrimSpace(a.Reason) == "" {
					problems = append(problems, fmt.Sprintf("%s[%s] %s has no reason", t.name, kind, a.Path))
				}
				if !t.valid(a.Path) {
					problems = append(problems, fmt.Sprintf("%s[%s] %s cannot match in that table", t.name, kind, a.Path))
				}
			}
		}
	}
	for _, c := range slices.Sorted(maps.Keys(s.Unchecked)) {
		if strings.TrimSpace(s.Unchecked[c]) == "" {
			problems = append(problems, fmt.Sprintf("Unchecked %s has no reason", c))
		}
		if c != Pattern && c != Rules {
			problems = append(problems, fmt.Sprintf("Unchecked %q is no check", c))
		}
	}
	return problems
}
