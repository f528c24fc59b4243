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
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
)

// boot is the InfraEnv a machine boots from and, when machines of one
// template share it (LiveISO), that template.
type boot struct {
	infraEnv *aiv1beta1.InfraEnv
	template *unstructured.Unstructured
}

// ensureInfraEnv creates the machine's InfraEnv, or checks the one there.
// An InfraEnv is per config, except in LiveISO mode for machines cloned
// from a template: those share the template's, since a template carries
// one ISO URL. A nil boot means the flow stops here (a condition says why).
func (r *Reconciler) ensureInfraEnv(ctx context.Context, s *scope, cd *hivev1.ClusterDeployment, infraObj *unstructured.Unstructured, mode bootstrapv1.BootMode) (*boot, ctrl.Result, error) {
	config := s.config
	cluster := s.machine.Spec.ClusterName
	labels := map[string]string{clusterv1.ClusterNameLabel: cluster}
	// assisted-service puts agentLabels on every Agent of the InfraEnv, so
	// Agents carry the cluster (and the watch filter) from their birth.
	agentLabels := map[string]string{clusterv1.ClusterNameLabel: cluster}
	if v := config.Labels[clusterv1.WatchLabel]; v != "" {
		labels[clusterv1.WatchLabel] = v
		agentLabels[clusterv1.WatchLabel] = v
	}
	b := &boot{}
	var name, identityKey, kindName string
	var owner metav1.OwnerReference
	gk, templateName, cloned := infra.ClonedFrom(infraObj)
	if mode == bootstrapv1.BootModeLiveISO && cloned {
		ref := clusterv1.ContractVersionedObjectReference{APIGroup: gk.Group, Kind: gk.Kind, Name: templateName}
		template, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, ref, config.Namespace)
		if err != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfrastructureMachineReason,
				fmt.Sprintf("cannot read %s %s, which %s was cloned from: %v", gk.Kind, templateName, infraObj.GetName(), err))
			return nil, ctrl.Result{RequeueAfter: infraRetry}, nil
		}
		b.template = template
		name = infraenv.SharedName(templateName)
		identityKey = bootstrapv1.TemplateInfraEnvLabel
		labels[identityKey] = infraenv.LabelValue(templateName)
		kindName = fmt.Sprintf("%s %s", gk.Kind, templateName)
		owner = metav1.OwnerReference{APIVersion: template.GetAPIVersion(), Kind: template.GetKind(), Name: template.GetName(), UID: template.GetUID()}
	} else {
		name = infraenv.Name(config.Name)
		identityKey = bootstrapv1.ConfigLabel
		labels[identityKey] = infraenv.LabelValue(config.Name)
		kindName = "OpenshiftAssistedConfig " + config.Name
		owner = metav1.OwnerReference{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "OpenshiftAssistedConfig",
			Name: config.Name, UID: config.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	}
	desired := infraenv.Spec(config, cd, agentLabels)

	ie := &aiv1beta1.InfraEnv{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: config.Namespace, Name: name}, ie)
	switch {
	case apierrors.IsNotFound(err):
		ie = &aiv1beta1.InfraEnv{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: config.Namespace, Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec:       desired,
		}
		if err := r.Client.Create(ctx, ie); err != nil {
			if !apierrors.IsAlreadyExists(err) {
				conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfraEnvToBeReadyReason,
					fmt.Sprintf("creating InfraEnv %s: %v", name, err))
				return nil, ctrl.Result{}, err
			}
			// Another machine of the template created it first.
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(ie), ie); err != nil {
				return nil, ctrl.Result{}, err
			}
		} else {
			r.Recorder.Eventf(config, ie, corev1.EventTypeNormal, "InfraEnvCreated", "Create", "Created InfraEnv %s for %s", name, kindName)
		}
	case err != nil:
		return nil, ctrl.Result{}, err
	}

	if ie.Labels[identityKey] != labels[identityKey] {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.InfraEnvConflictReason,
			fmt.Sprintf("InfraEnv %s exists and was not made for %s (it lacks the label %s=%s): rename or delete it",
				name, kindName, identityKey, labels[identityKey]))
		return nil, ctrl.Result{}, nil
	}
	config.Status.InfraEnvRef = &bootstrapv1.LocalObjectReference{Name: name}
	if !ie.DeletionTimestamp.IsZero() {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfraEnvToBeReadyReason,
			fmt.Sprintf("InfraEnv %s is being deleted; a new one is made once it is gone", name))
		return nil, ctrl.Result{}, nil
	}
	if diff := infraenv.Diff(ie.Spec, desired); len(diff) > 0 {
		if b.template != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.InfraEnvConflictReason,
				fmt.Sprintf("the machines made from %s share InfraEnv %s, whose %s differ from what this config asks for: "+
					"give machines with different discovery settings different templates", kindName, name, strings.Join(diff, ", ")))
			return nil, ctrl.Result{}, nil
		}
		base := ie.DeepCopy()
		infraenv.Apply(&ie.Spec, desired)
		if err := r.Client.Patch(ctx, ie, client.MergeFrom(base)); err != nil {
			return nil, ctrl.Result{}, fmt.Errorf("updating InfraEnv %s: %w", name, err)
		}
		r.Recorder.Eventf(config, ie, corev1.EventTypeNormal, "InfraEnvUpdated", "Update", "Updated InfraEnv %s: %s", name, strings.Join(diff, ", "))
	}
	b.infraEnv = ie
	return b, ctrl.Result{}, nil
}
