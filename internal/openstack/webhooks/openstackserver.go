package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	"github.com/ocp-capi/ocp-capi/internal/webhookutil"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1alpha1-openstackserver,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=openstackservers,versions=v1alpha1,name=validation.openstackserver.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// openStackServerWebhook validates OpenStackServers.
//
// The spec describes one Nova server and is immutable: a different server is
// a new object. The only exception is identityRef, whose region is kept
// immutable by CEL: the credentials may be rotated (an OpenStackMachine's
// identityRef may change, and its controller passes it on to the server).
type openStackServerWebhook struct {
	webhookutil.AllowDelete[*infrav1alpha1.OpenStackServer]
}

var _ admission.Validator[*infrav1alpha1.OpenStackServer] = &openStackServerWebhook{}

// openStackServerImmutable is the detail of each immutability error.
const openStackServerImmutable = "an OpenStackServer's spec is immutable (except identityRef); create a new OpenStackServer instead"

// ValidateCreate checks what the schema cannot: security groups on ports
// with port security disabled.
func (*openStackServerWebhook) ValidateCreate(_ context.Context, s *infrav1alpha1.OpenStackServer) (admission.Warnings, error) {
	warnings, errs := validatePortSecurity(field.NewPath("spec", "ports"), s.Spec.Ports, s.Spec.SecurityGroups)
	return warnings, webhookutil.Invalid(openStackServerGK, s, errs)
}

// ValidateUpdate refuses any change of the spec but identityRef, naming
// every changed field.
func (*openStackServerWebhook) ValidateUpdate(_ context.Context, oldS, newS *infrav1alpha1.OpenStackServer) (admission.Warnings, error) {
	errs := immutabilityErrors(field.NewPath("spec"), &oldS.Spec, &newS.Spec, openStackServerImmutable, "identityRef")
	return nil, webhookutil.Invalid(openStackServerGK, newS, errs)
}
