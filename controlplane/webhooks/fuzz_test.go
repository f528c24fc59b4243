package webhooks

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/internal/webhookutil/webhookfuzz"
)

// FuzzControlPlaneWebhooks validates any OpenshiftAssistedControlPlane
// (even which) or OpenshiftAssistedControlPlaneTemplate (odd) the types
// accept, status included, created and updated by a JSON merge patch. Both
// webhooks: no panic, the same verdict twice, the input unchanged, refusals
// that name fields. The control plane: a write of metadata only (CAPI
// core's finalizers and owner references) is always let through, even on
// an object the rules now refuse; a changed spec (or override annotation)
// that is let through is valid. The template (mutable): an update answers
// as a create of the new template.
//
//	go test ./controlplane/webhooks -run '^$' -fuzz '^FuzzControlPlaneWebhooks$' -fuzztime 10m -parallel 1
func FuzzControlPlaneWebhooks(f *testing.F) {
	valid := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Spec: validSpec()}
	installed := valid.DeepCopy()
	installed.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	installed.Status.DistributionVersion = "4.19.0"
	installing := valid.DeepCopy()
	installing.Status.Conditions = []metav1.Condition{{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse,
		Reason: controlplanev1.ControlPlaneInstallingReason}}
	annotated := valid.DeepCopy()
	annotated.Annotations = map[string]string{controlplanev1.InstallConfigOverrideAnnotation: `{"fips":true}`}
	outdated := valid.DeepCopy()
	outdated.Spec.DistributionVersion = "4.12.0"
	tmpl := &controlplanev1.OpenshiftAssistedControlPlaneTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}}
	tmpl.Spec.Template.Spec = validSpec()
	for _, seed := range []struct {
		obj   any
		patch string
	}{
		{valid, `{}`},
		{valid, `{"metadata":{"finalizers":["x"]},"spec":{"distributionVersion":"4.12.0"}}`},
		{valid, `{"spec":{"replicas":5,"distributionVersion":"4.17.3","version":"v1.29.0"}}`},
		{valid, `{"spec":{"config":{"apiVIPs":["10.0.0.5","::1"],"ingressVIPs":["10.0.0.5"],"baseDomain":"Example.com"}}}`},
		{valid, `{"spec":{"config":{"releaseImage":"quay.io:443/ocp","capabilities":{"baselineCapability":"v4.x"}}}}`},
		{outdated, `{"metadata":{"finalizers":["x"]}}`},
		{installed, `{"spec":{"distributionVersion":"4.18.9","config":{"sshAuthorizedKey":"ssh-ed25519 B"}}}`},
		{installed, `{"spec":{"distributionVersion":"4.20.1","replicas":5}}`},
		{installing, `{"spec":{"config":{"proxy":{"httpProxy":"http://proxy:3128"}}}}`},
		{annotated, `{"metadata":{"annotations":{"` + controlplanev1.InstallConfigOverrideAnnotation + `":" null "}}}`},
		{tmpl, `{"spec":{"template":{"spec":{"distributionVersion":"4.19"}}}}`},
		{tmpl, `{"spec":{"template":{"metadata":{"annotations":{"` + controlplanev1.InstallConfigOverrideAnnotation + `":"[]"}}}}}`},
	} {
		which := uint8(0)
		if _, ok := seed.obj.(*controlplanev1.OpenshiftAssistedControlPlaneTemplate); ok {
			which = 1
		}
		f.Add(which, webhookfuzz.Seed(f, seed.obj), []byte(seed.patch))
	}
	f.Fuzz(func(t *testing.T, which uint8, obj, patch []byte) {
		if which%2 == 0 {
			fuzzControlPlane(t, obj, patch)
			return
		}
		oldT, ok := webhookfuzz.Decode(&controlplanev1.OpenshiftAssistedControlPlaneTemplate{}, obj)
		if !ok {
			return
		}
		w := &templateWebhook{}
		webhookfuzz.Create(t, w, oldT)
		newT, ok := webhookfuzz.Patched(&controlplanev1.OpenshiftAssistedControlPlaneTemplate{}, obj, patch)
		if !ok {
			return
		}
		webhookfuzz.Same(t, "a template's update and a create", webhookfuzz.Update(t, w, oldT, newT), webhookfuzz.Create(t, w, newT))
	})
}

func fuzzControlPlane(t *testing.T, obj, patch []byte) {
	oldC, ok := webhookfuzz.Decode(&controlplanev1.OpenshiftAssistedControlPlane{}, obj)
	if !ok {
		return
	}
	w := &controlPlaneWebhook{}
	webhookfuzz.Create(t, w, oldC)
	metadataOnly := oldC.DeepCopy()
	metadataOnly.Finalizers = append(metadataOnly.Finalizers, controlplanev1.ControlPlaneFinalizer)
	metadataOnly.Labels = map[string]string{"cluster.x-k8s.io/cluster-name": "demo"}
	if v := webhookfuzz.Update(t, w, oldC, metadataOnly); !v.Allowed() || len(v.Warnings) > 0 {
		t.Fatalf("a write of metadata only was refused or warned: %v %v", v.Warnings, v.Err)
	}
	newC, ok := webhookfuzz.Patched(&controlplanev1.OpenshiftAssistedControlPlane{}, obj, patch)
	if !ok {
		return
	}
	if !webhookfuzz.Update(t, w, oldC, newC).Allowed() {
		return
	}
	if !reflect.DeepEqual(oldC.Spec, newC.Spec) {
		if errs := ValidateSpec(field.NewPath("spec"), &newC.Spec); len(errs) > 0 {
			t.Fatalf("an update let through an invalid spec: %v", errs.ToAggregate())
		}
	}
	a := controlplanev1.InstallConfigOverrideAnnotation
	if oldC.Annotations[a] != newC.Annotations[a] {
		if errs := validateAnnotations(newC.Annotations); len(errs) > 0 {
			t.Fatalf("an update let through an invalid annotation: %v", errs.ToAggregate())
		}
	}
}
