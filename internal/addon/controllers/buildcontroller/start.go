package buildcontroller

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
)

// start validates the inputs that are read only now (Secrets, the rendered
// MachineConfig), creates the inputs ConfigMap and the build object, and
// marks the pool BuildPending. Both names are deterministic: an object that
// already exists (a cache that lags, a restart) is adopted, not duplicated.
func (r *Reconciler) start(ctx context.Context, s *poolScope) (ctrl.Result, error) {
	pool, in, objs := s.pool, s.in, s.objs
	if err := r.checkSecrets(ctx, in); err != nil {
		return r.inputProblem(ctx, pool, objs, err)
	}
	mcJSON, err := r.renderedConfigJSON(ctx, in.RenderedConfig, pool.Name)
	if err != nil {
		return r.inputProblem(ctx, pool, objs, err)
	}
	req, err := osbuild.NewRequest(r.Options.Namespace, in, pool, mcJSON)
	if err != nil {
		return r.inputProblem(ctx, pool, objs, err)
	}
	if req.RegistryCAs, err = r.registryCAs(ctx); err != nil {
		return ctrl.Result{}, err
	}

	if objs.configMap(req.ID) == nil {
		if err := r.Client.Create(ctx, req.InputsConfigMap()); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("creating ConfigMap %s/%s: %w", req.Namespace, req.Names.Inputs, err)
		}
	}
	obj := r.Backend.Manifest(req)
	ref := fmt.Sprintf("%s %s/%s", r.Backend.Kind(), obj.GetNamespace(), obj.GetName())
	switch err := r.Client.Create(ctx, obj); {
	case err == nil:
		r.Recorder.Eventf(pool, obj, corev1.EventTypeNormal, "BuildStarted", "Build",
			"Created %s to build %s into %s; its log stays readable (kubectl logs -n %s %s/%s) until the build is cleaned up",
			ref, in.RenderedConfig, in.PushSpec(), obj.GetNamespace(), strings.ToLower(r.Backend.Kind()), obj.GetName())
		if err := r.recordBuild(ctx, s, obj, osbuild.Observation{Phase: osbuild.PhasePending}, ""); err != nil {
			return ctrl.Result{}, err
		}
	case apierrors.IsAlreadyExists(err):
		// Ours, not yet in the cache, or being deleted: its events bring
		// us back.
	default:
		return ctrl.Result{}, fmt.Errorf("creating %s: %w", ref, err)
	}
	if err := r.prune(ctx, pool, objs, req.ID, false); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.Options.Timeout}, r.patchPool(ctx, pool, nil, &poolState{
		Type: osbuild.ConditionBuildPending, Reason: osbuild.ReasonPending,
		Message: fmt.Sprintf("%s builds %s; it waits for the builder to start it.", ref, in.RenderedConfig),
	})
}
