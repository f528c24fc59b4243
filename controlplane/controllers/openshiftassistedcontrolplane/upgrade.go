package openshiftassistedcontrolplane

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/clusterinstall"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/release"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/upgrade"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
)

// DefaultUpgradePollInterval is how soon a running upgrade is looked at
// again: the workload cluster is read, not watched.
const DefaultUpgradePollInterval = 20 * time.Second

const (
	// failedUpgradeFactor makes a failing upgrade looked at less often
	// than a running one (the operator may recover; the user may change
	// the version): every 3 poll intervals, a minute by default.
	failedUpgradeFactor = 3
	// versionCheckInterval is how often, at most, the version of a cluster
	// with no upgrade outstanding is read, to notice updates made on the
	// cluster itself. It is checked when the control plane is reconciled
	// anyway; it causes no requeue of its own.
	versionCheckInterval = 10 * time.Minute
)

// checkTimes remembers when each cluster's ClusterVersion was last read.
type checkTimes struct {
	mu sync.Mutex
	m  map[types.NamespacedName]time.Time
}

// due tells whether the version of key is to be read now. A cluster seen
// for the first time counts as just read: a manager restart does not
// contact every workload cluster at once.
func (c *checkTimes) due(key types.NamespacedName, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.NamespacedName]time.Time{}
	}
	last, ok := c.m[key]
	if !ok {
		c.m[key] = now
		return false
	}
	return now.Sub(last) >= versionCheckInterval
}

func (c *checkTimes) done(key types.NamespacedName, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.NamespacedName]time.Time{}
	}
	c.m[key] = now
}

// reconcileUpgrade moves an installed cluster to spec.distributionVersion
// by setting spec.desiredUpdate on its ClusterVersion (read with
// <cluster>-kubeconfig), and reports the progress in UpgradeCompleted and
// status.distributionVersion. Before the installation completes there is
// nothing to upgrade: the version is the installation's. A cluster at the
// wanted version is read at most every versionCheckInterval, to notice
// updates made on the cluster itself.
func (r *Reconciler) reconcileUpgrade(ctx context.Context, s *scope, inst *installation, kubeconfig []byte) ctrl.Result {
	oacp := s.oacp
	want := strings.TrimPrefix(oacp.Spec.DistributionVersion, "v")
	if inst.status.Phase != clusterinstall.Installed || kubeconfig == nil {
		markUpgradeAwaitsInstall(oacp, inst, want)
		return ctrl.Result{}
	}

	key, now := client.ObjectKeyFromObject(oacp), time.Now()
	cond := capiconditions.Get(oacp, controlplanev1.UpgradeCompletedCondition)
	settled := cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == controlplanev1.UpgradeCompletedReason
	atWant := oacp.Status.DistributionVersion == want
	switch {
	case atWant && settled && !r.checks.due(key, now):
		return ctrl.Result{}
	case atWant && !settled && cond != nil && cond.Reason == controlplanev1.NoUpgradeRequestedReason:
		// Just installed at the wanted version.
		conditions.MarkTrue(oacp, controlplanev1.UpgradeCompletedCondition,
			fmt.Sprintf("the cluster runs OpenShift %s", want), controlplanev1.UpgradeCompletedReason)
		r.checks.due(key, now) // first sight: counts as a check
		return ctrl.Result{}
	}

	cl, err := r.Workload.Get(key, kubeconfig)
	cv := &configv1.ClusterVersion{}
	if err == nil {
		err = cl.Get(ctx, types.NamespacedName{Name: upgrade.ClusterVersionName}, cv)
	}
	if err != nil {
		return r.clusterVersionUnreadable(ctx, s, now, atWant && settled, err)
	}
	r.checks.done(key, now)
	if obs := upgrade.Observe(cv); obs.Completed != "" {
		oacp.Status.DistributionVersion = obs.Completed
	}
	return r.moveToVersion(ctx, s, cl, cv, cond, want)
}

// markUpgradeAwaitsInstall sets UpgradeCompleted while the cluster is
// being installed: upgrades start once the installation completes.
func markUpgradeAwaitsInstall(oacp *controlplanev1.OpenshiftAssistedControlPlane, inst *installation, want string) {
	if !inst.status.Started() || inst.version == want {
		conditions.MarkTrue(oacp, controlplanev1.UpgradeCompletedCondition,
			fmt.Sprintf("OpenShift %s is being installed; upgrades start once the installation completes", orSpec(inst.version, want)),
			controlplanev1.NoUpgradeRequestedReason)
		return
	}
	conditions.MarkFalse(oacp, controlplanev1.UpgradeCompletedCondition, controlplanev1.UpgradePendingReason,
		fmt.Sprintf("the cluster is being installed at OpenShift %s; the upgrade to %s starts once the installation completes "+
			"and its kubeconfig is available", inst.version, want))
}

// clusterVersionUnreadable handles a workload cluster whose ClusterVersion
// cannot be read. On a routine check (routine: the cluster runs the wanted
// version) the cluster may be briefly unreachable: nothing is said, and it is
// tried at the next check; otherwise UpgradeCompleted says so and it is
// tried again after the poll interval.
func (r *Reconciler) clusterVersionUnreadable(ctx context.Context, s *scope, now time.Time, routine bool, err error) ctrl.Result {
	if routine {
		r.checks.done(client.ObjectKeyFromObject(s.oacp), now)
		ctrl.LoggerFrom(ctx).V(1).Info("Cannot read the workload cluster's ClusterVersion", "error", err.Error())
		return ctrl.Result{}
	}
	conditions.MarkUnknown(s.oacp, controlplanev1.UpgradeCompletedCondition, controlplanev1.WorkloadClusterUnreachableReason,
		fmt.Sprintf("cannot read ClusterVersion %s of the workload cluster with Secret %s: %v", upgrade.ClusterVersionName,
			KubeconfigSecretName(s.clusterName), err))
	return ctrl.Result{RequeueAfter: r.upgradeRetry()}
}

// moveToVersion does what upgrade.Decide says for the ClusterVersion cv of
// the workload cluster (client cl), and reports it in UpgradeCompleted; cond
// is that condition as it was.
func (r *Reconciler) moveToVersion(ctx context.Context, s *scope, cl client.Client, cv *configv1.ClusterVersion, cond *metav1.Condition, want string) ctrl.Result {
	oacp := s.oacp
	u := release.DesiredUpdate(want, oacp.Spec.OpenshiftAssistedConfigSpec.CpuArchitecture,
		oacp.Annotations[controlplanev1.ReleaseImageRepositoryOverrideAnnotation], oacp.Spec.Config.ReleaseImage)
	d := upgrade.Decide(u, cv)
	switch d.Action {
	case upgrade.Done:
		if cond != nil && cond.Reason == controlplanev1.UpgradeInProgressReason {
			r.event(oacp, nil, "UpgradeCompleted", "Upgrade", "The cluster runs OpenShift %s", want)
		}
		conditions.MarkTrue(oacp, controlplanev1.UpgradeCompletedCondition, d.Message, controlplanev1.UpgradeCompletedReason)
		return ctrl.Result{}
	case upgrade.Request:
		base := cv.DeepCopy()
		cv.Spec.DesiredUpdate = upgrade.DesiredUpdate(d.Update)
		// The cluster-version operator's object: a merge patch of spec.desiredUpdate only.
		if err := cl.Patch(ctx, cv, client.MergeFrom(base)); err != nil {
			conditions.MarkUnknown(oacp, controlplanev1.UpgradeCompletedCondition, controlplanev1.WorkloadClusterUnreachableReason,
				fmt.Sprintf("cannot set spec.desiredUpdate on the workload cluster's ClusterVersion: %v", err))
			return ctrl.Result{RequeueAfter: r.upgradeRetry()}
		}
		r.event(oacp, nil, "UpgradeRequested", "Upgrade", "Asked the cluster-version operator for OpenShift %s (%s)", want, describe(d.Update))
		conditions.MarkFalse(oacp, controlplanev1.UpgradeCompletedCondition, controlplanev1.UpgradeInProgressReason, d.Message)
		return ctrl.Result{RequeueAfter: r.upgradeRetry()}
	case upgrade.Wait:
		conditions.MarkFalse(oacp, controlplanev1.UpgradeCompletedCondition, controlplanev1.UpgradeInProgressReason, d.Message)
		return ctrl.Result{RequeueAfter: r.upgradeRetry()}
	case upgrade.Failed:
		if cond == nil || cond.Reason != controlplanev1.UpgradeFailedReason {
			r.warning(oacp, nil, "UpgradeFailed", "Upgrade", "%s", d.Message)
		}
		conditions.MarkFalse(oacp, controlplanev1.UpgradeCompletedCondition, controlplanev1.UpgradeFailedReason, d.Message)
		return ctrl.Result{RequeueAfter: failedUpgradeFactor * r.upgradeRetry()}
	default: // Refused
		conditions.MarkFalse(oacp, controlplanev1.UpgradeCompletedCondition, controlplanev1.UpgradeFailedReason, d.Message)
		return ctrl.Result{}
	}
}

// upgradeRetry is Reconciler.UpgradePoll, else the default.
func (r *Reconciler) upgradeRetry() time.Duration {
	if r.UpgradePoll > 0 {
		return r.UpgradePoll
	}
	return DefaultUpgradePollInterval
}

func orSpec(v, spec string) string {
	if v == "" {
		return spec
	}
	return v
}

func describe(u release.Update) string {
	if u.Image != "" {
		return "release image " + u.Image + ", forced"
	}
	return "by version, from the update service"
}
