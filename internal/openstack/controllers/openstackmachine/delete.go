package openstackmachine

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
)

// reconcileDelete deletes the machine's OpenStackServer and keeps the
// finalizer until it is gone, so the server's cleanup is never orphaned.
// The server's own Deleting progress is mirrored into InstanceReady.
func (r *Reconciler) reconcileDelete(ctx context.Context, osm *infrav1.OpenStackMachine, machine *clusterv1.Machine, cluster *clusterv1.Cluster) (ctrl.Result, error) {
	oss := &infrav1alpha1.OpenStackServer{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(osm), oss)
	switch {
	case apierrors.IsNotFound(err):
		controllerutil.RemoveFinalizer(osm, infrav1.OpenStackMachineFinalizer)
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	if oss.DeletionTimestamp.IsZero() {
		// Out of the load balancer first, so the API stops sending it
		// traffic before the server goes.
		if r.Members != nil && machine != nil && util.IsControlPlaneMachine(machine) {
			if err := r.Members.Remove(ctx, osm.Name, cluster); err != nil {
				res, rerr, _ := conditions.Outcome(osm, infrav1.APIServerIngressReadyCondition, err)
				return res, rerr
			}
		}
		if err := r.Client.Delete(ctx, oss); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}
	// The server's Deleting says what holds its deletion up; a failed one
	// keeps its reason here, so the machine's Ready does not read as mere
	// progress.
	msg, reason := "deleting the OpenStackServer", infrav1.DeletingReason
	if c := capiconditions.Get(oss, clusterv1.DeletingCondition); c != nil {
		if c.Message != "" {
			msg += ": " + c.Message
		}
		if c.Reason == conditions.DeletionFailedReason {
			reason = c.Reason
		}
	}
	conditions.MarkFalse(osm, infrav1.InstanceReadyCondition, reason, msg)
	// The server's deletion event brings the next pass.
	return ctrl.Result{}, nil
}
