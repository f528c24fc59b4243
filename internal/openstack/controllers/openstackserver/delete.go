package openstackserver

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
)

// reconcileDelete removes the server and what was made for it, then the
// finalizer. It needs no status: names find everything (clusterctl move
// drops status). Progress shows in Deleting and, through InstanceReady, in
// Ready.
func (r *Reconciler) reconcileDelete(ctx context.Context, oss *infrav1alpha1.OpenStackServer) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(oss, infrav1alpha1.OpenStackServerFinalizer) {
		return ctrl.Result{}, nil
	}
	before := conditionReason(oss, clusterv1.DeletingCondition)
	// After a terminal failure, wait for a change or for the retry time,
	// as the normal path does: the failure's own status write must not
	// send the refused request again.
	if before == conditions.DeletionFailedReason {
		if d := r.memo.parkedFor(oss, time.Now()); d > 0 {
			return ctrl.Result{RequeueAfter: d}, nil
		}
	}
	conditions.MarkTrue(oss, clusterv1.DeletingCondition, "deleting the server, its ports and volumes", clusterv1.DeletingReason)
	conditions.MarkFalse(oss, infrav1.InstanceReadyCondition, infrav1.DeletingReason, "the server is being deleted")

	clientSet, err := r.Scopes.For(ctx, oss.Namespace, oss.Spec.IdentityRef)
	if err != nil {
		// Credentials are needed to delete; never drop the finalizer and
		// leak the server. The condition says why it is stuck.
		return r.deleteOutcome(oss, before, "reading the identity", err)
	}
	s := server.Scope{Clients: clientSet, Log: ctrl.LoggerFrom(ctx)}
	req := server.Request{Name: oss.Name, Spec: &oss.Spec, MachineAZ: ptr.Deref(oss.Spec.AvailabilityZone, "")}
	known := server.Known{Resolved: oss.Status.Resolved, Resources: oss.Status.Resources, InstanceID: ptr.Deref(oss.Status.InstanceID, "")}
	if err := server.Delete(ctx, s, req, known); err != nil {
		return r.deleteOutcome(oss, before, "", err)
	}
	if err := r.releaseClaim(ctx, oss); err != nil {
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(oss, nil, corev1.EventTypeNormal, "ServerDeleted", "Delete", "Server %s and its ports and volumes are deleted", oss.Name)
	conditions.MarkTrue(oss, clusterv1.DeletingCondition, "", clusterv1.DeletionCompletedReason)
	controllerutil.RemoveFinalizer(oss, infrav1alpha1.OpenStackServerFinalizer)
	return ctrl.Result{}, nil
}

// deleteOutcome reports a deletion step that waits or failed. Deleting
// stays True with what holds the deletion up, so Ready (which reads
// Deleting with negative polarity) shows it; see conditions.DeleteOutcome.
// before is the Deleting reason this pass started with: the event is
// emitted once, when the deletion first fails.
func (r *Reconciler) deleteOutcome(oss *infrav1alpha1.OpenStackServer, before, what string, err error) (ctrl.Result, error) {
	res, rerr, terminal := conditions.DeleteOutcome(oss, what, err)
	if terminal {
		r.memo.park(oss, res.RequeueAfter, time.Now())
		if before != conditions.DeletionFailedReason {
			r.Recorder.Eventf(oss, nil, corev1.EventTypeWarning, conditions.DeletionFailedReason, "Delete", "%s", err.Error())
		}
	}
	return res, rerr
}
