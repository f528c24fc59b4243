package mapi2capi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// IDs used by the tests; the template's CRD requires UUIDs.
const (
	netID    = "11111111-1111-1111-1111-111111111111"
	net2ID   = "22222222-2222-2222-2222-222222222222"
	subnetID = "33333333-3333-3333-3333-333333333333"
	sub2ID   = "44444444-4444-4444-4444-444444444444"
	sgID     = "55555555-5555-5555-5555-555555555555"
	sg2ID    = "66666666-6666-6666-6666-666666666666"
	sgrpID   = "77777777-7777-7777-7777-777777777777"
)

const (
	testMSName  = "ocp-x7k2p-worker-0"
	testMAPINS  = "openshift-machine-api"
	testCAPINS  = "openshift-cluster-api"
	testCluster = "ocp-x7k2p"
)

// pv is the path of a providerSpec field.
func pv(rest string) string { return "spec.template.spec.providerSpec.value." + rest }

func testInfra() Infra {
	return Infra{
		ClusterName: testCluster,
		Namespace:   testCAPINS,
		Platform:    configv1.OpenStackPlatformType,
		APIVIPs:     []string{"10.0.0.5"},
		IngressVIPs: []string{"10.0.0.7"},
	}
}

// baseOpenStack is a minimal providerSpec that converts without warnings.
func baseOpenStack() mapiv1alpha1.OpenstackProviderSpec {
	return mapiv1alpha1.OpenstackProviderSpec{
		TypeMeta:       metav1.TypeMeta{APIVersion: "machine.openshift.io/v1alpha1", Kind: OpenStackProviderSpecKind},
		CloudsSecret:   &corev1.SecretReference{Name: "openstack-cloud-credentials", Namespace: testMAPINS},
		CloudName:      "openstack",
		Flavor:         "m1.xlarge",
		Image:          "rhcos-4.20",
		UserDataSecret: &corev1.SecretReference{Name: "worker-user-data"},
	}
}

// testMachineSet wraps a providerSpec (any JSON-encodable value, or raw
// bytes) in a MachineSet shaped like the installer's.
func testMachineSet(t testing.TB, providerSpec any) *mapiv1beta1.MachineSet {
	var raw []byte
	switch v := providerSpec.(type) {
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	default:
		var err error
		if raw, err = json.Marshal(providerSpec); err != nil {
			t.Fatal(err)
		}
	}
	sel := map[string]string{
		"machine.openshift.io/cluster-api-cluster":    testCluster,
		"machine.openshift.io/cluster-api-machineset": testMSName,
	}
	tl := map[string]string{
		"machine.openshift.io/cluster-api-cluster":      testCluster,
		"machine.openshift.io/cluster-api-machine-role": "worker",
		"machine.openshift.io/cluster-api-machine-type": "worker",
		"machine.openshift.io/cluster-api-machineset":   testMSName,
	}
	return &mapiv1beta1.MachineSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "machine.openshift.io/v1beta1", Kind: "MachineSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name: testMSName, Namespace: testMAPINS, Generation: 1,
			Labels: map[string]string{"machine.openshift.io/cluster-api-cluster": testCluster},
		},
		Spec: mapiv1beta1.MachineSetSpec{
			Replicas: ptr.To[int32](3),
			Selector: metav1.LabelSelector{MatchLabels: sel},
			Template: mapiv1beta1.MachineTemplateSpec{
				ObjectMeta: mapiv1beta1.ObjectMeta{Labels: tl},
				Spec: mapiv1beta1.MachineSpec{
					ProviderSpec: mapiv1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}},
				},
			},
		},
	}
}

// paths returns the field paths of errs, sorted.
func errPaths(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Field)
	}
	slices.Sort(out)
	return out
}

// warningPaths returns the field path each warning starts with, sorted.
func warningPaths(ws []string) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		p, _, _ := strings.Cut(w, ": ")
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// checkReport compares errors and warnings with the expected field paths.
func checkReport(t *testing.T, warnings []string, errs field.ErrorList, wantWarnings, wantErrs []string) {
	t.Helper()
	slices.Sort(wantWarnings)
	slices.Sort(wantErrs)
	if got := errPaths(errs); !slices.Equal(got, wantErrs) {
		t.Errorf("errors at %q, want %q\n%v", got, wantErrs, errs)
	}
	if got := warningPaths(warnings); !slices.Equal(got, wantWarnings) {
		t.Errorf("warnings at %q, want %q\n%s", got, wantWarnings, strings.Join(warnings, "\n"))
	}
}

func configPlatform(s string) configv1.PlatformType { return configv1.PlatformType(s) }

func sorted(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}

func equalStrings(a, b []string) bool { return slices.Equal(a, b) }

// networkWithSubnets is a network with two subnets and most settings.
func networkWithSubnets() mapiv1alpha1.NetworkParam {
	return mapiv1alpha1.NetworkParam{
		UUID: netID, PortTags: []string{"t"}, VNICType: "direct", Profile: map[string]string{"trusted": "true"},
		Subnets: []mapiv1alpha1.SubnetParam{{UUID: subnetID}, {Filter: mapiv1alpha1.SubnetFilter{Name: "s2"}}},
	}
}
