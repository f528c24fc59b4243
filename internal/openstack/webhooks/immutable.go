package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ocp-capi/ocp-capi/internal/webhookutil"
)

// changedPaths compares two values in their JSON form (what the user wrote
// and what is stored) and returns the paths, under root, where they differ.
// A path is as deep as the difference can be told apart: a changed scalar
// gives its own path (spec.ports[0].network.id), a field set or unset gives
// the field's path (spec.rootVolume), and a list whose length changed gives
// the list's path (spec.ports). Absent, null, empty lists and empty objects
// are all the same thing, as they are on the wire with omitempty. Top-level
// keys named in ignore are skipped.
func changedPaths(root *field.Path, oldValue, newValue any, ignore ...string) ([]*field.Path, error) {
	oldJSON, err := toJSONValue(oldValue)
	if err != nil {
		return nil, fmt.Errorf("encoding the old %s: %w", root, err)
	}
	newJSON, err := toJSONValue(newValue)
	if err != nil {
		return nil, fmt.Errorf("encoding the new %s: %w", root, err)
	}
	for _, k := range ignore {
		if m, ok := oldJSON.(map[string]any); ok {
			delete(m, k)
		}
		if m, ok := newJSON.(map[string]any); ok {
			delete(m, k)
		}
	}
	// An absent root is an empty object, so that its fields are reported.
	if isEmptyJSON(oldJSON) {
		oldJSON = map[string]any{}
	}
	if isEmptyJSON(newJSON) {
		newJSON = map[string]any{}
	}
	var out []*field.Path
	diffJSON(root, oldJSON, newJSON, &out)
	return out, nil
}

// templateImmutable refuses an update of a template (obj, of kind gk) whose
// spec.template.spec changed from oldSpec to newSpec, with one Forbidden
// error (detail) per changed field, except for CAPI topology dry-runs
// (isTopologyDryRun).
func templateImmutable(ctx context.Context, gk schema.GroupKind, obj metav1.Object, oldSpec, newSpec any, detail string) error {
	if isTopologyDryRun(ctx, obj) {
		return nil
	}
	return webhookutil.Invalid(gk, obj, immutabilityErrors(field.NewPath("spec", "template", "spec"), oldSpec, newSpec, detail))
}

// immutabilityErrors returns one Forbidden error per changed path.
func immutabilityErrors(root *field.Path, oldValue, newValue any, detail string, ignore ...string) field.ErrorList {
	paths, err := changedPaths(root, oldValue, newValue, ignore...)
	if err != nil {
		return field.ErrorList{field.InternalError(root, err)}
	}
	errs := make(field.ErrorList, 0, len(paths))
	for _, p := range paths {
		errs = append(errs, field.Forbidden(p, detail))
	}
	return errs
}

func toJSONValue(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func diffJSON(p *field.Path, a, b any, out *[]*field.Path) {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			aEmpty, bEmpty := isEmptyJSON(am[k]), isEmptyJSON(bm[k])
			switch {
			case aEmpty && bEmpty:
			case aEmpty != bEmpty:
				// Set or unset: the field itself is the change.
				*out = append(*out, p.Child(k))
			default:
				diffJSON(p.Child(k), am[k], bm[k], out)
			}
		}
		return
	}

	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList && len(al) == len(bl) {
		for i := range al {
			diffJSON(p.Index(i), al[i], bl[i], out)
		}
		return
	}

	if !reflect.DeepEqual(a, b) {
		*out = append(*out, p)
	}
}

func isEmptyJSON(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}
