// Package webhooks holds the validating admission webhooks of the bootstrap
// provider: OpenshiftAssistedConfig and OpenshiftAssistedConfigTemplate.
//
// The CRD schema (enums, patterns) does the simple checks. These webhooks
// add, with errors that name the field:
//
//   - host variables in nodeRegistration ($METADATA_UUID and the like) must
//     be ones the controller can resolve, and labels must be key=value;
//   - an OpenshiftAssistedConfig's spec is immutable (as in CAPOA, the
//     provider this one replaces): a machine's discovery environment is
//     fixed once it exists;
//   - CAPOA's install-time ignition-override annotation is not supported: a
//     warning says so rather than ignoring it silently (docs/bootstrap.md,
//     Differences from CAPOA).
//
// The configurations are generated from the markers into
// bootstrap/config/webhook/manifests.yaml.
package webhooks

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/internal/jsonfields"
	"github.com/ocp-capi/ocp-capi/internal/validation/assisted"
	"github.com/ocp-capi/ocp-capi/internal/webhookutil"
)

// SetupWebhooks registers the validating webhooks with the manager.
func SetupWebhooks(mgr ctrl.Manager) error {
	return webhookutil.Register(mgr,
		webhookutil.Validator(&bootstrapv1.OpenshiftAssistedConfig{}, &configWebhook{}),
		webhookutil.Validator(&bootstrapv1.OpenshiftAssistedConfigTemplate{}, &templateWebhook{}))
}

var (
	configGK   = bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfig").GroupKind()
	templateGK = bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfigTemplate").GroupKind()
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-bootstrap-cluster-x-k8s-io-v1alpha2-openshiftassistedconfig,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,versions=v1alpha2,name=validation.openshiftassistedconfig.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

type configWebhook struct {
	webhookutil.AllowDelete[*bootstrapv1.OpenshiftAssistedConfig]
}

var _ admission.Validator[*bootstrapv1.OpenshiftAssistedConfig] = &configWebhook{}

const immutable = "an OpenshiftAssistedConfig's spec is immutable; create a new config (a MachineDeployment rollout does)"

func (*configWebhook) ValidateCreate(_ context.Context, c *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	errs := assisted.ValidateConfigSpec(field.NewPath("spec"), &c.Spec)
	return annotationWarnings(c.Annotations), webhookutil.Invalid(configGK, c, errs)
}

func (*configWebhook) ValidateUpdate(_ context.Context, oldC, newC *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	errs := changedFields(field.NewPath("spec"), &oldC.Spec, &newC.Spec, immutable)
	if len(errs) == 0 {
		errs = assisted.ValidateConfigSpec(field.NewPath("spec"), &newC.Spec)
	}
	return annotationWarnings(newC.Annotations), webhookutil.Invalid(configGK, newC, errs)
}

// +kubebuilder:webhook:verbs=create;update,path=/validate-bootstrap-cluster-x-k8s-io-v1alpha2-openshiftassistedconfigtemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigtemplates,versions=v1alpha2,name=validation.openshiftassistedconfigtemplate.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// templateWebhook validates templates. They stay mutable: a change applies
// to the configs made from then on, as with CAPI's own templates.
type templateWebhook struct {
	webhookutil.AllowDelete[*bootstrapv1.OpenshiftAssistedConfigTemplate]
}

var _ admission.Validator[*bootstrapv1.OpenshiftAssistedConfigTemplate] = &templateWebhook{}

func (*templateWebhook) ValidateCreate(_ context.Context, t *bootstrapv1.OpenshiftAssistedConfigTemplate) (admission.Warnings, error) {
	return annotationWarnings(t.Spec.Template.ObjectMeta.Annotations),
		webhookutil.Invalid(templateGK, t, assisted.ValidateConfigSpec(field.NewPath("spec", "template", "spec"), &t.Spec.Template.Spec))
}

func (w *templateWebhook) ValidateUpdate(ctx context.Context, _, newT *bootstrapv1.OpenshiftAssistedConfigTemplate) (admission.Warnings, error) {
	return w.ValidateCreate(ctx, newT)
}

// changedFields returns one Forbidden error per spec field (and per
// nodeRegistration field) that differs between old and new.
func changedFields(p *field.Path, oldSpec, newSpec *bootstrapv1.OpenshiftAssistedConfigSpec, detail string) field.ErrorList {
	var errs field.ErrorList
	oldM, newM := jsonfields.Of(oldSpec), jsonfields.Of(newSpec)
	for _, k := range jsonfields.Diff(oldM, newM) {
		if k == "nodeRegistration" {
			errs = append(errs, changedSubfields(p.Child(k), oldM[k], newM[k], detail)...)
			continue
		}
		errs = append(errs, field.Forbidden(p.Child(k), detail))
	}
	return errs
}

// changedSubfields reports the changed keys of two JSON objects.
func changedSubfields(p *field.Path, oldV, newV any, detail string) field.ErrorList {
	o, _ := oldV.(map[string]any)
	n, _ := newV.(map[string]any)
	var errs field.ErrorList
	for _, k := range jsonfields.Diff(o, n) {
		errs = append(errs, field.Forbidden(p.Child(k), detail))
	}
	if len(errs) == 0 {
		errs = append(errs, field.Forbidden(p, detail))
	}
	return errs
}

func annotationWarnings(a map[string]string) admission.Warnings {
	if _, ok := a[bootstrapv1.IgnitionOverrideAnnotation]; ok {
		return admission.Warnings{fmt.Sprintf("annotation %s is not supported by this provider and is ignored; "+
			"use spec.preBootstrapCommands/postBootstrapCommands, or %s for the discovery boot",
			bootstrapv1.IgnitionOverrideAnnotation, bootstrapv1.DiscoveryIgnitionOverrideAnnotation)}
	}
	return nil
}
