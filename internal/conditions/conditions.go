// Package conditions holds the condition chores every reconciler of this
// project shares: set every owned condition on the first visit, turn a
// step's outcome (done, waiting, transient or terminal error) into a
// condition and a requeue, and nothing more. The condition arithmetic
// itself is CAPI's (sigs.k8s.io/cluster-api/util/conditions).
package conditions

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1beta1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// Reasons used by these helpers (the API packages document them).
const (
	PendingReason = "Pending"
	ReadyReason   = "Ready"
	// DeletionFailedReason: a deletion step failed with an error that only
	// a change (of the cloud, the credentials, the spec) will fix.
	DeletionFailedReason = "DeletionFailed"
)

// TerminalRetry is how long a resource with a terminal error waits before
// the next try. A change to the object triggers a retry at once; this only
// catches changes outside Kubernetes (an image uploaded, a quota raised).
const TerminalRetry = 5 * time.Minute

// ConflictRetry is how soon a resource OpenStack is busy with (409) is
// tried again.
const ConflictRetry = 2 * time.Second

// Waiting is an outcome that is neither done nor failed: OpenStack is still
// working. Steps return it as an error so that the flow stops there.
type Waiting interface {
	error
	WaitReason() string
	WaitAfter() time.Duration
}

// InitUnknown sets each owned condition that is missing to Unknown with
// reason Pending, so the object shows all of them from the first visit.
func InitUnknown(obj capiconditions.Setter, types ...string) {
	for _, t := range types {
		if capiconditions.Get(obj, t) == nil {
			capiconditions.Set(obj, metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: PendingReason})
		}
	}
}

// GiveReasons gives every condition stored without a reason the reason
// NoReasonReported, as the v1beta1 conversion does. CAPO stores CAPI
// v1beta1 conditions (no reason when True) on its OpenStackServers, which
// have no conversion; decoded, their reason is "", and the API server
// refuses a status write that carries it, since this provider's schema
// requires one.
func GiveReasons(obj capiconditions.Setter) {
	conds := obj.GetConditions()
	for i := range conds {
		if conds[i].Reason == "" {
			conds[i].Reason = infrav1beta1.NoReasonReported
		}
	}
	obj.SetConditions(conds)
}

// MarkTrue sets a condition True with reason Ready (or the one given).
func MarkTrue(obj capiconditions.Setter, t, message string, reason ...string) {
	r := ReadyReason
	if len(reason) > 0 {
		r = reason[0]
	}
	capiconditions.Set(obj, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: r, Message: message})
}

// MarkFalse sets a condition False.
func MarkFalse(obj capiconditions.Setter, t, reason, message string) {
	capiconditions.Set(obj, metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: reason, Message: message})
}

// MarkUnknown sets a condition Unknown.
func MarkUnknown(obj capiconditions.Setter, t, reason, message string) {
	capiconditions.Set(obj, metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: reason, Message: message})
}

// Outcome records what a failed or unfinished step means for condition t
// and returns how to requeue:
//   - waiting (OpenStack still working): False with the wait reason, requeue
//     after the wait;
//   - transient error (429, 5xx, network): Unknown, requeue after
//     Retry-After when the server gave one, else the error is returned so
//     controller-runtime backs off exponentially;
//   - terminal error (bad spec, not found, quota): False with its reason,
//     requeue after TerminalRetry, no error (no hot loop, no log spam).
//
// The bool is true when the caller should treat the error as terminal (for
// events).
func Outcome(obj capiconditions.Setter, t string, err error) (ctrl.Result, error, bool) {
	var w Waiting
	if errors.As(err, &w) {
		MarkFalse(obj, t, w.WaitReason(), w.Error())
		return ctrl.Result{RequeueAfter: w.WaitAfter()}, nil, false
	}
	e := clients.Classify(err, "")
	if e.Class == clients.Transient {
		MarkUnknown(obj, t, e.Reason, e.Message)
		return transientRetry(e, err)
	}
	MarkFalse(obj, t, e.Reason, e.Message)
	return ctrl.Result{RequeueAfter: TerminalRetry}, nil, true
}

// transientRetry is how a step that failed with the transient error e (err
// as the step returned it) is tried again: after Retry-After when the
// server gave one; shortly, without an error, when OpenStack is busy with
// the resource (409: a load balancer applying a change); else err is
// returned, so that controller-runtime backs off exponentially.
func transientRetry(e *clients.Error, err error) (ctrl.Result, error, bool) {
	switch {
	case e.RetryAfter > 0:
		return ctrl.Result{RequeueAfter: e.RetryAfter}, nil, false
	case e.Reason == clients.ReasonConflict:
		return ctrl.Result{RequeueAfter: ConflictRetry}, nil, false
	}
	return ctrl.Result{}, err, false
}

// DeleteOutcome records what a failed or unfinished deletion step means
// for the Deleting condition and returns how to requeue, as Outcome does.
// Deleting stays True whatever happened, because the object IS going away
// and Deleting has negative polarity: a False Deleting would read as
// healthy in the Ready summary and hide why the deletion is stuck. The
// reason says what holds it up:
//   - waiting: CAPI's Deleting reason with the wait's message;
//   - transient error: the error's reason (OpenStackUnavailable, ...),
//     retried with backoff;
//   - terminal error: DeletionFailed, the error's reason and message in the
//     message, retried after TerminalRetry.
//
// what names the step for the message ("deleting the router"); it may be
// empty.
func DeleteOutcome(obj capiconditions.Setter, what string, err error) (ctrl.Result, error, bool) {
	prefix := ""
	if what != "" {
		prefix = what + ": "
	}
	var w Waiting
	if errors.As(err, &w) {
		MarkTrue(obj, clusterv1.DeletingCondition, prefix+w.Error(), clusterv1.DeletingReason)
		return ctrl.Result{RequeueAfter: w.WaitAfter()}, nil, false
	}
	e := clients.Classify(err, "")
	if e.Class == clients.Transient {
		MarkTrue(obj, clusterv1.DeletingCondition, prefix+e.Message, e.Reason)
		return transientRetry(e, err)
	}
	MarkTrue(obj, clusterv1.DeletingCondition, fmt.Sprintf("%s%s (%s); retried every %s and whenever the object changes", prefix, e.Message, e.Reason, TerminalRetry), DeletionFailedReason)
	return ctrl.Result{RequeueAfter: TerminalRetry}, nil, true
}
