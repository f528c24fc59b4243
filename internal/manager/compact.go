package manager

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// CacheTransform is what every cache of every manager does to an object
// before it stores it: it drops managedFields, which no controller reads
// and which are about half of an object's JSON, then compacts the rest
// (Compact). The manager's own cache applies it through ApplyCache; a
// provider's side cache (a Secrets cache, say) sets it as its
// DefaultTransform.
func CacheTransform() toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(obj any) (any, error) {
		obj, err := strip(obj)
		if err != nil {
			return obj, err
		}
		return Compact(obj), nil
	}
}

// Compact makes a decoded object take less memory without changing its
// value: the same object, field for field (reflect.DeepEqual holds).
//   - Strings that many objects repeat share one copy: label and
//     annotation keys and short values, finalizers, owner references'
//     API versions, kinds and names, and the type, status, reason and
//     message of each condition. The JSON decoder allocates each of them
//     anew for every object; 10,000 control planes waiting on the same
//     step hold the same nine condition messages 10,000 times.
//   - The conditions slice is copied to its length: the decoder grows it by
//     doubling, so nine conditions hold room for sixteen.
//
// Of an unstructured object only the labels and annotations are compacted.
// Only the objects a cache has just decoded are passed here, and nothing
// else holds them yet, so they are changed in place. Other objects
// (non-Kubernetes ones, tombstones) are returned as they are. See
// docs/reliability.md, Scale.
func Compact(obj any) any {
	o, err := meta.Accessor(obj)
	if err != nil {
		return obj
	}
	if l := o.GetLabels(); len(l) > 0 {
		o.SetLabels(internMap(l))
	}
	if a := o.GetAnnotations(); len(a) > 0 {
		o.SetAnnotations(internMap(a))
	}
	if _, ok := obj.(*unstructured.Unstructured); ok {
		// Its finalizers and owner references are maps and slices of any
		// that a Set would build anew.
		return obj
	}
	if f := o.GetFinalizers(); len(f) > 0 {
		for i := range f {
			f[i] = interned.intern(f[i])
		}
	}
	if refs := o.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			refs[i].APIVersion = interned.intern(refs[i].APIVersion)
			refs[i].Kind = interned.intern(refs[i].Kind)
			refs[i].Name = interned.intern(refs[i].Name)
		}
	}
	if c, ok := obj.(conditioned); ok {
		if conds := c.GetConditions(); len(conds) > 0 {
			conds = slices.Clone(conds)
			for i := range conds {
				conds[i].Type = interned.intern(conds[i].Type)
				conds[i].Status = metav1.ConditionStatus(interned.intern(string(conds[i].Status)))
				conds[i].Reason = interned.intern(conds[i].Reason)
				conds[i].Message = interned.intern(conds[i].Message)
			}
			c.SetConditions(conds)
		}
	}
	return obj
}

// conditioned is an object with metav1.Conditions: CAPI's v1beta2 types
// and this project's own.
type conditioned interface {
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

// internMap is m with its keys and values interned.
func internMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[interned.intern(k)] = interned.intern(v)
	}
	return out
}

// internMaxLen and internMaxEntries bound the intern table: longer strings
// (a last-applied-configuration annotation, say) are kept as they are, and
// a full table starts over. Strings already shared stay shared; only new
// ones get a new copy. The table costs at most about 8 MiB, and cannot
// grow with the strings a cluster has ever seen.
const (
	internMaxLen     = 512
	internMaxEntries = 16384
)

// interned is the process's intern table; the caches' informers decode
// concurrently.
var interned = &internTable{}

type internTable struct {
	mu sync.Mutex
	m  map[string]string
}

// intern returns the table's copy of s, adding s when it has none.
func (t *internTable) intern(s string) string {
	if s == "" || len(s) > internMaxLen {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.m[s]; ok {
		return c
	}
	if t.m == nil || len(t.m) >= internMaxEntries {
		t.m = make(map[string]string, 1024)
	}
	t.m[s] = s
	return s
}
