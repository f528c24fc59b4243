package instance_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoKubernetesClientDependency: other modules import this package, so
// its build must not drag in controller-runtime or client-go (nor register
// anything in their metrics registry). docs/openstack/instance-api.md.
func TestNoKubernetesClientDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "sigs.k8s.io/controller-runtime") || strings.HasPrefix(dep, "k8s.io/client-go") {
			t.Errorf("pkg/openstack/instance depends on %s", dep)
		}
	}
}
