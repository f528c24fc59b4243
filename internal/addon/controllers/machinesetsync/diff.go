package machinesetsync

import (
	"encoding/json"

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
