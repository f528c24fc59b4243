package mapi2capi

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bmv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetal/v1alpha1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// convertMetal3 converts a BareMetalMachineProviderSpec into a
// Metal3MachineTemplate.
func convertMetal3(raw []byte, mapiNS string, infra Infra, r *report) *provider {
	var ps bmv1alpha1.BareMetalMachineProviderSpec
	if !decodeProviderSpec(raw, &ps, r.providerSpec(), r) {
		return nil
	}
	p := r.providerSpec()
	if !reflect.DeepEqual(ps.ObjectMeta, metav1.ObjectMeta{}) {
		r.warn(p.Child("metadata"), "ignored by the bare-metal provider; not converted")
	}
	spec := metal3v1.Metal3MachineSpec{
		Image: metal3v1.Image{URL: ps.Image.URL, Checksum: ps.Image.Checksum},
		HostSelector: metal3v1.HostSelector{
			MatchLabels: copyMap(ps.HostSelector.MatchLabels),
		},
	}
	if ps.CustomDeploy.Method != "" {
		spec.CustomDeploy = &metal3v1.CustomDeploy{Method: ps.CustomDeploy.Method}
	} else {
		// Without a custom deploy method the image is written to disk.
		if ps.Image.URL == "" {
			r.fail(field.Required(p.Child("image", "url"), "required unless customDeploy.method is set"))
		}
		if ps.Image.Checksum == "" {
			r.fail(field.Required(p.Child("image", "checksum"), "required unless customDeploy.method is set"))
		}
	}
	for i, req := range ps.HostSelector.MatchExpressions {
		if req.Key == "" {
			r.fail(field.Required(p.Child("hostSelector", "matchExpressions").Index(i).Child("key"), "a requirement needs a key"))
			continue
		}
		spec.HostSelector.MatchExpressions = append(spec.HostSelector.MatchExpressions, metal3v1.HostSelectorRequirement{
			Key: req.Key, Operator: req.Operator, Values: append([]string{}, req.Values...),
		})
	}
	// The user data goes to the CAPI Machine's bootstrap data secret;
	// CAPM3 hands it to the host from there.
	dataSecret := userDataSecretName(ps.UserData, p.Child("userData"), mapiNS, infra.Namespace, r)

	tmpl := &metal3v1.Metal3MachineTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: metal3v1.GroupVersion.String(), Kind: Metal3MachineTemplateKind},
		Spec:     metal3v1.Metal3MachineTemplateSpec{Template: metal3v1.Metal3MachineTemplateResource{Spec: spec}},
	}
	return &provider{
		template: tmpl, spec: tmpl.Spec, kind: Metal3MachineTemplateKind, dataSecretName: dataSecret,
		machine: &metal3v1.Metal3Machine{
			TypeMeta: metav1.TypeMeta{APIVersion: metal3v1.GroupVersion.String(), Kind: Metal3MachineKind},
			Spec:     *spec.DeepCopy(),
		},
		machineKind: Metal3MachineKind,
	}
}

func copyMap(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
