package webhooks

import (
	"context"
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
)

func TestValidateSpec(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   bootstrapv1.OpenshiftAssistedConfigSpec
		fields []string
	}{
		{name: "empty"},
		{name: "reference example", spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			Name: "$METADATA_NAME", KubeletExtraLabels: []string{"metal3.io/uuid=$METADATA_UUID"}, ProviderID: `openstack://"$METADATA_UUID"`}}},
		{name: "literal values", spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			Name: "node-1.lab", KubeletExtraLabels: []string{"tier=gold", "empty="}}}},
		{name: "unknown variables", spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			Name: "$HOSTNAME", KubeletExtraLabels: []string{"k=$FOO"}, ProviderID: "aws:///${INSTANCE}"}},
			fields: []string{"spec.nodeRegistration.name", "spec.nodeRegistration.kubeletExtraLabels[0]", "spec.nodeRegistration.providerID"}},
		{name: "bad labels", spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			KubeletExtraLabels: []string{"ok=1", "novalue", "bad key=1", "k=bad value"}}},
			fields: []string{"spec.nodeRegistration.kubeletExtraLabels[1]", "spec.nodeRegistration.kubeletExtraLabels[2]", "spec.nodeRegistration.kubeletExtraLabels[3]"}},
		{name: "bad literal hostname", spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: "Not_A_Host"}},
			fields: []string{"spec.nodeRegistration.name"}},
		{name: "empty pull secret name", spec: bootstrapv1.OpenshiftAssistedConfigSpec{PullSecretRef: &corev1.LocalObjectReference{}},
			fields: []string{"spec.pullSecretRef.name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateSpec(field.NewPath("spec"), &tc.spec)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			NewWithT(t).Expect(got).To(ConsistOf(tc.fields), "%v", errs)
		})
	}
}

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
