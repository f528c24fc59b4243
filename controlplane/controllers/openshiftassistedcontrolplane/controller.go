// Package openshiftassistedcontrolplane reconciles
// OpenshiftAssistedControlPlanes: the hive ClusterDeployment, the
// ClusterImageSet and the AgentClusterInstall of the cluster
// (clusterdeployment.go), the control-plane Machines and their
// OpenshiftAssistedConfigs (scale.go, machines.go), the <cluster>-kubeconfig
// Secret (kubeconfig.go), upgrades through the workload cluster's
// ClusterVersion (upgrade.go), the replacement of the Machines a
// MachineHealthCheck finds unhealthy (remediate.go), the v1beta2
// control-plane contract status
// (status.go) and an ordered deletion (delete.go). One reconciler owns the
// object and its status; the files split it by concern.
package openshiftassistedcontrolplane

import (
	"context"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/controlplane/controllers/workload"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/clusterinstall"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes/status,verbs=get;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machinedeployments;machinesets,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines/status,verbs=patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machinetemplates;openstackmachinetemplates,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines;openstackmachines,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=hive.openshift.io,resources=clusterdeployments;clusterimagesets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=extensions.hive.openshift.io,resources=agentclusterinstalls,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch

var (
	summaryConditions = []string{controlplanev1.AvailableCondition, controlplanev1.KubeconfigAvailableCondition,
		controlplanev1.MachinesCreatedCondition, controlplanev1.MachinesReadyCondition}
	ownedConditions = []string{controlplanev1.ReadyCondition, controlplanev1.AvailableCondition,
		controlplanev1.KubeconfigAvailableCondition, controlplanev1.MachinesCreatedCondition,
		controlplanev1.MachinesReadyCondition, controlplanev1.UpgradeCompletedCondition,
		controlplanev1.KubernetesVersionAvailableCondition, controlplanev1.RemediatingCondition, clusterv1.PausedCondition}
)

// Reconciler reconciles OpenshiftAssistedControlPlanes.
type Reconciler struct {
	Client client.Client
	// APIReader reads what the cache may not show yet (a Machine just
	// made) or does not hold (Secrets without the cluster-name label).
	APIReader client.Reader
	// Secrets is a cache of the Secrets labelled cluster.x-k8s.io/cluster-name
	// only: the manager does not cache every Secret of the cluster.
	Secrets cache.Cache
	// WorkerMachines is a cache of every Machine's metadata, read only as
	// metav1.PartialObjectMetadata: the client's cache holds the control
	// planes' Machines only.
	WorkerMachines cache.Cache
	Recorder       events.EventRecorder
	// Workload gives clients of the workload clusters (upgrades).
	Workload *workload.Clients
	// Freshness is the stale-cache guard: a cached control plane that our
	// own write replaced is not reconciled.
	Freshness        *freshness.Tracker
	WatchFilterValue string
	// UpgradePoll is how often a running upgrade's ClusterVersion is read
	// (0: DefaultUpgradePollInterval).
	UpgradePoll time.Duration

	checks *checkTimes
}

// Reconcile is the skeleton every controller of this project's own objects
// shares (internal/skeleton): the control plane, its Cluster, the
// stale-cache guard, Paused, the finalizer, CAPI's patch helper with a
// deferred Ready summary, then reconcileDelete or reconcileNormal. A control
// plane that is gone leaves its workload client and, after clusterctl move,
// its ClusterImageSet.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, req, skeleton.Spec[*controlplanev1.OpenshiftAssistedControlPlane, *scope]{
		Client: r.Client, Freshness: r.Freshness, WatchFilterValue: r.WatchFilterValue,
		Kind: kind, Finalizer: controlplanev1.ControlPlaneFinalizer,
		Owned: ownedConditions, Summary: summaryConditions,
		Scope: r.newScope, Normal: r.withMachines(r.reconcileNormal), Delete: r.withMachines(r.reconcileDelete),
		Gone: func(ctx context.Context, key types.NamespacedName) error {
			r.Workload.Forget(key)
			return r.deleteOrphanImageSet(ctx, key)
		},
	})
}

// withMachines runs a flow with the control plane's Machines, listed once
// per pass, and sets the replica counters from them whatever path the flow
// took.
func (r *Reconciler) withMachines(flow func(context.Context, *scope, []*clusterv1.Machine) (ctrl.Result, error)) func(context.Context, *scope) (ctrl.Result, error) {
	return func(ctx context.Context, s *scope) (ctrl.Result, error) {
		machines, err := r.controlPlaneMachines(ctx, s)
		if err != nil {
			return ctrl.Result{}, err
		}
		defer setReplicaStatus(s, machines)
		return flow(ctx, s, machines)
	}
}

// scope is what one reconcile works on. cluster is nil while the Cluster
// does not exist or does not own the control plane yet.
type scope struct {
	oacp    *controlplanev1.OpenshiftAssistedControlPlane
	cluster *clusterv1.Cluster
	// clusterName is the CAPI Cluster's name (owner, else the
	// cluster-name label); "" when unknown.
	clusterName string
}

// newScope reads the control plane's Cluster.
func (r *Reconciler) newScope(ctx context.Context, oacp *controlplanev1.OpenshiftAssistedControlPlane) (*scope, *clusterv1.Cluster, error) {
	s := &scope{oacp: oacp}
	cluster, err := util.GetOwnerCluster(ctx, r.Client, oacp.ObjectMeta)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, nil, err
	case cluster != nil:
		s.cluster, s.clusterName = cluster, cluster.Name
		return s, s.cluster, nil
	}
	// CAPI core sets the owner reference once the Cluster refers to the
	// control plane; until then the cluster-name label says which it is.
	s.clusterName = oacp.Labels[clusterv1.ClusterNameLabel]
	if s.cluster, err = skeleton.ClusterByName(ctx, r.Client, oacp.Namespace, s.clusterName); err != nil {
		return nil, nil, err
	}
	return s, s.cluster, nil
}

// labels are the labels of everything made for the control plane.
func (s *scope) labels() map[string]string { return clusterinstall.Labels(s.oacp, s.clusterName) }

// controlPlaneNameLabel is the control-plane-name label's value.
var controlPlaneNameLabel = clusterinstall.ControlPlaneNameLabelValue

// ownerRef is the controller owner reference to the control plane.
func (s *scope) ownerRef() metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: controlplanev1.GroupVersion.String(), Kind: kind, Name: s.oacp.Name,
		UID: s.oacp.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// kind is the control plane's kind.
const kind = "OpenshiftAssistedControlPlane"

// minResult is the sooner of two requeues.
func minResult(a, b ctrl.Result) ctrl.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0:
		return a
	case a.RequeueAfter < b.RequeueAfter:
		return a
	}
	return b
}

// ownedBy tells whether obj is controlled by the control plane, or carries
// its labels without any controller (left by a lost write, adopted).
func ownedBy(obj metav1.Object, s *scope) (owned, adopt bool) {
	if metav1.IsControlledBy(obj, s.oacp) {
		return true, false
	}
	if metav1.GetControllerOf(obj) != nil {
		return false, false
	}
	l := obj.GetLabels()
	if l[clusterv1.MachineControlPlaneNameLabel] == controlPlaneNameLabel(s.oacp.Name) && l[clusterv1.ClusterNameLabel] == s.clusterName {
		return true, true
	}
	return false, false
}

// adopt sets the control plane as obj's controller owner.
func adoptRefs(obj metav1.Object, s *scope) {
	refs := slices.DeleteFunc(slices.Clone(obj.GetOwnerReferences()), func(r metav1.OwnerReference) bool { return r.UID == s.oacp.UID })
	obj.SetOwnerReferences(append(refs, s.ownerRef()))
}

// mergeLabels returns base plus extra (extra wins).
func mergeLabels(base, extra map[string]string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, extra)
	return out
}

// event records a Normal event on the control plane.
func (r *Reconciler) event(oacp *controlplanev1.OpenshiftAssistedControlPlane, related client.Object, reason, action, format string, args ...any) {
	r.Recorder.Eventf(oacp, related, corev1.EventTypeNormal, reason, action, format, args...)
}

// warning records a Warning event on the control plane.
func (r *Reconciler) warning(oacp *controlplanev1.OpenshiftAssistedControlPlane, related client.Object, reason, action, format string, args ...any) {
	r.Recorder.Eventf(oacp, related, corev1.EventTypeWarning, reason, action, format, args...)
}
