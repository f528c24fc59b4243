package machinesetsync

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// SynchronizedCondition is the MAPI condition this controller owns.
const SynchronizedCondition mapiv1beta1.ConditionType = "Synchronized"

// Reasons of the Synchronized condition. The names of the False reasons are
// upstream's (cluster-capi-operator) where the meaning is the same.
const (
	// ReasonSynchronized (True): the mirror and its template match the MAPI
	// MachineSet's generation status.synchronizedGeneration. The message
	// lists the conversion warnings, if any.
	ReasonSynchronized = "ResourceSynchronized"
	// ReasonConversionFailed (False): the MachineSet cannot be converted;
	// the message names each field at fault by its path. Fix or remove
	// those fields.
	ReasonConversionFailed = "FailedToConvertMAPIMachineSetToCAPI"
	// ReasonInfraUnavailable (False): the cluster context is missing: the
	// Infrastructure cluster could not be read, or names no infrastructure
	// name and --cluster-name is not set.
	ReasonInfraUnavailable = "FailedToGetCAPIInfraResources"
	// ReasonCreateFailed (False): creating the mirror failed; the message
	// has the API server's answer.
	ReasonCreateFailed = "FailedToCreateCAPIMachineSet"
	// ReasonUpdateFailed (False): updating the mirror's metadata, spec or
	// status failed; the message has the API server's answer.
	ReasonUpdateFailed = "FailedToUpdateCAPIMachineSet"
	// ReasonTemplateFailed (False): creating, adopting or cleaning up an
	// infrastructure machine template failed.
	ReasonTemplateFailed = "FailedToUpdateCAPIInfraMachineTemplate"
	// ReasonTemplateConflict (False): a template with the wanted name exists
	// with another spec (the controller did not create it, or it was
	// changed). Delete or rename it.
	ReasonTemplateConflict = "CAPIInfraMachineTemplateConflict"
	// ReasonNotAuthoritative (Unknown): Cluster API is authoritative; this
	// controller leaves the CAPI side alone.
	ReasonNotAuthoritative = "AuthoritativeAPINotMachineAPI"
	// ReasonMigrating (Unknown): authority is being handed over; this
	// controller leaves the CAPI side alone until it is done.
	ReasonMigrating = "AuthoritativeAPIMigrating"
)

// Event reasons besides the condition's.
const (
	EventConversionWarning = "ConversionWarning"
	EventMirrorCreated     = "CAPIMachineSetCreated"
	EventMirrorDeleted     = "CAPIMachineSetDeleted"
	EventTemplateCreated   = "InfraMachineTemplateCreated"
	EventTemplateDeleted   = "InfraMachineTemplateDeleted"
)

// condition is the wanted state of the Synchronized condition. On True an
// empty SourceAPI means the MAPI MachineSet's own side and generation (MAPI
// to CAPI).
type condition = authority.Wanted

// setSynchronized writes the Synchronized condition, and on True
// status.synchronizedGeneration, unless they already say so, and records
// events for each change.
func (r *Reconciler) setSynchronized(ctx context.Context, ms *mapiv1beta1.MachineSet, want condition) error {
	cur := authority.FindCondition(ms.Status.Conditions, SynchronizedCondition)
	next, gen, api := synchronizedState(ms, cur, want)
	if authority.SameCondition(cur, next) && gen == ms.Status.SynchronizedGeneration && api == ms.Status.SynchronizedAPI {
		return nil
	}
	if err := r.applySynchronized(ctx, ms, next, gen, api); err != nil {
		return err
	}
	r.recordSynchronized(ms, cur, next, want.Warnings, gen)
	return nil
}

// synchronizedState is the condition that says want, and the
// synchronizedGeneration and synchronizedAPI to go with it, given the
// current condition cur.
func synchronizedState(ms *mapiv1beta1.MachineSet, cur *mapiv1beta1.Condition, want condition) (mapiv1beta1.Condition, int64, mapiv1beta1.SynchronizedAPI) {
	next := authority.NextSynchronized(cur, want.Status, want.Reason, want.Message, metav1.Now())
	// synchronizedGeneration never decreases (the CRD refuses it, but in
	// the write that leaves Migrating, which is the migration
	// controller's). synchronizedAPI names the side of the last sync, and
	// stays until the next one (the migration controller reads it).
	gen, api := ms.Status.SynchronizedGeneration, ms.Status.SynchronizedAPI
	if want.Status == corev1.ConditionTrue {
		source, sourceGen := want.SourceAPI, want.SourceGen
		if source == "" {
			source, sourceGen = mapiv1beta1.SynchronizedAPIMachineAPI, ms.Generation
		}
		api = source
		if sourceGen > gen {
			gen = sourceGen
		}
	}
	return next, gen, api
}

// applySynchronized writes c, gen and api to ms's status and updates ms
// with the API server's answer (write.ApplySynchronized says why an apply),
// recorded in the stale-cache guard: the recording client sees no apply.
func (r *Reconciler) applySynchronized(ctx context.Context, ms *mapiv1beta1.MachineSet, c mapiv1beta1.Condition, gen int64, api mapiv1beta1.SynchronizedAPI) error {
	before := ms.ResourceVersion
	if err := write.ApplySynchronized(ctx, r.Client, ms, "MachineSet", c, gen, api, ConditionFieldOwner); err != nil {
		return err
	}
	r.Freshness.Wrote(ms, before)
	return nil
}

// recordSynchronized records the events of a change of the condition from
// cur to next: every True (a sync of a new generation), the warnings when
// the message changed, and a False or Unknown when its message changed.
func (r *Reconciler) recordSynchronized(ms *mapiv1beta1.MachineSet, cur *mapiv1beta1.Condition, next mapiv1beta1.Condition, warnings []string, gen int64) {
	changedMessage := cur == nil || cur.Message != next.Message || cur.Reason != next.Reason
	switch next.Status {
	case corev1.ConditionTrue:
		r.Recorder.Eventf(ms, nil, corev1.EventTypeNormal, next.Reason, "Sync",
			"The MachineSets %s/%s and %s/%s are synchronized from %s at generation %d", r.MAPINamespace, ms.Name, r.CAPINamespace, ms.Name, ms.Status.SynchronizedAPI, gen)
		if changedMessage {
			for _, w := range warnings {
				r.Recorder.Eventf(ms, nil, corev1.EventTypeWarning, EventConversionWarning, "Convert", "%s", w)
			}
		}
	case corev1.ConditionFalse:
		if changedMessage {
			r.Recorder.Eventf(ms, nil, corev1.EventTypeWarning, next.Reason, "Sync", "%s", next.Message)
		}
	default:
		if changedMessage {
			r.Recorder.Eventf(ms, nil, corev1.EventTypeNormal, next.Reason, "Sync", "%s", next.Message)
		}
	}
}

// synchronizedMessage is the True message: empty, or the warnings.
func synchronizedMessage(warnings []string) string {
	switch len(warnings) {
	case 0:
		return ""
	case 1:
		return "Converted with 1 warning: " + warnings[0]
	}
	return fmt.Sprintf("Converted with %d warnings: %s", len(warnings), strings.Join(warnings, "; "))
}
