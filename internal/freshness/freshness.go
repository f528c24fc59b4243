// Package freshness keeps the controllers from acting on a cached
// object that their own write has already replaced. Between a write and
// the cache seeing it, another event can start a reconcile of the old copy,
// which would redo the work and write it again (a no-op on the server, but
// one more request). The controllers record the resource versions their
// writes replace, and skip a reconcile of such a copy: the write's own
// event reconciles the new one.
package freshness

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Tracker remembers, per object, the resource versions this process's
// writes replaced. It is shared by the controllers that write an object.
type Tracker struct {
	mu         sync.Mutex
	superseded map[types.NamespacedName]map[string]bool
}

// New returns an empty tracker.
func New() *Tracker {
	return &Tracker{superseded: map[types.NamespacedName]map[string]bool{}}
}

// Wrote records that a write turned the object from version before into
// version after. A write that changed nothing (same version) records
// nothing: no event will follow it.
func (t *Tracker) Wrote(key types.NamespacedName, before, after string) {
	if t == nil || before == "" || before == after {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.superseded[key] == nil {
		t.superseded[key] = map[string]bool{}
	}
	t.superseded[key][before] = true
}

// Stale tells whether version is one this process's writes replaced. A
// version it did not replace means the cache has caught up (or someone else
// wrote): the record is dropped.
func (t *Tracker) Stale(key types.NamespacedName, version string) bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.superseded[key][version] {
		return true
	}
	delete(t.superseded, key)
	return false
}
