package v1beta1

import (
	"encoding/json"
	"fmt"
	"reflect"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

// ConversionDataAnnotation keeps, on an object converted to the other
// version, what that version cannot hold: on a v1beta2 object, the v1beta1
// object it was converted from; on a v1beta1 object, the v1beta2 object.
// It is CAPI's annotation for the same purpose. It is set only when the
// conversion loses something, and it holds the apiVersion, spec and
// status of the source (never its metadata).
const ConversionDataAnnotation = "cluster.x-k8s.io/conversion-data"

// stash is the content of ConversionDataAnnotation.
type stash struct {
	APIVersion string          `json:"apiVersion"`
	Spec       json.RawMessage `json:"spec,omitempty"`
	Status     json.RawMessage `json:"status,omitempty"`
}

type metaObject[T any] interface {
	*T
	metav1.Object
}

// convertWithStash converts src (of version srcGV) into dst (the other
// version) with fwd, whose inverse is back, so that round trips lose
// nothing:
//
//  1. If src carries the annotation, it holds what dst looked like when src
//     was made from it. Each spec field of dst that src's writer did not
//     change (the field is what converting the stashed object there and
//     back gives) is taken from the stash, recursively down to the fields
//     that changed; status is taken from the stash as a whole, if it did
//     not change at all.
//  2. If converting dst back does not give src, dst gets the annotation with
//     src's spec and status.
func convertWithStash[A, B any, PA metaObject[A], PB metaObject[B]](src PA, dst PB, fwd func(PA, PB) error, back func(PB, PA) error) error {
	srcGV, dstGV := infrav1.GroupVersion.String(), GroupVersion.String()
	if isSpoke(any(src)) {
		srcGV, dstGV = dstGV, srcGV
	}

	// The source without the annotation.
	in := PA(new(A))
	*in = *src
	annotations := src.GetAnnotations()
	saved, hasSaved := annotations[ConversionDataAnnotation]
	if hasSaved {
		rest := make(map[string]string, len(annotations)-1)
		for k, v := range annotations {
			if k != ConversionDataAnnotation {
				rest[k] = v
			}
		}
		if len(rest) == 0 {
			rest = nil
		}
		in.SetAnnotations(rest)
	}

	if err := fwd(in, dst); err != nil {
		return err
	}
	if hasSaved {
		if err := restore(dst, saved, dstGV, fwd, back); err != nil {
			return err
		}
	}

	// Keep src in dst if dst cannot give it back.
	again := PA(new(A))
	if err := back(dst, again); err != nil {
		return err
	}
	if !sameContent(again, in) {
		data, err := contentOf(in, srcGV)
		if err != nil {
			return err
		}
		a := dst.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[ConversionDataAnnotation] = string(data)
		dst.SetAnnotations(a)
	}
	return nil
}

// isSpoke tells whether obj is of this package (v1beta1).
func isSpoke(obj any) bool {
	switch obj.(type) {
	case *OpenStackCluster, *OpenStackClusterTemplate, *OpenStackMachine, *OpenStackMachineTemplate:
		return true
	}
	return false
}

// restore merges the stashed object (of version dstGV, in the annotation
// value saved) into dst, as convertWithStash says.
func restore[A, B any, PA metaObject[A], PB metaObject[B]](dst PB, saved, dstGV string, fwd func(PA, PB) error, back func(PB, PA) error) error {
	var s stash
	if err := json.Unmarshal([]byte(saved), &s); err != nil || s.APIVersion != dstGV {
		// Not ours to read (copied from an object of the other version,
		// or damaged): ignore it.
		return nil //nolint:nilerr // a bad annotation is dropped, not an error of the conversion
	}
	cur, err := toMap(dst)
	if err != nil {
		return err
	}
	// The stashed object, with dst's metadata (the conversion reads the
	// generation).
	savedMap := map[string]any{}
	if err := utiljson.Unmarshal([]byte(saved), &savedMap); err != nil {
		return nil //nolint:nilerr // as above
	}
	savedMap["metadata"] = cur["metadata"]
	stashed := PB(new(B))
	if err := fromMap(savedMap, stashed); err != nil {
		return nil //nolint:nilerr // as above
	}
	// What the writer of src saw: the stashed object converted there and
	// back.
	seen, base := PA(new(A)), PB(new(B))
	if err := back(stashed, seen); err != nil {
		return err
	}
	if err := fwd(seen, base); err != nil {
		return err
	}
	baseMap, err := toMap(base)
	if err != nil {
		return err
	}
	if savedMap, err = toMap(stashed); err != nil {
		return err
	}
	setOrDelete(cur, "spec", merge(cur["spec"], baseMap["spec"], savedMap["spec"]))
	if reflect.DeepEqual(cur["status"], baseMap["status"]) {
		setOrDelete(cur, "status", savedMap["status"])
	}
	out := PB(new(B))
	if err := fromMap(cur, out); err != nil {
		return fmt.Errorf("restoring from %s: %w", ConversionDataAnnotation, err)
	}
	// Only spec and status come from JSON; the metadata stays as it was.
	for _, f := range []string{"TypeMeta", "ObjectMeta"} {
		reflect.ValueOf(out).Elem().FieldByName(f).Set(reflect.ValueOf(dst).Elem().FieldByName(f))
	}
	*dst = *out
	return nil
}

func fromMap(m map[string]any, obj any) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, obj)
}

// merge returns cur where it differs from base, else saved, recursively
// through objects. nil means absent.
func merge(cur, base, saved any) any {
	if reflect.DeepEqual(cur, base) {
		return saved
	}
	c, ok1 := cur.(map[string]any)
	b, ok2 := base.(map[string]any)
	s, ok3 := saved.(map[string]any)
	if !ok1 || !ok2 || !ok3 {
		return cur
	}
	out := map[string]any{}
	for _, m := range []map[string]any{c, b, s} {
		for k := range m {
			if _, done := out[k]; done {
				continue
			}
			if v := merge(c[k], b[k], s[k]); v != nil {
				out[k] = v
			}
		}
	}
	return out
}

func setOrDelete(m map[string]any, key string, v any) {
	if v == nil {
		delete(m, key)
		return
	}
	m[key] = v
}

func toMap(obj any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// sameContent compares the spec and status of a and b, two objects of
// one type.
func sameContent(a, b any) bool {
	av, bv := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for _, f := range []string{"Spec", "Status"} {
		x, y := av.FieldByName(f), bv.FieldByName(f)
		if x.IsValid() && !apiequality.Semantic.DeepEqual(x.Interface(), y.Interface()) {
			return false
		}
	}
	return true
}

// contentOf is the annotation value for obj: its spec and status.
func contentOf(obj any, apiVersion string) ([]byte, error) {
	m, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	s := map[string]any{"apiVersion": apiVersion}
	for _, k := range []string{"spec", "status"} {
		if v, ok := m[k]; ok {
			s[k] = v
		}
	}
	return json.Marshal(s)
}
