// Package openstackmachinetemplate reports the capacity of the machines a
// template makes (cpu, memory, ephemeral storage from its flavor), so the
// cluster autoscaler can scale a MachineDeployment from zero.
package openstackmachinetemplate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/identity"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

var (
	ownedConditions = []string{infrav1.ReadyCondition, infrav1.CapacityResolvedCondition}
	status          = skeleton.Status{Kind: "OpenStackMachineTemplate", Owned: ownedConditions,
		Summary: []string{infrav1.CapacityResolvedCondition}}
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachinetemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachinetemplates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters,verbs=get;list;watch

// Reconciler fills OpenStackMachineTemplate status.capacity.
type Reconciler struct {
	Client           client.Client
	Scopes           *identity.Factory
	WatchFilterValue string
}

// SetupWithManager registers the controller. Only spec changes trigger it
// (plus the first sight of each template): a template's flavor does not
// change, so periodic resyncs would only cost Nova calls.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	return manager.FilteredController(ctx, mgr, &infrav1.OpenStackMachineTemplate{}, opts, r.WatchFilterValue).
		WithEventFilter(predicate.GenerationChangedPredicate{}).
		Complete(r)
}

// Reconcile resolves the flavor and records the capacity.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	t := &infrav1.OpenStackMachineTemplate{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !t.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	w, err := status.Start(r.Client, t)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { reterr = errors.Join(reterr, w.Finish(ctx, reterr)) }()

	ref := t.Spec.Template.Spec.IdentityRef
	if ref == nil {
		var err error
		if ref, err = r.clusterIdentity(ctx, t); err != nil {
			return ctrl.Result{}, err
		}
	}
	if ref == nil {
		// Capacity only matters for scaling from zero. The owner may come
		// later (CAPI adds it, which changes no generation): look again.
		conditions.MarkFalse(t, infrav1.CapacityResolvedCondition, infrav1.WaitingForDependenciesReason,
			"spec.template.spec.identityRef is not set and no Cluster owning the template has an OpenStackCluster: the flavor cannot be read to report capacity")
		return ctrl.Result{RequeueAfter: clusterIdentityPoll}, nil
	}
	c, err := r.Scopes.For(ctx, t.Namespace, *ref)
	if err != nil {
		res, rerr, _ := conditions.Outcome(t, infrav1.CapacityResolvedCondition, err)
		return res, rerr
	}
	f, err := flavorOf(ctx, c, t.Spec.Template.Spec.Flavor)
	if err != nil {
		res, rerr, _ := conditions.Outcome(t, infrav1.CapacityResolvedCondition, err)
		return res, rerr
	}
	t.Status.Capacity = Capacity(f)
	t.Status.NodeInfo = &infrav1.NodeInfo{OperatingSystem: "linux"}
	conditions.MarkTrue(t, infrav1.CapacityResolvedCondition, fmt.Sprintf("flavor %s", f.Name))
	return ctrl.Result{}, nil
}

// clusterIdentityPoll: how often a template without credentials looks for
// its Cluster's.
const clusterIdentityPoll = time.Minute

// clusterIdentity is the identityRef of the OpenStackCluster of the Cluster
// that owns t (CAPI's MachineDeployment and control-plane controllers make
// it the templates' owner), or of the Cluster its cluster-name label
// names; nil when there is none yet. CAPO's templates carry no identityRef
// and take the cluster's in the same way.
func (r *Reconciler) clusterIdentity(ctx context.Context, t *infrav1.OpenStackMachineTemplate) (*infrav1.OpenStackIdentityReference, error) {
	name := t.Labels[clusterv1.ClusterNameLabel]
	for _, o := range t.OwnerReferences {
		if gv, err := schema.ParseGroupVersion(o.APIVersion); err == nil && gv.Group == clusterv1.GroupVersion.Group && o.Kind == "Cluster" {
			name = o.Name
		}
	}
	if name == "" {
		return nil, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: name}, cluster); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	infra := cluster.Spec.InfrastructureRef
	if infra.APIGroup != infrav1.GroupVersion.Group || infra.Kind != "OpenStackCluster" {
		return nil, nil
	}
	osc := &infrav1.OpenStackCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: infra.Name}, osc); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return &osc.Spec.IdentityRef, nil
}

func flavorOf(ctx context.Context, c *clients.Clients, p infrav1.FlavorParam) (*flavors.Flavor, error) {
	if p.ID != nil {
		f, err := c.Compute.GetFlavor(ctx, *p.ID)
		if err != nil {
			return nil, clients.Classify(err, "reading flavor "+*p.ID)
		}
		return f, nil
	}
	if p.Filter == nil || p.Filter.Name == nil {
		return nil, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec, Message: "spec.template.spec.flavor needs id or filter.name"}
	}
	list, err := c.Compute.ListFlavors(ctx)
	if err != nil {
		return nil, clients.Classify(err, "listing flavors")
	}
	for i := range list {
		if list[i].Name == *p.Filter.Name {
			return &list[i], nil
		}
	}
	return nil, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonNotFound, Message: fmt.Sprintf("no flavor named %q", *p.Filter.Name)}
}

// Capacity is a flavor's resources as a node would report them.
func Capacity(f *flavors.Flavor) corev1.ResourceList {
	out := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(f.VCPUs), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(int64(f.RAM)*1024*1024, resource.BinarySI),
	}
	if disk := f.Disk + f.Ephemeral; disk > 0 {
		out[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(disk)*1024*1024*1024, resource.BinarySI)
	}
	return out
}
