// Package jsonfields compares API structs field by field as they are on the
// wire. The webhooks use it to name the fields an update may not change,
// and the add-on's syncs to tell whether a mirror is in sync (Same).
package jsonfields

import (
	"encoding/json"
	"reflect"
	"slices"
)

// Of is v as its JSON object with empty values dropped (null, "", false,
// empty lists, objects of empty values), so that absent, null and empty
// compare equal, as omitempty makes them on the wire. A value that is not
// an object gives nil.
func Of(v any) map[string]any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	for k, e := range m {
		if empty(e) {
			delete(m, k)
		}
	}
	return m
}

// Diff lists, sorted, the keys whose values differ between a and b.
func Diff(a, b map[string]any) []string {
	var out []string
	for k, v := range a {
		if !reflect.DeepEqual(v, b[k]) {
			out = append(out, k)
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok && !reflect.DeepEqual(v, a[k]) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Changed lists, sorted, the JSON keys of the fields that differ between
// two structs (Of each, then Diff).
func Changed(a, b any) []string { return Diff(Of(a), Of(b)) }

func empty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case bool:
		return !t
	case []any:
		return len(t) == 0
	case map[string]any:
		for _, e := range t {
			if !empty(e) {
				return false
			}
		}
		return true
	}
	return false
}

// Same tells whether a and b encode to the same JSON value, so that nil and
// empty, which JSON does not tell apart, count as equal. The error is one
// of encoding.
func Same(a, b any) (bool, error) {
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
