package openshiftassistedcontrolplane

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
)

// Importing an installed cluster.
//
// clusterctl move carries the Cluster API objects and the Secrets they own,
// not assisted-service's objects: those belong to the assisted-service that
// installed the cluster, and their status (the installation's state) could
// not be restored on another management cluster anyway. So after a move the
// control plane finds its <cluster>-kubeconfig, which it writes only once an
// installation has completed, but no ClusterDeployment. It then imports the
// cluster into this management cluster's assisted-service the way
// assisted-service documents for installed clusters: a ClusterDeployment
// with installed: true and clusterMetadata (the cluster ID from the
// ClusterVersion, the infrastructure ID from the Infrastructure, an admin
// kubeconfig Secret). Day-2 hosts then join through this management cluster.

// importRetry is how soon an import that waits for the workload cluster is
// tried again: nothing on the management cluster announces that it answers.
const importRetry = 30 * time.Second

// importPending is an import that cannot go on yet; its message says why.
type importPending struct{ msg string }

func (e *importPending) Error() string { return e.msg }

// AdminKubeconfigSecretName is the admin kubeconfig Secret the control plane
// makes when it imports an installed cluster.
func AdminKubeconfigSecretName(oacp string) string { return oacp + "-admin-kubeconfig" }

// installedKubeconfig returns the content of <cluster>-kubeconfig when this
// control plane owns it: the cluster was installed. nil when not.
func (r *Reconciler) installedKubeconfig(ctx context.Context, s *scope) ([]byte, error) {
	key := types.NamespacedName{Namespace: s.oacp.Namespace, Name: KubeconfigSecretName(s.clusterName)}
	secret := &corev1.Secret{}
	switch err := r.getSecret(ctx, key, secret); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if !metav1.IsControlledBy(secret, s.oacp) || len(secret.Data[kubeconfigKey]) == 0 {
		return nil, nil
	}
	return secret.Data[kubeconfigKey], nil
}

// importMetadata reads what the ClusterDeployment of an installed cluster
// needs from the cluster itself and makes the admin kubeconfig Secret.
func (r *Reconciler) importMetadata(ctx context.Context, s *scope, kubeconfig []byte) (*hivev1.ClusterMetadata, error) {
	oacp := s.oacp
	cl, err := r.Workload.Get(client.ObjectKeyFromObject(oacp), kubeconfig)
	if err != nil {
		return nil, &importPending{msg: fmt.Sprintf("importing the installed cluster: %v", err)}
	}
	cv := &configv1.ClusterVersion{}
	if err := cl.Get(ctx, types.NamespacedName{Name: "version"}, cv); err != nil {
		return nil, &importPending{msg: fmt.Sprintf("importing the installed cluster: cannot read its ClusterVersion version "+
			"(the cluster ID) with the kubeconfig of Secret %s: %v", KubeconfigSecretName(s.clusterName), err)}
	}
	infra := &configv1.Infrastructure{}
	if err := cl.Get(ctx, types.NamespacedName{Name: "cluster"}, infra); err != nil {
		return nil, &importPending{msg: fmt.Sprintf("importing the installed cluster: cannot read its Infrastructure cluster "+
			"(the infrastructure ID): %v", err)}
	}
	switch {
	case cv.Spec.ClusterID == "":
		return nil, &importPending{msg: "importing the installed cluster: its ClusterVersion version has no spec.clusterID"}
	case infra.Status.InfrastructureName == "":
		return nil, &importPending{msg: "importing the installed cluster: its Infrastructure cluster has no status.infrastructureName"}
	}

	name := AdminKubeconfigSecretName(oacp.Name)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: oacp.Namespace, Labels: s.labels(),
			OwnerReferences: []metav1.OwnerReference{s.ownerRef()}},
		Data: map[string][]byte{adminKubeconfigKey: kubeconfig},
	}
	switch err := r.Client.Create(ctx, secret); {
	case apierrors.IsAlreadyExists(err):
		// Made by an earlier attempt, or moved with the control plane
		// (it owns the Secret): use it if it is ours.
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
			return nil, err
		}
		if !metav1.IsControlledBy(secret, oacp) {
			return nil, conflictf("importing the installed cluster: Secret %s, where its admin kubeconfig goes, exists and is not "+
				"this control plane's: delete or rename it", name)
		}
	case err != nil:
		return nil, fmt.Errorf("creating the admin kubeconfig Secret %s: %w", name, err)
	}
	return &hivev1.ClusterMetadata{
		ClusterID:                string(cv.Spec.ClusterID),
		InfraID:                  infra.Status.InfrastructureName,
		AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: name},
	}, nil
}
