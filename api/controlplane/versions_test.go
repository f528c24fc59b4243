package controlplane_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestV1beta1IsV1alpha3Moved checks both CRDs: they serve v1alpha3 (stored)
// and v1beta1 (not stored), with the same printer columns and
// subresources, and v1beta1's schema is v1alpha3's with the machine
// template's infrastructureRef and deletion under machineTemplate.spec
// (and the control plane's rule requiring infrastructureRef naming that
// path): the only difference, so that the conversion loses nothing.
func TestV1beta1IsV1alpha3Moved(t *testing.T) {
	crds := crdsByKind(t, filepath.Join(repoRoot(t), ownCRDDir))
	for _, kind := range []string{controlPlaneKind, templateKind} {
		crd := crds[kind]
		if crd == nil {
			t.Fatalf("no %s CRD", kind)
		}
		var names []string
		versions := map[string]*apiextensionsv1.CustomResourceDefinitionVersion{}
		for i := range crd.Spec.Versions {
			v := &crd.Spec.Versions[i]
			names = append(names, v.Name)
			versions[v.Name] = v
		}
		alpha, beta := versions["v1alpha3"], versions["v1beta1"]
		if len(names) != 2 || alpha == nil || beta == nil {
			t.Fatalf("%s: versions %v, want v1alpha3 and v1beta1", kind, names)
		}
		if !alpha.Served || !alpha.Storage || !beta.Served || beta.Storage {
			t.Errorf("%s: want both served, v1alpha3 stored: %+v", kind, crd.Spec.Versions)
		}
		if d := cmp.Diff(alpha.AdditionalPrinterColumns, beta.AdditionalPrinterColumns); d != "" {
			t.Errorf("%s: printer columns differ:\n%s", kind, d)
		}
		if d := cmp.Diff(alpha.Subresources, beta.Subresources); d != "" {
			t.Errorf("%s: subresources differ:\n%s", kind, d)
		}
		path := []string{"spec", "machineTemplate"}
		if kind == templateKind {
			path = []string{"spec", "template", "spec", "machineTemplate"}
		}
		moved, ok := liftSpec(*beta.Schema.OpenAPIV3Schema.DeepCopy(), path)
		if !ok {
			t.Fatalf("%s v1beta1: no %s.spec", kind, strings.Join(path, "."))
		}
		// The control plane's rule that requires the infrastructure
		// machine template names v1beta1's path.
		if spec, ok := moved.Properties["spec"]; ok && kind == controlPlaneKind {
			for i := range spec.XValidations {
				v := &spec.XValidations[i]
				v.Rule = strings.ReplaceAll(strings.ReplaceAll(v.Rule, " && has(self.machineTemplate.spec)", ""), "machineTemplate.spec.", "machineTemplate.")
				v.FieldPath = strings.ReplaceAll(v.FieldPath, ".machineTemplate.spec.", ".machineTemplate.")
			}
			moved.Properties["spec"] = spec
		}
		if d := cmp.Diff(*alpha.Schema.OpenAPIV3Schema, moved); d != "" {
			t.Errorf("%s: v1beta1's schema with %s.spec moved up is not v1alpha3's:\n%s", kind, strings.Join(path, "."), d)
		}
	}
}

// liftSpec returns s with the properties of the object at path's "spec"
// (and its required list) moved up into that object.
func liftSpec(s apiextensionsv1.JSONSchemaProps, path []string) (apiextensionsv1.JSONSchemaProps, bool) {
	if len(path) == 0 {
		inner, ok := s.Properties["spec"]
		if !ok {
			return s, false
		}
		delete(s.Properties, "spec")
		for name, p := range inner.Properties {
			s.Properties[name] = p
		}
		s.Required = inner.Required
		return s, true
	}
	child, ok := s.Properties[path[0]]
	if !ok {
		return s, false
	}
	child, ok = liftSpec(child, path[1:])
	s.Properties[path[0]] = child
	return s, ok
}
