package openshiftassistedcontrolplane

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// SetupWithManager registers the controller. It watches the control
// planes; their Machines, ClusterDeployments and AgentClusterInstalls
// (owner references); the Clusters that refer to them; the cluster's
// MachineDeployments and MachineSets (the worker count) and the deletion
// of its worker Machines; the labelled Secrets (the admin kubeconfig and
// <cluster>-kubeconfig); and the ClusterImageSets (by annotation).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	log := ctrl.LoggerFrom(ctx)
	r.checks = &checkTimes{}
	owner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &controlplanev1.OpenshiftAssistedControlPlane{},
		handler.OnlyControllerOwner())
	if err := mgr.GetFieldIndexer().IndexField(ctx, &clusterv1.Machine{}, machineControllerIndex, machineController); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&controlplanev1.OpenshiftAssistedControlPlane{},
			builder.WithPredicates(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue), skeleton.NotStatusOnly())).
		Named("openshiftassistedcontrolplane").
		WithOptions(opts).
		Owns(&clusterv1.Machine{}).
		Watches(&hivev1.ClusterDeployment{}, owner).
		Watches(&hiveextv1beta1.AgentClusterInstall{}, owner).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterToControlPlane), builder.WithPredicates(clusterChanged())).
		Watches(&clusterv1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(r.clusterObjectToControlPlane),
			builder.WithPredicates(replicasChanged())).
		Watches(&clusterv1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(r.clusterObjectToControlPlane),
			builder.WithPredicates(replicasChanged())).
		WatchesRawSource(source.Kind(r.WorkerMachines, client.Object(workerMachineMetadata()),
			handler.EnqueueRequestsFromMapFunc(r.clusterObjectToControlPlane), workerGoing())).
		Watches(&hivev1.ClusterImageSet{}, handler.EnqueueRequestsFromMapFunc(imageSetToControlPlane)).
		WatchesRawSource(source.Kind(r.Secrets, client.Object(&corev1.Secret{}), handler.EnqueueRequestsFromMapFunc(r.secretToControlPlane))).
		Complete(r)
}

// clusterChanged passes Cluster changes the control plane acts on: pause,
// infrastructure provisioned, failure domains, networks, the control-plane
// reference, deletion.
func clusterChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1.Cluster)
		n, ok2 := e.ObjectNew.(*clusterv1.Cluster)
		if !ok1 || !ok2 {
			return true
		}
		return ptr.Deref(o.Spec.Paused, false) != ptr.Deref(n.Spec.Paused, false) ||
			ptr.Deref(o.Status.Initialization.InfrastructureProvisioned, false) != ptr.Deref(n.Status.Initialization.InfrastructureProvisioned, false) ||
			!equality.Semantic.DeepEqual(o.Status.FailureDomains, n.Status.FailureDomains) ||
			!equality.Semantic.DeepEqual(o.Spec.ClusterNetwork, n.Spec.ClusterNetwork) ||
			o.Spec.ControlPlaneRef != n.Spec.ControlPlaneRef ||
			o.GetDeletionTimestamp().IsZero() != n.GetDeletionTimestamp().IsZero()
	}}
}

// replicasChanged passes creations, deletions and changes of the replicas
// or owners of MachineDeployments and MachineSets, not their status.
func replicasChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		switch o := e.ObjectOld.(type) {
		case *clusterv1.MachineDeployment:
			n, ok := e.ObjectNew.(*clusterv1.MachineDeployment)
			return !ok || !equality.Semantic.DeepEqual(o.Spec.Replicas, n.Spec.Replicas) || deletionOrOwnersChanged(o, n)
		case *clusterv1.MachineSet:
			n, ok := e.ObjectNew.(*clusterv1.MachineSet)
			return !ok || !equality.Semantic.DeepEqual(o.Spec.Replicas, n.Spec.Replicas) || deletionOrOwnersChanged(o, n)
		}
		return true
	}}
}

func deletionOrOwnersChanged(o, n client.Object) bool {
	return o.GetDeletionTimestamp().IsZero() != n.GetDeletionTimestamp().IsZero() ||
		!equality.Semantic.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences())
}

// workerGoing passes the deletion of worker Machines (a control plane being
// deleted waits for them); control-plane Machines come through Owns.
func workerGoing() predicate.Funcs {
	isWorker := func(o client.Object) bool { return !isControlPlaneMachine(o) }
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return isWorker(e.ObjectNew) && e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
		DeleteFunc: func(e event.DeleteEvent) bool { return isWorker(e.Object) },
	}
}

// workerMachineMetadata is the object the worker Machines are watched and
// listed as: metadata only.
func workerMachineMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Machine"))
	return m
}

func clusterToControlPlane(_ context.Context, o client.Object) []reconcile.Request {
	c, ok := o.(*clusterv1.Cluster)
	if !ok {
		return nil
	}
	ref := c.Spec.ControlPlaneRef
	if ref.APIGroup != controlplanev1.GroupVersion.Group || ref.Kind != kind || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: ref.Name}}}
}

// clusterObjectToControlPlane maps an object labelled with a cluster's name
// (a MachineDeployment, MachineSet or Machine) to the cluster's control
// plane.
func (r *Reconciler) clusterObjectToControlPlane(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[clusterv1.ClusterNameLabel]
	switch v := o.(type) {
	case *clusterv1.MachineDeployment:
		name = v.Spec.ClusterName
	case *clusterv1.MachineSet:
		name = v.Spec.ClusterName
	case *clusterv1.Machine:
		name = v.Spec.ClusterName
	}
	return r.clusterNameToControlPlane(ctx, o.GetNamespace(), name)
}

func (r *Reconciler) clusterNameToControlPlane(ctx context.Context, namespace, name string) []reconcile.Request {
	if name == "" {
		return nil
	}
	c := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, c); err != nil {
		return nil
	}
	return clusterToControlPlane(ctx, c)
}

// secretToControlPlane maps <cluster>-kubeconfig (and the placeholder pull
// secret) to its owning control plane, and the admin kubeconfig (labelled
// with the cluster's name) to the cluster's control plane.
func (r *Reconciler) secretToControlPlane(ctx context.Context, o client.Object) []reconcile.Request {
	if ref := metavOwner(o); ref != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref}}}
	}
	return r.clusterNameToControlPlane(ctx, o.GetNamespace(), o.GetLabels()[clusterv1.ClusterNameLabel])
}

// metavOwner is the name of the control plane controlling o, or "".
func metavOwner(o client.Object) string {
	for _, ref := range o.GetOwnerReferences() {
		if ptr.Deref(ref.Controller, false) && ref.Kind == kind && strings.HasPrefix(ref.APIVersion, controlplanev1.GroupVersion.Group+"/") {
			return ref.Name
		}
	}
	return ""
}

// imageSetToControlPlane maps a ClusterImageSet to its control plane, named
// by its annotation (a cluster-scoped object has no namespaced owner).
func imageSetToControlPlane(_ context.Context, o client.Object) []reconcile.Request {
	ns, name, ok := strings.Cut(o.GetAnnotations()[controlplanev1.OwnerAnnotation], "/")
	if !ok || ns == "" || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}
