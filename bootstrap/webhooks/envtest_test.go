package webhooks_test

// This test installs the generated webhook configurations in a real API
// server and checks that it calls the webhooks: errors name the field.

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/bootstrap/webhooks"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

func TestWebhooksInAPIServer(t *testing.T) {
	envtest.RequireAPIServer(t)
	g := NewWithT(t)
	ctrl.SetLogger(logr.Discard())
	ctx := context.Background()
	env, stop, err := envtest.StartWithWebhooks(ctx, envtest.WebhookEnvOptions{
		Manifests:   []string{"bootstrap/config/webhook/manifests.yaml"},
		AddToScheme: []func(*runtime.Scheme) error{bootstrapv1.AddToScheme},
		Setup:       webhooks.SetupWebhooks,
	})
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()

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
