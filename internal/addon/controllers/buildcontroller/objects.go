package buildcontroller

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// ownedObjects are the objects the controller made for one pool.
type ownedObjects struct {
	builds     []client.Object
	configMaps []*corev1.ConfigMap
}

func idOf(o client.Object) string { return o.GetLabels()[osbuild.BuildIDLabel] }

// build returns the build object for inputs id, or nil.
func (o *ownedObjects) build(id string) client.Object {
	for _, b := range o.builds {
		if idOf(b) == id {
			return b
		}
	}
	return nil
}

// configMap returns the inputs ConfigMap for inputs id, or nil.
func (o *ownedObjects) configMap(id string) *corev1.ConfigMap {
	for _, cm := range o.configMaps {
		if idOf(cm) == id {
			return cm
		}
	}
	return nil
}

// owned lists, from the cache, the objects made for pool: selected by the
// label, confirmed by the annotation (the label may be a hash).
func (r *Reconciler) owned(ctx context.Context, pool string) (*ownedObjects, error) {
	sel := client.MatchingLabels(osbuild.SelectorForPool(pool))
	ns := client.InNamespace(r.Options.Namespace)
	out := &ownedObjects{}

	list := r.Backend.NewList()
	if err := r.Cache.List(ctx, list, ns, sel); err != nil {
		return nil, fmt.Errorf("listing the %ss of pool %s: %w", r.Backend.Kind(), pool, err)
	}
	for _, b := range r.Backend.Items(list) {
		if b.GetAnnotations()[osbuild.PoolAnnotation] == pool && b.GetDeletionTimestamp().IsZero() {
			out.builds = append(out.builds, b)
		}
	}
	cms := &corev1.ConfigMapList{}
	if err := r.Cache.List(ctx, cms, ns, sel); err != nil {
		return nil, fmt.Errorf("listing the ConfigMaps of pool %s: %w", pool, err)
	}
	for i := range cms.Items {
		cm := &cms.Items[i]
		if cm.Annotations[osbuild.PoolAnnotation] == pool && cm.DeletionTimestamp.IsZero() {
			out.configMaps = append(out.configMaps, cm)
		}
	}
	return out, nil
}

// prune deletes what is no longer needed:
//   - builds for other inputs that are in flight (superseded: they are never
//     published) or succeeded (never published either);
//   - the build for the current inputs once its image is published;
//   - failed builds beyond --build-failed-retention, oldest first (the one
//     for the current inputs is always kept: it is what says "failed, do not
//     rebuild");
//   - inputs ConfigMaps with no build left, except the current one before
//     its image is published (upstream bug #4127 left them behind).
//
// id is the current inputs' ID ("" when the inputs are invalid).
func (r *Reconciler) prune(ctx context.Context, pool *mcfgv1.MachineConfigPool, objs *ownedObjects, id string, isPublished bool) error {
	keepIDs := map[string]bool{}
	if id != "" && !isPublished {
		keepIDs[id] = true
	}
	var failed []client.Object
	for _, b := range objs.builds {
		if keepIDs[idOf(b)] {
			continue
		}
		obs, err := r.Backend.Observe(ctx, r.Cache, b)
		if err != nil {
			return err
		}
		if obs.Phase == osbuild.PhaseFailed {
			failed = append(failed, b)
			continue
		}
		if err := r.delete(ctx, b); err != nil {
			return err
		}
		if obs.Phase.InFlight() {
			buildsTotal.WithLabelValues(outcomeSuperseded).Inc()
			r.Recorder.Eventf(pool, b, corev1.EventTypeNormal, "BuildSuperseded", "DeleteBuild",
				"Deleted %s %s: it built %s, which is no longer the pool's configuration", r.Backend.Kind(), b.GetName(), b.GetAnnotations()[osbuild.DesiredConfigAnnotation])
		}
	}
	// Newest first; ties (one-second timestamps) by name, for determinism.
	sort.Slice(failed, func(i, j int) bool {
		ti, tj := failed[i].GetCreationTimestamp(), failed[j].GetCreationTimestamp()
		if !ti.Equal(&tj) {
			return tj.Before(&ti)
		}
		return failed[i].GetName() < failed[j].GetName()
	})
	for i, b := range failed {
		if i < r.Options.FailedRetention {
			keepIDs[idOf(b)] = true
			continue
		}
		if err := r.delete(ctx, b); err != nil {
			return err
		}
	}
	if cur := objs.build(id); cur != nil && !isPublished {
		keepIDs[id] = true
	}
	for _, cm := range objs.configMaps {
		if keepIDs[idOf(cm)] {
			continue
		}
		if err := r.delete(ctx, cm); err != nil {
			return err
		}
	}
	return nil
}

// delete deletes obj and, for a Job, its pods (background propagation).
func (r *Reconciler) delete(ctx context.Context, obj client.Object) error {
	if err := r.Client.Delete(ctx, obj, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
