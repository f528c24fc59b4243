package openshiftassistedcontrolplane

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/clusterinstall"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// reconcileDelete takes the cluster down in an order that never leaves a
// finalizer without the controller that removes it:
//
//  1. the cluster's worker Machines go first (CAPI core deletes them before
//     the control plane; their drain needs the control plane and
//     <cluster>-kubeconfig, which lives until the control plane is gone);
//  2. the control-plane Machines: CAPI core deletes each one's
//     infrastructure machine and OpenshiftAssistedConfig, whose finalizer
//     the bootstrap provider removes after deleting the machine's InfraEnv
//     (assisted-service then deletes its Agents);
//  3. the AgentClusterInstall, then the ClusterDeployment: assisted-service
//     deregisters the cluster and removes their finalizers; the InfraEnvs
//     that referred to the ClusterDeployment are gone by then;
//  4. the cluster-scoped ClusterImageSet, which no owner reference can
//     collect;
//  5. the finalizer. <cluster>-kubeconfig and the placeholder pull secret
//     go with the control plane (owner references).
//
// Each step waits for the previous one through watches; nothing is forced.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope, machines []*clusterv1.Machine) (ctrl.Result, error) {
	oacp := s.oacp
	if !controllerutil.ContainsFinalizer(oacp, controlplanev1.ControlPlaneFinalizer) {
		markDeleting(oacp, "the control plane is being deleted")
		return ctrl.Result{}, nil
	}

	if s.clusterName != "" {
		workers, err := r.workerMachines(ctx, s)
		if err != nil {
			return ctrl.Result{}, err
		}
		if len(workers) > 0 {
			markDeleting(oacp, fmt.Sprintf("waiting for the cluster's %d worker Machines (%s) to be deleted first",
				len(workers), strings.Join(workers[:min(len(workers), 3)], ", ")))
			return ctrl.Result{}, nil
		}
	}

	if len(machines) > 0 {
		for _, m := range machines {
			if !m.DeletionTimestamp.IsZero() {
				continue
			}
			if err := r.Client.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("deleting Machine %s: %w", m.Name, err)
			}
			r.event(oacp, m, "MachineDeleted", "Delete", "Deleted control-plane Machine %s", m.Name)
		}
		markDeleting(oacp, fmt.Sprintf("waiting for %d control-plane Machines to be deleted", len(machines)))
		return ctrl.Result{}, nil
	}

	key := client.ObjectKeyFromObject(oacp)
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if gone, err := r.deleteOwned(ctx, s, key, aci, "AgentClusterInstall"); !gone || err != nil {
		return ctrl.Result{}, err
	}
	cd := &hivev1.ClusterDeployment{}
	if gone, err := r.deleteOwned(ctx, s, key, cd, "ClusterDeployment"); !gone || err != nil {
		return ctrl.Result{}, err
	}

	is := &hivev1.ClusterImageSet{}
	name := clusterinstall.ClusterImageSetName(oacp.Namespace, oacp.Name)
	switch err := r.Client.Get(ctx, types.NamespacedName{Name: name}, is); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return ctrl.Result{}, err
	case is.Annotations[controlplanev1.OwnerAnnotation] == oacp.Namespace+"/"+oacp.Name && is.DeletionTimestamp.IsZero():
		if err := r.Client.Delete(ctx, is); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting ClusterImageSet %s: %w", name, err)
		}
		r.event(oacp, is, "ClusterImageSetDeleted", "Delete", "Deleted ClusterImageSet %s", name)
	}

	markDeleting(oacp, "the control plane is being deleted")
	controllerutil.RemoveFinalizer(oacp, controlplanev1.ControlPlaneFinalizer)
	r.Workload.Forget(key)
	return ctrl.Result{}, nil
}

// deleteOwned deletes the control plane's object of that key if it is
// there, and tells whether it is gone. One that is not the control
// plane's is left alone (and counts as gone).
func (r *Reconciler) deleteOwned(ctx context.Context, s *scope, key types.NamespacedName, obj client.Object, kindName string) (bool, error) {
	switch err := r.Client.Get(ctx, key, obj); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	}
	if owned, _ := ownedBy(obj, s); !owned {
		return true, nil
	}
	if obj.GetDeletionTimestamp().IsZero() {
		if err := r.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("deleting %s %s: %w", kindName, obj.GetName(), err)
		}
		r.event(s.oacp, obj, kindName+"Deleted", "Delete", "Deleted %s %s", kindName, obj.GetName())
	}
	markDeleting(s.oacp, fmt.Sprintf("waiting for %s %s to be deleted (assisted-service removes its finalizer %v)",
		kindName, obj.GetName(), obj.GetFinalizers()))
	return false, nil
}

// workerMachines names the cluster's Machines that are not control-plane
// Machines, from the metadata of every Machine (WorkerMachines).
func (r *Reconciler) workerMachines(ctx context.Context, s *scope) ([]string, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachineList"))
	if err := r.WorkerMachines.List(ctx, list, client.InNamespace(s.oacp.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: s.clusterName}); err != nil {
		return nil, err
	}
	var out []string
	for i := range list.Items {
		if !isControlPlaneMachine(&list.Items[i]) {
			out = append(out, list.Items[i].Name)
		}
	}
	return out, nil
}

// isControlPlaneMachine is CAPI's test of a control-plane Machine (its
// cluster.x-k8s.io/control-plane label) on any object's metadata.
func isControlPlaneMachine(o metav1.Object) bool {
	_, ok := o.GetLabels()[clusterv1.MachineControlPlaneLabel]
	return ok
}

// deleteOrphanImageSet deletes the ClusterImageSet of a control plane that
// is gone without having run its deletion: clusterctl move removes the
// finalizer before deleting the source's objects, and the garbage
// collector cannot collect a cluster-scoped object for a namespaced owner.
// The control plane's absence is confirmed uncached first, so that a cache
// that has not seen a new control plane yet cannot cost it its image set.
func (r *Reconciler) deleteOrphanImageSet(ctx context.Context, key types.NamespacedName) error {
	is := &hivev1.ClusterImageSet{}
	name := clusterinstall.ClusterImageSetName(key.Namespace, key.Name)
	switch err := r.Client.Get(ctx, types.NamespacedName{Name: name}, is); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	if is.Annotations[controlplanev1.OwnerAnnotation] != key.String() || !is.DeletionTimestamp.IsZero() {
		return nil
	}
	switch err := r.APIReader.Get(ctx, key, &controlplanev1.OpenshiftAssistedControlPlane{}); {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return err
	}
	if err := r.Client.Delete(ctx, is); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting ClusterImageSet %s of the deleted control plane %s: %w", name, key, err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted the ClusterImageSet of a control plane that went without its deletion (clusterctl move)",
		"clusterImageSet", name, "controlPlane", key.String())
	return nil
}
