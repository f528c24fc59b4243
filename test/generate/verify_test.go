// Package generate checks that `make verify-generate` catches stale or
// hand-edited generated files.
package generate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// generatedFiles lists the generated files of the tree: deepcopy sources and
// every YAML under a directory controller-gen writes.
func generatedFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch rel {
			case ".git", "bin", "out", ".mgmt", "hack":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "zz_generated.deepcopy.go" ||
			(strings.HasSuffix(p, ".yaml") && (strings.Contains(rel, "/crd/bases/") || strings.HasPrefix(rel, "test/crds/") ||
				strings.HasSuffix(rel, "rbac/role.yaml"))) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// copyTree copies the work tree (without build outputs and VCS data).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", `tar -C "$1" --exclude=./.git --exclude=./bin --exclude=./out --exclude=./.mgmt -cf - . | tar -C "$2" -xf -`, "copy", src, dst)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("copying the tree: %v: %s", err, out)
	}
}

func TestVerifyGenerate(t *testing.T) {
	root, err := envtest.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cg := filepath.Join(root, "bin", "controller-gen")
	if _, err := os.Stat(cg); err != nil {
		t.Fatalf("%s is missing: run `make bin/controller-gen` (make test builds it)", cg)
	}
	files := generatedFiles(t, root)
	if len(files) == 0 {
		t.Fatal("found no generated files; the generators wrote nothing")
	}

	run := func(dir string) (string, error) {
		// The scratch copy has no bin/; point it at the real one.
		if err := os.Symlink(filepath.Join(root, "bin"), filepath.Join(dir, "bin")); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		out, err := exec.Command(filepath.Join(dir, "hack", "verify-generate.sh")).CombinedOutput()
		return string(out), err
	}

	t.Run("clean tree passes", func(t *testing.T) {
		dir := t.TempDir()
		copyTree(t, root, dir)
		if out, err := run(dir); err != nil {
			t.Fatalf("verify-generate failed on the committed tree: %v\n%s", err, out)
		}
	})

	// One hand edit per kind of generated file is enough to show each
	// generator's output is compared.
	picked := map[string]string{}
	for _, f := range files {
		kind := "crd"
		switch {
		case strings.HasSuffix(f, ".go"):
			kind = "deepcopy"
		case strings.HasSuffix(f, "role.yaml"):
			kind = "rbac"
		}
		if _, ok := picked[kind]; !ok {
			picked[kind] = f
		}
	}
	for kind, f := range picked {
		t.Run("hand-edited "+kind+" fails", func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, root, dir)
			p := filepath.Join(dir, f)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			edit := "\n# hand edit\n"
			if strings.HasSuffix(f, ".go") {
				edit = "\n// hand edit\n"
			}
			if err := os.WriteFile(p, append(b, edit...), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := run(dir)
			if err == nil {
				t.Fatalf("verify-generate passed after editing %s:\n%s", f, out)
			}
			if !strings.Contains(out, filepath.Base(f)) {
				t.Errorf("the failure does not name %s:\n%s", f, out)
			}
		})
	}
}
