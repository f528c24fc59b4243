package assisted

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
)

func TestValidateConfigSpec(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   bootstrapv1.OpenshiftAssistedConfigSpec
		fields []string
	}{
		{name: "empty"},
		{name: "CAPOA's example", spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			Name: "$METADATA_NAME", KubeletExtraLabels: []string{"metal3.io/uuid=$METADATA_UUID"}, ProviderID: `openstack://"$METADATA_UUID"`}}},
		{name: "literal values", spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			Name: "node-1.lab", KubeletExtraLabels: []string{"tier=gold", "empty="}}}},
		{name: "unknown variables", spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			Name: "$HOSTNAME", KubeletExtraLabels: []string{"k=$FOO"}, ProviderID: "aws:///${INSTANCE}"}},
			fields: []string{"spec.nodeRegistration.name", "spec.nodeRegistration.kubeletExtraLabels[0]", "spec.nodeRegistration.providerID"}},
		{name: "bad labels", spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			KubeletExtraLabels: []string{"ok=1", "novalue", "bad key=1", "k=bad value"}}},
			fields: []string{"spec.nodeRegistration.kubeletExtraLabels[1]", "spec.nodeRegistration.kubeletExtraLabels[2]", "spec.nodeRegistration.kubeletExtraLabels[3]"}},
		{name: "bad literal hostname", spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: "Not_A_Host"}},
			fields: []string{"spec.nodeRegistration.name"}},
		{name: "empty pull secret name", spec: bootstrapv1.OpenshiftAssistedConfigSpec{PullSecretRef: &corev1.LocalObjectReference{}},
			fields: []string{"spec.pullSecretRef.name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateConfigSpec(field.NewPath("spec"), &tc.spec)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			NewWithT(t).Expect(got).To(ConsistOf(tc.fields), "%v", errs)
		})
	}
}
