package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/localnode"
)

// TestUpStatusDown runs the real command: `up` starts etcd and
// kube-apiserver with every CRD, the kubeconfig works, and `down` leaves no
// process of the plane's group behind.
func TestUpStatusDown(t *testing.T) {
	root, err := envtest.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := buildMgmt(t, root)
	state := filepath.Join(t.TempDir(), "state")
	kubeconfig := filepath.Join(t.TempDir(), "kc", "admin.conf")
	mgmt := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mgmt %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command(bin, "down", "--state-dir", state).Run() })

	out := mgmt("up", "--state-dir", state, "--kubeconfig", kubeconfig, "--bin-dir", filepath.Join(root, "bin"))
	t.Log(out)
	pidBytes, err := os.ReadFile(filepath.Join(state, "mgmt.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidBytes)))
	if !strings.Contains(mgmt("status", "--state-dir", state), "running (pid "+strconv.Itoa(pid)) {
		t.Fatal("status does not report the running plane")
	}
	// A second `up` is a no-op.
	if out := mgmt("up", "--state-dir", state, "--kubeconfig", kubeconfig); !strings.Contains(out, "already running") {
		t.Fatalf("second up: %s", out)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	_ = apiextensionsv1.AddToScheme(s)
	cl, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := cl.List(context.Background(), &crds); err != nil {
		t.Fatal(err)
	}
	groups := map[string]int{}
	for _, c := range crds.Items {
		groups[c.Spec.Group]++
	}
	for _, g := range []string{"cluster.x-k8s.io", "machine.openshift.io", "agent-install.openshift.io", "hive.openshift.io", "metal3.io"} {
		if groups[g] == 0 {
			t.Errorf("no CRD of group %s is served (groups: %v)", g, groups)
		}
	}

	start := time.Now()
	mgmt("down", "--state-dir", state)
	t.Logf("down took %s", time.Since(start))
	// A zombie waiting for its reaper is dead: it holds no resource.
	if localnode.Alive(pid) {
		t.Errorf("pid %d still alive after down", pid)
	}
	if left := groupMembers(t, pid); len(left) > 0 {
		t.Errorf("processes left in the plane's group after down: %v", left)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state dir %s not removed: %v", state, err)
	}
}

// groupMembers lists live pids whose process group is pgid.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid && localnode.Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}
