package mapi2capi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bmv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetal/v1alpha1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

func baseBareMetal() bmv1alpha1.BareMetalMachineProviderSpec {
	return bmv1alpha1.BareMetalMachineProviderSpec{
		TypeMeta: metav1.TypeMeta{APIVersion: "baremetal.cluster.k8s.io/v1alpha1", Kind: BareMetalProviderSpecKind},
		Image:    bmv1alpha1.Image{URL: "http://172.22.0.3:6181/images/rhcos.qcow2", Checksum: "http://172.22.0.3:6181/images/rhcos.qcow2.md5sum"},
		UserData: &corev1.SecretReference{Name: "worker-user-data-managed"},
	}
}

// TestMetal3 covers every field of the bare-metal providerSpec.
func TestMetal3(t *testing.T) {
	tests := []struct {
		name         string
		mutate       func(*bmv1alpha1.BareMetalMachineProviderSpec)
		want         func(*metal3v1.Metal3MachineSpec)
		wantWarnings []string
		wantErrs     []string
	}{
		{name: "image and userData"},
		{
			name: "hostSelector",
			mutate: func(ps *bmv1alpha1.BareMetalMachineProviderSpec) {
				ps.HostSelector = bmv1alpha1.HostSelector{
					MatchLabels:      map[string]string{"rack": "r1"},
					MatchExpressions: []bmv1alpha1.HostSelectorRequirement{{Key: "size", Operator: selection.In, Values: []string{"large"}}},
				}
			},
			want: func(s *metal3v1.Metal3MachineSpec) {
				s.HostSelector = metal3v1.HostSelector{
					MatchLabels:      map[string]string{"rack": "r1"},
					MatchExpressions: []metal3v1.HostSelectorRequirement{{Key: "size", Operator: selection.In, Values: []string{"large"}}},
				}
			},
		},
		{
			name: "customDeploy without image",
			mutate: func(ps *bmv1alpha1.BareMetalMachineProviderSpec) {
				ps.Image = bmv1alpha1.Image{}
				ps.CustomDeploy.Method = "install_coreos"
			},
			want: func(s *metal3v1.Metal3MachineSpec) {
				s.Image = metal3v1.Image{}
				s.CustomDeploy = &metal3v1.CustomDeploy{Method: "install_coreos"}
			},
		},
		{
			name:     "image required without customDeploy",
			mutate:   func(ps *bmv1alpha1.BareMetalMachineProviderSpec) { ps.Image = bmv1alpha1.Image{} },
			wantErrs: []string{pv("image.url"), pv("image.checksum")},
		},
		{
			name:     "userData required",
			mutate:   func(ps *bmv1alpha1.BareMetalMachineProviderSpec) { ps.UserData = nil },
			wantErrs: []string{pv("userData.name")},
		},
		{
			name:         "userData in another namespace; metadata",
			mutate:       func(ps *bmv1alpha1.BareMetalMachineProviderSpec) { ps.UserData.Namespace = "x"; ps.Name = "n" },
			wantWarnings: []string{pv("userData.namespace"), pv("metadata")},
		},
		{
			name: "a requirement without a key",
			mutate: func(ps *bmv1alpha1.BareMetalMachineProviderSpec) {
				ps.HostSelector.MatchExpressions = []bmv1alpha1.HostSelectorRequirement{{Operator: selection.Exists}}
			},
			wantErrs: []string{pv("hostSelector.matchExpressions[0].key")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := baseBareMetal()
			if tt.mutate != nil {
				tt.mutate(&ps)
			}
			infra := testInfra()
			infra.Platform = "BareMetal"
			capi, tmpl, warnings, errs := MachineSet(testMachineSet(t, ps), infra)
			checkReport(t, warnings, errs, tt.wantWarnings, tt.wantErrs)
			if len(errs) > 0 {
				return
			}
			m3mt, ok := tmpl.(*metal3v1.Metal3MachineTemplate)
			if !ok {
				t.Fatalf("template is a %T", tmpl)
			}
			want := metal3v1.Metal3MachineSpec{Image: metal3v1.Image{URL: baseBareMetal().Image.URL, Checksum: baseBareMetal().Image.Checksum}}
			if tt.want != nil {
				tt.want(&want)
			}
			if diff := cmp.Diff(want, m3mt.Spec.Template.Spec); diff != "" {
				t.Errorf("template spec (-want +got):\n%s", diff)
			}
			if m3mt.APIVersion != "infrastructure.cluster.x-k8s.io/v1beta1" || m3mt.Kind != Metal3MachineTemplateKind || m3mt.Spec.NodeReuse {
				t.Errorf("template %s %s nodeReuse %v", m3mt.APIVersion, m3mt.Kind, m3mt.Spec.NodeReuse)
			}
			ref := capi.Spec.Template.Spec.InfrastructureRef
			if ref != (clusterv1.ContractVersionedObjectReference{APIGroup: InfrastructureGroup, Kind: Metal3MachineTemplateKind, Name: m3mt.Name}) {
				t.Errorf("infrastructureRef %+v", ref)
			}
			if ptr.Deref(capi.Spec.Template.Spec.Bootstrap.DataSecretName, "") != ps.UserData.Name || capi.Spec.Template.Spec.FailureDomain != "" {
				t.Errorf("bootstrap %v failureDomain %q", capi.Spec.Template.Spec.Bootstrap.DataSecretName, capi.Spec.Template.Spec.FailureDomain)
			}
		})
	}
}
