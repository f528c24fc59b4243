package openstackfloatingippool

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/fippool"
)

// reconcileDelete keeps the pool while any IPAddress it handed out exists
// (their release needs it), then deletes every floating IP the pool
// created (its tag finds them, whatever the status says) except the
// pre-allocated ones, and removes the finalizer.
func (r *Reconciler) reconcileDelete(ctx context.Context, pool *infrav1alpha1.OpenStackFloatingIPPool) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(pool, infrav1alpha1.OpenStackFloatingIPPoolFinalizer) {
		return ctrl.Result{}, nil
	}
	conditions.MarkTrue(pool, clusterv1.DeletingCondition, "deleting the floating IPs the pool created", clusterv1.DeletingReason)
	addrs, err := r.addresses(ctx, pool)
	if err != nil {
		return ctrl.Result{}, err
	}
	claims, err := r.claims(ctx, pool)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.dropOrphans(ctx, addrs, claims); err != nil {
		return ctrl.Result{}, err
	}
	n, err := r.neutron(ctx, pool)
	if err != nil {
		// Never drop the finalizer without the credentials: the floating
		// IPs would leak.
		res, rerr, _ := conditions.DeleteOutcome(pool, "reading the identity", err)
		return res, rerr
	}
	if err := r.release(ctx, n, pool, addrs); err != nil {
		res, rerr, _ := conditions.DeleteOutcome(pool, "releasing addresses", err)
		return res, rerr
	}
	if len(addrs) > 0 {
		// Their deletion events bring the next pass.
		conditions.MarkTrue(pool, clusterv1.DeletingCondition,
			fmt.Sprintf("waiting for %d IPAddresses to be released", len(addrs)), infrav1alpha1.WaitingForIPAddressesReason)
		return ctrl.Result{}, nil
	}
	tagged, err := fippool.Tagged(ctx, n, pool.FloatingIPTag())
	if err != nil {
		res, rerr, _ := conditions.DeleteOutcome(pool, "", err)
		return res, rerr
	}
	for _, ip := range append(tagged, pool.Status.AvailableIPs...) {
		if contains(pool.Spec.PreAllocatedFloatingIPs, ip) {
			continue
		}
		if err := fippool.Delete(ctx, n, ip); err != nil {
			res, rerr, _ := conditions.DeleteOutcome(pool, "", err)
			return res, rerr
		}
		pool.Status.AvailableIPs = without(pool.Status.AvailableIPs, ip)
	}
	r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, "PoolDeleted", "Delete", "The floating IPs of pool %s are deleted", pool.Name)
	conditions.MarkTrue(pool, clusterv1.DeletingCondition, "", clusterv1.DeletionCompletedReason)
	controllerutil.RemoveFinalizer(pool, infrav1alpha1.OpenStackFloatingIPPoolFinalizer)
	return ctrl.Result{}, nil
}
