package openshiftassistedcontrolplane

import (
	"context"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileNormal runs the concerns in order: the cluster's hive objects,
// the kubeconfig and what the installation's state means for the status,
// the Machines, the upgrade, the remediation of unhealthy Machines, and the
// counters.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope, machines []*clusterv1.Machine) (ctrl.Result, error) {
	oacp := s.oacp

	if s.cluster == nil || !ptr.Deref(s.cluster.Status.Initialization.InfrastructureProvisioned, false) {
		markWaitingForCluster(s)
		setKubernetesVersion(oacp, "")
		return ctrl.Result{}, nil
	}

	if err := r.reconcileTemplateOwner(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	inst, res, err := r.reconcileClusterObjects(ctx, s)
	if inst == nil || err != nil {
		setKubernetesVersion(oacp, "")
		return res, err
	}
	kubeconfig, err := r.reconcileKubeconfig(ctx, s, inst)
	if err != nil {
		return ctrl.Result{}, err
	}
	setInstallStatus(oacp, inst, kubeconfig)

	resMachines, err := r.reconcileMachines(ctx, s, inst, machines)
	if err != nil {
		return ctrl.Result{}, err
	}
	resUpgrade := r.reconcileUpgrade(ctx, s, inst, kubeconfig)
	setKubernetesVersion(oacp, inst.version)
	resRemediation, err := r.reconcileRemediation(ctx, s, inst, machines)
	if err != nil {
		return ctrl.Result{}, err
	}
	return minResult(minResult(res, resRemediation), minResult(resMachines, resUpgrade)), nil
}
