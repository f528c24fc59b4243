package buildcontroller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// Reconcile reads the pool, decides, writes what differs, and returns.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	if err != nil && ctx.Err() != nil {
		// Shutdown: the work stops here; the next leader starts over from
		// what the API server holds (names are deterministic).
		ctrl.LoggerFrom(ctx).V(1).Info("Reconcile interrupted by shutdown", "error", err.Error())
		return ctrl.Result{}, nil //nolint:nilerr // a shutdown is no reconcile error
	}
	if apierrors.IsConflict(err) {
		// The pool changed since the cache gave it to us (often our own
		// previous write, not yet in the cache): decide again shortly.
		ctrl.LoggerFrom(ctx).V(1).Info("Conflict writing the pool; trying again", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return res, err
}

// conflictRetry is how soon a pool whose write conflicted is looked at
// again: the cache catches up in milliseconds.
const conflictRetry = 100 * time.Millisecond

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pool := &mcfgv1.MachineConfigPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		if apierrors.IsNotFound(err) {
			// The pool's owner references let the garbage collector do this;
			// doing it here too costs a cache read.
			return ctrl.Result{}, r.deleteAll(ctx, req.Name)
		}
		return ctrl.Result{}, fmt.Errorf("reading MachineConfigPool %s: %w", req.Name, err)
	}
	if !pool.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.deleteAll(ctx, pool.Name)
	}
	// One flow drives a pool: its MachineOSConfig if it has one (the GA
	// API, which upstream's MCO reads), else the layering-enabled label.
	mosc, err := r.machineOSConfigFor(ctx, pool.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if mosc == nil && !osbuild.IsLayered(pool) {
		return ctrl.Result{}, r.optOut(ctx, pool)
	}
	var mos *machineOS
	builds, err := r.machineOSBuilds(ctx, pool.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if mosc != nil {
		mos = &machineOS{config: mosc.DeepCopy(), builds: builds}
	}
	s, res, err := r.reconcileLayered(ctx, pool, mos)
	if err != nil || (mos == nil && len(builds) == 0) {
		return res, err
	}
	// The MachineOSBuilds no longer needed (all of them when the label
	// drives the pool).
	_, err = r.syncMachineOSBuilds(ctx, pool, mos, s)
	return res, err
}

// poolScope is what the phases of one reconcile of an opted-in pool share.
type poolScope struct {
	pool *mcfgv1.MachineConfigPool
	// objs are the objects made for the pool, from the cache.
	objs *ownedObjects
	in   osbuild.Inputs
	// id is in.ID(), the build ID.
	id string
	// mos is the pool's MachineOSConfig and MachineOSBuilds, nil when the
	// label drives the pool.
	mos *machineOS
}

// rebuildRequested reports whether a build of the pool's current
// configuration is asked for whatever images exist: the rebuild annotation
// on the MachineOSConfig that drives the pool, else on the pool.
func (s *poolScope) rebuildRequested() bool {
	if s.mos != nil {
		_, ok := s.mos.config.Annotations[osbuild.RebuildAnnotation]
		return ok
	}
	_, ok := s.pool.Annotations[osbuild.RebuildAnnotation]
	return ok
}

// reconcileLayered drives one opted-in pool towards an image built from its
// current inputs. It reads them, then runs one phase: keep the published
// image, start a build, follow the build in flight, publish its image, or
// report its failure.
//
// It returns the scope (nil when the inputs are unusable).
func (r *Reconciler) reconcileLayered(ctx context.Context, pool *mcfgv1.MachineConfigPool, mos *machineOS) (*poolScope, ctrl.Result, error) {
	objs, err := r.owned(ctx, pool.Name)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	var mosc *mcfgv1.MachineOSConfig
	if mos != nil {
		mosc = mos.config
	}
	in, err := r.inputs(ctx, pool, mosc)
	if err != nil {
		// Nothing can be built, so every build in flight is stale.
		res, err := r.inputProblem(ctx, pool, objs, err)
		return nil, res, err
	}
	s := &poolScope{pool: pool, objs: objs, in: in, id: in.ID(), mos: mos}
	res, err := r.runPhase(ctx, s)
	return s, res, err
}

// runPhase runs the one phase the pool's state calls for.
func (r *Reconciler) runPhase(ctx context.Context, s *poolScope) (ctrl.Result, error) {
	pool, objs := s.pool, s.objs
	rebuild := s.rebuildRequested()
	if published(pool, s.id) && !rebuild {
		// Nothing baked into the image changed (the rebuild rule).
		return ctrl.Result{}, r.keepImage(ctx, s)
	}

	cur := objs.build(s.id)
	if cur == nil {
		if e := osbuild.ParseHistory(pool.Annotations[osbuild.ImageHistoryAnnotation]).Find(s.id); e != nil && !rebuild {
			// An equivalent earlier build: its image, if still there.
			if done, err := r.reuse(ctx, s, *e); err != nil || done {
				return ctrl.Result{}, err
			}
		}
		return r.start(ctx, s)
	}
	obs, err := r.Backend.Observe(ctx, r.Cache, cur)
	if err != nil {
		return ctrl.Result{}, err
	}
	ref := fmt.Sprintf("%s %s/%s", r.Backend.Kind(), cur.GetNamespace(), cur.GetName())
	switch obs.Phase {
	case osbuild.PhasePending, osbuild.PhaseRunning:
		return r.inFlight(ctx, s, cur, ref, obs)
	case osbuild.PhaseSucceeded:
		return ctrl.Result{}, r.publish(ctx, s, cur, ref, obs)
	default:
		if rebuild {
			// Forced: the failed build and its inputs go, and the next
			// reconcile (their deletion events) starts a fresh one.
			if err := r.delete(ctx, cur); err != nil {
				return ctrl.Result{}, err
			}
			if cm := objs.configMap(s.id); cm != nil {
				return ctrl.Result{}, r.delete(ctx, cm)
			}
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, r.fail(ctx, s, cur, ref, obs)
	}
}

// inFlight follows the build cur (ref in messages), pending or running: it
// stops the build once past its timeout, else reports it and comes back at
// the timeout.
func (r *Reconciler) inFlight(ctx context.Context, s *poolScope, cur client.Object, ref string, obs osbuild.Observation) (ctrl.Result, error) {
	left := time.Until(cur.GetCreationTimestamp().Add(r.Options.Timeout))
	if left <= 0 {
		if err := r.Backend.Stop(ctx, r.Client, cur, osbuild.ReasonTimeout); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("stopping %s after its timeout: %w", ref, err)
		}
		r.Recorder.Eventf(s.pool, cur, corev1.EventTypeWarning, osbuild.ReasonTimeout, "StopBuild",
			"%s for %s ran longer than %s and was stopped", ref, s.in.RenderedConfig, r.Options.Timeout)
		return ctrl.Result{}, r.fail(ctx, s, cur, ref, osbuild.Observation{Phase: osbuild.PhaseFailed, Reason: osbuild.ReasonTimeout, Started: obs.Started})
	}
	if err := r.prune(ctx, s.pool, s.objs, s.id, false); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.recordBuild(ctx, s, cur, obs, ""); err != nil {
		return ctrl.Result{}, err
	}
	st := poolState{Type: osbuild.ConditionBuildPending, Reason: osbuild.ReasonPending,
		Message: fmt.Sprintf("%s builds %s; it waits for the builder to start it.", ref, s.in.RenderedConfig)}
	if obs.Phase == osbuild.PhaseRunning {
		st = poolState{Type: osbuild.ConditionBuilding, Reason: osbuild.ReasonRunning,
			Message: fmt.Sprintf("%s is building %s into %s.", ref, s.in.RenderedConfig, s.in.PushSpec())}
	}
	if obs.Message != "" {
		// A retry: say so, once per attempt.
		st.Message += " Earlier " + obs.Message + "."
		if !hasState(s.pool, st) {
			r.Recorder.Eventf(s.pool, cur, corev1.EventTypeWarning, "BuildRetrying", "Build", "%s for %s: %s", ref, s.in.RenderedConfig, obs.Message)
		}
	}
	// Come back when the timeout expires; events bring us back sooner.
	return ctrl.Result{RequeueAfter: left}, r.patchPool(ctx, s.pool, nil, &st)
}

// publish writes the image that the build cur (ref in messages) pushed to
// the pool, then deletes the build's objects.
func (r *Reconciler) publish(ctx context.Context, s *poolScope, cur client.Object, ref string, obs osbuild.Observation) error {
	image := s.in.ImageWithDigest(obs.Digest)
	if err := r.publishImage(ctx, s, image); err != nil {
		return err
	}
	// Before the build object goes: a failure here is retried from it.
	if err := r.recordBuild(ctx, s, cur, obs, image); err != nil {
		return err
	}
	observeMetrics(cur, obs, outcomeSucceeded)
	r.Recorder.Eventf(s.pool, cur, corev1.EventTypeNormal, osbuild.ReasonBuildSucceeded, "Build",
		"%s built %s from %s in %s", ref, image, s.in.RenderedConfig, time.Since(cur.GetCreationTimestamp().Time).Round(time.Second))
	// Published: the build's objects go.
	return r.prune(ctx, s.pool, s.objs, s.id, true)
}

// fail reports a failed build (ref in messages) on the pool; its objects
// are kept.
func (r *Reconciler) fail(ctx context.Context, s *poolScope, cur client.Object, ref string, obs osbuild.Observation) error {
	if err := r.prune(ctx, s.pool, s.objs, s.id, false); err != nil {
		return err
	}
	var what string
	switch obs.Reason {
	case osbuild.ReasonTimeout:
		what = fmt.Sprintf("did not finish within --build-timeout (%s) and was stopped", r.Options.Timeout)
	case osbuild.ReasonCancelled:
		what = "was cancelled"
	default:
		what = "failed"
	}
	if obs.Message != "" {
		what += ": " + obs.Message
	}
	st := poolState{Type: osbuild.ConditionBuildFailed, Reason: obs.Reason,
		Message: fmt.Sprintf("%s for %s %s. Its objects are kept for debugging; delete the %s to retry.", ref, s.in.RenderedConfig, what, r.Backend.Kind())}
	changed := !hasState(s.pool, st)
	if err := r.patchPool(ctx, s.pool, nil, &st); err != nil {
		return err
	}
	if err := r.recordBuild(ctx, s, cur, obs, ""); err != nil {
		return err
	}
	if changed {
		outcome := outcomeFailed
		if obs.Reason == osbuild.ReasonTimeout {
			outcome = outcomeTimeout
		}
		observeMetrics(cur, obs, outcome)
	}
	if changed && obs.Reason != osbuild.ReasonTimeout {
		r.Recorder.Eventf(s.pool, nil, corev1.EventTypeWarning, obs.Reason, "Build", "%s for %s %s", ref, s.in.RenderedConfig, what)
	}
	return nil
}

// inputProblem reports an input that stops every build.
func (r *Reconciler) inputProblem(ctx context.Context, pool *mcfgv1.MachineConfigPool, objs *ownedObjects, err error) (ctrl.Result, error) {
	var ie *osbuild.InputError
	if !errors.As(err, &ie) {
		return ctrl.Result{}, err // transient: controller-runtime backs off
	}
	if err := r.prune(ctx, pool, objs, "", false); err != nil {
		return ctrl.Result{}, err
	}
	s := poolState{Type: osbuild.ConditionBuildFailed, Reason: ie.Reason, Message: ie.Message}
	if !hasState(pool, s) {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, ie.Reason, "ReadInputs", "%s", ie.Message)
	}
	if err := r.patchPool(ctx, pool, nil, &s); err != nil {
		return ctrl.Result{}, err
	}
	switch ie.Reason {
	case osbuild.ReasonSecretNotFound, osbuild.ReasonInvalidSecret:
		// Secrets are not watched: look again later. Everything else is.
		return ctrl.Result{RequeueAfter: r.Options.SecretRetry}, nil
	}
	return ctrl.Result{}, nil
}

// hasState reports whether the pool's True condition already is s.
func hasState(pool *mcfgv1.MachineConfigPool, s poolState) bool {
	for _, c := range pool.Status.Conditions {
		if string(c.Type) == s.Type {
			return c.Status == corev1.ConditionTrue && c.Reason == s.Reason && c.Message == s.Message
		}
	}
	return false
}
