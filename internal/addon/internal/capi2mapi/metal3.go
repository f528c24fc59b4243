package capi2mapi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	bmv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetal/v1alpha1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// bareMetalProviderSpec converts a Metal3Machine spec (at p) into a
// BareMetalMachineProviderSpec, the inverse of mapi2capi's conversion. The
// user data is the bootstrap data Secret (CAPM3 hands it to the host), not
// the Metal3 spec's userData.
func bareMetalProviderSpec(s *metal3v1.Metal3MachineSpec, in providerInput, p *field.Path, r *report) *bmv1alpha1.BareMetalMachineProviderSpec {
	ps := &bmv1alpha1.BareMetalMachineProviderSpec{
		TypeMeta: metav1.TypeMeta{APIVersion: "baremetal.cluster.k8s.io/v1alpha1", Kind: mapi2capi.BareMetalProviderSpecKind},
		Image:    bmv1alpha1.Image{URL: s.Image.URL, Checksum: s.Image.Checksum},
		HostSelector: bmv1alpha1.HostSelector{
			MatchLabels: cloneMap(s.HostSelector.MatchLabels),
		},
	}
	for _, req := range s.HostSelector.MatchExpressions {
		ps.HostSelector.MatchExpressions = append(ps.HostSelector.MatchExpressions, bmv1alpha1.HostSelectorRequirement{
			Key: req.Key, Operator: req.Operator, Values: append([]string{}, req.Values...),
		})
	}
	if s.CustomDeploy != nil {
		ps.CustomDeploy.Method = s.CustomDeploy.Method
	}
	if in.dataSecretName == nil || *in.dataSecretName == "" {
		r.fail(field.Required(in.dataSecretPath, "MAPI machines boot from a user data Secret: a bootstrap configRef without dataSecretName cannot be expressed"))
	} else {
		ps.UserData = &corev1.SecretReference{Name: *in.dataSecretName}
	}
	if ptr.Deref(s.Image.ChecksumType, "") != "" {
		r.fail(field.Forbidden(p.Child("image", "checksumType"), "the Machine API's bare-metal provider takes the checksum type from the checksum URL"))
	}
	for _, f := range []struct {
		set  bool
		name string
	}{
		{s.UserData != nil, "userData"}, {s.DataTemplate != nil, "dataTemplate"}, {s.MetaData != nil, "metaData"},
		{s.NetworkData != nil, "networkData"}, {s.AutomatedCleaningMode != nil, "automatedCleaningMode"},
	} {
		if f.set {
			r.fail(field.Forbidden(p.Child(f.name), "the Machine API's bare-metal provider has no such field"))
		}
	}
	return ps
}

func cloneMap(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
