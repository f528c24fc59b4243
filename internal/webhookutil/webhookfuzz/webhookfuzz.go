// Package webhookfuzz holds the checks the webhooks' fuzz targets share:
// what every validating webhook of this repository keeps whatever object it
// is given. It is imported by tests only.
package webhookfuzz

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Verdict is a webhook's answer.
type Verdict struct {
	Warnings admission.Warnings
	Err      error
}

// Allowed tells whether the webhook let the request through.
func (v Verdict) Allowed() bool { return v.Err == nil }

// Decode unmarshals data into a new object of obj's type (obj only gives
// the type; it may be nil), as the API server hands it to a webhook; false
// when the types refuse the JSON.
func Decode[T runtime.Object](obj T, data []byte) (T, bool) {
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
	if json.Unmarshal(data, out) != nil {
		return out, false
	}
	return out, true
}

// Patched decodes the object the JSON merge patch (RFC 7386) patch makes
// of data: an update as a user's kubectl patch or apply would make it.
func Patched[T runtime.Object](obj T, data, patch []byte) (T, bool) {
	merged, err := jsonpatch.MergePatch(data, patch)
	if err != nil {
		return obj, false
	}
	return Decode(obj, merged)
}

// Seed is the JSON of obj, for f.Add.
func Seed(tb testing.TB, obj any) []byte {
	tb.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// Create runs ValidateCreate twice on obj and fails unless it did not
// change obj, gave the same verdict both times, and refused only with an
// Invalid error that names the fields.
func Create[T runtime.Object](t *testing.T, v admission.Validator[T], obj T) Verdict {
	t.Helper()
	return twice(t, []T{obj}, func() (admission.Warnings, error) {
		return v.ValidateCreate(context.Background(), obj)
	})
}

// Update is Create for ValidateUpdate(oldObj, newObj): neither is changed.
func Update[T runtime.Object](t *testing.T, v admission.Validator[T], oldObj, newObj T) Verdict {
	t.Helper()
	return twice(t, []T{oldObj, newObj}, func() (admission.Warnings, error) {
		return v.ValidateUpdate(context.Background(), oldObj, newObj)
	})
}

// Same fails unless two verdicts are the same answer.
func Same(t *testing.T, what string, a, b Verdict) {
	t.Helper()
	if !slices.Equal(a.Warnings, b.Warnings) || errString(a.Err) != errString(b.Err) {
		t.Fatalf("%s: the verdicts differ:\n%v %v\n%v %v", what, a.Warnings, a.Err, b.Warnings, b.Err)
	}
}

func twice[T runtime.Object](t *testing.T, objs []T, validate func() (admission.Warnings, error)) Verdict {
	t.Helper()
	before := make([]runtime.Object, len(objs))
	for i, o := range objs {
		before[i] = o.DeepCopyObject()
	}
	w1, err1 := validate()
	w2, err2 := validate()
	for i, o := range objs {
		if !apiequality.Semantic.DeepEqual(before[i], runtime.Object(o)) {
			t.Fatalf("the webhook changed its input:\n%s", cmp.Diff(before[i], runtime.Object(o)))
		}
	}
	v := Verdict{Warnings: w1, Err: err1}
	Same(t, "validating twice", v, Verdict{Warnings: w2, Err: err2})
	if err1 != nil {
		var status *apierrors.StatusError
		if !errors.As(err1, &status) || !apierrors.IsInvalid(err1) || status.ErrStatus.Details == nil || len(status.ErrStatus.Details.Causes) == 0 {
			t.Fatalf("want an Invalid error naming the fields, got %v", err1)
		}
		for _, c := range status.ErrStatus.Details.Causes {
			if c.Field == "" {
				t.Fatalf("an error names no field: %v", err1)
			}
		}
	}
	return v
}

// SameJSON tells whether a and b encode to the same JSON once null, empty
// lists and empty objects are dropped: the webhooks count those as absent,
// as the wire does with omitempty.
func SameJSON(tb testing.TB, a, b any) bool {
	tb.Helper()
	return reflect.DeepEqual(pruned(tb, a), pruned(tb, b))
}

func pruned(tb testing.TB, v any) any {
	tb.Helper()
	var out any
	if err := json.Unmarshal(Seed(tb, v), &out); err != nil {
		tb.Fatal(err)
	}
	return prune(out)
}

func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e = prune(e); e == nil {
				delete(t, k)
			} else {
				t[k] = e
			}
		}
		if len(t) == 0 {
			return nil
		}
	case []any:
		if len(t) == 0 {
			return nil
		}
		for i := range t {
			t[i] = prune(t[i])
		}
	}
	return v
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
