// Package migration switches the authority of Machine API MachineSets and
// Machines between the Machine API (MAPI) and Cluster API (CAPI), both
// ways, as their spec.authoritativeAPI asks.
//
// It runs one controller per kind (machinesetmigration, machinemigration)
// over the MAPI objects; each pass reads the MAPI object and its CAPI
// partners of the same name (the CAPI MachineSet; or the CAPI Machine, its
// infrastructure machine and, on OpenStack, its OpenStackServer), asks
// internal/addon/internal/authority for the next step, does it (one write)
// and reports it in the MAPI object's Migrated condition.
// docs/addon/migration.md describes the states, rules and writes.
//
// Files: controller.go (setup, watches), reconcile.go (the phases),
// partners.go (reading and pausing the CAPI side), status.go (the MAPI
// status writes).
package migration

import (
	"context"
	"fmt"

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
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
)

// +kubebuilder:rbac:groups=machine.openshift.io,resources=machinesets;machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=machine.openshift.io,resources=machinesets/status;machines/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinesets;machines,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines;openstackservers;metal3machines,verbs=get;list;watch;patch

// Kind selects which MAPI kind a Reconciler migrates.
type Kind string

// The kinds.
const (
	MachineSets Kind = "MachineSet"
	Machines    Kind = "Machine"
)

// Reconciler migrates the MAPI objects of one kind.
type Reconciler struct {
	// Client writes through Freshness.Client, so that the writes are
	// recorded.
	Client   client.Client
	Recorder events.EventRecorder
	// Freshness is the stale-cache guard the add-on's controllers share
	// (nil: none): the MachineSet sync and this controller write the same
	// MAPI objects.
	Freshness *freshness.Tracker
	Kind      Kind
	// MAPINamespace holds the MAPI objects, CAPINamespace their partners.
	MAPINamespace, CAPINamespace string
	WatchFilterValue             string

	// infraKinds are the infrastructure machine kinds whose CRDs are
	// installed (found at setup).
	infraKinds map[string]bool
}

// SetupWithManager registers the controller for r.Kind.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.MAPINamespace == "" || r.CAPINamespace == "" {
		return fmt.Errorf("the MAPI and CAPI namespaces must be set")
	}
	log := ctrl.LoggerFrom(ctx).WithName(r.name())
	b := ctrl.NewControllerManagedBy(mgr).Named(r.name()).WithOptions(opts)
	toMAPI := handler.EnqueueRequestsFromMapFunc(r.sameName)
	inCAPI := builder.WithPredicates(inNamespace(r.CAPINamespace))
	switch r.Kind {
	case MachineSets:
		b = b.For(&mapiv1beta1.MachineSet{}, builder.WithPredicates(inNamespace(r.MAPINamespace),
			predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue))).
			Watches(&clusterv1.MachineSet{}, toMAPI, inCAPI)
	case Machines:
		b = b.For(&mapiv1beta1.Machine{}, builder.WithPredicates(inNamespace(r.MAPINamespace),
			predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue))).
			Watches(&clusterv1.Machine{}, toMAPI, inCAPI)
		r.infraKinds = map[string]bool{}
		for _, o := range []client.Object{&infrav1.OpenStackMachine{}, &metal3v1.Metal3Machine{}, &infrav1alpha1.OpenStackServer{}} {
			gvk, err := apiutil.GVKForObject(o, mgr.GetScheme())
			if err != nil {
				return err
			}
			if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, gvk.Version); err != nil {
				if meta.IsNoMatchError(err) {
					log.Info("Not watching a kind: its CRD is not installed", "kind", gvk.Kind)
					continue
				}
				return err
			}
			r.infraKinds[gvk.Kind] = true
			b = b.Watches(o, toMAPI, inCAPI)
		}
	default:
		return fmt.Errorf("unknown kind %q", r.Kind)
	}
	return b.Complete(r)
}

func (r *Reconciler) name() string {
	if r.Kind == MachineSets {
		return "machinesetmigration"
	}
	return "machinemigration"
}

// sameName maps a CAPI object to the MAPI object of its name.
func (r *Reconciler) sameName(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.MAPINamespace, Name: o.GetName()}}}
}

func inNamespace(ns string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns })
}
