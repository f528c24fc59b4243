// Package openshiftassistedcontrolplane reconciles
// OpenshiftAssistedControlPlanes: the hive ClusterDeployment, the
// ClusterImageSet and the AgentClusterInstall of the cluster
// (clusterdeployment.go), the control-plane Machines and their
// OpenshiftAssistedConfigs (scale.go, machines.go), the <cluster>-kubeconfig
// Secret (kubeconfig.go), upgrades through the workload cluster's
// ClusterVersion (upgrade.go), the v1beta2 control-plane contract status
// (status.go) and an ordered deletion (delete.go). One reconciler owns the
// object and its status; the files split it by concern.
package openshiftassistedcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/controlplane/controllers/workload"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/clusterinstall"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
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
		controlplanev1.KubernetesVersionAvailableCondition, clusterv1.PausedCondition}
)

// Reconciler reconciles OpenshiftAssistedControlPlanes.
type Reconciler struct {
	Client client.Client
	// APIReader reads what the cache may not show yet (a Machine just
	// made) or does not hold (Secrets without the cluster-name label).
	APIReader client.Reader
	// Secrets is a cache of the Secrets labelled cluster.x-k8s.io/cluster-name
	// only: the manager does not cache every Secret of the cluster.
	Secrets  cache.Cache
	Recorder events.EventRecorder
	// Workload gives clients of the workload clusters (upgrades).
	Workload *workload.Clients
	// Tracker records the control-plane versions this controller's writes
	// replaced, so that a stale cached copy is not reconciled.
	Tracker          *freshness.Tracker
	WatchFilterValue string
	// UpgradePoll is how often a running upgrade's ClusterVersion is read
	// (0: DefaultUpgradePollInterval).
	UpgradePoll time.Duration

	checks *checkTimes
}

// staleRetry is when a control plane whose cached copy predates our own
// write is looked at again, should the write's event not come.
const staleRetry = 2 * time.Second

// Reconcile follows CAPI's provider skeleton: owner cluster, pause, the
// finalizer, a deferred summary and status write, then the state switch.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := r.Client.Get(ctx, req.NamespacedName, oacp); err != nil {
		if apierrors.IsNotFound(err) {
			r.Workload.Forget(req.NamespacedName)
			return ctrl.Result{}, r.deleteOrphanImageSet(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	// Mapped events bypass the For predicate; keep to --watch-filter.
	if r.WatchFilterValue != "" && oacp.Labels[clusterv1.WatchLabel] != r.WatchFilterValue {
		return ctrl.Result{}, nil
	}
	if r.Tracker.Stale(req.NamespacedName, oacp.ResourceVersion) {
		return ctrl.Result{RequeueAfter: staleRetry}, nil // our write's event is on its way
	}
	s, err := r.newScope(ctx, oacp)
	if err != nil {
		return ctrl.Result{}, err
	}
	isPaused, pausedCond := conditions.Paused(s.cluster, oacp, "OpenshiftAssistedControlPlane")
	// The finalizer is persisted on its own, before anything is created, so
	// that a deletion always finds what to clean up.
	if !isPaused && oacp.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(oacp, controlplanev1.ControlPlaneFinalizer) {
		base := oacp.DeepCopy()
		controllerutil.AddFinalizer(oacp, controlplanev1.ControlPlaneFinalizer)
		if err := r.Client.Patch(ctx, oacp, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, err
		}
		r.Tracker.Wrote(req.NamespacedName, base.ResourceVersion, oacp.ResourceVersion)
	}

	base := oacp.DeepCopy()
	conditions.InitUnknown(oacp, ownedConditions...)
	capiconditions.Set(oacp, pausedCond)
	defer func() {
		_ = capiconditions.SetSummaryCondition(oacp, oacp, controlplanev1.ReadyCondition,
			capiconditions.ForConditionTypes(summaryConditions))
		if reterr == nil {
			oacp.Status.ObservedGeneration = oacp.Generation
		}
		if err := r.write(ctx, base, oacp); err != nil {
			reterr = errors.Join(reterr, fmt.Errorf("writing OpenshiftAssistedControlPlane: %w", err))
		}
	}()
	if isPaused {
		return ctrl.Result{}, nil
	}
	if !oacp.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcileNormal(ctx, s)
}

// write persists what a reconcile changed: the status in one patch (the
// conditions with the rest, not in two as CAPI's patch helper does), then
// the finalizers, which only deletion changes here.
func (r *Reconciler) write(ctx context.Context, base, oacp *controlplanev1.OpenshiftAssistedControlPlane) error {
	key := client.ObjectKeyFromObject(oacp)
	if !equality.Semantic.DeepEqual(base.Status, oacp.Status) {
		before := oacp.ResourceVersion
		err := r.Client.Status().Patch(ctx, oacp, client.MergeFrom(base))
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		r.Tracker.Wrote(key, before, oacp.ResourceVersion)
	}
	if !slices.Equal(base.Finalizers, oacp.Finalizers) {
		before := oacp.ResourceVersion
		metaBase := oacp.DeepCopy()
		metaBase.Finalizers = base.Finalizers
		// Once the finalizer is gone the object may be gone too.
		if err := r.Client.Patch(ctx, oacp, client.MergeFrom(metaBase)); client.IgnoreNotFound(err) != nil {
			return err
		}
		r.Tracker.Wrote(key, before, oacp.ResourceVersion)
	}
	return nil
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

func (r *Reconciler) newScope(ctx context.Context, oacp *controlplanev1.OpenshiftAssistedControlPlane) (*scope, error) {
	s := &scope{oacp: oacp}
	cluster, err := util.GetOwnerCluster(ctx, r.Client, oacp.ObjectMeta)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, err
	case cluster != nil:
		s.cluster, s.clusterName = cluster, cluster.Name
		return s, nil
	}
	// CAPI core sets the owner reference once the Cluster refers to the
	// control plane; until then the cluster-name label says which it is.
	if name := oacp.Labels[clusterv1.ClusterNameLabel]; name != "" {
		s.clusterName = name
		cluster := &clusterv1.Cluster{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: oacp.Namespace, Name: name}, cluster)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		default:
			s.cluster = cluster
		}
	}
	return s, nil
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
