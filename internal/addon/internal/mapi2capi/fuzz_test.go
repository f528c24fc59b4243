package mapi2capi

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// FuzzMachineSet feeds arbitrary providerSpecs (and MachineSet names and
// platforms) to the conversion. It must never panic, must give the same
// result twice (so the same template name), must not modify its input, and a
// successful conversion must name its template after the spec's hash, a name
// that survives a JSON round trip of the spec (what the API server stores).
//
// The seed corpus is in testdata/fuzz/FuzzMachineSet; run it with
//
//	go test ./internal/addon/internal/mapi2capi -run FuzzMachineSet -fuzz FuzzMachineSet -fuzztime 60s
func FuzzMachineSet(f *testing.F) {
	for _, seed := range []struct {
		spec, name string
		platform   uint8
	}{
		{`{"kind":"OpenstackProviderSpec","flavor":"f","image":"i","userDataSecret":{"name":"u"}}`, "ms", 0},
		{`{"flavor":"f","image":"","rootVolume":{"sourceUUID":"i","diskSize":30},"userDataSecret":{"name":"u"},"networks":[{"subnets":[{"filter":{"name":"n"}}]}]}`, "worker", 0},
		{`{"kind":"BareMetalMachineProviderSpec","image":{"url":"u","checksum":"c"},"userData":{"name":"u"}}`, "bm", 1},
	} {
		f.Add(seed.spec, seed.name, seed.platform)
	}
	f.Fuzz(func(t *testing.T, spec, name string, platform uint8) {
		ms := testMachineSet(t, spec)
		ms.Name = name
		infra := testInfra()
		infra.Platform = []configv1.PlatformType{configv1.OpenStackPlatformType, configv1.BareMetalPlatformType, ""}[int(platform)%3]
		before := ms.DeepCopy()

		capi1, tmpl1, w1, e1 := MachineSet(ms, infra)
		capi2, tmpl2, w2, e2 := MachineSet(ms.DeepCopy(), infra)
		if !reflect.DeepEqual(capi1, capi2) || !reflect.DeepEqual(tmpl1, tmpl2) || !reflect.DeepEqual(w1, w2) || !reflect.DeepEqual(e1, e2) {
			t.Fatalf("two conversions of the same input differ")
		}
		if !reflect.DeepEqual(before, ms) {
			t.Fatalf("the input was modified")
		}
		if len(e1) > 0 {
			if capi1 != nil || tmpl1 != nil {
				t.Fatalf("objects returned with errors")
			}
			return
		}
		if capi1 == nil || tmpl1 == nil {
			t.Fatalf("no objects and no errors")
		}
		var specOf any
		var fresh any
		switch tm := tmpl1.(type) {
		case *infrav1.OpenStackMachineTemplate:
			specOf, fresh = tm.Spec, &infrav1.OpenStackMachineTemplateSpec{}
		case *metal3v1.Metal3MachineTemplate:
			specOf, fresh = tm.Spec, &metal3v1.Metal3MachineTemplateSpec{}
		default:
			t.Fatalf("template is a %T", tmpl1)
		}
		want, err := TemplateName(name, specOf)
		if err != nil || tmpl1.GetName() != want || capi1.Spec.Template.Spec.InfrastructureRef.Name != want {
			t.Fatalf("template named %q, reference %q, want %q (%v)", tmpl1.GetName(), capi1.Spec.Template.Spec.InfrastructureRef.Name, want, err)
		}
		raw, _ := json.Marshal(specOf)
		if err := json.Unmarshal(raw, fresh); err != nil {
			t.Fatal(err)
		}
		if again, _ := TemplateName(name, reflect.ValueOf(fresh).Elem().Interface()); again != want {
			t.Fatalf("the name changes after a JSON round trip of the spec: %q, want %q", again, want)
		}
		if len(validation.IsDNS1123Subdomain(name)) == 0 && len(validation.IsDNS1123Subdomain(want)) > 0 {
			t.Fatalf("a valid MachineSet name %q gave the invalid template name %q", name, want)
		}
	})
}
