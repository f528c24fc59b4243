package authority

import (
	"errors"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// Names the syncs share (upstream's).
const (
	// SyncFinalizer is on a synced object and its mirror while a sync may
	// still have work to do for them.
	SyncFinalizer = "sync.machine.openshift.io/finalizer"
	// CreatedForAnnotation is set only on objects a sync created (mirrors,
	// templates, Secret copies); its value is the source's name. A sync
	// never deletes an object without it.
	CreatedForAnnotation = "sync.machine.openshift.io/created-for"
	// InfrastructureName is the name of the Infrastructure singleton.
	InfrastructureName = "cluster"
)

// ErrRefused is what a sync returns once it has reported, in the
// Synchronized condition and a Warning event, that a conversion refused
// what a user wrote. A retry cannot succeed: only a change of the object
// can, and its watch event reconciles again. So Reconcile returns no error
// for it, and the refusal is neither retried with backoff nor logged as a
// failure.
var ErrRefused = errors.New("the conversion refused the object; its Synchronized condition says why")

// Wanted is the state a sync wants a MAPI object's Synchronized condition
// in. Warnings become Warning events when the message changes. On True,
// SourceAPI and SourceGen are the side synchronized from and its generation
// (status.synchronizedAPI and status.synchronizedGeneration).
type Wanted struct {
	Status    corev1.ConditionStatus
	Reason    string
	Message   string
	Warnings  []string
	SourceAPI mapiv1beta1.SynchronizedAPI
	SourceGen int64
}

// maxMessageLength bounds a condition message (a conversion may warn many
// times).
const maxMessageLength = 8192

// NextSynchronized is the Synchronized condition that says status, reason
// and message, following cur (nil: there is none yet) at now: False is an
// Error and Unknown Info, as MAPI's other conditions; the message is
// bounded; lastTransitionTime changes only with the status.
func NextSynchronized(cur *mapiv1beta1.Condition, status corev1.ConditionStatus, reason, message string, now metav1.Time) mapiv1beta1.Condition {
	next := mapiv1beta1.Condition{Type: SynchronizedCondition, Status: status, Severity: mapiv1beta1.ConditionSeverityNone,
		Reason: reason, Message: truncate(message), LastTransitionTime: now}
	switch status {
	case corev1.ConditionFalse:
		next.Severity = mapiv1beta1.ConditionSeverityError
	case corev1.ConditionUnknown:
		next.Severity = mapiv1beta1.ConditionSeverityInfo
	}
	if cur != nil && cur.Status == status {
		next.LastTransitionTime = cur.LastTransitionTime
	}
	return next
}

// SameCondition reports whether cur (nil: none) already says what next
// says, its lastTransitionTime aside.
func SameCondition(cur *mapiv1beta1.Condition, next mapiv1beta1.Condition) bool {
	return cur != nil && cur.Status == next.Status && cur.Reason == next.Reason &&
		cur.Message == next.Message && cur.Severity == next.Severity
}

// FindCondition returns the condition of type t in cs, or nil.
func FindCondition(cs []mapiv1beta1.Condition, t mapiv1beta1.ConditionType) *mapiv1beta1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// MirrorAnnotations are in plus the marks of an object of the paused side:
// CAPI's pause and, when createdFor is set, createdForKey naming the object
// it was created for.
func MirrorAnnotations(in map[string]string, createdForKey, createdFor string) map[string]string {
	out := maps.Clone(in)
	if out == nil {
		out = map[string]string{}
	}
	out[clusterv1.PausedAnnotation] = ""
	if createdFor != "" {
		out[createdForKey] = createdFor
	}
	return out
}

func truncate(s string) string {
	const mark = " ...(truncated)"
	if len(s) <= maxMessageLength {
		return s
	}
	return s[:maxMessageLength-len(mark)] + mark
}
