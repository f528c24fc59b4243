package buildcontroller

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// poolState is what the pool's four build conditions say: Type is the True
// one; the others are False with the same reason and no message.
type poolState struct {
	Type, Reason, Message string
}

// setConditions makes conds show s. A condition whose status does not
// change keeps its lastTransitionTime. It reports whether anything changed.
func setConditions(conds []mcfgv1.MachineConfigPoolCondition, s poolState, now metav1.Time) ([]mcfgv1.MachineConfigPoolCondition, bool) {
	out := slices.Clone(conds)
	changed := false
	for _, t := range osbuild.Conditions {
		want := mcfgv1.MachineConfigPoolCondition{
			Type:   mcfgv1.MachineConfigPoolConditionType(t),
			Status: corev1.ConditionFalse,
			Reason: s.Reason,
		}
		if t == s.Type {
			want.Status, want.Message = corev1.ConditionTrue, s.Message
		}
		i := slices.IndexFunc(out, func(c mcfgv1.MachineConfigPoolCondition) bool { return string(c.Type) == t })
		if i < 0 {
			want.LastTransitionTime = now
			out = append(out, want)
			changed = true
			continue
		}
		cur := out[i]
		want.LastTransitionTime = cur.LastTransitionTime
		if cur.Status != want.Status {
			want.LastTransitionTime = now
		}
		if cur != want {
			out[i] = want
			changed = true
		}
	}
	return out, changed
}

// removeConditions drops the owned conditions.
func removeConditions(conds []mcfgv1.MachineConfigPoolCondition) ([]mcfgv1.MachineConfigPoolCondition, bool) {
	out := slices.DeleteFunc(slices.Clone(conds), func(c mcfgv1.MachineConfigPoolCondition) bool {
		return slices.Contains(osbuild.Conditions, string(c.Type))
	})
	return out, len(out) != len(conds)
}

// ownedAnnotations are the pool annotations the controller writes.
var ownedAnnotations = []string{
	osbuild.DesiredOSImageAnnotation,
	osbuild.NewestImageEquivalentConfigAnnotation,
	osbuild.BuildIDAnnotation,
	osbuild.ImageHistoryAnnotation,
}

// setAnnotations sets (value != "") or removes (value == "") annotations;
// it reports whether anything changed.
func setAnnotations(obj metav1.Object, kv map[string]string) bool {
	ann := obj.GetAnnotations()
	changed := false
	for k, v := range kv {
		cur, ok := ann[k]
		switch {
		case v == "" && ok:
			delete(ann, k)
			changed = true
		case v != "" && cur != v:
			if ann == nil {
				ann = map[string]string{}
			}
			ann[k] = v
			changed = true
		}
	}
	if changed {
		obj.SetAnnotations(ann)
	}
	return changed
}

// published reports whether the pool's image was built from inputs id.
func published(pool *mcfgv1.MachineConfigPool, id string) bool {
	return pool.Annotations[osbuild.BuildIDAnnotation] == id && pool.Annotations[osbuild.DesiredOSImageAnnotation] != ""
}

// patchPool writes the annotations in kv (metadata) and the state s (status
// conditions; nil removes them), each only when it changes something. The
// pool is the MCO's; the controller owns three annotations and four
// conditions of it. Both patches carry the resourceVersion: a pool that
// changed since it was read must not get an image built for its old
// configuration (docs/addon/build-controller.md, "Never publish an outdated
// image").
//
// Locked merge patches, not server-side apply: the conditions list is atomic, so an apply would take the MCO's conditions too.
func (r *Reconciler) patchPool(ctx context.Context, pool *mcfgv1.MachineConfigPool, kv map[string]string, s *poolState) error {
	if len(kv) > 0 {
		if err := write.LockedPatch(ctx, r.Client, pool, func() bool { return setAnnotations(pool, kv) }); err != nil {
			return fmt.Errorf("patching the annotations of MachineConfigPool %s: %w", pool.Name, err)
		}
	}
	err := write.LockedStatusPatch(ctx, r.Client, pool, func() bool {
		var changed bool
		if s == nil {
			pool.Status.Conditions, changed = removeConditions(pool.Status.Conditions)
		} else {
			pool.Status.Conditions, changed = setConditions(pool.Status.Conditions, *s, metav1.Now())
		}
		return changed
	})
	if err != nil {
		return fmt.Errorf("patching the conditions of MachineConfigPool %s: %w", pool.Name, err)
	}
	return nil
}
