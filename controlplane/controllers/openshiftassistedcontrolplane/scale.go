package openshiftassistedcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/scale"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
)

// maxMachinePrefix keeps Machine names (prefix, dash, five characters)
// within a DNS label, since they become host names.
const maxMachinePrefix = 57

// reconcileMachines cleans up what unfinished scale ups left, keeps the
// Machines in line with the template, then adds or removes at most one
// Machine. The number of Machines changes only before the installation
// starts or after it completes: a Machine leaving or joining mid-install
// would break it.
func (r *Reconciler) reconcileMachines(ctx context.Context, s *scope, inst *installation, machines []*clusterv1.Machine) (ctrl.Result, error) {
	oacp := s.oacp
	ms, err := r.loadMachineSet(ctx, s, machines)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.cleanupOrphans(ctx, s, ms); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.syncMachines(ctx, s, ms); err != nil {
		return ctrl.Result{}, err
	}

	desired := int(oacp.DesiredReplicas())
	if desired < 1 {
		// The scale subresource bypasses the webhook.
		conditions.MarkFalse(oacp, controlplanev1.MachinesCreatedCondition, controlplanev1.MachineGenerationFailedReason,
			fmt.Sprintf("spec.replicas is %d: an OpenShift control plane has 1, 3, 4 or 5 Machines; nothing is scaled", desired))
		return ctrl.Result{}, nil
	}
	current := 0
	for _, m := range machines {
		if m.DeletionTimestamp.IsZero() {
			current++
		}
	}
	switch {
	case current == desired && !deleting(machines):
		conditions.MarkTrue(oacp, controlplanev1.MachinesCreatedCondition,
			fmt.Sprintf("%d control-plane Machines", desired), controlplanev1.MachinesCreatedReason)
		return ctrl.Result{}, nil
	case current == desired:
		conditions.MarkFalse(oacp, controlplanev1.MachinesCreatedCondition, controlplanev1.ScalingDownReason,
			fmt.Sprintf("waiting for the deleted Machines to be gone (%d of %d control-plane Machines remain)", current, desired))
		return ctrl.Result{}, nil
	case inst.status.Started() && !inst.status.Completed():
		conditions.MarkFalse(oacp, controlplanev1.MachinesCreatedCondition, controlplanev1.WaitingForInstallCompleteReason,
			fmt.Sprintf("the installation is in state %q; the control plane goes from %d to %d Machines once it completes",
				inst.status.State, current, desired))
		return ctrl.Result{}, nil
	case deleting(machines):
		// One at a time: a Machine that is going away finishes first.
		conditions.MarkFalse(oacp, controlplanev1.MachinesCreatedCondition, scalingReason(current, desired),
			fmt.Sprintf("waiting for the deleted Machines to be gone before going from %d to %d Machines", current, desired))
		return ctrl.Result{}, nil
	}
	// The cache may not show a Machine made or deleted by the previous
	// reconcile yet: count again uncached before acting.
	if fresh, err := r.countMachinesUncached(ctx, s); err != nil {
		return ctrl.Result{}, err
	} else if fresh != len(machines) {
		return ctrl.Result{RequeueAfter: freshness.Retry}, nil
	}
	if current < desired {
		conditions.MarkFalse(oacp, controlplanev1.MachinesCreatedCondition, controlplanev1.ScalingUpReason,
			fmt.Sprintf("scaling up from %d to %d Machines", current, desired))
		return ctrl.Result{}, r.scaleUp(ctx, s, machines)
	}
	conditions.MarkFalse(oacp, controlplanev1.MachinesCreatedCondition, controlplanev1.ScalingDownReason,
		fmt.Sprintf("scaling down from %d to %d Machines", current, desired))
	return ctrl.Result{}, r.scaleDown(ctx, s, machines)
}

func scalingReason(current, desired int) string {
	if current < desired {
		return controlplanev1.ScalingUpReason
	}
	return controlplanev1.ScalingDownReason
}

// countMachinesUncached counts the control plane's Machines, deleting ones
// included, from the API server.
func (r *Reconciler) countMachinesUncached(ctx context.Context, s *scope) (int, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachineList"))
	if err := r.APIReader.List(ctx, list, client.InNamespace(s.oacp.Namespace),
		client.MatchingLabels{clusterv1.MachineControlPlaneNameLabel: controlPlaneNameLabel(s.oacp.Name)}); err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], s.oacp) {
			n++
		}
	}
	return n, nil
}

// candidates are the Machines as the scaling decisions see them.
func candidates(machines []*clusterv1.Machine) []scale.Machine {
	out := make([]scale.Machine, 0, len(machines))
	for _, m := range machines {
		out = append(out, scale.Machine{Name: m.Name, FailureDomain: m.Spec.FailureDomain, Created: m.CreationTimestamp.Time,
			Deleting: !m.DeletionTimestamp.IsZero()})
	}
	return out
}

// controlPlaneFailureDomains are the Cluster's failure domains for control
// planes, sorted by name.
func controlPlaneFailureDomains(cluster *clusterv1.Cluster) []string {
	var out []string
	for _, fd := range cluster.Status.FailureDomains {
		if ptr.Deref(fd.ControlPlane, false) {
			out = append(out, fd.Name)
		}
	}
	slices.Sort(out)
	return out
}

// scaleUp makes one Machine in the least used failure domain: its
// infrastructure machine cloned from the template (CAPI's external
// helpers), its OpenshiftAssistedConfig, then the Machine. A failed step
// deletes what the earlier ones made.
func (r *Reconciler) scaleUp(ctx context.Context, s *scope, machines []*clusterv1.Machine) error {
	oacp := s.oacp
	fd := scale.FailureDomainForScaleUp(controlPlaneFailureDomains(s.cluster), candidates(machines))
	prefix := oacp.Name
	if len(prefix) > maxMachinePrefix {
		prefix = strings.TrimRight(prefix[:maxMachinePrefix], "-.")
	}
	// apimachinery's generator is safe for concurrent reconciles; CAPI's
	// util.RandomString shares an unlocked source (a data race).
	name := prefix + "-" + utilrand.String(5)
	labels := mergeLabels(s.oacp.Spec.MachineTemplate.ObjectMeta.Labels, s.labels())
	annotations := s.oacp.Spec.MachineTemplate.ObjectMeta.Annotations
	// The clones are owned by the control plane until CAPI core, seeing
	// the Machine, makes the Machine their controller.
	cloneOwner := metav1.OwnerReference{APIVersion: controlplanev1.GroupVersion.String(), Kind: kind, Name: oacp.Name, UID: oacp.UID}

	ref := oacp.Spec.MachineTemplate.InfrastructureRef
	tmpl, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, ref, oacp.Namespace)
	if err != nil {
		conditions.MarkFalse(oacp, controlplanev1.MachinesCreatedCondition, controlplanev1.InfrastructureTemplateCloningFailedReason,
			fmt.Sprintf("cannot read spec.machineTemplate.infrastructureRef %s %s: %v", ref.Kind, ref.Name, err))
		return err
	}
	infra, err := external.GenerateTemplate(&external.GenerateTemplateInput{
		Template: tmpl,
		TemplateRef: &corev1.ObjectReference{APIVersion: tmpl.GetAPIVersion(), Kind: tmpl.GetKind(), Name: tmpl.GetName(),
			Namespace: tmpl.GetNamespace()},
		Namespace: oacp.Namespace, Name: name, ClusterName: s.clusterName,
		OwnerRef: &cloneOwner, Labels: labels, Annotations: annotations,
	})
	if err == nil {
		err = r.Client.Create(ctx, infra)
	}
	if err != nil {
		conditions.MarkFalse(oacp, controlplanev1.MachinesCreatedCondition, controlplanev1.InfrastructureTemplateCloningFailedReason,
			fmt.Sprintf("cloning %s %s: %v", ref.Kind, ref.Name, err))
		return err
	}

	config := &bootstrapv1.OpenshiftAssistedConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: oacp.Namespace, Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{cloneOwner}},
		Spec: *oacp.Spec.OpenshiftAssistedConfigSpec.DeepCopy(),
	}
	if err := r.Client.Create(ctx, config); err != nil {
		conditions.MarkFalse(oacp, controlplanev1.MachinesCreatedCondition, controlplanev1.BootstrapTemplateCloningFailedReason,
			fmt.Sprintf("creating OpenshiftAssistedConfig %s: %v", name, err))
		return errors.Join(err, r.rollback(ctx, infra))
	}

	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: oacp.Namespace, Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{s.ownerRef()}},
		Spec: clusterv1.MachineSpec{
			ClusterName: s.clusterName,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infra.GroupVersionKind().Group, Kind: infra.GetKind(), Name: name},
			FailureDomain: fd,
			Deletion:      oacp.Spec.MachineTemplate.Deletion,
		},
	}
	if err := r.Client.Create(ctx, machine); err != nil {
		conditions.MarkFalse(oacp, controlplanev1.MachinesCreatedCondition, controlplanev1.MachineGenerationFailedReason,
			fmt.Sprintf("creating Machine %s: %v", name, err))
		return errors.Join(err, r.rollback(ctx, config, infra))
	}
	where := ""
	if fd != "" {
		where = " in failure domain " + fd
	}
	r.event(oacp, machine, "MachineCreated", "ScaleUp", "Created control-plane Machine %s%s", name, where)
	return nil
}

// rollback deletes what a failed scale up made. What it cannot delete is
// left to cleanupOrphans.
func (r *Reconciler) rollback(ctx context.Context, objs ...client.Object) error {
	var errs []error
	for _, o := range objs {
		if err := r.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("rolling back %s: %w", o.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// scaleDown deletes the oldest Machine of the most populated failure
// domain.
func (r *Reconciler) scaleDown(ctx context.Context, s *scope, machines []*clusterv1.Machine) error {
	name := scale.MachineToDelete(candidates(machines))
	i := slices.IndexFunc(machines, func(m *clusterv1.Machine) bool { return m.Name == name })
	if i < 0 {
		return nil
	}
	m := machines[i]
	if err := r.Client.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Machine %s: %w", name, err)
	}
	where := ""
	if m.Spec.FailureDomain != "" {
		where = " of failure domain " + m.Spec.FailureDomain
	}
	r.event(s.oacp, m, "MachineDeleted", "ScaleDown", "Deleted control-plane Machine %s%s (the oldest of the most populated failure domain)", name, where)
	return nil
}
