package controlplane_test

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/ocp-capi/ocp-capi/controlplane/internal/release"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// TestDocsVersionTable: the OpenShift to Kubernetes table of
// docs/controlplane.md is the one the provider uses.
func TestDocsVersionTable(t *testing.T) {
	root, err := envtest.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs/controlplane.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| 4\.([0-9]+) \| 1\.([0-9]+) \|$`)
	documented := map[uint64]uint64{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		o, _ := strconv.ParseUint(m[1], 10, 64)
		k, _ := strconv.ParseUint(m[2], 10, 64)
		if _, dup := documented[o]; dup {
			t.Errorf("OpenShift 4.%d is in the table twice", o)
		}
		documented[o] = k
	}
	if !maps.Equal(documented, release.KubernetesMinors) {
		t.Errorf("docs/controlplane.md's version table %v differs from release.KubernetesMinors %v", documented, release.KubernetesMinors)
	}
}
