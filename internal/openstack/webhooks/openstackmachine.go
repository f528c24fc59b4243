package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/webhookutil"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta2-openstackmachine,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines,versions=v1beta2,name=validation.openstackmachine.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// openStackMachineWebhook validates OpenStackMachines.
//
// The spec is immutable except:
//   - providerID, which the controller sets once (from empty) and which then
//     never changes;
//   - identityRef, so that credentials can be rotated (CAPO allows it too;
//     its region stays immutable through a CEL rule).
type openStackMachineWebhook struct {
	webhookutil.AllowDelete[*infrav1.OpenStackMachine]
}

var _ admission.Validator[*infrav1.OpenStackMachine] = &openStackMachineWebhook{}

const (
	openStackMachineImmutable = "an OpenStackMachine's spec is immutable (except providerID, set once, and identityRef); " +
		"to change a machine, replace it, for example by pointing its MachineDeployment at a new OpenStackMachineTemplate"
	providerIDSetOnce = "providerID can be set once and cannot be changed afterwards"
)

// ValidateCreate checks what the schema cannot: security groups on ports
// with port security disabled.
func (*openStackMachineWebhook) ValidateCreate(_ context.Context, m *infrav1.OpenStackMachine) (admission.Warnings, error) {
	warnings, errs := validatePortSecurity(field.NewPath("spec", "ports"), m.Spec.Ports, m.Spec.SecurityGroups)
	return warnings, webhookutil.Invalid(openStackMachineGK, m, errs)
}

// ValidateUpdate refuses changes of immutable fields, naming every changed
// field.
func (*openStackMachineWebhook) ValidateUpdate(_ context.Context, oldM, newM *infrav1.OpenStackMachine) (admission.Warnings, error) {
	specPath := field.NewPath("spec")
	errs := immutabilityErrors(specPath, &oldM.Spec, &newM.Spec, openStackMachineImmutable, "providerID", "identityRef")
	if oldM.Spec.ProviderID != "" && newM.Spec.ProviderID != oldM.Spec.ProviderID {
		errs = append(errs, field.Forbidden(specPath.Child("providerID"), providerIDSetOnce))
	}
	return nil, webhookutil.Invalid(openStackMachineGK, newM, errs)
}
