package buildcontroller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// optOut removes everything the controller made for a pool that is not (or
// no longer) labelled layering-enabled: its build objects (failed ones
// included), its inputs ConfigMaps, its annotations and its conditions. For
// a pool that never opted in this reads the cache and writes nothing.
func (r *Reconciler) optOut(ctx context.Context, pool *mcfgv1.MachineConfigPool) error {
	removed, err := r.deleteAllCounted(ctx, pool.Name)
	if err != nil {
		return err
	}
	// The MachineOSBuilds, if a MachineOSConfig drove the pool (its
	// deletion deletes them too, through their owner reference).
	n, err := r.syncMachineOSBuilds(ctx, pool, nil, nil)
	if err != nil {
		return err
	}
	removed += n
	// The images it pushed go too, unless another pool refers to them.
	r.pruneAll(ctx, pool)
	kv := map[string]string{}
	for _, k := range ownedAnnotations {
		kv[k] = ""
	}
	hadAny := removed > 0 || setAnnotations(pool.DeepCopy(), kv)
	if _, changed := removeConditions(pool.Status.Conditions); changed {
		hadAny = true
	}
	if !hadAny {
		return nil
	}
	if err := r.patchPool(ctx, pool, kv, nil); err != nil {
		return err
	}
	r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, "LayeringDisabled", "Cleanup",
		"Removed the layered image build objects, annotations and conditions: the pool has neither the label %s nor a MachineOSConfig", osbuild.LayeringEnabledLabel)
	return nil
}

// deleteAll deletes every object made for the pool named pool, its
// MachineOSBuilds included.
func (r *Reconciler) deleteAll(ctx context.Context, pool string) error {
	if _, err := r.deleteAllCounted(ctx, pool); err != nil {
		return err
	}
	_, err := r.syncMachineOSBuilds(ctx, &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: pool}}, nil, nil)
	return err
}

func (r *Reconciler) deleteAllCounted(ctx context.Context, pool string) (int, error) {
	objs, err := r.owned(ctx, pool)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, b := range objs.builds {
		if err := r.delete(ctx, b); err != nil {
			return n, err
		}
		n++
	}
	for _, cm := range objs.configMaps {
		if err := r.delete(ctx, cm); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
