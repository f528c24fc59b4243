package openshiftassistedconfig

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/index"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/agentspec"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infraenv"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
)

// reconcileDelete unbinds the machine's Agents and removes its InfraEnv (a
// shared one only when no other config uses it), then drops the finalizer.
// It needs neither the Machine nor the Cluster, and waits for nothing:
// assisted-service deletes the InfraEnv's Agents in its own time. The
// bootstrap data Secret goes with the config (owner reference).
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	config := s.config
	conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.DeletingReason, "the config is being deleted")
	conditions.MarkFalse(config, bootstrapv1.AgentApprovedCondition, bootstrapv1.DeletingReason, "the config is being deleted")
	if !controllerutil.ContainsFinalizer(config, bootstrapv1.ConfigFinalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.unbindAgents(ctx, config); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.removeInfraEnv(ctx, config); err != nil {
		return ctrl.Result{}, err
	}
	controllerutil.RemoveFinalizer(config, bootstrapv1.ConfigFinalizer)
	return ctrl.Result{}, nil
}

// unbindAgents takes this provider's binding and approval off the Agents
// bound to the config, so that a host that comes back (a reused
// BareMetalHost) is bound afresh and installs only for a live Machine.
func (r *Reconciler) unbindAgents(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig) error {
	agents := &aiv1beta1.AgentList{}
	err := r.Client.List(ctx, agents, client.InNamespace(config.Namespace),
		client.MatchingLabels{bootstrapv1.ConfigLabel: infraenv.LabelValue(config.Name)})
	if meta.IsNoMatchError(err) {
		return nil // assisted-service is not installed (any more): nothing is bound
	}
	if err != nil {
		return err
	}
	byName := map[string]*aiv1beta1.Agent{}
	for i := range agents.Items {
		byName[agents.Items[i].Name] = &agents.Items[i]
	}
	if ref := config.Status.AgentRef; ref != nil && byName[ref.Name] == nil {
		a := &aiv1beta1.Agent{}
		switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: config.Namespace, Name: ref.Name}, a); {
		case err == nil:
			byName[a.Name] = a
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	for _, a := range byName {
		base := a.DeepCopy()
		if !agentspec.Unbind(a) {
			continue
		}
		// Agents are assisted-service's: a merge patch that takes off only our binding and approval.
		if err := r.Client.Patch(ctx, a, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("unbinding Agent %s: %w", a.Name, err)
		}
		r.Recorder.Eventf(config, a, corev1.EventTypeNormal, "AgentUnbound", "Delete", "Unbound Agent %s", a.Name)
	}
	return nil
}

// removeInfraEnv deletes the config's InfraEnv, or a shared one once no
// other live config boots from it. An InfraEnv this provider did not make
// is left alone.
func (r *Reconciler) removeInfraEnv(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig) error {
	name := infraenv.Name(config.Name)
	if ref := config.Status.InfraEnvRef; ref != nil {
		name = ref.Name
	}
	ie := &aiv1beta1.InfraEnv{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: config.Namespace, Name: name}, ie)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !ie.DeletionTimestamp.IsZero() {
		return nil
	}
	switch {
	case ie.Labels[bootstrapv1.ConfigLabel] == infraenv.LabelValue(config.Name):
	case ie.Labels[bootstrapv1.TemplateInfraEnvLabel] != "":
		users := &bootstrapv1.OpenshiftAssistedConfigList{}
		if err := r.Client.List(ctx, users, client.InNamespace(config.Namespace), client.MatchingFields{index.ConfigInfraEnv: name}); err != nil {
			return err
		}
		for i := range users.Items {
			if u := &users.Items[i]; u.Name != config.Name && u.DeletionTimestamp.IsZero() {
				return nil // still in use
			}
		}
	default:
		return nil
	}
	if err := r.Client.Delete(ctx, ie); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting InfraEnv %s: %w", name, err)
	}
	r.Recorder.Eventf(config, ie, corev1.EventTypeNormal, "InfraEnvDeleted", "Delete", "Deleted InfraEnv %s", name)
	return nil
}
