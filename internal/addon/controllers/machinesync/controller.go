// Package machinesync keeps each Machine API Machine and its Cluster API
// partners (a CAPI Machine and an OpenStackMachine or Metal3Machine, all of
// the same name) mirrors of each other, in the direction the Machine's
// authority says:
//
//   - Machine API authoritative: the CAPI Machine and infrastructure
//     machine are made from the MAPI Machine (internal/addon/internal/
//     mapi2capi), kept paused, and mirror its status;
//   - Cluster API authoritative: the MAPI Machine mirrors the CAPI ones
//     (internal/addon/internal/capi2mapi), spec, status and the provider's
//     labels; a CAPI Machine of a CAPI MachineSet whose MAPI MachineSet
//     exists gets a MAPI Machine;
//   - Migrating: neither side is touched.
//
// ownerReferences follow the MachineSets: a machine owned by a MachineSet
// on one side is owned by the MachineSet of the same name on the other.
// Deletions are mirrored: the authoritative side deletes the machine's
// resources, then the mirror goes.
//
// Files: controller.go (setup, dispatch), forward.go (MAPI to CAPI),
// reverse.go (CAPI to MAPI), delete.go (deletions), condition.go (the
// Synchronized condition), compare.go (what counts as in sync).
package machinesync

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
)

// +kubebuilder:rbac:groups=machine.openshift.io,resources=machines,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=machine.openshift.io,resources=machines/status,verbs=patch
// +kubebuilder:rbac:groups=machine.openshift.io,resources=machinesets/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines/finalizers;machinesets/finalizers,verbs=update
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines;metal3machines,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines/status;metal3machines/status,verbs=patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackservers,verbs=get;list;watch;patch

// Names the controller puts on objects.
const (
	// SyncFinalizer is on the MAPI Machine and the CAPI Machine.
	SyncFinalizer = authority.SyncFinalizer
	// CreatedForAnnotation marks the mirrors the controller created.
	CreatedForAnnotation = authority.CreatedForAnnotation
	// FieldOwner is the field manager of the controller's writes.
	FieldOwner = "machine-sync-controller"
	// ConditionFieldOwner owns Synchronized, synchronizedGeneration and
	// synchronizedAPI of MAPI Machines (the migration controller writes
	// them too).
	ConditionFieldOwner = "machine-sync-controller-synchronized"
	// InfrastructureName is the name of the Infrastructure singleton.
	InfrastructureName = authority.InfrastructureName
)

// Reconciler syncs MAPI Machines and their CAPI partners.
type Reconciler struct {
	// Client writes through Freshness.Client, so that the writes are
	// recorded.
	Client   client.Client
	Recorder events.EventRecorder
	// Freshness is the stale-cache guard the add-on's controllers share
	// (nil: none): the migration controller writes the MAPI Machine's
	// status.authoritativeAPI, and a copy from before that write would
	// have this controller act for the wrong side.
	Freshness *freshness.Tracker
	// MAPINamespace holds the MAPI Machines, CAPINamespace their partners.
	MAPINamespace, CAPINamespace string
	// ClusterName, when set, is the CAPI Cluster's name.
	ClusterName      string
	WatchFilterValue string

	// installed are the infrastructure kinds whose CRDs exist.
	installed map[string]bool
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.MAPINamespace == "" || r.CAPINamespace == "" {
		return fmt.Errorf("the MAPI and CAPI namespaces must be set")
	}
	log := ctrl.LoggerFrom(ctx).WithName("machinesync")
	toMAPI := handler.EnqueueRequestsFromMapFunc(r.sameName)
	inCAPI := builder.WithPredicates(inNamespace(r.CAPINamespace))
	b := ctrl.NewControllerManagedBy(mgr).Named("machinesync").WithOptions(opts).
		For(&mapiv1beta1.Machine{}, builder.WithPredicates(inNamespace(r.MAPINamespace),
			predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue))).
		Watches(&clusterv1.Machine{}, toMAPI, inCAPI).
		// A MachineSet's UID is what ownerReferences name: a machine
		// waiting for its MachineSet's partner is woken by it.
		Watches(&clusterv1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(r.machinesOfCAPIMachineSet), inCAPI).
		Watches(&mapiv1beta1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(r.machinesOfMAPIMachineSet),
			builder.WithPredicates(inNamespace(r.MAPINamespace)))
	r.installed = map[string]bool{}
	for _, o := range []client.Object{&infrav1.OpenStackMachine{}, &metal3v1.Metal3Machine{}, &infrav1alpha1.OpenStackServer{}, &configv1.Infrastructure{}} {
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
		r.installed[gvk.Kind] = true
		if gvk.Kind != "Infrastructure" {
			b = b.Watches(o, toMAPI, inCAPI)
		}
	}
	if !r.installed["Infrastructure"] && r.ClusterName == "" {
		return fmt.Errorf("the Infrastructure CRD (config.openshift.io) is not installed: give the CAPI Cluster name with --cluster-name")
	}
	return b.Complete(r)
}

// Reconcile syncs the Machine named by req and its partners.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s, err := r.read(ctx, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if s.mapi != nil && r.WatchFilterValue != "" && s.mapi.Labels[clusterv1.WatchLabel] != r.WatchFilterValue {
		return ctrl.Result{}, nil
	}
	if slices.ContainsFunc(s.objects(), r.Freshness.Stale) {
		// A copy that a write of the add-on replaced: that write's event
		// is on its way.
		return ctrl.Result{RequeueAfter: freshness.Retry}, nil
	}
	switch {
	case s.mapi == nil:
		err = r.reconcileNoMAPI(ctx, s)
	case !s.mapi.DeletionTimestamp.IsZero():
		err = r.reconcileMAPIDeletion(ctx, s)
	case Authority(s.mapi) == mapiv1beta1.MachineAuthorityMachineAPI:
		err = r.reconcileForward(ctx, s)
	case Authority(s.mapi) == mapiv1beta1.MachineAuthorityClusterAPI:
		err = r.reconcileReverse(ctx, s)
	default:
		err = r.setSynchronized(ctx, s.mapi, migratingCondition())
	}
	if err != nil && (isStale(err) || errors.Is(err, authority.ErrRefused)) {
		// Only a newer version of an object can change the outcome: its
		// watch event brings the request back.
		ctrl.LoggerFrom(ctx).V(1).Info("Nothing to retry until an object changes", "reason", err.Error())
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, err
}

// Authority is the API authoritative for m: status.authoritativeAPI, or,
// until it is set, spec.authoritativeAPI (default MachineAPI).
func Authority(m *mapiv1beta1.Machine) mapiv1beta1.MachineAuthority {
	return authority.Acting(m.Status.AuthoritativeAPI, m.Spec.AuthoritativeAPI)
}

// errCacheBehind: a create found the object already there.
var errCacheBehind = errors.New("the object exists but is not in the cache yet")

func isStale(err error) bool { return errors.Is(err, errCacheBehind) || apierrors.IsConflict(err) }

// scope is what one pass works on: the objects of one name.
type scope struct {
	name string
	mapi *mapiv1beta1.Machine
	capi *clusterv1.Machine
	// infra is the CAPI Machine's infrastructure machine (nil: none yet).
	infra client.Object
	// server is the OpenStackServer of an OpenStackMachine, if any.
	server *infrav1alpha1.OpenStackServer
}

// objects are the objects of s that exist.
func (s *scope) objects() []client.Object {
	var out []client.Object
	if s.mapi != nil {
		out = append(out, s.mapi)
	}
	if s.capi != nil {
		out = append(out, s.capi)
	}
	return append(out, s.partners()...)
}

// partners are the infrastructure machine and server that exist.
func (s *scope) partners() []client.Object {
	var out []client.Object
	if s.infra != nil {
		out = append(out, s.infra)
	}
	if s.server != nil {
		out = append(out, s.server)
	}
	return out
}

// read reads the objects called name on both sides.
func (r *Reconciler) read(ctx context.Context, name string) (*scope, error) {
	s := &scope{name: name}
	m := &mapiv1beta1.Machine{}
	if found, err := r.get(ctx, r.MAPINamespace, name, m); err != nil {
		return nil, err
	} else if found {
		s.mapi = m
	}
	c := &clusterv1.Machine{}
	if found, err := r.get(ctx, r.CAPINamespace, name, c); err != nil {
		return nil, err
	} else if found {
		s.capi = c
	}
	if s.capi != nil {
		if err := r.readInfra(ctx, s, s.capi.Spec.InfrastructureRef.Kind, s.capi.Spec.InfrastructureRef.Name); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// readInfra reads the infrastructure machine of kind and name (and, for
// an OpenStackMachine, its OpenStackServer) into s.
func (r *Reconciler) readInfra(ctx context.Context, s *scope, kind, name string) error {
	var im client.Object
	switch kind {
	case mapi2capi.OpenStackMachineKind:
		im = &infrav1.OpenStackMachine{}
	case mapi2capi.Metal3MachineKind:
		im = &metal3v1.Metal3Machine{}
	default:
		return nil
	}
	if !r.installed[kind] {
		return fmt.Errorf("the %s CRD is not installed (or was installed after this controller started; restart it)", kind)
	}
	found, err := r.get(ctx, r.CAPINamespace, name, im)
	if err != nil || !found {
		return err
	}
	s.infra = im
	if kind == mapi2capi.OpenStackMachineKind && r.installed["OpenStackServer"] {
		oss := &infrav1alpha1.OpenStackServer{}
		if found, err := r.get(ctx, r.CAPINamespace, name, oss); err != nil {
			return err
		} else if found {
			s.server = oss
		}
	}
	return nil
}

func (r *Reconciler) get(ctx context.Context, ns, name string, obj client.Object) (bool, error) {
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// sameName maps a CAPI object to the MAPI Machine of its name.
func (r *Reconciler) sameName(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.MAPINamespace, Name: o.GetName()}}}
}

// machinesOfCAPIMachineSet maps a CAPI MachineSet to the machines it owns.
func (r *Reconciler) machinesOfCAPIMachineSet(ctx context.Context, o client.Object) []reconcile.Request {
	list := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(r.CAPINamespace)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if ownedBy(list.Items[i].OwnerReferences, clusterv1.GroupVersion.Group, o.GetName()) {
			out = append(out, r.sameName(ctx, &list.Items[i])...)
		}
	}
	return append(out, r.machinesOfMAPIMachineSet(ctx, o)...)
}

// machinesOfMAPIMachineSet maps a MAPI MachineSet (or a CAPI one, by name)
// to the MAPI machines its namesake owns.
func (r *Reconciler) machinesOfMAPIMachineSet(ctx context.Context, o client.Object) []reconcile.Request {
	list := &mapiv1beta1.MachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(r.MAPINamespace)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if ownedBy(list.Items[i].OwnerReferences, mapiv1beta1.GroupVersion.Group, o.GetName()) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

func inNamespace(ns string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns })
}
