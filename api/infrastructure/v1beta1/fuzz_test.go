package v1beta1

import (
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

// FuzzConversionRoundTrip is TestFuzzyConversion under the fuzzer: the
// fuzzer picks the kind, the direction and the seed of the object filler,
// and both round trips must give back exactly what they started from.
//
//	go test ./api/infrastructure/v1beta1 -run '^$' -fuzz '^FuzzConversionRoundTrip$' -fuzztime 60s
func FuzzConversionRoundTrip(f *testing.F) {
	for i := range 2 * len(kinds) {
		f.Add(uint8(i), int64(i))
	}
	s := testScheme(f)
	f.Fuzz(func(t *testing.T, which uint8, seed int64) {
		k := kinds[int(which)%len(kinds)]
		filler := utilconversion.GetFuzzer(s).RandSource(rand.NewSource(seed))
		if int(which)/len(kinds)%2 == 0 {
			before := k.spoke()
			filler.Fill(before)
			shapeLoadBalancer(before, int(seed%3))
			hub := k.hub()
			if err := before.ConvertTo(hub); err != nil {
				t.Fatal(err)
			}
			after := k.spoke()
			if err := after.ConvertFrom(hub); err != nil {
				t.Fatal(err)
			}
			delete(after.(metav1.Object).GetAnnotations(), ConversionDataAnnotation)
			if !apiequality.Semantic.DeepEqual(before, after) {
				t.Fatalf("%s v1beta1 → v1beta2 → v1beta1 changed the object:\n%s", k.name, cmp.Diff(before, after))
			}
			return
		}
		before := k.hub()
		filler.Fill(before)
		shapeLoadBalancer(before, int(seed%3))
		spoke := k.spoke()
		if err := spoke.ConvertFrom(before.DeepCopyObject().(conversion.Hub)); err != nil {
			t.Fatal(err)
		}
		after := k.hub()
		if err := spoke.ConvertTo(after); err != nil {
			t.Fatal(err)
		}
		if !apiequality.Semantic.DeepEqual(before, after) {
			t.Fatalf("%s v1beta2 → v1beta1 → v1beta2 changed the object:\n%s", k.name, cmp.Diff(before, after))
		}
	})
}

// FuzzConvertUntrusted converts objects as the API server may hand them to
// the webhook: any JSON the types accept, and any value of the conversion
// annotation, which a user can write. Converting must never panic, must
// give the same answer twice, and must not change its input.
//
//	go test ./api/infrastructure/v1beta1 -run '^$' -fuzz '^FuzzConvertUntrusted$' -fuzztime 60s
func FuzzConvertUntrusted(f *testing.F) {
	for i, seed := range []struct{ obj, annotation string }{
		{`{"spec":{"identityRef":{"name":"c","cloudName":"openstack"},"apiServerLoadBalancer":{"enabled":true}}}`, ""},
		{`{"spec":{"flavor":"m1","image":{"filter":{"name":"img"}}}}`, `{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta2","spec":{"flavor":{"id":"x"}}}`},
		{`{"spec":{"template":{"spec":{"flavor":"m1"}}}}`, `{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","spec":{"template":null}}`},
		{`{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`, `{"spec":[1,2]}`},
		{`{}`, `not json`},
	} {
		f.Add(uint8(i), []byte(seed.obj), seed.annotation)
		f.Add(uint8(i+len(kinds)), []byte(seed.obj), seed.annotation)
	}
	f.Fuzz(func(t *testing.T, which uint8, obj []byte, annotation string) {
		k := kinds[int(which)%len(kinds)]
		annotate := func(o metav1.Object) {
			if annotation != "" {
				o.SetAnnotations(map[string]string{ConversionDataAnnotation: annotation})
			}
		}
		if int(which)/len(kinds)%2 == 0 {
			src := k.spoke()
			if json.Unmarshal(obj, src) != nil {
				return
			}
			annotate(src.(metav1.Object))
			before := src.DeepCopyObject()
			hub1, hub2 := k.hub(), k.hub()
			err1, err2 := src.ConvertTo(hub1), src.ConvertTo(hub2)
			same(t, before, src, hub1, hub2, err1, err2)
			return
		}
		src := k.hub()
		if json.Unmarshal(obj, src) != nil {
			return
		}
		annotate(src.(metav1.Object))
		before := src.DeepCopyObject()
		spoke1, spoke2 := k.spoke(), k.spoke()
		err1, err2 := spoke1.ConvertFrom(src), spoke2.ConvertFrom(src)
		same(t, before, src, spoke1, spoke2, err1, err2)
	})
}

// same fails unless src is unchanged and both conversions agree.
func same(t *testing.T, before, src, out1, out2 any, err1, err2 error) {
	t.Helper()
	if !apiequality.Semantic.DeepEqual(before, src) {
		t.Fatalf("the conversion changed its input:\n%s", cmp.Diff(before, src))
	}
	if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
		t.Fatalf("two conversions disagree: %v / %v", err1, err2)
	}
	if err1 == nil && !apiequality.Semantic.DeepEqual(out1, out2) {
		t.Fatalf("two conversions differ:\n%s", cmp.Diff(out1, out2))
	}
}
