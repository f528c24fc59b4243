package machinesetsync

import (
	"encoding/json"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// groupOf returns the group of an apiVersion.
func groupOf(apiVersion string) (string, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return gv.Group, err
}

// roundTrip returns in as the API server would store it: encoded to JSON
// and decoded again, so that a comparison with a stored object is not
// misled by nil-versus-empty or by fields JSON drops.
func roundTrip[T any](in *T) (*T, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	out := new(T)
	return out, json.Unmarshal(raw, out)
}

// sameJSON tells whether a and b encode to the same JSON value (so nil and
// empty, which JSON does not tell apart, count as equal).
func sameJSON(a, b any) (bool, error) {
	var va, vb any
	for _, x := range []struct {
		in  any
		out *any
	}{{a, &va}, {b, &vb}} {
		raw, err := json.Marshal(x.in)
		if err != nil {
			return false, err
		}
		if err := json.Unmarshal(raw, x.out); err != nil {
			return false, err
		}
	}
	return reflect.DeepEqual(va, vb), nil
}
