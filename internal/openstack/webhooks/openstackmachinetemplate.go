package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/webhookutil"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta2-openstackmachinetemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=openstackmachinetemplates,versions=v1beta2,name=validation.openstackmachinetemplate.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// openStackMachineTemplateWebhook validates OpenStackMachineTemplates.
//
// spec.template.spec is immutable: machines made from a template must all
// look alike, so a change is a new template. CAPI's topology controller
// dry-runs changes to templates (dry-run requests carrying the
// topology.cluster.x-k8s.io/dry-run annotation) to compute its diffs; the
// CAPI contract for InfraMachineTemplates requires letting them through.
type openStackMachineTemplateWebhook struct {
	webhookutil.AllowDelete[*infrav1.OpenStackMachineTemplate]
}

var _ admission.Validator[*infrav1.OpenStackMachineTemplate] = &openStackMachineTemplateWebhook{}

const (
	openStackMachineTemplateImmutable = "an OpenStackMachineTemplate's spec.template.spec is immutable; create a new template " +
		"and point the MachineDeployment or control plane at it (https://cluster-api.sigs.k8s.io/tasks/change-machine-template)"
	providerIDInTemplate = "cannot be set in a template: every machine gets its own providerID"
)

// ValidateCreate checks what the schema cannot: no providerID (it would be
// shared by every machine) and no security groups on ports with port
// security disabled, since every OpenStackMachine made from the template
// would be refused.
func (*openStackMachineTemplateWebhook) ValidateCreate(_ context.Context, t *infrav1.OpenStackMachineTemplate) (admission.Warnings, error) {
	specPath := field.NewPath("spec", "template", "spec")
	spec := &t.Spec.Template.Spec
	warnings, errs := validatePortSecurity(specPath.Child("ports"), spec.Ports, spec.SecurityGroups)
	if spec.ProviderID != "" {
		errs = append(errs, field.Forbidden(specPath.Child("providerID"), providerIDInTemplate))
	}
	return warnings, webhookutil.Invalid(openStackMachineTemplateGK, t, errs)
}

// ValidateUpdate refuses changes of spec.template.spec, naming every
// changed field, except for CAPI topology dry-runs.
func (*openStackMachineTemplateWebhook) ValidateUpdate(ctx context.Context, oldT, newT *infrav1.OpenStackMachineTemplate) (admission.Warnings, error) {
	return nil, templateImmutable(ctx, openStackMachineTemplateGK, newT, &oldT.Spec.Template.Spec, &newT.Spec.Template.Spec,
		openStackMachineTemplateImmutable)
}
