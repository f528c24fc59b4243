package openstackmachine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
)

func (r *Reconciler) reconcileNormal(ctx context.Context, osm *infrav1.OpenStackMachine, machine *clusterv1.Machine, cluster *clusterv1.Cluster) (ctrl.Result, error) {
	if controllerutil.AddFinalizer(osm, infrav1.OpenStackMachineFinalizer) {
		return ctrl.Result{}, nil
	}

	oss := &infrav1alpha1.OpenStackServer{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(osm), oss)
	switch {
	case apierrors.IsNotFound(err):
		if provisioned(osm) {
			// The server object went away after the machine was
			// provisioned: the server is gone and a Machine's server is
			// not replaced behind its back.
			conditions.MarkFalse(osm, infrav1.InstanceReadyCondition, infrav1.InstanceDeletedReason, "the OpenStackServer of this machine was deleted")
			return ctrl.Result{}, nil
		}
		return r.createServer(ctx, osm, machine, cluster)
	case err != nil:
		return ctrl.Result{}, err
	}
	// The identity is the one mutable input (credential rotation); pass it
	// on so the server keeps working with the new credentials.
	if ref := osm.Spec.IdentityRef; ref != nil && *ref != oss.Spec.IdentityRef {
		base := oss.DeepCopy()
		oss.Spec.IdentityRef = *ref
		if err := r.Client.Patch(ctx, oss, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, err
		}
	}
	r.mirror(osm, oss)
	return r.reconcileMembership(ctx, osm, machine, oss, cluster)
}

func (r *Reconciler) createServer(ctx context.Context, osm *infrav1.OpenStackMachine, machine *clusterv1.Machine, cluster *clusterv1.Cluster) (ctrl.Result, error) {
	if cluster == nil || !ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false) {
		conditions.MarkFalse(osm, infrav1.InstanceReadyCondition, infrav1.WaitingForClusterInfrastructureReason, "waiting for the cluster's infrastructure to be provisioned")
		return ctrl.Result{}, nil
	}
	if machine.Spec.Bootstrap.DataSecretName == nil {
		conditions.MarkFalse(osm, infrav1.InstanceReadyCondition, infrav1.WaitingForBootstrapDataReason, "waiting for the bootstrap provider to write the bootstrap data")
		return ctrl.Result{}, nil
	}
	var defaults *Defaults
	if r.Defaults != nil {
		d, err := r.Defaults(ctx, cluster)
		if err != nil {
			conditions.MarkUnknown(osm, infrav1.InstanceReadyCondition, infrav1.WaitingForClusterInfrastructureReason, err.Error())
			return ctrl.Result{}, err
		}
		defaults = d
	}
	spec, err := ServerSpec(osm, machine, defaults)
	if err != nil {
		conditions.MarkFalse(osm, infrav1.InstanceReadyCondition, infrav1.InvalidSpecReason, err.Error())
		return ctrl.Result{RequeueAfter: conditions.TerminalRetry}, nil
	}
	oss := &infrav1alpha1.OpenStackServer{
		ObjectMeta: metav1.ObjectMeta{
			Name:      osm.Name,
			Namespace: osm.Namespace,
			Labels:    map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
		},
		Spec: *spec,
	}
	if v, ok := osm.Labels[clusterv1.WatchLabel]; ok {
		oss.Labels[clusterv1.WatchLabel] = v
	}
	if err := controllerutil.SetControllerReference(osm, oss, r.Client.Scheme()); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Client.Create(ctx, oss); err != nil && !apierrors.IsAlreadyExists(err) {
		return createFailed(osm, err)
	}
	r.Recorder.Eventf(osm, oss, corev1.EventTypeNormal, "ServerRequested", "Create", "Created OpenStackServer %s", oss.Name)
	conditions.MarkFalse(osm, infrav1.InstanceReadyCondition, infrav1.WaitingForServerReason, "waiting for the OpenStackServer to report")
	return ctrl.Result{}, nil
}

// mirror copies the server's state into the machine per the contract:
// providerID, addresses and provisioned (set once, never reverted), and
// InstanceReady from the server's Ready.
func (r *Reconciler) mirror(osm *infrav1.OpenStackMachine, oss *infrav1alpha1.OpenStackServer) {
	if id := ptr.Deref(oss.Status.InstanceID, ""); id != "" {
		osm.Status.InstanceID = ptr.To(id)
		if osm.Spec.ProviderID == "" {
			osm.Spec.ProviderID = ProviderID(oss.Spec.IdentityRef.Region, id)
		}
	}
	if oss.Status.InstanceState != nil {
		osm.Status.InstanceState = ptr.To(*oss.Status.InstanceState)
	}
	if len(oss.Status.Addresses) > 0 {
		osm.Status.Addresses = oss.Status.Addresses
	}
	if oss.Status.Initialization != nil && ptr.Deref(oss.Status.Initialization.Provisioned, false) && !provisioned(osm) {
		osm.Status.Initialization = &infrav1.OpenStackMachineInitializationStatus{Provisioned: ptr.To(true)}
	}
	if capiconditions.Get(oss, infrav1.ReadyCondition) == nil {
		conditions.MarkFalse(osm, infrav1.InstanceReadyCondition, infrav1.WaitingForServerReason, "waiting for the OpenStackServer to report")
		return
	}
	capiconditions.SetMirrorCondition(oss, osm, infrav1.ReadyCondition, capiconditions.TargetConditionType(infrav1.InstanceReadyCondition))
}

func provisioned(osm *infrav1.OpenStackMachine) bool {
	return osm.Status.Initialization != nil && ptr.Deref(osm.Status.Initialization.Provisioned, false)
}

// createFailed reports a refused OpenStackServer create. Only a rejection
// of the object itself (400 Bad Request, 422 Invalid: the spec derived
// from this machine does not validate) is a spec error; it waits for a
// change of the machine. Everything else (the API server unavailable, a
// timeout, a conflict, a quota or an admission check that may pass later)
// is transient: InstanceReady Unknown and the error returned, so
// controller-runtime retries with backoff.
func createFailed(osm *infrav1.OpenStackMachine, err error) (ctrl.Result, error) {
	msg := fmt.Sprintf("creating the OpenStackServer: %v", err)
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		conditions.MarkFalse(osm, infrav1.InstanceReadyCondition, infrav1.InvalidSpecReason, msg)
		return ctrl.Result{RequeueAfter: conditions.TerminalRetry}, nil
	}
	conditions.MarkUnknown(osm, infrav1.InstanceReadyCondition, infrav1.InstanceCreatingReason, msg+"; retrying")
	return ctrl.Result{}, err
}
