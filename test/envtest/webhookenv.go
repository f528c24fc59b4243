package envtest

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// T is the part of testing.TB that the helpers here use. The package does
// not import testing itself: the local management plane (test/cmd/mgmt)
// links it into a binary.
type T interface {
	Helper()
	Fatal(args ...any)
	Skip(args ...any)
}

// RequireAPIServer skips t when no kube-apiserver was built into bin/ and
// KUBEBUILDER_ASSETS is unset, so that `go test ./...` on a fresh checkout
// does not fail for want of test tools. Under CI=true it fails t instead:
// there `make test` builds the tools, and a missing one is a broken build
// that a skip would hide. A KUBEBUILDER_ASSETS that lacks the binaries is
// left for Start to report.
func RequireAPIServer(t T) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		return
	}
	root, err := FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "kube-apiserver")); err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no kube-apiserver in bin/: make test builds it (make test-tools)")
	}
	t.Skip("no kube-apiserver in bin/: run make test-tools")
}

// WebhookEnvOptions say which webhooks StartWithWebhooks installs and
// serves.
type WebhookEnvOptions struct {
	// Manifests are the webhook configurations to install, as
	// Options.WebhookManifests.
	Manifests []string
	// AddToScheme register the APIs the webhooks serve (test/scheme
	// does not know every provider's).
	AddToScheme []func(*runtime.Scheme) error
	// Setup registers the webhooks with the manager that serves them.
	Setup func(ctrl.Manager) error
}

// webhookServerWait bounds the wait for the local webhook server to answer.
const webhookServerWait = 30 * time.Second

// StartWithWebhooks starts an environment whose API server calls webhooks
// served in this process: it installs the webhook configurations, runs a
// manager serving o.Setup's webhooks where they point, and returns once
// that server answers, because until then the API server refuses every
// request that a webhook with failurePolicy Fail intercepts. stop stops the
// manager, then the API server.
func StartWithWebhooks(ctx context.Context, o WebhookEnvOptions) (*Environment, func(), error) {
	env, err := Start(Options{WebhookManifests: o.Manifests})
	if err != nil {
		return nil, nil, err
	}
	stopMgr := func() error { return nil }
	stop := func() {
		_ = stopMgr()
		_ = env.Stop()
	}
	fail := func(err error) (*Environment, func(), error) {
		stop()
		return nil, nil, err
	}
	for _, add := range o.AddToScheme {
		if err := add(env.Scheme); err != nil {
			return fail(err)
		}
	}
	mo := env.ManagerOptions()
	mo.WebhookServer = webhook.NewServer(env.WebhookServerOptions())
	mgr, err := ctrl.NewManager(env.Config, mo)
	if err != nil {
		return fail(err)
	}
	if err := o.Setup(mgr); err != nil {
		return fail(err)
	}
	stopMgr = RunManager(ctx, mgr)
	wctx, cancel := context.WithTimeout(ctx, webhookServerWait)
	defer cancel()
	if err := env.WaitForWebhookServer(wctx); err != nil {
		return fail(err)
	}
	return env, stop, nil
}
