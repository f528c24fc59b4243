package assisted

import (
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
)

// ValidateConfigSpec checks what the CRD schema cannot in an
// OpenshiftAssistedConfigSpec at p: host variables, labels and the pull
// secret reference.
func ValidateConfigSpec(p *field.Path, s *bootstrapv1.OpenshiftAssistedConfigSpec) field.ErrorList {
	var errs field.ErrorList
	nr := p.Child("nodeRegistration")
	if v := s.NodeRegistration.Name; v != "" {
		if err := ValidateVars(v); err != nil {
			errs = append(errs, field.Invalid(nr.Child("name"), v, err.Error()))
		} else if refs, _ := References(v); len(refs) == 0 {
			for _, msg := range validation.IsDNS1123Subdomain(v) {
				errs = append(errs, field.Invalid(nr.Child("name"), v, "not a hostname: "+msg))
			}
		}
	}
	for i, l := range s.NodeRegistration.KubeletExtraLabels {
		lp := nr.Child("kubeletExtraLabels").Index(i)
		_, value, err := ParseLabel(l)
		if err != nil {
			errs = append(errs, field.Invalid(lp, l, err.Error()))
			continue
		}
		if err := ValidateVars(value); err != nil {
			errs = append(errs, field.Invalid(lp, l, err.Error()))
		} else if refs, _ := References(value); len(refs) == 0 {
			for _, msg := range validation.IsValidLabelValue(value) {
				errs = append(errs, field.Invalid(lp, l, "value: "+msg))
			}
		}
	}
	if v := s.NodeRegistration.ProviderID; v != "" {
		if err := ValidateVars(v); err != nil {
			errs = append(errs, field.Invalid(nr.Child("providerID"), v, err.Error()))
		}
	}
	if s.PullSecretRef != nil && s.PullSecretRef.Name == "" {
		errs = append(errs, field.Required(p.Child("pullSecretRef", "name"), "name the pull secret, or leave pullSecretRef unset to use the ClusterDeployment's"))
	}
	return errs
}
