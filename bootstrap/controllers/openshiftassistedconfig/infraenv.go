package openshiftassistedconfig

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infra"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infraenv"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// boot is the InfraEnv a machine boots from and, when machines of one
// template share it (LiveISO), that template.
type boot struct {
	infraEnv *aiv1beta1.InfraEnv
	template *unstructured.Unstructured
}

// ensureInfraEnv creates the machine's InfraEnv, or checks the one there,
// and keeps it in the scope. An InfraEnv is per config, except in LiveISO
// mode for machines cloned from a template: those share the template's,
// since a template carries one ISO URL.
func (r *Reconciler) ensureInfraEnv(ctx context.Context, s *scope) (ctrl.Result, error) {
	id, err := r.infraEnvIdentity(ctx, s)
	if err != nil {
		conditions.MarkFalse(s.config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfrastructureMachineReason, err.Error())
		return ctrl.Result{RequeueAfter: infraRetry}, skeleton.ErrStop
	}
	desired := infraenv.Spec(s.config, s.cd, id.agentLabels)
	ie, err := r.getOrCreateInfraEnv(ctx, s, id, desired)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.checkInfraEnv(ctx, s, id, ie, desired)
}

// infraEnvID is what makes an InfraEnv the one a machine boots from.
type infraEnvID struct {
	name string
	// identityKey is the label that says for whom the InfraEnv is made
	// (the config, or the template); labels hold it with its value.
	identityKey string
	labels      map[string]string
	// agentLabels are the labels assisted-service puts on every Agent of
	// the InfraEnv, so Agents carry the cluster (and the watch filter) from
	// their birth.
	agentLabels map[string]string
	owner       metav1.OwnerReference
	// kindName names, in messages, whom the InfraEnv is for.
	kindName string
	// template is the shared InfraEnv's template; nil for a per-config one.
	template *unstructured.Unstructured
}

// infraEnvIdentity says which InfraEnv the machine boots from. It fails
// only when the template of a LiveISO machine cannot be read.
func (r *Reconciler) infraEnvIdentity(ctx context.Context, s *scope) (*infraEnvID, error) {
	config := s.config
	cluster := s.machine.Spec.ClusterName
	id := &infraEnvID{
		labels:      map[string]string{clusterv1.ClusterNameLabel: cluster},
		agentLabels: map[string]string{clusterv1.ClusterNameLabel: cluster},
	}
	if v := config.Labels[clusterv1.WatchLabel]; v != "" {
		id.labels[clusterv1.WatchLabel] = v
		id.agentLabels[clusterv1.WatchLabel] = v
	}
	gk, templateName, cloned := infra.ClonedFrom(s.infraObj)
	if s.mode != bootstrapv1.BootModeLiveISO || !cloned {
		id.name = infraenv.Name(config.Name)
		id.identityKey = bootstrapv1.ConfigLabel
		id.labels[id.identityKey] = infraenv.LabelValue(config.Name)
		id.kindName = "OpenshiftAssistedConfig " + config.Name
		id.owner = metav1.OwnerReference{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "OpenshiftAssistedConfig",
			Name: config.Name, UID: config.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
		return id, nil
	}
	ref := clusterv1.ContractVersionedObjectReference{APIGroup: gk.Group, Kind: gk.Kind, Name: templateName}
	template, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, ref, config.Namespace)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s %s, which %s was cloned from: %w", gk.Kind, templateName, s.infraObj.GetName(), err)
	}
	id.template = template
	id.name = infraenv.SharedName(templateName)
	id.identityKey = bootstrapv1.TemplateInfraEnvLabel
	id.labels[id.identityKey] = infraenv.LabelValue(templateName)
	id.kindName = fmt.Sprintf("%s %s", gk.Kind, templateName)
	id.owner = metav1.OwnerReference{APIVersion: template.GetAPIVersion(), Kind: template.GetKind(), Name: template.GetName(), UID: template.GetUID()}
	return id, nil
}

// getOrCreateInfraEnv reads the InfraEnv, or creates it with the desired
// spec.
func (r *Reconciler) getOrCreateInfraEnv(ctx context.Context, s *scope, id *infraEnvID, desired aiv1beta1.InfraEnvSpec) (*aiv1beta1.InfraEnv, error) {
	config := s.config
	ie := &aiv1beta1.InfraEnv{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: config.Namespace, Name: id.name}, ie)
	if !apierrors.IsNotFound(err) {
		return ie, err
	}
	ie = &aiv1beta1.InfraEnv{
		ObjectMeta: metav1.ObjectMeta{Name: id.name, Namespace: config.Namespace, Labels: id.labels,
			OwnerReferences: []metav1.OwnerReference{id.owner}},
		Spec: desired,
	}
	switch err := r.Client.Create(ctx, ie); {
	case apierrors.IsAlreadyExists(err):
		// Another machine of the template created it first.
		return ie, r.APIReader.Get(ctx, client.ObjectKeyFromObject(ie), ie)
	case err != nil:
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfraEnvToBeReadyReason,
			fmt.Sprintf("creating InfraEnv %s: %v", id.name, err))
		return nil, err
	}
	r.Recorder.Eventf(config, ie, corev1.EventTypeNormal, "InfraEnvCreated", "Create", "Created InfraEnv %s for %s", id.name, id.kindName)
	return ie, nil
}

// checkInfraEnv checks that the InfraEnv is the machine's and alive, and
// brings its spec in line (a shared one is not changed for one machine).
func (r *Reconciler) checkInfraEnv(ctx context.Context, s *scope, id *infraEnvID, ie *aiv1beta1.InfraEnv, desired aiv1beta1.InfraEnvSpec) (ctrl.Result, error) {
	config := s.config
	if ie.Labels[id.identityKey] != id.labels[id.identityKey] {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.InfraEnvConflictReason,
			fmt.Sprintf("InfraEnv %s exists and was not made for %s (it lacks the label %s=%s): rename or delete it",
				id.name, id.kindName, id.identityKey, id.labels[id.identityKey]))
		return ctrl.Result{}, skeleton.ErrStop
	}
	config.Status.InfraEnvRef = &bootstrapv1.LocalObjectReference{Name: id.name}
	if !ie.DeletionTimestamp.IsZero() {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfraEnvToBeReadyReason,
			fmt.Sprintf("InfraEnv %s is being deleted; a new one is made once it is gone", id.name))
		return ctrl.Result{}, skeleton.ErrStop
	}
	if diff := infraenv.Diff(ie.Spec, desired); len(diff) > 0 {
		if id.template != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.InfraEnvConflictReason,
				fmt.Sprintf("the machines made from %s share InfraEnv %s, whose %s differ from what this config asks for: "+
					"give machines with different discovery settings different templates", id.kindName, id.name, strings.Join(diff, ", ")))
			return ctrl.Result{}, skeleton.ErrStop
		}
		base := ie.DeepCopy()
		infraenv.Apply(&ie.Spec, desired)
		// A merge patch of the spec we derive: assisted-service writes the status, and fields we do not model must survive.
		if err := r.Client.Patch(ctx, ie, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, fmt.Errorf("updating InfraEnv %s: %w", id.name, err)
		}
		r.Recorder.Eventf(config, ie, corev1.EventTypeNormal, "InfraEnvUpdated", "Update", "Updated InfraEnv %s: %s", id.name, strings.Join(diff, ", "))
	}
	s.boot = &boot{infraEnv: ie, template: id.template}
	return ctrl.Result{}, nil
}
