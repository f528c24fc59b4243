package crdcompat

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// newCRD builds a CRD of kind Widget serving v1 with the given schema.
func newCRD(t *testing.T, schema string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var s apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", Plural: "widgets", Singular: "widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &s},
			}},
		},
	}
}

const upstreamSchema = `{"type": "object", "properties": {
	"spec": {"type": "object", "properties": {
		"size": {"type": "integer", "default": 1},
		"name": {"type": "string", "pattern": "^[a-z]+$"}
	}},
	"status": {"type": "object", "properties": {
		"ready": {"type": "boolean"}
	}}
}}`

// ourSchema differs from upstreamSchema in one spec addition (spec.color),
// one status addition (status.phase), one status omission (status.ready),
// one default (spec.size) and one pattern (spec.name).
const ourSchema = `{"type": "object", "properties": {
	"spec": {"type": "object", "properties": {
		"size": {"type": "integer", "default": 3},
		"name": {"type": "string", "pattern": "^[a-z0-9]+$"},
		"color": {"type": "object", "properties": {"rgb": {"type": "string"}}}
	}},
	"status": {"type": "object", "properties": {
		"phase": {"type": "string"}
	}}
}}`

func compare(t *testing.T, s Suite, upstream, ours *apiextensionsv1.CustomResourceDefinition) []string {
	t.Helper()
	s.Upstream, s.OwnCRDDir = "UP", "ours/"
	s.Kinds = []Kind{{Name: "Widget", Version: "v1"}}
	problems, _ := s.Compare(
		map[string]*apiextensionsv1.CustomResourceDefinition{"Widget": upstream},
		map[string]*apiextensionsv1.CustomResourceDefinition{"Widget": ours})
	return problems
}

// wantProblems fails unless got holds exactly one problem containing each
// of want, and nothing else.
func wantProblems(t *testing.T, got []string, want ...string) {
	t.Helper()
	rest := slices.Clone(got)
	for _, w := range want {
		i := slices.IndexFunc(rest, func(p string) bool { return strings.Contains(p, w) })
		if i < 0 {
			t.Errorf("no problem contains %q", w)
			continue
		}
		rest = slices.Delete(rest, i, i+1)
	}
	if len(rest) > 0 {
		t.Errorf("unexpected problems:\n  %s", strings.Join(rest, "\n  "))
	}
}

func TestUndocumentedDifferencesAreReported(t *testing.T) {
	got := compare(t, Suite{}, newCRD(t, upstreamSchema), newCRD(t, ourSchema))
	wantProblems(t, got,
		"Widget: spec.color (object) is ours and not UP's, and not in specAdditions",
		"Widget: spec.color.rgb (string) is ours",
		"Widget: status.phase (string) is ours and not UP's, and not in statusAdditions",
		"Widget: status.ready (boolean) is UP's and missing in ours, and not in statusOmissions",
		"Widget: spec.size: validation UP default=1",
		`Widget: spec.name: pattern UP "^[a-z]+$", ours "^[a-z0-9]+$"`,
	)
}

func TestDocumentedDifferencesAreNot(t *testing.T) {
	s := Suite{
		SpecAdditions:         map[string][]Allowed{"Widget": {{"spec.color", "r"}}},
		StatusAdditions:       map[string][]Allowed{"Widget": {{"status.phase", "r"}}},
		StatusOmissions:       map[string][]Allowed{"Widget": {{"status.ready", "r"}}},
		ValidationDifferences: map[string][]Allowed{"Widget": {{"spec.size", "r"}}},
		Unchecked:             map[Check]string{Pattern: "r"},
	}
	if got := compare(t, s, newCRD(t, upstreamSchema), newCRD(t, ourSchema)); len(got) > 0 {
		t.Errorf("documented differences reported:\n  %s", strings.Join(got, "\n  "))
	}
	// And what they allow is logged with the reason.
	s.Upstream, s.Kinds = "UP", []Kind{{Name: "Widget", Version: "v1"}}
	_, allowed := s.Compare(
		map[string]*apiextensionsv1.CustomResourceDefinition{"Widget": newCRD(t, upstreamSchema)},
		map[string]*apiextensionsv1.CustomResourceDefinition{"Widget": newCRD(t, ourSchema)})
	if len(allowed) != 4 || !slices.Contains(allowed, "Widget: specAdditions spec.color: r") {
		t.Errorf("allowed %q", allowed)
	}
}

func TestMissingSpecFieldCannotBeAllowed(t *testing.T) {
	// Pruning an upstream spec field is never documented away, whatever
	// the tables say; the entries that then match nothing are stale.
	s := Suite{
		SpecAdditions:   map[string][]Allowed{"Widget": {{"spec.color", "r"}}},
		StatusOmissions: map[string][]Allowed{"Widget": {{"spec.color", "r"}}},
	}
	got := compare(t, s, newCRD(t, ourSchema), newCRD(t, ourSchema))
	wantProblems(t, got,
		"specAdditions entry spec.color matches no difference; remove it",
		"statusOmissions entry spec.color matches no difference; remove it")
	got = compare(t, s, newCRD(t, ourSchema), newCRD(t, upstreamSchema))
	wantProblems(t, got,
		"spec.color (object) is UP's and missing in ours: the API server would prune it",
		"spec.color.rgb (string) is UP's and missing in ours: the API server would prune it",
		"status.phase (string) is UP's and missing in ours, and not in statusOmissions",
		"status.ready (boolean) is ours and not UP's",
		"spec.size: validation",
		"spec.name: pattern",
		"specAdditions entry spec.color matches no difference",
		"statusOmissions entry spec.color matches no difference")
}

func TestValidationDifferencesMatchExactly(t *testing.T) {
	// A documented validation difference on spec says nothing about
	// spec.size.
	s := Suite{
		ValidationDifferences: map[string][]Allowed{"Widget": {{"spec", "r"}}},
		Unchecked:             map[Check]string{Pattern: "r"},
	}
	up := newCRD(t, `{"type": "object", "properties": {"spec": {"type": "object", "properties": {
		"size": {"type": "integer"}, "label": {"type": "string"}}}}}`)
	ours := newCRD(t, `{"type": "object", "properties": {"spec": {"type": "object", "properties": {
		"size": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0"}]},
		"label": {"type": "string", "maxLength": 3}}}}}`)
	wantProblems(t, compare(t, s, up, ours),
		`spec.size: validation UP default= rules=[] maxLength=0, ours default= rules=["self > 0"] maxLength=0`,
		`spec.label: validation UP default= rules=[] maxLength=0, ours default= rules=[] maxLength=3`,
		"validationDifferences entry spec matches no difference")
	// Unchecking the rules leaves maxLength checked.
	s.Unchecked[Rules] = "r"
	wantProblems(t, compare(t, s, up, ours), "spec.label: validation", "validationDifferences entry spec matches")
}

// A required list that differs is reported unless validationDifferences
// documents that path (exactly).
func TestRequiredDifferences(t *testing.T) {
	up := newCRD(t, `{"type": "object", "properties": {"spec": {"type": "object", "required": ["ref"], "properties": {
		"ref": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}}}`)
	ours := newCRD(t, `{"type": "object", "properties": {"spec": {"type": "object", "properties": {
		"ref": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}`)
	wantProblems(t, compare(t, Suite{}, up, ours),
		"spec: required UP [ref], ours [], and not in validationDifferences",
		"spec.ref: required UP [name], ours [], and not in validationDifferences")
	s := Suite{ValidationDifferences: map[string][]Allowed{"Widget": {{"spec", "r"}}}}
	wantProblems(t, compare(t, s, up, ours), "spec.ref: required UP [name], ours []")
}

func TestSpecOnlyChecks(t *testing.T) {
	// Required, list types, enums, minProperties and maxItems are compared
	// in spec; in status only the type is.
	up := newCRD(t, `{"type": "object", "properties": {
		"spec": {"type": "object", "required": ["a"], "properties": {
			"a": {"type": "array", "items": {"type": "string"}},
			"b": {"type": "string", "enum": ["x"]},
			"c": {"type": "object", "minProperties": 1, "x-kubernetes-map-type": "atomic"}
		}},
		"status": {"type": "object", "properties": {
			"l": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
			"n": {"type": "integer"}
		}}}}`)
	ours := newCRD(t, `{"type": "object", "properties": {
		"spec": {"type": "object", "properties": {
			"a": {"type": "array", "maxItems": 2, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"], "items": {"type": "string"}},
			"b": {"type": "string", "enum": ["x", "y"]},
			"c": {"type": "object"}
		}},
		"status": {"type": "object", "properties": {
			"l": {"type": "array", "items": {"type": "string"}},
			"n": {"type": "string"}
		}}}}`)
	wantProblems(t, compare(t, Suite{}, up, ours),
		"spec: required UP [a], ours []",
		`spec.a: x-kubernetes-list-type UP "atomic", ours "map"`,
		"spec.a: x-kubernetes-list-map-keys UP [], ours [k]",
		"spec.a: maxItems UP 0, ours 2",
		`spec.b: enum UP ["x"], ours ["x" "y"]`,
		`spec.c: type UP "object+map-type=atomic", ours "object"`,
		"spec.c: minProperties UP 1, ours 0",
		`status.n: type UP "integer", ours "string"`)
}

func TestNames(t *testing.T) {
	up, ours := newCRD(t, upstreamSchema), newCRD(t, upstreamSchema)
	up.Spec.Names.ShortNames = []string{"wd"}
	ours.Spec.Names.ShortNames = []string{"w"}
	ours.Spec.Names.Categories = []string{"cluster-api"}
	ours.Spec.Group = "other.com"
	wantProblems(t, compare(t, Suite{}, up, ours),
		`group: UP "example.com", ours "other.com"`,
		`shortNames: UP's "wd" is missing in ours`,
		"shortNames: UP [wd], ours [w], and not in nameDifferences",
		"categories: UP [], ours [cluster-api], and not in nameDifferences")
	// Documenting the lists keeps the upstream's short name required.
	s := Suite{NameDifferences: map[string][]Allowed{"Widget": {{"shortNames", "r"}, {"categories", "r"}}}}
	ours.Spec.Group = up.Spec.Group
	wantProblems(t, compare(t, s, up, ours), `shortNames: UP's "wd" is missing in ours`)
	ours.Spec.Names.ShortNames = []string{"w", "wd"}
	wantProblems(t, compare(t, s, up, ours))
}

func TestPrinting(t *testing.T) {
	up, ours := newCRD(t, upstreamSchema), newCRD(t, upstreamSchema)
	up.Spec.Versions[0].AdditionalPrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
		{Name: "Name", Type: "string", JSONPath: ".spec.name"},
	}
	ours.Spec.Versions[0].AdditionalPrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Size", Type: "integer", JSONPath: ".spec.size", Priority: 1},
		{Name: "Wide", Type: "string", JSONPath: ".status.x", Priority: 1},
		{Name: "Shown", Type: "string", JSONPath: ".status.y"},
	}
	ours.Spec.Versions[0].Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	if got := compare(t, Suite{}, up, ours); len(got) > 0 {
		t.Errorf("printing compared though ComparePrinting is off: %q", got)
	}
	wantProblems(t, compare(t, Suite{ComparePrinting: true}, up, ours),
		"subresources: UP nil, ours",
		`printer column "Size": UP .spec.size integer p0, ours .spec.size integer p1`,
		`printer column "Name" (UP's) is missing`,
		`printer column "Shown" is ours and shown by default`)
}

func TestMissingKindOrVersion(t *testing.T) {
	s := Suite{Upstream: "UP", OwnCRDDir: "ours/", Kinds: []Kind{{Name: "Widget", Version: "v1"}, {Name: "Gadget", Version: "v1"}, {Name: "Widget", Version: "v2"}}}
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{"Widget": newCRD(t, upstreamSchema)}
	problems, _ := s.Compare(crds, map[string]*apiextensionsv1.CustomResourceDefinition{})
	wantProblems(t, problems, "Gadget: UP's CRDs have no such kind", "Widget: no CRD in ours/", "Widget: no CRD in ours/")
	problems, _ = s.Compare(crds, crds)
	wantProblems(t, problems, "Gadget: UP's CRDs have no such kind", "Widget: UP's CRD does not serve v2")
}

func TestContractLabelProblems(t *testing.T) {
	crd := func(kind string, label string, versions ...string) envtest.CRD {
		c := newCRD(t, upstreamSchema)
		c.Name, c.Spec.Names.Kind = strings.ToLower(kind)+"s.example.com", kind
		c.Spec.Versions = nil
		for _, v := range versions {
			c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true})
		}
		if label != "-" {
			c.Labels = map[string]string{ContractLabel: label}
		}
		return envtest.CRD{Object: c, Source: kind + ".yaml"}
	}
	s := Suite{OwnCRDDir: "ours/", Kinds: []Kind{{Name: "A", Version: "v1"}, {Name: "B", Version: "v2"}}, OwnOnlyKinds: []Kind{{Name: "C", Version: "v1"}}}
	good := []envtest.CRD{crd("A", "v1", "v1"), crd("B", "v1_v2", "v1", "v2"), crd("C", "v1", "v1")}
	wantProblems(t, s.ContractLabelProblems(good))
	s.OnlyComparedVersion = true
	wantProblems(t, s.ContractLabelProblems(good), "bs.example.com: serves [v1 v2]; want v2 only")
	s.OnlyComparedVersion = false
	wantProblems(t, s.ContractLabelProblems([]envtest.CRD{crd("A", "-", "v1"), crd("B", "v2_v1", "v1", "v2"), crd("D", "v3", "v3")}),
		`as.example.com (A.yaml): no cluster.x-k8s.io/v1beta2 label; want "v1"`,
		`bs.example.com: label cluster.x-k8s.io/v1beta2="v2_v1", want "v1_v2" (the served versions of that contract)`,
		"ds.example.com (D.yaml): kind D is neither in Kinds nor in OwnOnlyKinds",
		"no CRD for C in ours/")
	wantProblems(t, s.ContractLabelProblems([]envtest.CRD{crd("A", "v2", "v2"), good[1], good[2]}), "as.example.com: serves [v2], not v1")

	// A version kept for the v1beta1 contract has its own label.
	s.Contracts = map[string]string{"v1": "v1beta1"}
	older := crd("B", "v2", "v1", "v2")
	older.Object.Labels["cluster.x-k8s.io/v1beta1"] = "v1"
	wantProblems(t, s.ContractLabelProblems([]envtest.CRD{crd("A", "-", "v1"), older, crd("C", "v1", "v1")}),
		`as.example.com (A.yaml): no cluster.x-k8s.io/v1beta1 label; want "v1"`,
		`as.example.com (A.yaml): no cluster.x-k8s.io/v1beta2 label; want ""`,
		`cs.example.com (C.yaml): no cluster.x-k8s.io/v1beta1 label; want "v1"`,
		`cs.example.com: label cluster.x-k8s.io/v1beta2="v1", want "" (the served versions of that contract)`)
	stale := crd("B", "v2", "v2")
	stale.Object.Labels["cluster.x-k8s.io/v1beta1"] = "v1"
	wantProblems(t, s.ContractLabelProblems([]envtest.CRD{stale}),
		"bs.example.com: label cluster.x-k8s.io/v1beta1, but no served version fulfils that contract",
		"no CRD for A in ours/", "no CRD for C in ours/")
}

func TestAllowListProblems(t *testing.T) {
	s := Suite{
		Kinds:                 []Kind{{Name: "Widget", Version: "v1"}},
		SpecAdditions:         map[string][]Allowed{"Widget": {{"spec.a", "r"}, {"status.b", "r"}}},
		StatusAdditions:       map[string][]Allowed{"Widget": {{"status.a", " "}}},
		StatusOmissions:       map[string][]Allowed{"Gadget": {{"status.a", "r"}}},
		ValidationDifferences: map[string][]Allowed{"Widget": {{"spec", "r"}}},
		NameDifferences:       map[string][]Allowed{"Widget": {{"shortNames", "r"}, {"spec.names", "r"}}},
		Unchecked:             map[Check]string{Rules: "", "enum": "r"},
	}
	wantProblems(t, s.AllowListProblems(),
		"specAdditions[Widget] status.b cannot match in that table",
		"statusAdditions[Widget] status.a has no reason",
		"statusOmissions[Gadget]: the kind is not compared",
		"nameDifferences[Widget] spec.names cannot match in that table",
		"Unchecked CEL rules has no reason",
		`Unchecked "enum" is no check`)
}

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
				"port": {"x-kubernetes-int-or-string": true},
				"raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
				"kind": {"type": "string", "enum": ["B", "A"]}
			}}
		}
	}`), &s); err != nil {
		t.Fatal(err)
	}
	got := Flatten(&s, "")
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
		"spec.port":       "int-or-string",
		"spec.raw":        "object+preserve-unknown-fields",
		"spec.kind":       "string",
	}
	if len(got) != len(want) {
		t.Errorf("paths %v, want %v", slices.Sorted(maps.Keys(got)), want)
	}
	for p, typ := range want {
		if got[p].Type != typ {
			t.Errorf("%q: type %q, want %q", p, got[p].Type, typ)
		}
	}
	if got["spec.ports"].ListType != "atomic" || got["spec.tags"].ListType != "set" {
		t.Errorf("list types: ports %q (want atomic: absent means atomic), tags %q", got["spec.ports"].ListType, got["spec.tags"].ListType)
	}
	if !slices.Equal(got["spec"].Required, []string{"a", "b"}) {
		t.Errorf("required %v, want sorted [a b]", got["spec"].Required)
	}
	if !slices.Equal(got["spec.kind"].Enum, []string{`"A"`, `"B"`}) {
		t.Errorf("enum %v", got["spec.kind"].Enum)
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
		{"spec.template.metadata.labels{}", "spec.template.metadata", true},
		{"status.resources.ports[].macAddress", "status.resources.ports", true},
		{"spec.template.metadataX", "spec.template.metadata", false},
		{"spec", "status", false},
	} {
		if got := Under(tc.path, tc.prefix); got != tc.want {
			t.Errorf("Under(%q, %q) = %v", tc.path, tc.prefix, got)
		}
	}
}
