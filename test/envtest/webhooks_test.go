package envtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWebhookInstallOptionsResolvesPaths(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "config", "webhook"), 0o755); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(abs, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	o, err := webhookInstallOptions(root, []string{"config/webhook", abs})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "config", "webhook"), abs}
	if strings.Join(o.Paths, ",") != strings.Join(want, ",") {
		t.Errorf("paths %v, want %v", o.Paths, want)
	}

	if o, err := webhookInstallOptions(root, nil); err != nil || len(o.Paths) != 0 {
		t.Errorf("no manifests: %v, %v", o.Paths, err)
	}

	if _, err := webhookInstallOptions(root, []string{"config/missing"}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing manifest directory must be an error naming it, got %v", err)
	}
}
