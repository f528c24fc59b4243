package openshiftassistedconfig

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infra"
)

// propagateISO points the Metal3MachineTemplate the machine was cloned
// from, and the Metal3Machine, at the InfraEnv's ISO with format live-iso.
// The template first, so that machines cloned from now on carry the ISO;
// then the machine, whose image is put back if anything changed it, so that
// no machine escapes with another ISO.
func (r *Reconciler) propagateISO(ctx context.Context, s *scope, b *boot, infraObj *unstructured.Unstructured) error {
	iso := b.infraEnv.Status.ISODownloadURL
	if b.template != nil {
		changed, err := r.setLiveISO(ctx, b.template, iso)
		if err != nil {
			return err
		}
		if changed {
			r.Recorder.Eventf(s.config, b.template, corev1.EventTypeNormal, "LiveISOSet", "Update",
				"%s %s boots the ISO of InfraEnv %s", b.template.GetKind(), b.template.GetName(), b.infraEnv.Name)
		}
	}
	oldURL, oldFormat, _ := infra.Metal3Image(infraObj)
	changed, err := r.setLiveISO(ctx, infraObj, iso)
	if err != nil || !changed {
		return err
	}
	// Setting the ISO on a new machine is routine (its DataSecretCreated
	// event says which InfraEnv it boots); putting it back is not.
	if oldFormat == infra.LiveISOFormat && oldURL != "" && oldURL != iso {
		r.Recorder.Eventf(s.config, infraObj, corev1.EventTypeWarning, "LiveISORestored", "Update",
			"%s %s pointed at another ISO; it now boots InfraEnv %s's", infraObj.GetKind(), infraObj.GetName(), b.infraEnv.Name)
	}
	return nil
}

// setLiveISO writes the live ISO image on obj as a merge patch of what
// changed, so that fields this provider does not know survive.
func (r *Reconciler) setLiveISO(ctx context.Context, obj *unstructured.Unstructured, iso string) (bool, error) {
	base := obj.DeepCopy()
	changed, err := infra.SetLiveISO(obj, iso)
	if err != nil || !changed {
		return false, err
	}
	if err := r.Client.Patch(ctx, obj, client.MergeFrom(base)); err != nil {
		return false, fmt.Errorf("setting the live ISO on %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return true, nil
}
