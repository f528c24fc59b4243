package webhooks

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/internal/jsonfields"
	"github.com/ocp-capi/ocp-capi/internal/webhookutil/webhookfuzz"
)

// FuzzBootstrapWebhooks validates any OpenshiftAssistedConfig (even which)
// or OpenshiftAssistedConfigTemplate (odd) the types accept, created and
// updated by a JSON merge patch. Both webhooks: no panic, the same verdict
// twice, the input unchanged, refusals that name fields. The config: an
// update that passes changes no spec field and passes a create of the new
// config, and an update that changes nothing answers as a create; the template (mutable): an update
// answers as a create of the new template.
//
//	go test ./bootstrap/webhooks -run '^$' -fuzz '^FuzzBootstrapWebhooks$' -fuzztime 10m -parallel 1
func FuzzBootstrapWebhooks(f *testing.F) {
	config := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
		SSHAuthorizedKey: "ssh-ed25519 A", NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: "$METADATA_NAME"},
	}}
	warned := config.DeepCopy()
	warned.Annotations = map[string]string{bootstrapv1.IgnitionOverrideAnnotation: "{}"}
	tmpl := &bootstrapv1.OpenshiftAssistedConfigTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}}
	tmpl.Spec.Template.Spec = config.Spec
	for _, seed := range []struct {
		obj   any
		patch string
	}{
		{config, `{}`},
		{config, `{"metadata":{"labels":{"x":"y"}}}`},
		{config, `{"spec":{"sshAuthorizedKey":"ssh-ed25519 B","bootMode":"LiveISO","nodeRegistration":{"providerID":"x"}}}`},
		{config, `{"spec":{"bootMode":"LiveISO"}}`},
		{config, `{"spec":{"additionalNTPSources":[]}}`},
		{config, `{"spec":{"nodeRegistration":{"name":"$NOPE","kubeletExtraLabels":["a"]}}}`},
		{warned, `{"metadata":{"annotations":null}}`},
		{tmpl, `{"spec":{"template":{"spec":{"nodeRegistration":{"name":"$NOPE"}}}}}`},
		{tmpl, `{"spec":{"template":{"metadata":{"annotations":{"` + bootstrapv1.IgnitionOverrideAnnotation + `":"{}"}}}}}`},
	} {
		which := uint8(0)
		if _, ok := seed.obj.(*bootstrapv1.OpenshiftAssistedConfigTemplate); ok {
			which = 1
		}
		f.Add(which, webhookfuzz.Seed(f, seed.obj), []byte(seed.patch))
	}
	f.Fuzz(func(t *testing.T, which uint8, obj, patch []byte) {
		if which%2 == 0 {
			oldC, ok := webhookfuzz.Decode(&bootstrapv1.OpenshiftAssistedConfig{}, obj)
			if !ok {
				return
			}
			w := &configWebhook{}
			created := webhookfuzz.Create(t, w, oldC)
			webhookfuzz.Same(t, "an update that changes nothing and a create", webhookfuzz.Update(t, w, oldC, oldC.DeepCopy()), created)
			newC, ok := webhookfuzz.Patched(&bootstrapv1.OpenshiftAssistedConfig{}, obj, patch)
			if !ok {
				return
			}
			if !webhookfuzz.Update(t, w, oldC, newC).Allowed() {
				return
			}
			if changed := jsonfields.Changed(&oldC.Spec, &newC.Spec); len(changed) > 0 {
				t.Fatalf("an update changed the immutable spec: %v", changed)
			}
			if !webhookfuzz.Create(t, w, newC).Allowed() {
				t.Fatalf("an update let through a config a create refuses")
			}
			return
		}
		oldT, ok := webhookfuzz.Decode(&bootstrapv1.OpenshiftAssistedConfigTemplate{}, obj)
		if !ok {
			return
		}
		w := &templateWebhook{}
		webhookfuzz.Create(t, w, oldT)
		newT, ok := webhookfuzz.Patched(&bootstrapv1.OpenshiftAssistedConfigTemplate{}, obj, patch)
		if !ok {
			return
		}
		webhookfuzz.Same(t, "a template's update and a create", webhookfuzz.Update(t, w, oldT, newT), webhookfuzz.Create(t, w, newT))
	})
}
