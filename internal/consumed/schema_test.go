/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package consumed_test

// Pure checks (no API server) that the mirrored types are wire-compatible
// with upstream: the CRDs generated from them are compared with the real
// upstream CRDs, and the Go types' omitempty with upstream's required fields.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ocp-capi/ocp-capi/internal/consumed"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// upstreamEnv names the directory of upstream CRDs (shared/upstream-crds).
const upstreamEnv = "OCP_CAPI_UPSTREAM_CRDS"

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := envtest.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// upstreamDir returns the upstream CRD directory and whether it exists.
// "none" (which the envtest package accepts to turn upstream CRDs off)
// counts as absent.
func upstreamDir(t *testing.T) (string, bool) {
	t.Helper()
	dir := os.Getenv(upstreamEnv)
	if dir == "none" {
		return dir, false
	}
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "..", "shared", "upstream-crds")
	}
	st, err := os.Stat(dir)
	return dir, err == nil && st.IsDir()
}

// TestUpstreamCRDsPresentInCI keeps CI from skipping the upstream
// comparisons silently: under CI the upstream CRDs must be there.
func TestUpstreamCRDsPresentInCI(t *testing.T) {
	dir, ok := upstreamDir(t)
	if os.Getenv("CI") == "" {
		t.Skipf("CI is not set; upstream CRD directory %q present: %v", dir, ok)
	}
	if !ok {
		t.Fatalf("CI is set but the upstream CRDs are not available (directory %q): set %s to shared/upstream-crds, so that the upstream comparisons cannot be skipped", dir, upstreamEnv)
	}
}

// generatedCRDs reads test/crds/consumed, keyed by CRD name.
func generatedCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "test", "crds", "consumed")
	crds, err := envtest.ReadCRDDir(dir)
	if err != nil {
		t.Fatalf("reading generated CRDs (run `make generate`): %v", err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range crds {
		out[c.Object.Name] = c.Object
	}
	return out
}

// upstreamCRD is one upstream CRD and its file.
type upstreamCRD struct {
	crd  *apiextensionsv1.CustomResourceDefinition
	file string
}

// upstreamCRDs reads every CRD under dir, keyed by name. OpenShift ships one
// file per feature set for some CRDs; the TechPreviewNoUpgrade variant wins
// (it carries the MachineAPIMigration fields), any other duplicate is an error.
func upstreamCRDs(t *testing.T, dir string) map[string]upstreamCRD {
	t.Helper()
	out := map[string]upstreamCRD{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		crds, err := envtest.ReadCRDFile(path)
		if err != nil {
			return err
		}
		for _, c := range crds {
			next := upstreamCRD{crd: c.Object, file: path}
			prev, dup := out[c.Object.Name]
			switch {
			case !dup:
				out[c.Object.Name] = next
			case strings.Contains(filepath.Base(path), "TechPreviewNoUpgrade"):
				out[c.Object.Name] = next
			case strings.Contains(filepath.Base(prev.file), "TechPreviewNoUpgrade"):
			default:
				return fmt.Errorf("CRD %s is in both %s and %s and neither is the TechPreviewNoUpgrade variant", c.Object.Name, prev.file, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading upstream CRDs: %v", err)
	}
	return out
}

func crdVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

func scopeOf(namespaced bool) apiextensionsv1.ResourceScope {
	if namespaced {
		return apiextensionsv1.NamespaceScoped
	}
	return apiextensionsv1.ClusterScoped
}

// TestKindsMatchGeneratedCRDs checks consumed.Kinds against the CRDs
// generated into test/crds/consumed and against the scheme.
func TestKindsMatchGeneratedCRDs(t *testing.T) {
	generated := generatedCRDs(t)
	s := runtime.NewScheme()
	if err := consumed.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, k := range consumed.Kinds {
		listed[k.CRDName()] = true
		if !s.Recognizes(k.GroupVersionKind) {
			t.Errorf("%s is not registered by consumed.AddToScheme", k.GroupVersionKind)
		}
		crd, ok := generated[k.CRDName()]
		if !ok {
			t.Errorf("no generated CRD %s for %s (run `make generate`)", k.CRDName(), k.Kind)
			continue
		}
		if crd.Spec.Names.Kind != k.Kind || crd.Spec.Group != k.Group || crdVersion(crd, k.Version) == nil {
			t.Errorf("generated CRD %s is %s/%s %s, want %s", crd.Name, crd.Spec.Group, crd.Spec.Versions[0].Name, crd.Spec.Names.Kind, k.GroupVersionKind)
		}
		if crd.Spec.Scope != scopeOf(k.Namespaced) {
			t.Errorf("generated CRD %s has scope %s, consumed.Kinds says %s", crd.Name, crd.Spec.Scope, scopeOf(k.Namespaced))
		}
	}
	for name := range generated {
		if !listed[name] {
			t.Errorf("generated CRD %s is missing from consumed.Kinds", name)
		}
	}
}

// TestGeneratedCRDsMatchUpstream walks each generated schema against the
// upstream schema of the same version: every property we have must exist
// upstream at the same path with the same type, and be required exactly when
// upstream requires it. When upstream stores another version and its CRD has
// no conversion webhook (the API server then only relabels the apiVersion
// and prunes against the storage schema), every property must also exist in
// the storage version, or it would be dropped on write.
func TestGeneratedCRDsMatchUpstream(t *testing.T) {
	dir, ok := upstreamDir(t)
	if !ok {
		t.Skipf("upstream CRDs not available (directory %q): set %s to shared/upstream-crds to compare with upstream", dir, upstreamEnv)
	}
	generated := generatedCRDs(t)
	upstream := upstreamCRDs(t, dir)

	for _, k := range consumed.Kinds {
		t.Run(k.Kind, func(t *testing.T) {
			ours, ok := generated[k.CRDName()]
			if !ok {
				t.Fatalf("no generated CRD %s", k.CRDName())
			}
			up, ok := upstream[k.CRDName()]
			if !ok {
				t.Logf("%s: no upstream CRD (upstream serves it without one); our generated CRD is the only schema", k.CRDName())
				return
			}
			t.Logf("%s %s compared with %s", k.CRDName(), k.Version, up.file)

			var problems []string
			if ours.Spec.Scope != up.crd.Spec.Scope {
				problems = append(problems, fmt.Sprintf("scope: ours %s, upstream %s", ours.Spec.Scope, up.crd.Spec.Scope))
			}
			if ours.Spec.Names.Plural != up.crd.Spec.Names.Plural || ours.Spec.Names.Kind != up.crd.Spec.Names.Kind {
				problems = append(problems, fmt.Sprintf("names: ours %s/%s, upstream %s/%s",
					ours.Spec.Names.Plural, ours.Spec.Names.Kind, up.crd.Spec.Names.Plural, up.crd.Spec.Names.Kind))
			}
			ov := crdVersion(ours, k.Version)
			uv := crdVersion(up.crd, k.Version)
			switch {
			case ov == nil:
				problems = append(problems, "our CRD lacks version "+k.Version)
			case uv == nil:
				problems = append(problems, "upstream does not serve version "+k.Version)
			default:
				problems = append(problems, compareSubresources(ov, uv)...)
				problems = append(problems, compareSchema(ov.Schema.OpenAPIV3Schema, uv.Schema.OpenAPIV3Schema, "", true)...)
				if sv := storageVersion(up.crd); sv != k.Version && conversionIsNone(up.crd) {
					if sch := crdVersion(up.crd, sv); sch != nil {
						for _, p := range compareSchema(ov.Schema.OpenAPIV3Schema, sch.Schema.OpenAPIV3Schema, "", false) {
							problems = append(problems, fmt.Sprintf("storage version %s (no conversion webhook, so it would be pruned): %s", sv, p))
						}
					}
				}
			}
			if len(problems) > 0 {
				t.Errorf("%s differs from upstream %s:\n  %s", k.CRDName(), up.file, strings.Join(problems, "\n  "))
			}
		})
	}
}

func conversionIsNone(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy == "" || crd.Spec.Conversion.Strategy == apiextensionsv1.NoneConverter
}

func compareSubresources(ours, up *apiextensionsv1.CustomResourceDefinitionVersion) []string {
	var problems []string
	has := func(v *apiextensionsv1.CustomResourceDefinitionVersion) (status, scale bool) {
		if v.Subresources == nil {
			return false, false
		}
		return v.Subresources.Status != nil, v.Subresources.Scale != nil
	}
	os, oc := has(ours)
	us, uc := has(up)
	if os != us {
		problems = append(problems, fmt.Sprintf("status subresource: ours %v, upstream %v", os, us))
	}
	if oc != uc {
		problems = append(problems, fmt.Sprintf("scale subresource: ours %v, upstream %v", oc, uc))
	} else if oc && !reflect.DeepEqual(ours.Subresources.Scale, up.Subresources.Scale) {
		problems = append(problems, fmt.Sprintf("scale subresource: ours %+v, upstream %+v", *ours.Subresources.Scale, *up.Subresources.Scale))
	}
	return problems
}

// compareSchema reports, by JSON path, where ours has something upstream
// does not: a property, a type, an item or value schema; with
// checkRequired, also a difference in required-ness of the properties we
// have. Below a node that upstream leaves free-form (preserve unknown
// fields, no properties), anything goes.
func compareSchema(ours, up *apiextensionsv1.JSONSchemaProps, path string, checkRequired bool) []string {
	if ours == nil {
		return nil
	}
	at := path
	if at == "" {
		at = "<root>"
	}
	if up == nil {
		return []string{at + ": not in upstream schema"}
	}
	var problems []string
	if ours.Type != up.Type {
		problems = append(problems, fmt.Sprintf("%s: type %q, upstream %q", at, ours.Type, up.Type))
	}
	if ours.XIntOrString != up.XIntOrString {
		problems = append(problems, fmt.Sprintf("%s: int-or-string %v, upstream %v", at, ours.XIntOrString, up.XIntOrString))
	}
	upPreserves := up.XPreserveUnknownFields != nil && *up.XPreserveUnknownFields
	ourPreserves := ours.XPreserveUnknownFields != nil && *ours.XPreserveUnknownFields
	if ourPreserves && !upPreserves {
		problems = append(problems, at+": we preserve unknown fields, upstream prunes them")
	}
	if upPreserves && len(up.Properties) == 0 {
		return problems
	}

	names := make([]string, 0, len(ours.Properties))
	for name := range ours.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if path == "" && name == "metadata" {
			continue // the API server's, not the CRD's
		}
		o := ours.Properties[name]
		u, ok := up.Properties[name]
		if !ok {
			problems = append(problems, path+"."+name+": not in upstream schema")
			continue
		}
		problems = append(problems, compareSchema(&o, &u, path+"."+name, checkRequired)...)
	}
	if checkRequired {
		ourReq, upReq := setOf(ours.Required), setOf(up.Required)
		for name := range ours.Properties {
			if _, ok := up.Properties[name]; !ok {
				continue
			}
			if ourReq[name] != upReq[name] {
				problems = append(problems, fmt.Sprintf("%s.%s: required %v, upstream %v", path, name, ourReq[name], upReq[name]))
			}
		}
	}
	if ours.Items != nil && ours.Items.Schema != nil {
		var u *apiextensionsv1.JSONSchemaProps
		if up.Items != nil {
			u = up.Items.Schema
		}
		problems = append(problems, compareSchema(ours.Items.Schema, u, path+"[]", checkRequired)...)
	}
	if ours.AdditionalProperties != nil && ours.AdditionalProperties.Schema != nil {
		var u *apiextensionsv1.JSONSchemaProps
		if up.AdditionalProperties != nil {
			u = up.AdditionalProperties.Schema
		}
		problems = append(problems, compareSchema(ours.AdditionalProperties.Schema, u, path+"{}", checkRequired)...)
	}
	return problems
}

func setOf(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// omitemptyExceptions lists Go fields (by JSON path) that are omitempty
// although upstream's CRD requires them, because upstream's Go type has
// omitempty there too. Empty: no such field is modelled today.
var omitemptyExceptions = map[string]string{}

// TestOmitemptyVsUpstreamRequired walks each kind's Go type alongside the
// upstream schema: a field upstream requires must not be omitempty here
// (else a zero value would be left out and the write rejected), unless it
// is listed in omitemptyExceptions because upstream's Go type does the same.
func TestOmitemptyVsUpstreamRequired(t *testing.T) {
	dir, ok := upstreamDir(t)
	if !ok {
		t.Skipf("upstream CRDs not available (directory %q): set %s to shared/upstream-crds to compare with upstream", dir, upstreamEnv)
	}
	upstream := upstreamCRDs(t, dir)
	s := runtime.NewScheme()
	if err := consumed.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, k := range consumed.Kinds {
		t.Run(k.Kind, func(t *testing.T) {
			up, ok := upstream[k.CRDName()]
			if !ok {
				t.Logf("%s: no upstream CRD; nothing to compare", k.CRDName())
				return
			}
			uv := crdVersion(up.crd, k.Version)
			if uv == nil {
				t.Fatalf("upstream %s does not serve %s", up.file, k.Version)
			}
			obj, err := s.New(k.GroupVersionKind)
			if err != nil {
				t.Fatal(err)
			}
			var problems []string
			walkOmitempty(reflect.TypeOf(obj).Elem(), uv.Schema.OpenAPIV3Schema, "", &problems)
			if len(problems) > 0 {
				t.Errorf("%s: fields required upstream (%s) but omitempty here:\n  %s", k.Kind, up.file, strings.Join(problems, "\n  "))
			}
		})
	}
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// isLeaf is true for types that marshal themselves (times, quantities,
// raw extensions, int-or-strings) and for non-composite kinds.
func isLeaf(t reflect.Type) bool {
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Map, reflect.Pointer:
		return false
	}
	return true
}

// jsonField is a struct field's JSON name and options; inline is true for
// embedded fields whose members appear in the parent object.
type jsonField struct {
	name      string
	omitempty bool
	inline    bool
	skip      bool
}

func parseTag(f reflect.StructField) jsonField {
	tag, ok := f.Tag.Lookup("json")
	if tag == "-" || !f.IsExported() {
		return jsonField{skip: true}
	}
	parts := strings.Split(tag, ",")
	jf := jsonField{name: parts[0]}
	for _, p := range parts[1:] {
		switch p {
		case "omitempty":
			jf.omitempty = true
		case "inline":
			jf.inline = true
		}
	}
	if jf.name == "" && (f.Anonymous || !ok) {
		jf.inline = f.Anonymous
		if !f.Anonymous {
			jf.name = f.Name
		}
	}
	return jf
}

func walkOmitempty(t reflect.Type, schema *apiextensionsv1.JSONSchemaProps, path string, problems *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if schema == nil || isLeaf(t) {
		return
	}
	switch t.Kind() {
	case reflect.Slice:
		if schema.Items != nil {
			walkOmitempty(t.Elem(), schema.Items.Schema, path+"[]", problems)
		}
		return
	case reflect.Map:
		if schema.AdditionalProperties != nil {
			walkOmitempty(t.Elem(), schema.AdditionalProperties.Schema, path+"{}", problems)
		}
		return
	case reflect.Struct:
	default:
		return
	}
	required := setOf(schema.Required)
	for i := range t.NumField() {
		f := t.Field(i)
		jf := parseTag(f)
		if jf.skip {
			continue
		}
		if jf.inline {
			walkOmitempty(f.Type, schema, path, problems)
			continue
		}
		if path == "" && jf.name == "metadata" {
			continue
		}
		p := path + "." + jf.name
		if _, excepted := omitemptyExceptions[p]; required[jf.name] && jf.omitempty && !excepted {
			*problems = append(*problems, p)
		}
		// Foreign types (core/v1, meta/v1) are walked too: upstream embeds
		// the same ones.
		if prop, ok := schema.Properties[jf.name]; ok {
			walkOmitempty(f.Type, &prop, p, problems)
		}
	}
}

// TestMigrationRulesMatchUpstream: the MAPI Machine and MachineSet carry
// upstream's CEL rules of the authority switch (status.authoritativeAPI
// moves only through Migrating and is never removed; synchronizedGeneration
// only decreases when leaving Migrating). The migration controller relies
// on the API server enforcing them, so the CRDs generated from our types
// (used when upstream's are not at hand) must carry the same rules.
func TestMigrationRulesMatchUpstream(t *testing.T) {
	dir, ok := upstreamDir(t)
	if !ok {
		t.Skipf("upstream CRDs not available (directory %q): set %s to shared/upstream-crds to compare with upstream", dir, upstreamEnv)
	}
	generated := generatedCRDs(t)
	upstream := upstreamCRDs(t, dir)
	for _, name := range []string{"machines.machine.openshift.io", "machinesets.machine.openshift.io"} {
		t.Run(name, func(t *testing.T) {
			ours, up := crdVersion(generated[name], "v1beta1"), crdVersion(upstream[name].crd, "v1beta1")
			if ours == nil || up == nil {
				t.Fatalf("v1beta1 of %s missing: ours %v, upstream %v", name, ours != nil, up != nil)
			}
			for _, path := range [][]string{{"status"}, {"status", "authoritativeAPI"}} {
				o, u := schemaAt(ours.Schema.OpenAPIV3Schema, path), schemaAt(up.Schema.OpenAPIV3Schema, path)
				if o == nil || u == nil {
					t.Fatalf("%v: schema missing (ours %v, upstream %v)", path, o != nil, u != nil)
				}
				if len(u.XValidations) == 0 {
					t.Fatalf("%v: upstream has no rules; is this the TechPreviewNoUpgrade CRD?", path)
				}
				if !reflect.DeepEqual(o.XValidations, u.XValidations) {
					t.Errorf("%v: rules differ\n ours:     %+v\n upstream: %+v", path, o.XValidations, u.XValidations)
				}
			}
		})
	}
}

// schemaAt walks properties.
func schemaAt(s *apiextensionsv1.JSONSchemaProps, path []string) *apiextensionsv1.JSONSchemaProps {
	for _, p := range path {
		if s == nil {
			return nil
		}
		next, ok := s.Properties[p]
		if !ok {
			return nil
		}
		s = &next
	}
	return s
}
