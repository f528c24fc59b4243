// Package security holds the checks that fail the build when the shipped
// code weakens a security default. The RBAC checks live with the packaging
// tests (test/packaging, TestRBACLeastPrivilege), which render every
// shipped role; docs/reliability.md lists both.
package security

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// insecureFields are the fields that turn TLS verification off: crypto/tls
// and client-go's rest.TLSClientConfig.
var insecureFields = []string{"InsecureSkipVerify", "Insecure"}

// allowedInsecure are the places in product code that may set one of those
// fields, each with the opt-in it comes from. The value may never be the
// constant true; a new place fails the test until it is reviewed here.
var allowedInsecure = map[string]string{
	"bootstrap/setup.go":                   "passes --assisted-insecure-skip-tls-verify (default false; bootstrap.TestInsecureSkipTLSVerifyIsOptIn) to the ignition fetcher",
	"bootstrap/internal/ignition/fetch.go": "Options.InsecureSkipVerify, that flag's value (ignition.TestFetchVerifiesTLS: off, an untrusted server fails)",
}

// TestTLSVerificationIsOnlyAnOptIn parses every Go file that is not a test
// (test helpers under test/ included, for they ship in the e2e tools) and
// fails on a TLS verification switch set to true, or set anywhere not listed
// above.
func TestTLSVerificationIsOnlyAnOptIn(t *testing.T) {
	root, err := envtest.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := 0
	seen := map[string]bool{}
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		files++
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, filepath.Join(root, f), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range insecureSettings(file) {
			seen[f] = true
			pos := fset.Position(p.pos)
			switch {
			case p.literalTrue:
				t.Errorf("%s:%d: %s is set to true: TLS verification may only be turned off by an explicit opt-in", f, pos.Line, p.field)
			case allowedInsecure[f] == "":
				t.Errorf("%s:%d: %s is set here: make it an explicit opt-in (default off) and list it in allowedInsecure with its reason", f, pos.Line, p.field)
			}
		}
	}
	if files < 100 {
		t.Fatalf("only %d Go files found under %s", files, root)
	}
	for f := range allowedInsecure {
		if !seen[f] {
			t.Errorf("%s is listed in allowedInsecure but sets no TLS verification switch: remove it", f)
		}
	}
}

type insecureSetting struct {
	pos         token.Pos
	field       string
	literalTrue bool
}

// insecureSettings finds `Field: value` in composite literals and
// `x.Field = value` assignments of the insecure fields.
func insecureSettings(file *ast.File) []insecureSetting {
	var found []insecureSetting
	isTrue := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && id.Name == "true"
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && slices.Contains(insecureFields, k.Name) {
				found = append(found, insecureSetting{n.Pos(), k.Name, isTrue(n.Value)})
			}
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				if s, ok := lhs.(*ast.SelectorExpr); ok && slices.Contains(insecureFields, s.Sel.Name) && i < len(n.Rhs) {
					found = append(found, insecureSetting{n.Pos(), s.Sel.Name, isTrue(n.Rhs[i])})
				}
			}
		}
		return true
	})
	return found
}

// The finder sees every form the check relies on.
func TestInsecureSettings(t *testing.T) {
	src := `package p
func f(o opts) {
	_ = tls.Config{InsecureSkipVerify: true}
	_ = tls.Config{InsecureSkipVerify: (true)}
	_ = tls.Config{InsecureSkipVerify: o.Insecure}
	_ = rest.TLSClientConfig{Insecure: true}
	var c tls.Config
	c.InsecureSkipVerify = true
	c.InsecureSkipVerify = o.Insecure
	_ = tls.Config{MinVersion: 1}
}`
	file, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	for _, s := range insecureSettings(file) {
		got = append(got, s.literalTrue)
	}
	if want := []bool{true, true, false, true, true, false}; !slices.Equal(got, want) {
		t.Errorf("literal true per setting: %v, want %v", got, want)
	}
}
