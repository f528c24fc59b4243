package controllers_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/buildcontroller"
	"github.com/ocp-capi/ocp-capi/internal/manager"
)

// spec is how cmd/addon-manager wires the controller (see
// docs/addon/build-controller.md).
func spec(opts *buildcontroller.Options) manager.Spec {
	return manager.Spec{
		Name:        "addon-manager",
		AddToScheme: append([]func(*runtime.Scheme) error{clusterv1.AddToScheme}, buildcontroller.AddToScheme...),
		Controllers: []manager.Controller{buildcontroller.Controller(opts)},
		ExtraFlags:  opts.AddFlags,
	}
}

// TestManagerWiring: the flags reach the controller through the shared
// manager, --help lists them, and an invalid value stops the manager with a
// message naming the flag.
func TestManagerWiring(t *testing.T) {
	opts := buildcontroller.DefaultOptions()
	out := captureStdout(t, func() {
		if err := manager.Run(context.Background(), spec(&opts), []string{"--help"}); err != nil {
			t.Fatal(err)
		}
	})
	for _, flag := range []string{"--build-backend", "--build-namespace", "--build-timeout", "--builder-image",
		"--build-service-account", "--build-failed-retention", "--build-concurrency"} {
		if !strings.Contains(out, flag) {
			t.Errorf("--help lacks %s", flag)
		}
	}

	kc, err := env.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	opts = buildcontroller.DefaultOptions()
	err = manager.Run(context.Background(), spec(&opts), []string{"--kubeconfig", path,
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--build-backend=pod"})
	if err == nil || !strings.Contains(err.Error(), "--build-backend") {
		t.Fatalf("error %v does not name --build-backend", err)
	}
	if opts.Backend != "pod" {
		t.Errorf("the flag did not reach the options: %+v", opts)
	}
}

func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	f()
	os.Stdout = saved
	_ = w.Close()
	return <-done
}
