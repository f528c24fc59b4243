package openstackserver

import (
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
)

// memo remembers, per server, what this process last recorded and when it
// last read the server from Nova. The informer cache can lag behind the
// controller's own status writes (each pass writes, and the events of
// earlier writes are still in flight), and a stale read would repeat
// lookups and adoption searches in OpenStack. The memo only fills what the
// cached status lacks; it never overrides what the API server says. It is
// empty after a restart, where the cache is fresh anyway.
type memo struct {
	mu sync.Mutex
	m  map[types.UID]memoEntry
	// finished holds the objects whose deletion this process completed
	// (finalizer removed), for a minute: the informer cache may still show
	// them, and a pass on that stale copy must not touch OpenStack.
	finished map[types.UID]time.Time
}

func (m *memo) markFinished(uid types.UID, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.finished == nil {
		m.finished = map[types.UID]time.Time{}
	}
	for k, t := range m.finished {
		if now.Sub(t) > time.Minute {
			delete(m.finished, k)
		}
	}
	m.finished[uid] = now
}

func (m *memo) isFinished(uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.finished[uid]
	return ok
}

type memoEntry struct {
	resolved   *infrav1alpha1.ResolvedServerSpec
	resources  *infrav1alpha1.ServerResources
	instanceID *string
	// polled is when Nova was last asked about the server.
	polled time.Time
	// parked is set by a terminal error: no OpenStack call until the time
	// is up or the object changes (generation or annotations), so the
	// status write of the failure itself does not trigger a retry.
	parked *parking
}

type parking struct {
	until       time.Time
	generation  int64
	annotations string
}

func annotationsKey(a map[string]string) string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(a[k])
		b.WriteByte('\n')
	}
	return b.String()
}

// park stops OpenStack calls for the object until d has passed or the
// object changes.
func (m *memo) park(oss *infrav1alpha1.OpenStackServer, d time.Duration, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[types.UID]memoEntry{}
	}
	e := m.m[oss.UID]
	e.parked = &parking{until: now.Add(d), generation: oss.Generation, annotations: annotationsKey(oss.Annotations)}
	m.m[oss.UID] = e
}

// parkedFor returns how long the object stays parked, or 0.
func (m *memo) parkedFor(oss *infrav1alpha1.OpenStackServer, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[oss.UID]
	if !ok || e.parked == nil {
		return 0
	}
	p := e.parked
	if p.generation != oss.Generation || p.annotations != annotationsKey(oss.Annotations) || !now.Before(p.until) {
		e.parked = nil
		m.m[oss.UID] = e
		return 0
	}
	return p.until.Sub(now)
}

// fill completes a possibly stale status with what this process wrote.
func (m *memo) fill(oss *infrav1alpha1.OpenStackServer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[oss.UID]
	if !ok {
		return
	}
	st := &oss.Status
	if st.Resolved == nil && e.resolved != nil {
		st.Resolved = e.resolved.DeepCopy()
	}
	if e.resources != nil && (st.Resources == nil || len(st.Resources.Ports) < len(e.resources.Ports)) {
		st.Resources = e.resources.DeepCopy()
	}
	if st.InstanceID == nil && e.instanceID != nil {
		id := *e.instanceID
		st.InstanceID = &id
	}
}

// record stores what was written this pass.
func (m *memo) record(oss *infrav1alpha1.OpenStackServer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[types.UID]memoEntry{}
	}
	e := m.m[oss.UID]
	e.resolved = oss.Status.Resolved.DeepCopy()
	e.resources = oss.Status.Resources.DeepCopy()
	if oss.Status.InstanceID != nil {
		id := *oss.Status.InstanceID
		e.instanceID = &id
	} else {
		e.instanceID = nil
	}
	m.m[oss.UID] = e
}

// polledWithin reports whether Nova was asked about the server less than
// d ago, and how long until d has passed.
func (m *memo) polledWithin(uid types.UID, d time.Duration, now time.Time) (bool, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[uid]
	if !ok || e.polled.IsZero() {
		return false, 0
	}
	if left := d - now.Sub(e.polled); left > 0 {
		return true, left
	}
	return false, 0
}

func (m *memo) markPolled(uid types.UID, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[types.UID]memoEntry{}
	}
	e := m.m[uid]
	e.polled = now
	m.m[uid] = e
}

func (m *memo) forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, uid)
}
