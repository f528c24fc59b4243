package mapi2capi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// decodeProviderSpec decodes a providerSpec (raw JSON, at path p) into out,
// a pointer to the providerSpec's Go type, the way MAPO reads it, but
// without its silent losses:
//
//   - a field name is matched case-insensitively, as MAPO's decoder
//     (sigs.k8s.io/yaml over encoding/json) does: `UUID` is read as `uuid`,
//     with a warning at the field's canonical path;
//   - two names of one field (exact or differing in case) are an error,
//     since MAPO would keep one of them in no defined order;
//   - a value of the wrong JSON type is an error at the field's full path
//     (…value.ports[0].portSecurity), not at the providerSpec;
//   - a field the type does not have is an error at its path (MAPO ignores
//     it silently, so whatever the user meant by it is not happening).
func decodeProviderSpec(raw []byte, out any, p *field.Path, r *report) bool {
	// Exact duplicates first: decoding into a generic tree keeps only the
	// last of them.
	var tree any
	strictErrs, err := sigsjson.UnmarshalStrict(raw, &tree, sigsjson.DisallowDuplicateFields)
	if err != nil {
		r.fail(field.Invalid(p, "(not shown)", "cannot decode the providerSpec: "+err.Error()))
		return false
	}
	for _, e := range strictErrs {
		r.fail(field.Duplicate(pathFromDecoder(p, e.Error()), "the field is given twice"))
	}
	if len(strictErrs) > 0 {
		return false
	}
	d := decoder{r: r}
	tree = d.canonical(tree, reflect.TypeOf(out).Elem(), p)
	if d.failed {
		return false
	}
	canon, err := json.Marshal(tree)
	if err != nil {
		r.fail(field.InternalError(p, err))
		return false
	}
	strictErrs, err = sigsjson.UnmarshalStrict(canon, out, sigsjson.DisallowUnknownFields)
	if err != nil {
		// The type checks above should have caught it; say what the
		// decoder says, at the providerSpec.
		r.fail(field.Invalid(p, "(not shown)", "cannot decode the providerSpec: "+err.Error()))
		return false
	}
	for _, e := range strictErrs {
		r.fail(field.Forbidden(pathFromDecoder(p, e.Error()),
			"not a field of this providerSpec: MAPO ignores it silently, so it has no effect; remove it"))
	}
	return len(strictErrs) == 0
}

// pathFromDecoder turns sigs.k8s.io/json's `unknown field "a.b[0].c"` or
// `duplicate field "a"` into a path below p.
func pathFromDecoder(p *field.Path, msg string) *field.Path {
	i, j := strings.Index(msg, `"`), strings.LastIndex(msg, `"`)
	if i < 0 || j <= i {
		return p
	}
	return p.Child(msg[i+1 : j])
}

// decoder rewrites a generic JSON tree into the canonical field names of
// a Go type, checking JSON types on the way.
type decoder struct {
	r      *report
	failed bool
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// canonical returns v with the object keys of struct types renamed to the
// Go type t's JSON names; it reports case differences (warnings),
// ambiguous names and type mismatches (errors).
func (d *decoder) canonical(v any, t reflect.Type, p *field.Path) any {
	if v == nil {
		return nil // null is every type's zero value
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return v // its own decoder checks it (metav1.Time, ...)
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return d.mismatch(v, "an object", p)
		}
		return d.object(obj, t, p)
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return d.mismatch(v, "an object", p)
		}
		out := make(map[string]any, len(obj))
		for k, e := range obj {
			out[k] = d.canonical(e, t.Elem(), p.Key(k))
		}
		return out
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return d.mismatch(v, "a list", p)
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			out[i] = d.canonical(e, t.Elem(), p.Index(i))
		}
		return out
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return d.mismatch(v, "true or false", p)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return d.mismatch(v, "a string", p)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(int64)
		if !ok {
			return d.mismatch(v, "a whole number", p)
		}
		if overflows(t, n) {
			return d.mismatch(v, "a number in the range of its type", p)
		}
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int64, float64:
		default:
			return d.mismatch(v, "a number", p)
		}
	}
	return v
}

// object renames the keys of one JSON object to t's field names.
func (d *decoder) object(obj map[string]any, t reflect.Type, p *field.Path) map[string]any {
	fields := jsonFields(t)
	out := make(map[string]any, len(obj))
	// Keys in a fixed order, so that warnings and errors are too: the
	// exact names first, then the ones that match only ignoring case.
	keys := slices.SortedFunc(func(yield func(string) bool) {
		for k := range obj {
			if !yield(k) {
				return
			}
		}
	}, func(a, b string) int {
		_, ea := fields[a]
		_, eb := fields[b]
		switch {
		case ea && !eb:
			return -1
		case eb && !ea:
			return 1
		}
		return strings.Compare(a, b)
	})
	given := map[string]string{} // canonical name -> key as written
	for _, k := range keys {
		name, ft, ok := lookupField(fields, k)
		if !ok {
			out[k] = obj[k] // unknown: the strict decoder names it
			continue
		}
		if prev, dup := given[name]; dup {
			d.fail(field.Duplicate(p.Child(name), fmt.Sprintf("given twice, as %q and %q; MAPO would keep one of them in no defined order", prev, k)))
			continue
		}
		given[name] = k
		if k != name {
			d.r.warn(p.Child(name), "written %q; MAPO matches field names case-insensitively, so it is read as %s: write it so", k, name)
		}
		out[name] = d.canonical(obj[k], ft, p.Child(name))
	}
	return out
}

func (d *decoder) mismatch(v any, want string, p *field.Path) any {
	d.fail(field.Invalid(p, shortJSON(v), "must be "+want+", not "+jsonKind(v)))
	return v
}

func (d *decoder) fail(e *field.Error) {
	d.failed = true
	d.r.fail(e)
}

// jsonFields maps the JSON names of t's fields (embedded inline structs
// flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && (name == "" || strings.Contains(","+opts+",", ",inline,")) && f.Type.Kind() == reflect.Struct {
			for n, ft := range jsonFields(f.Type) {
				if _, ok := out[n]; !ok {
					out[n] = ft
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// lookupField finds key among fields: exactly, else as encoding/json does,
// ignoring case.
func lookupField(fields map[string]reflect.Type, key string) (string, reflect.Type, bool) {
	if t, ok := fields[key]; ok {
		return key, t, true
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range fields {
			if !yield(n) {
				return
			}
		}
	}) {
		if strings.EqualFold(name, key) {
			return name, fields[name], true
		}
	}
	return "", nil, false
}

// overflows tells whether n does not fit the integer type t.
func overflows(t reflect.Type, n int64) bool {
	z := reflect.New(t).Elem()
	if z.CanInt() {
		return z.OverflowInt(n)
	}
	return n < 0 || z.OverflowUint(uint64(n))
}

func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "true or false"
	case string:
		return "a string"
	case int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// shortJSON is v as JSON, cut to a length fit for a message.
func shortJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSpace(b.String())
	if len(s) > 64 {
		s = s[:61] + "..."
	}
	return s
}
