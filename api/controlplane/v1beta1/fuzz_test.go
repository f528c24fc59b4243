package v1beta1

import (
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
)

// FuzzConversionRoundTrip is TestFuzzyConversion under the fuzzer: the
// fuzzer picks the kind, the direction and the seed of the object filler;
// both round trips give back exactly what they started from and the JSON
// differs only by the machine template's layout.
//
//	go test ./api/controlplane/v1beta1 -run '^$' -fuzz '^FuzzConversionRoundTrip$' -fuzztime 60s
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
			spokeHubSpoke(t, k, before)
			return
		}
		before := k.hub()
		filler.Fill(before)
		hubSpokeHub(t, k, before)
	})
}

// FuzzConvertJSON converts objects as the API server may hand them to the
// conversion webhook: any JSON the types accept, in either version. The
// conversion never panics, gives the same answer twice, leaves its input
// unchanged, and the round trip gives back the input.
//
//	go test ./api/controlplane/v1beta1 -run '^$' -fuzz '^FuzzConvertJSON$' -fuzztime 60s
func FuzzConvertJSON(f *testing.F) {
	for i, seed := range []string{
		`{"spec":{"distributionVersion":"4.19.0","machineTemplate":{"spec":{"infrastructureRef":{"apiGroup":"g","kind":"K","name":"n"}}}}}`,
		`{"spec":{"machineTemplate":{"infrastructureRef":{"kind":"K"},"deletion":{"nodeDeletionTimeoutSeconds":10}}}}`,
		`{"spec":{"template":{"metadata":{"labels":{"a":"b"}},"spec":{"replicas":3,"machineTemplate":{"metadata":{"annotations":{"x":"y"}}}}}}}`,
		`{"status":{"conditions":[{"type":"Ready","status":"True"}],"initialization":{"controlPlaneInitialized":true}}}`,
		`{}`,
	} {
		for d := range 2 * len(kinds) {
			f.Add(uint8(i*2*len(kinds)+d), []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, obj []byte) {
		k := kinds[int(which)%len(kinds)]
		if int(which)/len(kinds)%2 == 0 {
			src := k.spoke()
			if json.Unmarshal(obj, src) != nil {
				return
			}
			hub1, hub2 := k.hub(), k.hub()
			if src.ConvertTo(hub1) != nil || src.ConvertTo(hub2) != nil {
				t.Fatal("conversion failed")
			}
			if !apiequality.Semantic.DeepEqual(hub1, hub2) {
				t.Fatalf("two conversions differ:\n%s", cmp.Diff(hub1, hub2))
			}
			spokeHubSpoke(t, k, src)
			return
		}
		src := k.hub()
		if json.Unmarshal(obj, src) != nil {
			return
		}
		spoke1, spoke2 := k.spoke(), k.spoke()
		if spoke1.ConvertFrom(src) != nil || spoke2.ConvertFrom(src) != nil {
			t.Fatal("conversion failed")
		}
		if !apiequality.Semantic.DeepEqual(spoke1, spoke2) {
			t.Fatalf("two conversions differ:\n%s", cmp.Diff(spoke1, spoke2))
		}
		hubSpokeHub(t, k, src)
	})
}
