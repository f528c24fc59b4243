package openshiftassistedcontrolplane

import (
	"bytes"
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
)

// Keys of the kubeconfig Secrets.
const (
	// adminKubeconfigKey is the key of assisted-service's admin kubeconfig
	// Secret.
	adminKubeconfigKey = "kubeconfig"
	// kubeconfigKey is the key of the CAPI cluster kubeconfig Secret.
	kubeconfigKey = "value"
)

// KubeconfigSecretName is the CAPI kubeconfig Secret of a cluster.
func KubeconfigSecretName(cluster string) string { return cluster + "-kubeconfig" }

// reconcileKubeconfig keeps <cluster>-kubeconfig equal to the admin
// kubeconfig the AgentClusterInstall publishes: created once it exists,
// rewritten whenever it changes (CAPOA, the provider this one replaces,
// copied it once; docs/controlplane.md, Differences from CAPOA). It returns the
// kubeconfig once <cluster>-kubeconfig holds it, else nil (a condition says
// why).
func (r *Reconciler) reconcileKubeconfig(ctx context.Context, s *scope, inst *installation) ([]byte, error) {
	source, data, err := r.adminKubeconfig(ctx, s, inst)
	if data == nil || err != nil {
		return nil, err
	}
	name, ok, err := r.writeKubeconfig(ctx, s, source, data)
	if !ok || err != nil {
		return nil, err
	}
	conditions.MarkTrue(s.oacp, controlplanev1.KubeconfigAvailableCondition,
		fmt.Sprintf("Secret %s holds the admin kubeconfig of Secret %s", name, source), controlplanev1.KubeconfigAvailableReason)
	return data, nil
}

// adminKubeconfig reads the admin kubeconfig assisted-service publishes, and
// the name of its Secret; nil data while there is none (a condition says
// why).
func (r *Reconciler) adminKubeconfig(ctx context.Context, s *scope, inst *installation) (string, []byte, error) {
	oacp, aci := s.oacp, inst.aci
	var source string
	if m := aci.Spec.ClusterMetadata; m != nil {
		source = m.AdminKubeconfigSecretRef.Name
	}
	// An imported cluster's metadata is on the ClusterDeployment; whether
	// assisted-service copies it to the AgentClusterInstall is not
	// promised.
	if m := inst.cd.Spec.ClusterMetadata; source == "" && inst.cd.Spec.Installed && m != nil {
		source = m.AdminKubeconfigSecretRef.Name
	}
	if source == "" {
		conditions.MarkFalse(oacp, controlplanev1.KubeconfigAvailableCondition, controlplanev1.KubeconfigUnavailableReason,
			fmt.Sprintf("waiting for assisted-service to publish the admin kubeconfig (AgentClusterInstall %s spec.clusterMetadata.adminKubeconfigSecretRef); it does once the installation completes", aci.Name))
		return "", nil, nil
	}
	src, err := r.sourceSecret(ctx, s, source)
	if err != nil {
		return "", nil, err
	}
	if src == nil {
		conditions.MarkFalse(oacp, controlplanev1.KubeconfigAvailableCondition, controlplanev1.KubeconfigUnavailableReason,
			fmt.Sprintf("waiting for Secret %s, which AgentClusterInstall %s or its ClusterDeployment names as the admin kubeconfig", source, aci.Name))
		return "", nil, nil
	}
	data := src.Data[adminKubeconfigKey]
	if len(data) == 0 {
		conditions.MarkFalse(oacp, controlplanev1.KubeconfigAvailableCondition, controlplanev1.KubeconfigUnavailableReason,
			fmt.Sprintf("Secret %s has no %q key; assisted-service writes the admin kubeconfig there", source, adminKubeconfigKey))
		return "", nil, nil
	}
	return source, data, nil
}

// writeKubeconfig creates or updates <cluster>-kubeconfig with data (from
// Secret source), and returns its name. A Secret of that name that is not
// the control plane's is left alone: ok is false and a condition says so.
func (r *Reconciler) writeKubeconfig(ctx context.Context, s *scope, source string, data []byte) (name string, ok bool, _ error) {
	oacp := s.oacp
	name = KubeconfigSecretName(s.clusterName)
	key := types.NamespacedName{Namespace: oacp.Namespace, Name: name}
	target := &corev1.Secret{}
	// A Secret of that name without the label would be someone else's:
	// look, uncached, before creating.
	switch err := r.getSecret(ctx, key, target); {
	case apierrors.IsNotFound(err):
		target = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: oacp.Namespace, Labels: kubeconfigLabels(s),
				OwnerReferences: []metav1.OwnerReference{s.ownerRef()}},
			Type: clusterv1.ClusterSecretType,
			Data: map[string][]byte{kubeconfigKey: data},
		}
		if err := r.Client.Create(ctx, target); err != nil {
			return name, false, fmt.Errorf("creating Secret %s: %w", name, err)
		}
		r.event(oacp, target, "KubeconfigCreated", "Create", "Created Secret %s from the admin kubeconfig %s", name, source)
	case err != nil:
		return name, false, err
	case !metav1.IsControlledBy(target, oacp):
		conditions.MarkFalse(oacp, controlplanev1.KubeconfigAvailableCondition, controlplanev1.KubeconfigSecretConflictReason,
			fmt.Sprintf("Secret %s exists and is not this control plane's; it is left alone: delete it to have it made from the admin kubeconfig", name))
		return name, false, nil
	case !bytes.Equal(target.Data[kubeconfigKey], data) || !maps.Equal(mergeLabels(target.Labels, kubeconfigLabels(s)), target.Labels):
		base := target.DeepCopy()
		if target.Data == nil {
			target.Data = map[string][]byte{}
		}
		refresh := !bytes.Equal(target.Data[kubeconfigKey], data)
		target.Data[kubeconfigKey] = data
		target.Labels = mergeLabels(target.Labels, kubeconfigLabels(s))
		if err := r.Client.Patch(ctx, target, client.MergeFrom(base)); err != nil {
			return name, false, fmt.Errorf("updating Secret %s: %w", name, err)
		}
		if refresh {
			r.event(oacp, target, "KubeconfigRefreshed", "Update", "Secret %s follows a new admin kubeconfig in %s", name, source)
		}
	}
	return name, true, nil
}

// kubeconfigLabels are the labels of <cluster>-kubeconfig.
func kubeconfigLabels(s *scope) map[string]string {
	l := map[string]string{clusterv1.ClusterNameLabel: s.clusterName}
	if v := s.oacp.Labels[clusterv1.WatchLabel]; v != "" {
		l[clusterv1.WatchLabel] = v
	}
	return l
}

// getSecret reads a Secret from the labelled-Secrets cache or, when it is
// not there, uncached: a Secret without the cluster-name label is not in
// that cache.
func (r *Reconciler) getSecret(ctx context.Context, key types.NamespacedName, secret *corev1.Secret) error {
	err := r.Secrets.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, secret)
	}
	return err
}

// sourceSecret reads assisted-service's admin kubeconfig Secret. The first
// time it is read uncached and labelled with the cluster's name, which puts
// it in the labelled-Secrets cache: its changes then come as events, and
// <cluster>-kubeconfig follows them. nil when it does not exist.
func (r *Reconciler) sourceSecret(ctx context.Context, s *scope, name string) (*corev1.Secret, error) {
	key := types.NamespacedName{Namespace: s.oacp.Namespace, Name: name}
	src := &corev1.Secret{}
	err := r.Secrets.Get(ctx, key, src)
	if err == nil && src.Labels[clusterv1.ClusterNameLabel] == s.clusterName {
		return src, nil
	}
	if client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	switch err := r.APIReader.Get(ctx, key, src); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if src.Labels[clusterv1.ClusterNameLabel] != s.clusterName {
		base := src.DeepCopy()
		src.Labels = mergeLabels(src.Labels, map[string]string{clusterv1.ClusterNameLabel: s.clusterName})
		// assisted-service's Secret: a merge patch of our label only.
		if err := r.Client.Patch(ctx, src, client.MergeFrom(base)); err != nil {
			return nil, fmt.Errorf("labelling Secret %s: %w", name, err)
		}
	}
	return src, nil
}
