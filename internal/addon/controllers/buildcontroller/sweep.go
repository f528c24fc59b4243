package buildcontroller

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	buildv1 "github.com/ocp-capi/ocp-capi/internal/consumed/build/v1"
)

// sweeper runs once when the manager (as leader) starts: it deletes the
// build objects that the other backend made. Switching --build-backend is a
// restart, so this is where a switch mid-build would otherwise leave objects
// behind (upstream bug #4127 left the ConfigMaps; the reconciler prunes
// those whatever the backend). Failed builds of the other backend go too:
// the controller could not retain them by the rules it applies to its own.
type sweeper struct {
	reader    client.Reader
	client    client.Client
	namespace string
	active    string
}

// Start implements manager.Runnable.
func (s *sweeper) Start(ctx context.Context) error {
	var list client.ObjectList
	var items func() []client.Object
	switch s.active {
	case osbuild.BackendBuild:
		l := &batchv1.JobList{}
		list, items = l, func() []client.Object {
			out := make([]client.Object, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out
		}
	default:
		l := &buildv1.BuildList{}
		list, items = l, func() []client.Object {
			out := make([]client.Object, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out
		}
	}
	log := ctrl.LoggerFrom(ctx).WithName("build-backend-sweep")
	err := s.reader.List(ctx, list, client.InNamespace(s.namespace), client.MatchingLabels{
		osbuild.ManagedByLabel: osbuild.ManagedByValue,
		osbuild.RoleLabel:      osbuild.RoleBuild,
	})
	if meta.IsNoMatchError(err) {
		return nil // no Build API: nothing of the other backend can exist
	}
	if err != nil {
		// Not fatal: the manager keeps running, the objects stay.
		log.Error(err, "Listing the other build backend's objects; they are left in place", "namespace", s.namespace)
		return nil
	}
	for _, o := range items() {
		if err := s.client.Delete(ctx, o, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
			log.Error(err, "Deleting a build object of the other backend", "object", fmt.Sprintf("%s/%s", o.GetNamespace(), o.GetName()))
			continue
		}
		log.Info("Deleted a build object of the previous --build-backend", "object", fmt.Sprintf("%s/%s", o.GetNamespace(), o.GetName()))
	}
	return nil
}
