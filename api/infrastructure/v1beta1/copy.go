package v1beta1

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// copyByName copies src into dst, two values of types that v1beta1 and
// v1beta2 spell alike: struct fields are matched by JSON name (fields of
// inline embedded structs count as the outer struct's), and the values are
// copied whatever their Go types, as long as their kinds agree: int into
// int32 (truncated; conversion.go keeps the original in the conversion
// annotation), a named string into another, a pointer into a value (nil
// becomes the zero value) and back (the zero value becomes nil).
//
// A field of src without a counterpart in dst is an error, unless manual
// names it as "<Go type of its struct>.<JSON name>": the caller converts
// those itself. So a field added to one version and not the other cannot
// be dropped silently.
func copyByName(dst, src any, manual ...string) error {
	skip := map[string]bool{}
	for _, m := range manual {
		skip[m] = true
	}
	d, s := reflect.ValueOf(dst), reflect.ValueOf(src)
	if d.Kind() != reflect.Pointer || s.Kind() != reflect.Pointer {
		return fmt.Errorf("copyByName needs pointers, got %T and %T", dst, src)
	}
	if s.IsNil() {
		d.Elem().SetZero()
		return nil
	}
	return copyValue(d.Elem(), s.Elem(), s.Elem().Type().Name(), skip)
}

// copyValue copies src into dst as copyByName says; path names the value
// in errors, and skip holds the fields the caller converts by hand. It is
// over 80 lines because it is one switch over the kinds a field can have,
// each case a few lines.
func copyValue(dst, src reflect.Value, path string, skip map[string]bool) error {
	// A pointer into a value, or a value into a pointer.
	switch {
	case src.Kind() == reflect.Pointer && dst.Kind() != reflect.Pointer:
		if src.IsNil() {
			dst.SetZero()
			return nil
		}
		return copyValue(dst, src.Elem(), path, skip)
	case src.Kind() != reflect.Pointer && dst.Kind() == reflect.Pointer:
		if src.IsZero() {
			dst.SetZero()
			return nil
		}
		dst.Set(reflect.New(dst.Type().Elem()))
		return copyValue(dst.Elem(), src, path, skip)
	}
	if src.Type() == dst.Type() {
		// A type both versions share: its own deep copy, or a plain
		// assignment when nothing in it is shared memory.
		if m, ok := reflect.PointerTo(src.Type()).MethodByName("DeepCopyInto"); ok && dst.CanAddr() {
			in := reflect.New(src.Type())
			in.Elem().Set(src)
			m.Func.Call([]reflect.Value{in, dst.Addr()})
			return nil
		}
		if !hasReferences(src.Type()) {
			dst.Set(src)
			return nil
		}
	}
	if src.Kind() != dst.Kind() && (!isInt(src.Kind()) || !isInt(dst.Kind())) {
		return fmt.Errorf("%s: cannot copy a %s into a %s", path, src.Type(), dst.Type())
	}
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			dst.SetZero()
			return nil
		}
		dst.Set(reflect.New(dst.Type().Elem()))
		return copyValue(dst.Elem(), src.Elem(), path, skip)
	case reflect.Slice:
		if src.IsNil() {
			dst.SetZero()
			return nil
		}
		dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
		for i := range src.Len() {
			if err := copyValue(dst.Index(i), src.Index(i), fmt.Sprintf("%s[%d]", path, i), skip); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if src.IsNil() {
			dst.SetZero()
			return nil
		}
		dst.Set(reflect.MakeMapWithSize(dst.Type(), src.Len()))
		for it := src.MapRange(); it.Next(); {
			k := reflect.New(dst.Type().Key()).Elem()
			if err := copyValue(k, it.Key(), path+"{}", skip); err != nil {
				return err
			}
			v := reflect.New(dst.Type().Elem()).Elem()
			if err := copyValue(v, it.Value(), path+"{}", skip); err != nil {
				return err
			}
			dst.SetMapIndex(k, v)
		}
		return nil
	case reflect.Struct:
		return copyStruct(dst, src, path, skip)
	case reflect.String:
		dst.SetString(src.String())
	case reflect.Bool:
		dst.SetBool(src.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		dst.SetInt(src.Int())
	default:
		return fmt.Errorf("%s: cannot copy a %s", path, src.Type())
	}
	return nil
}

func copyStruct(dst, src reflect.Value, path string, skip map[string]bool) error {
	dstFields := jsonFields(dst)
	for name, sf := range jsonFields(src) {
		if skip[sf.owner+"."+name] {
			continue
		}
		df, ok := dstFields[name]
		if !ok {
			return fmt.Errorf("%s.%s (%s.%s) has no counterpart in %s and is not converted by hand", path, name, sf.owner, name, dst.Type())
		}
		if err := copyValue(df.value, sf.value, path+"."+name, skip); err != nil {
			return err
		}
	}
	return nil
}

type field struct {
	value reflect.Value
	owner string // the Go type of the struct that declares the field
}

// fieldIndex is where a JSON field of a struct type is.
type fieldIndex struct {
	index []int // for reflect.Value.FieldByIndex
	owner string
}

var fieldCache sync.Map // reflect.Type → map[string]fieldIndex

// jsonFields are the fields of struct v by JSON name, with those of inline
// embedded structs.
func jsonFields(v reflect.Value) map[string]field {
	idx := fieldsOf(v.Type())
	out := make(map[string]field, len(idx))
	for name, fi := range idx {
		out[name] = field{value: v.FieldByIndex(fi.index), owner: fi.owner}
	}
	return out
}

func fieldsOf(t reflect.Type) map[string]fieldIndex {
	if c, ok := fieldCache.Load(t); ok {
		return c.(map[string]fieldIndex)
	}
	out := map[string]fieldIndex{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && (strings.Contains(opts, "inline") || tag == "") && f.Type.Kind() == reflect.Struct {
			for n, sub := range fieldsOf(f.Type) {
				out[n] = fieldIndex{index: append([]int{i}, sub.index...), owner: sub.owner}
			}
			continue
		}
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = fieldIndex{index: []int{i}, owner: t.Name()}
	}
	fieldCache.Store(t, out)
	return out
}

func isInt(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

// hasReferences tells whether values of t share memory when assigned
// (pointers, slices, maps anywhere inside), so that assigning would alias.
func hasReferences(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return true
	case reflect.Struct:
		if hasUnexported(t) {
			return false
		}
		for i := range t.NumField() {
			if hasReferences(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

func hasUnexported(t reflect.Type) bool {
	for i := range t.NumField() {
		if !t.Field(i).IsExported() {
			return true
		}
	}
	return false
}
