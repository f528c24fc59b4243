package mapi2capi

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// FuzzMachine feeds arbitrary providerSpecs, names, provider IDs, phases
// and BareMetalHost annotations to the Machine conversion: no panic, the
// same result twice, the input unchanged, and objects exactly when there is
// no error, both named after the MAPI Machine.
//
//	go test ./internal/addon/internal/mapi2capi -run '^$' -fuzz '^FuzzMachine$' -fuzztime 60s
func FuzzMachine(f *testing.F) {
	for _, s := range []struct {
		spec, name, providerID, phase, host string
		platform                            uint8
	}{
		{`{"kind":"OpenstackProviderSpec","flavor":"f","image":"i","userDataSecret":{"name":"u"}}`, "worker-0", "openstack:///0b5e", "Running", "", 0},
		{`{"kind":"OpenstackProviderSpec","flavor":"f","image":"","rootVolume":{"sourceUUID":"i","diskSize":30}}`, "worker-1", "", "Provisioning", "", 0},
		{`{"kind":"BareMetalMachineProviderSpec","image":{"url":"u","checksum":"c"},"userData":{"name":"u"}}`, "bm-0", "metal3://ns/host/uid", "Running", "openshift-machine-api/host-0", 1},
		{`{"kind":"BareMetalMachineProviderSpec"}`, "bm-1", "", "Failed", "other/host", 1},
		{`null`, "", "", "", "", 2},
	} {
		f.Add(s.spec, s.name, s.providerID, s.phase, s.host, s.platform)
	}
	f.Fuzz(func(t *testing.T, spec, name, providerID, phase, host string, platform uint8) {
		ms := testMachineSet(t, spec)
		m := &mapiv1beta1.Machine{
			TypeMeta:   metav1.TypeMeta{APIVersion: "machine.openshift.io/v1beta1", Kind: "Machine"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testMAPINS, Labels: ms.Spec.Template.Labels},
			Spec:       *ms.Spec.Template.Spec.DeepCopy(),
		}
		if providerID != "" {
			m.Spec.ProviderID = ptr.To(providerID)
		}
		if phase != "" {
			m.Status.Phase = ptr.To(phase)
		}
		if host != "" {
			m.Annotations = map[string]string{HostAnnotation: host}
		}
		infra := testInfra()
		infra.Platform = []configv1.PlatformType{configv1.OpenStackPlatformType, configv1.BareMetalPlatformType, ""}[int(platform)%3]
		before := m.DeepCopy()

		capi1, im1, w1, e1 := Machine(m, infra)
		capi2, im2, w2, e2 := Machine(m.DeepCopy(), infra)
		if !reflect.DeepEqual(capi1, capi2) || !reflect.DeepEqual(im1, im2) || !reflect.DeepEqual(w1, w2) || !reflect.DeepEqual(e1, e2) {
			t.Fatalf("two conversions of the same input differ")
		}
		if !reflect.DeepEqual(before, m) {
			t.Fatalf("the input was modified")
		}
		if len(e1) > 0 {
			if capi1 != nil || im1 != nil {
				t.Fatalf("objects returned with errors")
			}
			return
		}
		if capi1 == nil || im1 == nil {
			t.Fatalf("no objects and no errors")
		}
		if capi1.Name != name || im1.GetName() != name || capi1.Namespace != infra.Namespace || im1.GetNamespace() != infra.Namespace {
			t.Fatalf("converted to %s/%s and %s/%s, want %s/%s", capi1.Namespace, capi1.Name, im1.GetNamespace(), im1.GetName(), infra.Namespace, name)
		}
	})
}
