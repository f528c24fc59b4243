package webhooks_test

// This test installs the generated webhook configurations in a real API
// server and checks that it calls the webhooks: errors name the field.

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/bootstrap/webhooks"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

func TestWebhooksInAPIServer(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		if _, err := os.Stat("../../bin/kube-apiserver"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("no kube-apiserver in bin/: make test builds it (test-tools)")
			}
			t.Skip("no kube-apiserver: run make test-tools")
		}
	}
	g := NewWithT(t)
	env, err := envtest.Start(envtest.Options{WebhookManifests: []string{"bootstrap/config/webhook/manifests.yaml"}})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = env.Stop() }()
	g.Expect(bootstrapv1.AddToScheme(env.Scheme)).To(Succeed())
	ctrl.SetLogger(logr.Discard())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, WebhookServer: webhook.NewServer(env.WebhookServerOptions()),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(webhooks.SetupWebhooks(mgr)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() { cancel(); <-done }()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	g.Expect(env.WaitForWebhookServer(wctx)).To(Succeed())

	ns, err := env.NewNamespace(ctx, "webhooks")
	g.Expect(err).NotTo(HaveOccurred())
	c := env.Client
	bad := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns.Name}}
	bad.Spec.NodeRegistration.KubeletExtraLabels = []string{"novalue"}
	err = c.Create(ctx, bad)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.nodeRegistration.kubeletExtraLabels[0]"))

	// The schema's enum (CEL/OpenAPI) names the field too.
	badMode := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "mode", Namespace: ns.Name}}
	badMode.Spec.BootMode = "PXE"
	err = c.Create(ctx, badMode)
	g.Expect(err).To(MatchError(ContainSubstring("spec.bootMode")))

	good := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "good", Namespace: ns.Name}}
	good.Spec.SSHAuthorizedKey = "ssh-ed25519 A"
	g.Expect(c.Create(ctx, good)).To(Succeed())
	g.Expect(good.Spec.CpuArchitecture).To(Equal("x86_64"), "defaulted by the schema")
	base := good.DeepCopy()
	good.Spec.SSHAuthorizedKey = "ssh-ed25519 B"
	err = c.Patch(ctx, good, client.MergeFrom(base))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.sshAuthorizedKey"))
}
