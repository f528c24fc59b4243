package openshiftassistedcontrolplane

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
)

// reconcileRemediation replaces a control-plane Machine that a
// MachineHealthCheck marked for its owner to remediate (HealthCheckSucceeded
// and OwnerRemediated False) by deleting it: the scale-up of the next passes
// makes its replacement, a day-2 master. The rules (docs/controlplane.md,
// Remediation) keep etcd's quorum: one Machine at a time, only on an
// installed cluster that is not upgrading, with every other Machine in
// place, and only when the healthy Machines left are a quorum of
// spec.replicas. It runs after the scaling and the upgrade of the same
// pass, on the Machines listed before them: whatever those did shows in the
// checks as a Machine count or state that defers remediation.
func (r *Reconciler) reconcileRemediation(ctx context.Context, s *scope, inst *installation, machines []*clusterv1.Machine) (ctrl.Result, error) {
	if err := r.clearRecovered(ctx, machines); err != nil {
		return ctrl.Result{}, err
	}
	var candidates []*clusterv1.Machine
	for _, m := range machines {
		if toBeRemediated(m) && m.DeletionTimestamp.IsZero() {
			candidates = append(candidates, m)
		}
	}
	if len(candidates) == 0 {
		return ctrl.Result{}, nil
	}
	target := slices.MinFunc(candidates, remediationOrder)
	reason, msg := remediationBlocker(s, inst, machines, target)
	if reason != "" {
		_, err := r.setOwnerRemediated(ctx, s, target, reason, msg)
		return ctrl.Result{}, err
	}
	// The cache may not show a Machine made or deleted by the previous
	// pass yet: count again uncached before deleting.
	if fresh, err := r.countMachinesUncached(ctx, s); err != nil {
		return ctrl.Result{}, err
	} else if fresh != len(machines) {
		return ctrl.Result{RequeueAfter: freshness.Retry}, nil
	}
	// Set the condition first: once the Machine is deleted its status is
	// still written by CAPI core until it goes, and a failed delete is
	// retried from the same condition.
	if ok, err := r.setOwnerRemediated(ctx, s, target, controlplanev1.MachineDeletingReason,
		"the Machine is deleted; the control plane makes its replacement once it is gone"); !ok || err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Client.Delete(ctx, target); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("deleting unhealthy control-plane Machine %s: %w", target.Name, err)
	}
	r.event(s.oacp, target, "MachineRemediating", "Remediate",
		"Deleted unhealthy control-plane Machine %s (%s) to replace it", target.Name, healthCheckMessage(target))
	return ctrl.Result{}, nil
}

// toBeRemediated tells whether a MachineHealthCheck left the Machine's
// remediation to its owner: HealthCheckSucceeded and OwnerRemediated
// False.
func toBeRemediated(m *clusterv1.Machine) bool {
	return capiconditions.IsFalse(m, clusterv1.MachineHealthCheckSucceededCondition) &&
		capiconditions.IsFalse(m, clusterv1.MachineOwnerRemediatedCondition)
}

// remediationOrder sorts the Machines to remediate, first first: marked
// with the remediate-machine annotation, then without a Node, then the
// oldest, then by name.
func remediationOrder(a, b *clusterv1.Machine) int {
	rank := func(m *clusterv1.Machine) int {
		n := 0
		if !annotations.HasRemediateMachine(m) {
			n += 2
		}
		if m.Status.NodeRef.IsDefined() {
			n++
		}
		return n
	}
	if d := rank(a) - rank(b); d != 0 {
		return d
	}
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// remediationBlocker says why target cannot be deleted now: a
// RemediationDeferred or CannotBeRemediated reason and a message, or ""
// when it can.
func remediationBlocker(s *scope, inst *installation, machines []*clusterv1.Machine, target *clusterv1.Machine) (string, string) {
	oacp := s.oacp
	deferred := controlplanev1.RemediationDeferredReason
	desired := int(oacp.DesiredReplicas())
	if !inst.status.Completed() || !ptr.Deref(oacp.Status.Initialization.ControlPlaneInitialized, false) {
		return deferred, fmt.Sprintf("the cluster is not installed (AgentClusterInstall state %q): a host leaving "+
			"mid-install breaks the installation", inst.status.State)
	}
	want := strings.TrimPrefix(oacp.Spec.DistributionVersion, "v")
	if upgrade := capiconditions.Get(oacp, controlplanev1.UpgradeCompletedCondition); oacp.Status.DistributionVersion != want ||
		upgrade == nil || upgrade.Status != metav1.ConditionTrue {
		return deferred, fmt.Sprintf("the cluster is upgrading from OpenShift %s to %s", oacp.Status.DistributionVersion, want)
	}
	current, healthyOthers := 0, 0
	for _, m := range machines {
		switch {
		case !m.DeletionTimestamp.IsZero():
			return deferred, fmt.Sprintf("Machine %s is being deleted: one control-plane Machine at a time", m.Name)
		case m != target && !toBeRemediated(m) && !m.Status.NodeRef.IsDefined():
			return deferred, fmt.Sprintf("Machine %s is being provisioned: one control-plane Machine at a time", m.Name)
		case m != target && !toBeRemediated(m) && capiconditions.IsTrue(m, clusterv1.MachineReadyCondition):
			healthyOthers++
		}
		current++
	}
	if current != desired {
		return deferred, fmt.Sprintf("the control plane is scaling from %d to %d Machines", current, desired)
	}
	if quorum := desired/2 + 1; healthyOthers < quorum {
		return controlplanev1.CannotBeRemediatedReason, fmt.Sprintf("removing it would leave %d healthy control-plane "+
			"Machines, fewer than etcd's quorum of %d for %d replicas", healthyOthers, quorum, desired)
	}
	return "", ""
}

// setOwnerRemediated sets the Machine's OwnerRemediated condition, with an
// event when its reason changes. It tells whether the Machine has it.
func (r *Reconciler) setOwnerRemediated(ctx context.Context, s *scope, m *clusterv1.Machine, reason, msg string) (bool, error) {
	before := ptr.Deref(capiconditions.Get(m, clusterv1.MachineOwnerRemediatedCondition), metav1.Condition{})
	if before.Reason == reason && before.Message == msg {
		return true, nil
	}
	base := m.DeepCopy()
	capiconditions.Set(m, metav1.Condition{Type: clusterv1.MachineOwnerRemediatedCondition, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg})
	if ok, err := r.patchMachineConditions(ctx, base, m); !ok || err != nil {
		return false, err
	}
	if before.Reason == reason {
		return true, nil
	}
	switch reason {
	case controlplanev1.RemediationDeferredReason:
		r.event(s.oacp, m, "MachineRemediationDeferred", "Remediate", "Control-plane Machine %s is replaced later: %s", m.Name, msg)
	case controlplanev1.CannotBeRemediatedReason:
		r.warning(s.oacp, m, "MachineCannotBeRemediated", "Remediate", "Control-plane Machine %s cannot be replaced: %s", m.Name, msg)
	}
	return true, nil
}

// clearRecovered removes OwnerRemediated from Machines that a
// MachineHealthCheck finds healthy again before their remediation.
func (r *Reconciler) clearRecovered(ctx context.Context, machines []*clusterv1.Machine) error {
	for _, m := range machines {
		if !m.DeletionTimestamp.IsZero() || !capiconditions.IsTrue(m, clusterv1.MachineHealthCheckSucceededCondition) ||
			!capiconditions.IsFalse(m, clusterv1.MachineOwnerRemediatedCondition) {
			continue
		}
		base := m.DeepCopy()
		capiconditions.Delete(m, clusterv1.MachineOwnerRemediatedCondition)
		if _, err := r.patchMachineConditions(ctx, base, m); err != nil {
			return err
		}
	}
	return nil
}

// patchMachineConditions writes m's conditions changed from base, and tells
// whether they were written. CAPI core and the MachineHealthCheck write the
// Machine's other conditions: the patch is locked, and a conflict (not
// written, no error) is left to the update event that caused it, which
// brings the control plane back with a fresh copy.
func (r *Reconciler) patchMachineConditions(ctx context.Context, base, m *clusterv1.Machine) (bool, error) {
	if equality.Semantic.DeepEqual(base.Status.Conditions, m.Status.Conditions) {
		return true, nil
	}
	err := r.Client.Status().Patch(ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsConflict(err):
		m.Status.Conditions = base.Status.Conditions
		return false, nil
	case err != nil:
		return false, fmt.Errorf("setting the conditions of Machine %s: %w", m.Name, err)
	}
	return true, nil
}

// healthCheckMessage is why the MachineHealthCheck found the Machine
// unhealthy.
func healthCheckMessage(m *clusterv1.Machine) string {
	c := capiconditions.Get(m, clusterv1.MachineHealthCheckSucceededCondition)
	if c == nil {
		return ""
	}
	if c.Message == "" {
		return c.Reason
	}
	return c.Reason + ": " + c.Message
}

// setRemediating sets the control plane's Remediating condition from the
// Machines to remediate, as CAPI's KubeadmControlPlane does.
func setRemediating(oacp *controlplanev1.OpenshiftAssistedControlPlane, machines []*clusterv1.Machine) {
	var pending []*clusterv1.Machine
	for _, m := range machines {
		if toBeRemediated(m) {
			pending = append(pending, m)
		}
	}
	if len(pending) == 0 {
		conditions.MarkFalse(oacp, controlplanev1.RemediatingCondition, controlplanev1.NotRemediatingReason, "")
		return
	}
	c, err := capiconditions.NewAggregateCondition(pending, clusterv1.MachineOwnerRemediatedCondition,
		capiconditions.TargetConditionType(controlplanev1.RemediatingCondition))
	if err != nil {
		conditions.MarkUnknown(oacp, controlplanev1.RemediatingCondition, controlplanev1.InternalErrorReason,
			"cannot aggregate the Machines' OwnerRemediated conditions; see the controller's log")
		return
	}
	conditions.MarkTrue(oacp, controlplanev1.RemediatingCondition, c.Message, controlplanev1.RemediatingReason)
}
