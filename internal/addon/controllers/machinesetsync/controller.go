// Package machinesetsync mirrors Machine API MachineSets as Cluster API
// MachineSets while the Machine API is authoritative.
//
// For each machine.openshift.io/v1beta1 MachineSet in the MAPI namespace it
// keeps, in the CAPI namespace, a cluster.x-k8s.io/v1beta2 MachineSet of the
// same name (the mirror), paused with cluster.x-k8s.io/paused, and the
// infrastructure machine template the mirror points at, both converted by
// internal/addon/internal/mapi2capi. It reports the outcome in the MAPI
// MachineSet's Synchronized condition and status.synchronizedGeneration.
//
// The files split the work by concern: controller.go (setup, dispatch),
// sync.go (the MAPI-authoritative sync), templates.go (template lifecycle),
// delete.go (deletion and orphans), condition.go (the Synchronized
// condition and events), watches.go and diff.go.
package machinesetsync

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
)

// +kubebuilder:rbac:groups=machine.openshift.io,resources=machinesets,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=machine.openshift.io,resources=machinesets/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinesets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinesets/status,verbs=patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachinetemplates;metal3machinetemplates,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=config.openshift.io,resources=infrastructures,verbs=get;list;watch

// Names the controller puts on objects.
const (
	// SyncFinalizer is on the MAPI MachineSet and on its mirror.
	SyncFinalizer = authority.SyncFinalizer
	// CreatedForAnnotation is on the mirrors and templates the controller
	// created; its value is the MAPI MachineSet's name.
	CreatedForAnnotation = authority.CreatedForAnnotation
	// MachineSetLabel ties a template to its MachineSet, for lookup; the
	// value is mapi2capi.LabelValue(<MachineSet name>) (the name itself
	// unless longer than 63 characters). Upstream's key.
	MachineSetLabel = "machine.openshift.io/cluster-api-machineset"
	// FieldOwner is the field manager of the controller's writes.
	FieldOwner = "machineset-sync-controller"
	// ConditionFieldOwner owns the Synchronized condition and
	// synchronizedGeneration, which the migration controller also writes.
	ConditionFieldOwner = "machineset-sync-controller-synchronized"
	// InfrastructureName is the name of the Infrastructure singleton.
	InfrastructureName = authority.InfrastructureName
)

// Reconciler syncs MAPI MachineSets to CAPI MachineSets.
type Reconciler struct {
	// Client writes through Freshness.Client, so that the writes are
	// recorded.
	Client   client.Client
	Recorder events.EventRecorder
	// Freshness is the stale-cache guard the add-on's controllers share
	// (nil: none): the migration controller writes the MAPI MachineSet's
	// status and pauses the mirror.
	Freshness *freshness.Tracker
	// MAPINamespace holds the MAPI MachineSets, CAPINamespace their
	// mirrors and templates.
	MAPINamespace, CAPINamespace string
	// ClusterName, when set, is the CAPI Cluster name; otherwise the
	// Infrastructure cluster's status.infrastructureName.
	ClusterName      string
	WatchFilterValue string

	// templateKinds are the template kinds whose CRDs are installed, found
	// at setup. A CRD installed later needs a restart.
	templateKinds []templateKind
}

// templateKind is one kind of infrastructure machine template.
type templateKind struct {
	kind    string
	newList func() client.ObjectList
	newObj  func() client.Object
}

var allTemplateKinds = []templateKind{
	{
		kind:    mapi2capi.OpenStackMachineTemplateKind,
		newList: func() client.ObjectList { return &infrav1.OpenStackMachineTemplateList{} },
		newObj:  func() client.Object { return &infrav1.OpenStackMachineTemplate{} },
	},
	{
		kind:    mapi2capi.Metal3MachineTemplateKind,
		newList: func() client.ObjectList { return &metal3v1.Metal3MachineTemplateList{} },
		newObj:  func() client.Object { return &metal3v1.Metal3MachineTemplate{} },
	},
}

// SetupWithManager registers the controller. It watches the template kinds
// whose CRDs exist, and the Infrastructure singleton when its CRD exists.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.MAPINamespace == "" || r.CAPINamespace == "" {
		return fmt.Errorf("the MAPI and CAPI namespaces must be set")
	}
	log := ctrl.LoggerFrom(ctx).WithName("machinesetsync")
	b := ctrl.NewControllerManagedBy(mgr).
		Named("machinesetsync").
		WithOptions(opts).
		For(&mapiv1beta1.MachineSet{}, builder.WithPredicates(
			inNamespace(r.MAPINamespace),
			predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue))).
		Watches(&clusterv1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(r.mirrorToMachineSet),
			builder.WithPredicates(inNamespace(r.CAPINamespace)))

	r.templateKinds = nil
	for _, tk := range allTemplateKinds {
		ok, err := kindInstalled(mgr, tk.newObj())
		if err != nil {
			return err
		}
		if !ok {
			log.Info("Not watching an infrastructure template kind: its CRD is not installed", "kind", tk.kind)
			continue
		}
		r.templateKinds = append(r.templateKinds, tk)
		b = b.Watches(tk.newObj(), handler.EnqueueRequestsFromMapFunc(r.templateToMachineSet),
			builder.WithPredicates(inNamespace(r.CAPINamespace)))
	}
	ok, err := kindInstalled(mgr, &configv1.Infrastructure{})
	if err != nil {
		return err
	}
	if ok {
		b = b.Watches(&configv1.Infrastructure{}, handler.EnqueueRequestsFromMapFunc(r.infrastructureToMachineSets),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == InfrastructureName })))
	} else if r.ClusterName == "" {
		return fmt.Errorf("the Infrastructure CRD (config.openshift.io) is not installed: give the CAPI Cluster name with --cluster-name")
	}
	return b.Complete(r)
}

// kindInstalled tells whether the API server serves obj's kind.
func kindInstalled(mgr ctrl.Manager, obj client.Object) (bool, error) {
	gvk, err := apiutil.GVKForObject(obj, mgr.GetScheme())
	if err != nil {
		return false, err
	}
	if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, gvk.Version); err != nil {
		if meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// Reconcile syncs the MAPI MachineSet named by req (in the MAPI namespace)
// and its mirror of the same name.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ms := &mapiv1beta1.MachineSet{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.MAPINamespace, Name: req.Name}, ms); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		ms = nil
	}
	mirror := &clusterv1.MachineSet{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.CAPINamespace, Name: req.Name}, mirror); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		mirror = nil
	}
	if (ms != nil && r.Freshness.Stale(ms)) || (mirror != nil && r.Freshness.Stale(mirror)) {
		// A copy that a write of the add-on replaced: that write's event
		// is on its way.
		return ctrl.Result{RequeueAfter: freshness.Retry}, nil
	}

	var err error
	switch {
	case ms == nil:
		// The MAPI MachineSet is gone: what is left of its sync must not
		// stay stuck (upstream bug #626).
		err = r.reconcileOrphan(ctx, req.Name, mirror)
	case !ms.DeletionTimestamp.IsZero():
		err = r.reconcileDelete(ctx, ms, mirror)
	case Authority(ms) == mapiv1beta1.MachineAuthorityClusterAPI:
		err = r.reconcileFromCAPI(ctx, ms, mirror)
	case Authority(ms) != mapiv1beta1.MachineAuthorityMachineAPI:
		err = r.reconcileNotAuthoritative(ctx, ms)
	default:
		err = r.reconcileSync(ctx, ms, mirror)
	}
	if err != nil && (isStale(err) || errors.Is(err, authority.ErrRefused)) {
		// Only a newer version of an object can change the outcome: its
		// watch event brings the request back.
		ctrl.LoggerFrom(ctx).V(1).Info("Nothing to retry until an object changes", "reason", err.Error())
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, err
}

// Authority is the API that is authoritative for ms: status.authoritativeAPI,
// or, until the migration controller has set it, spec.authoritativeAPI,
// which defaults to MachineAPI.
func Authority(ms *mapiv1beta1.MachineSet) mapiv1beta1.MachineAuthority {
	return authority.Acting(ms.Status.AuthoritativeAPI, ms.Spec.AuthoritativeAPI)
}

func inNamespace(ns string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns })
}
