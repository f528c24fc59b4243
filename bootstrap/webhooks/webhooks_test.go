package webhooks

import (
	"context"
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
)

func TestConfigIsImmutable(t *testing.T) {
	g := NewWithT(t)
	w := &configWebhook{}
	old := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
		SSHAuthorizedKey: "ssh-ed25519 A", NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: "$METADATA_NAME"},
	}}
	same := old.DeepCopy()
	same.Labels = map[string]string{"x": "y"}
	_, err := w.ValidateUpdate(context.Background(), old, same)
	g.Expect(err).NotTo(HaveOccurred(), "metadata may change")

	changed := old.DeepCopy()
	changed.Spec.SSHAuthorizedKey = "ssh-ed25519 B"
	changed.Spec.NodeRegistration.ProviderID = "x"
	changed.Spec.BootMode = bootstrapv1.BootModeLiveISO
	_, err = w.ValidateUpdate(context.Background(), old, changed)
	var status *apierrors.StatusError
	g.Expect(errors.As(err, &status)).To(BeTrue())
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue())
	var fields []string
	for _, c := range status.ErrStatus.Details.Causes {
		fields = append(fields, c.Field)
	}
	g.Expect(fields).To(ConsistOf("spec.bootMode", "spec.nodeRegistration.providerID", "spec.sshAuthorizedKey"))

	// Absent and empty are the same thing.
	empty := old.DeepCopy()
	empty.Spec.AdditionalNTPSources = []string{}
	_, err = w.ValidateUpdate(context.Background(), old, empty)
	g.Expect(err).NotTo(HaveOccurred())
}

func TestIgnitionOverrideWarning(t *testing.T) {
	g := NewWithT(t)
	c := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "c",
		Annotations: map[string]string{bootstrapv1.IgnitionOverrideAnnotation: "{}"}}}
	warnings, err := (&configWebhook{}).ValidateCreate(context.Background(), c)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(warnings).To(HaveLen(1))
	g.Expect(strings.Join(warnings, "")).To(ContainSubstring("not supported"))
}

func TestTemplateWebhook(t *testing.T) {
	g := NewWithT(t)
	w := &templateWebhook{}
	tmpl := &bootstrapv1.OpenshiftAssistedConfigTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}}
	tmpl.Spec.Template.Spec.NodeRegistration.Name = "$NOPE"
	_, err := w.ValidateCreate(context.Background(), tmpl)
	g.Expect(err).To(MatchError(ContainSubstring("spec.template.spec.nodeRegistration.name")))
	ok := tmpl.DeepCopy()
	ok.Spec.Template.Spec.NodeRegistration.Name = "$METADATA_NAME"
	_, err = w.ValidateUpdate(context.Background(), tmpl, ok)
	g.Expect(err).NotTo(HaveOccurred(), "templates are mutable")
}
