package controlplane_test

// docs/controlplane.md is the user's reference of this API: these tests fail
// when a spec or status field, a condition type or a reason exists in the
// code but not on that page.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

const docsPage = "docs/controlplane.md"

func readDocs(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), docsPage))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fieldPaths lists the dotted paths of a schema's properties. The
// bootstrap configuration's fields are documented in docs/bootstrap.md and
// the conditions' own fields are metav1's: their children are left out.
func fieldPaths(s *apiextensionsv1.JSONSchemaProps, path string, out *[]string) {
	for name, p := range s.Properties {
		child := path + "." + name
		*out = append(*out, child)
		switch child {
		case "spec.openshiftAssistedConfigSpec", "status.conditions":
			continue
		}
		fieldPaths(&p, child, out)
	}
}

// TestDocsNameEveryField: every spec and status field appears on the page,
// either by its full path in backticks (`spec.config.proxy`) or, for the
// fields of a documented object, by its name in backticks right after the
// object's path (`spec.config.proxy` ... `httpProxy`).
func TestDocsNameEveryField(t *testing.T) {
	docs := readDocs(t)
	crd := crdsByKind(t, filepath.Join(repoRoot(t), ownCRDDir))[controlPlaneKind]
	if crd == nil {
		t.Fatalf("no %s CRD", controlPlaneKind)
	}
	schema := versionSchema(crd, servedVersion)
	var paths []string
	for _, top := range []string{"spec", "status"} {
		p := schema.Properties[top]
		fieldPaths(&p, top, &paths)
	}
	if len(paths) < 30 {
		t.Fatalf("only %d fields found in the CRD: the walk is broken", len(paths))
	}
	for _, p := range paths {
		if strings.Contains(docs, "`"+p+"`") {
			continue
		}
		// A field of an object documented by its path: the parent's row or
		// paragraph names it.
		parent, name := p[:strings.LastIndex(p, ".")], p[strings.LastIndex(p, ".")+1:]
		i := strings.Index(docs, "`"+parent+"`")
		if i >= 0 {
			end := strings.Index(docs[i:], "\n")
			if end < 0 {
				end = len(docs) - i
			}
			if strings.Contains(docs[i:i+end], "`"+name+"`") {
				continue
			}
		}
		t.Errorf("%s does not document %s", docsPage, p)
	}
}

// TestDocsNameEveryConditionAndReason: every condition type and reason
// constant of conditions.go appears on the page in backticks.
func TestDocsNameEveryConditionAndReason(t *testing.T) {
	docs := readDocs(t)
	file := filepath.Join(repoRoot(t), "api/controlplane/v1alpha3/conditions.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasSuffix(name.Name, "Condition") && !strings.HasSuffix(name.Name, "Reason") {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s: not a string literal", name.Name)
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				n++
				if !strings.Contains(docs, "`"+v+"`") {
					t.Errorf("%s does not document %s (%q)", docsPage, name.Name, v)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d conditions and reasons found in %s", n, file)
	}
}
