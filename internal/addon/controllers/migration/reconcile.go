package migration

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// Event reasons, on the MAPI object.
const (
	EventAuthoritativeAPISet     = "AuthoritativeAPISet"
	EventMigrationStarted        = "MigrationStarted"
	EventAuthoritativeAPIChanged = "AuthoritativeAPIChanged"
	EventCAPIPaused              = "ClusterAPIPaused"
	EventCAPIUnpaused            = "ClusterAPIUnpaused"
)

// scope is what the phases of one pass share.
type scope struct {
	key      types.NamespacedName
	mapi     client.Object
	f        mapiFields
	partners *partners
	decision authority.Decision
}

// Reconcile moves the MAPI object named by req one step towards the
// authority its spec asks for.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := &scope{key: types.NamespacedName{Namespace: r.MAPINamespace, Name: req.Name}}
	res, err := skeleton.RunPhases(ctx, s, r.readMAPI, r.readCAPI, r.decide, r.pause, r.writeStatus)
	if apierrors.IsConflict(err) {
		// Written from an old copy; the newer version's event brings the
		// request back.
		ctrl.LoggerFrom(ctx).V(1).Info("Acted on an old copy; waiting for the newer one", "reason", err.Error())
		return ctrl.Result{}, nil
	}
	return res, err
}

// readMAPI reads the MAPI object; one that is gone or being deleted has
// nothing left to switch.
func (r *Reconciler) readMAPI(ctx context.Context, s *scope) (ctrl.Result, error) {
	s.mapi = &mapiv1beta1.MachineSet{}
	if r.Kind == Machines {
		s.mapi = &mapiv1beta1.Machine{}
	}
	if err := r.Client.Get(ctx, s.key, s.mapi); err != nil {
		return ctrl.Result{}, ignoreNotFoundStop(err)
	}
	if !s.mapi.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, skeleton.ErrStop
	}
	// Mapped events bypass the For predicate.
	if r.WatchFilterValue != "" && s.mapi.GetLabels()[clusterv1.WatchLabel] != r.WatchFilterValue {
		return ctrl.Result{}, skeleton.ErrStop
	}
	if r.Freshness.Stale(s.mapi) {
		// A copy that a write of the add-on replaced: that write's event
		// is on its way.
		return ctrl.Result{RequeueAfter: freshness.Retry}, skeleton.ErrStop
	}
	s.f = fieldsOf(s.mapi)
	return ctrl.Result{}, nil
}

func ignoreNotFoundStop(err error) error {
	if apierrors.IsNotFound(err) {
		return skeleton.ErrStop
	}
	return err
}

// readCAPI reads the CAPI partners.
func (r *Reconciler) readCAPI(ctx context.Context, s *scope) (ctrl.Result, error) {
	p, err := r.readPartners(ctx, s.key.Name)
	s.partners = p
	return ctrl.Result{}, err
}

// decide asks the state machine for the next step.
func (r *Reconciler) decide(_ context.Context, s *scope) (ctrl.Result, error) {
	s.decision = authority.Decide(r.state(s))
	return ctrl.Result{}, nil
}

// state is what the two sides say.
func (r *Reconciler) state(s *scope) authority.State {
	f := s.f
	st := authority.State{
		Spec: *f.spec, Status: *f.status, SynchronizedAPI: authority.API(*f.synchronizedAPI),
		CAPIExists: s.partners.complete,
	}
	st.CAPIPauseRequested, st.CAPIPaused = s.partners.pauseState()
	if c := f.condition(mapiv1beta1.PausedCondition); c != nil && c.Status == corev1.ConditionTrue {
		st.MAPIPaused = true
	}
	if c := f.condition(authority.SynchronizedCondition); c != nil {
		source := s.mapi.GetGeneration()
		if st.SynchronizedAPI == authority.ClusterAPI {
			source = s.partners.generation()
		}
		st.Synchronized = c.Status == corev1.ConditionTrue && *f.synchronizedGeneration == source && source > 0
		st.SyncCatchingUp = c.Status == corev1.ConditionTrue && *f.synchronizedGeneration < source
		if c.Status != corev1.ConditionTrue {
			st.SyncMessage = c.Message
		}
	}
	return st
}

// pause adds or removes the pause annotation of the CAPI side.
func (r *Reconciler) pause(ctx context.Context, s *scope) (ctrl.Result, error) {
	d := s.decision
	if d.Step != authority.PauseCAPI && d.Step != authority.UnpauseCAPI {
		return ctrl.Result{}, nil
	}
	paused := d.Step == authority.PauseCAPI
	changed, err := r.setPaused(ctx, s.partners, paused)
	if len(changed) > 0 {
		reason, verb := EventCAPIUnpaused, "Unpaused"
		if paused {
			reason, verb = EventCAPIPaused, "Paused"
		}
		r.Recorder.Eventf(s.mapi, nil, corev1.EventTypeNormal, reason, verb, "%s %s in %s", verb, strings.Join(changed, ", "), r.CAPINamespace)
	}
	return ctrl.Result{}, err
}

// writeStatus writes the status the step asks for and the Migrated
// condition, if they differ from what is there. The object is MAPI's and
// others write its status too (the sync controllers their condition and
// synchronizedGeneration, the Machine API operator Paused): a merge patch
// that carries the resourceVersion, so that the conditions list it sends
// replaces only the list it was computed from, and so that it can remove
// synchronizedGeneration, which a server-side apply could not take from
// the sync controllers' field manager.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) (ctrl.Result, error) {
	d, f := s.decision, s.f
	if d.Quiet {
		return ctrl.Result{}, nil
	}
	before := *f.status
	err := write.LockedStatusPatch(ctx, r.Client, s.mapi, func() bool {
		changed := f.setCondition(migratedCondition(d.Condition))
		switch d.Step {
		case authority.SetStatus, authority.Handover:
			*f.status = d.Target
			changed = true
		case authority.StartMigration:
			*f.status = authority.Migrating
			changed = true
		}
		if d.Step == authority.Handover && d.ResetSync {
			f.setCondition(syncReset(d.Target))
			*f.synchronizedGeneration = 0
		}
		return changed
	}, client.FieldOwner(fieldOwner))
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("writing the status of %s %s: %w", r.Kind, s.key.Name, err)
	}
	r.recordStep(s, before)
	return ctrl.Result{}, nil
}

func (r *Reconciler) recordStep(s *scope, before authority.API) {
	d := s.decision
	switch d.Step {
	case authority.SetStatus:
		r.Recorder.Eventf(s.mapi, nil, corev1.EventTypeNormal, EventAuthoritativeAPISet, "Migrate", "status.authoritativeAPI set to %s", d.Target)
	case authority.StartMigration:
		r.Recorder.Eventf(s.mapi, nil, corev1.EventTypeNormal, EventMigrationStarted, "Migrate", "Handing authority from %s to %s", before, *s.f.spec)
	case authority.Handover:
		r.Recorder.Eventf(s.mapi, nil, corev1.EventTypeNormal, EventAuthoritativeAPIChanged, "Migrate", "status.authoritativeAPI is now %s: %s", d.Target, d.Condition.Message)
	}
}
