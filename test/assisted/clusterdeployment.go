package assisted

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// assisted-service's finalizers on the objects of an installation.
const (
	ClusterDeploymentFinalizer   = "clusterdeployments." + "agent-install.openshift.io/ai-deprovision"
	AgentClusterInstallFinalizer = "agentclusterinstall." + "agent-install.openshift.io/ai-deprovision"
)

// deprovisionReconciler plays assisted-service's ClusterDeployments
// controller in what it does with finalizers, keyed by the
// ClusterDeployment as upstream is:
//
//   - it adds its finalizer to the ClusterDeployment and to the
//     AgentClusterInstall that the ClusterDeployment refers to;
//   - an AgentClusterInstall being deleted has its Agents unbound and the
//     cluster deregistered, then loses the finalizer; upstream does this
//     from the ClusterDeployment's reconcile, so only while the
//     ClusterDeployment exists: deleting the ClusterDeployment first (or
//     together) strands the AgentClusterInstall's finalizer;
//   - a ClusterDeployment being deleted deletes its AgentClusterInstall,
//     waits for it to be gone, then loses the finalizer.
type deprovisionReconciler struct {
	s *Simulator
	c client.Client
}

func (s *Simulator) setupDeprovision(mgr ctrl.Manager) error {
	r := &deprovisionReconciler{s: s, c: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("assisted-simulator-clusterdeployment").
		WithOptions(s.controllerOptions()).
		For(&hivev1.ClusterDeployment{}).
		Watches(&hiveextv1beta1.AgentClusterInstall{}, handler.EnqueueRequestsFromMapFunc(installToClusterDeployment)).
		Complete(r)
}

func installToClusterDeployment(_ context.Context, o client.Object) []reconcile.Request {
	aci, ok := o.(*hiveextv1beta1.AgentClusterInstall)
	if !ok || aci.Spec.ClusterDeploymentRef.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: aci.Namespace, Name: aci.Spec.ClusterDeploymentRef.Name}}}
}

func (r *deprovisionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cd := &hivev1.ClusterDeployment{}
	if err := r.c.Get(ctx, req.NamespacedName, cd); err != nil {
		// Upstream too: without the ClusterDeployment, nothing happens,
		// including to an AgentClusterInstall being deleted.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cd.Spec.ClusterInstallRef == nil || cd.Spec.ClusterInstallRef.Kind != "AgentClusterInstall" {
		return ctrl.Result{}, nil
	}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	err := r.c.Get(ctx, types.NamespacedName{Namespace: cd.Namespace, Name: cd.Spec.ClusterInstallRef.Name}, aci)
	switch {
	case apierrors.IsNotFound(err):
		aci = nil
	case err != nil:
		return ctrl.Result{}, err
	}

	if aci != nil {
		switch {
		case aci.DeletionTimestamp.IsZero():
			if err := r.addFinalizer(ctx, aci, AgentClusterInstallFinalizer); err != nil {
				return ctrl.Result{}, err
			}
		case controllerutil.ContainsFinalizer(aci, AgentClusterInstallFinalizer):
			if err := r.unbindAgents(ctx, cd); err != nil {
				return ctrl.Result{}, err
			}
			base := aci.DeepCopy()
			controllerutil.RemoveFinalizer(aci, AgentClusterInstallFinalizer)
			if err := r.c.Patch(ctx, aci, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
			r.s.recordDeprovision("AgentClusterInstall", client.ObjectKeyFromObject(aci))
		}
	}

	if cd.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.addFinalizer(ctx, cd, ClusterDeploymentFinalizer)
	}
	if !controllerutil.ContainsFinalizer(cd, ClusterDeploymentFinalizer) {
		return ctrl.Result{}, nil
	}
	if aci != nil {
		if aci.DeletionTimestamp.IsZero() {
			if err := r.c.Delete(ctx, aci); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
		}
		// Upstream: "still waiting for clusterInstall to be deleted".
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	base := cd.DeepCopy()
	controllerutil.RemoveFinalizer(cd, ClusterDeploymentFinalizer)
	if err := r.c.Patch(ctx, cd, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	r.s.recordDeprovision("ClusterDeployment", client.ObjectKeyFromObject(cd))
	return ctrl.Result{}, nil
}

func (r *deprovisionReconciler) addFinalizer(ctx context.Context, obj client.Object, finalizer string) error {
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	base, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return nil
	}
	controllerutil.AddFinalizer(obj, finalizer)
	return client.IgnoreNotFound(r.c.Patch(ctx, obj, client.MergeFrom(base)))
}

// unbindAgents clears spec.clusterDeploymentName of the Agents bound to
// the cluster, as upstream does before deregistering it.
func (r *deprovisionReconciler) unbindAgents(ctx context.Context, cd *hivev1.ClusterDeployment) error {
	list := &aiv1beta1.AgentList{}
	if err := r.c.List(ctx, list, client.InNamespace(cd.Namespace)); err != nil {
		return err
	}
	for i := range list.Items {
		a := &list.Items[i]
		if ref := a.Spec.ClusterDeploymentName; ref == nil || ref.Name != cd.Name || ref.Namespace != cd.Namespace {
			continue
		}
		base := a.DeepCopy()
		a.Spec.ClusterDeploymentName = nil
		if err := r.c.Patch(ctx, a, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
