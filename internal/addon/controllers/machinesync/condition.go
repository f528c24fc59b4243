package machinesync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// Reasons of the Synchronized condition on MAPI Machines (upstream's names
// where the meaning is the same).
const (
	// ReasonSynchronized (True): the non-authoritative side mirrors
	// generation status.synchronizedGeneration of the authoritative one.
	ReasonSynchronized = "ResourceSynchronized"
	// ReasonConversionFailed (False): the MAPI Machine cannot be converted;
	// the message names each field at fault.
	ReasonConversionFailed = "FailedToConvertMAPIMachineToCAPI"
	// ReasonReverseConversionFailed (False): the CAPI Machine or its
	// infrastructure machine has what MAPI cannot express.
	ReasonReverseConversionFailed = "FailedToConvertCAPIMachineToMAPI"
	// ReasonInfraUnavailable (False): the cluster's context (Infrastructure
	// cluster) or the infrastructure machine cannot be read.
	ReasonInfraUnavailable = "FailedToGetCAPIInfraResources"
	// ReasonCAPIWriteFailed (False): the API server refused a write of the
	// CAPI Machine or its infrastructure machine.
	ReasonCAPIWriteFailed = "FailedToUpdateCAPIMachine"
	// ReasonMAPIWriteFailed (False): the API server refused a write of the
	// MAPI Machine.
	ReasonMAPIWriteFailed = "FailedToUpdateMAPIMachine"
	// ReasonWaitingForMachineSet (Unknown): the machine's MachineSet has no
	// partner on the other side yet; the MachineSet sync makes it.
	ReasonWaitingForMachineSet = "WaitingForMachineSet"
	// ReasonMigrating (Unknown): authority is being handed over; neither
	// side is touched.
	ReasonMigrating = "AuthoritativeAPIMigrating"
)

// Event reasons.
const (
	EventConversionWarning = "ConversionWarning"
	EventCreated           = "MirrorCreated"
	EventDeleted           = "MirrorDeleted"
)

// condition is the wanted Synchronized condition.
type condition = authority.Wanted

func migratingCondition() condition {
	return condition{Status: corev1.ConditionUnknown, Reason: ReasonMigrating,
		Message: "status.authoritativeAPI is Migrating: authority is being handed over, and the sync leaves both sides alone until it is done"}
}

func synced(api mapiv1beta1.SynchronizedAPI, gen int64, warnings []string) condition {
	c := condition{Status: corev1.ConditionTrue, Reason: ReasonSynchronized, SourceAPI: api, SourceGen: gen, Warnings: warnings}
	switch len(warnings) {
	case 0:
	case 1:
		c.Message = "Converted with 1 warning: " + warnings[0]
	default:
		c.Message = fmt.Sprintf("Converted with %d warnings: %s", len(warnings), strings.Join(warnings, "; "))
	}
	return c
}

// fail reports a failed sync and returns cause, retried with backoff. A
// cache that is behind is no failure.
func (r *Reconciler) fail(ctx context.Context, m *mapiv1beta1.Machine, reason, message string, cause error) error {
	if isStale(cause) || m == nil {
		return cause
	}
	if err := r.setSynchronized(ctx, m, condition{Status: corev1.ConditionFalse, Reason: reason, Message: message}); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// refuse reports in the condition (and its Warning event) that a
// conversion refused the Machine, and returns authority.ErrRefused: nothing
// to retry until an object changes. A failed write of the condition is
// retried.
func (r *Reconciler) refuse(ctx context.Context, m *mapiv1beta1.Machine, reason, message string) error {
	if err := r.setSynchronized(ctx, m, condition{Status: corev1.ConditionFalse, Reason: reason, Message: message}); err != nil {
		return err
	}
	return authority.ErrRefused
}

// setSynchronized writes the Synchronized condition and, on True,
// synchronizedGeneration and synchronizedAPI, unless they already say so.
// A server-side apply of the status under ConditionFieldOwner, with the
// resourceVersion: the Machine is MAPI's and the migration controller
// writes the same fields; conditions is a map-keyed list, so the apply
// owns just this entry.
func (r *Reconciler) setSynchronized(ctx context.Context, m *mapiv1beta1.Machine, want condition) error {
	cur := authority.FindCondition(m.Status.Conditions, authority.SynchronizedCondition)
	next := authority.NextSynchronized(cur, want.Status, want.Reason, want.Message, metav1.Now())
	gen, api := m.Status.SynchronizedGeneration, m.Status.SynchronizedAPI
	if want.Status == corev1.ConditionTrue {
		api = want.SourceAPI
		gen = max(gen, want.SourceGen)
	}
	if authority.SameCondition(cur, next) && gen == m.Status.SynchronizedGeneration && api == m.Status.SynchronizedAPI {
		return nil
	}
	if err := r.apply(ctx, m, next, gen, api); err != nil {
		return err
	}
	r.record(m, cur, next, want.Warnings)
	return nil
}

// apply writes c, gen and api to m's status and updates m with the API
// server's answer (write.ApplySynchronized says why an apply), recorded in
// the stale-cache guard: the recording client sees no apply.
func (r *Reconciler) apply(ctx context.Context, m *mapiv1beta1.Machine, c mapiv1beta1.Condition, gen int64, api mapiv1beta1.SynchronizedAPI) error {
	before := m.ResourceVersion
	if err := write.ApplySynchronized(ctx, r.Client, m, "Machine", c, gen, api, ConditionFieldOwner); err != nil {
		return err
	}
	r.Freshness.Wrote(m, before)
	return nil
}

// record records events for a change of the condition: the warnings when
// the message changed, a False or Unknown when its message changed.
func (r *Reconciler) record(m *mapiv1beta1.Machine, cur *mapiv1beta1.Condition, next mapiv1beta1.Condition, warnings []string) {
	if cur != nil && cur.Message == next.Message && cur.Reason == next.Reason {
		return
	}
	switch next.Status {
	case corev1.ConditionTrue:
		for _, w := range warnings {
			r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, EventConversionWarning, "Convert", "%s", w)
		}
	case corev1.ConditionFalse:
		r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, next.Reason, "Sync", "%s", next.Message)
	default:
		r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, next.Reason, "Sync", "%s", next.Message)
	}
}
