package openshiftassistedcontrolplane

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileTemplateOwner makes the Cluster an owner of the infrastructure
// template the control plane clones, as KCP does: the template is part of
// the cluster, so deleting the Cluster must delete it too (the garbage
// collector does, once no owner is left). Without it, every deleted cluster
// left its `<cluster>-control-plane` template behind. The Cluster's owner
// reference is not a controller reference: a ClusterClass-managed template
// has its own controller.
func (r *Reconciler) reconcileTemplateOwner(ctx context.Context, s *scope) error {
	if s.cluster == nil {
		return nil
	}
	ref := s.oacp.Spec.MachineTemplate.InfrastructureRef
	tmpl, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, ref, s.oacp.Namespace)
	if apierrors.IsNotFound(err) {
		return nil // scale-up reports it in MachinesCreated
	}
	if err != nil {
		return fmt.Errorf("reading spec.machineTemplate.infrastructureRef %s %s: %w", ref.Kind, ref.Name, err)
	}
	if _, changed := withClusterOwner(tmpl.GetOwnerReferences(), s.cluster); !changed {
		return nil
	}
	// Once per cluster: the cached copy may lag behind another writer of
	// the template, and the locked patch would conflict; patch the API
	// server's copy.
	tmpl, err = external.GetObjectFromContractVersionedRef(ctx, r.APIReader, ref, s.oacp.Namespace)
	if err != nil {
		return fmt.Errorf("reading spec.machineTemplate.infrastructureRef %s %s: %w", ref.Kind, ref.Name, err)
	}
	owners, changed := withClusterOwner(tmpl.GetOwnerReferences(), s.cluster)
	if !changed {
		return nil
	}
	orig := tmpl.DeepCopy()
	tmpl.SetOwnerReferences(owners)
	// The optimistic lock keeps a concurrent owner change by someone else.
	if err := r.Client.Patch(ctx, tmpl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("making Cluster %s an owner of %s %s: %w", s.cluster.Name, ref.Kind, ref.Name, err)
	}
	return nil
}

// withClusterOwner returns owners with the Cluster added, and whether it
// had to be added.
func withClusterOwner(owners []metav1.OwnerReference, cluster *clusterv1.Cluster) ([]metav1.OwnerReference, bool) {
	for _, o := range owners {
		if o.UID == cluster.UID {
			return owners, false
		}
	}
	return append(append([]metav1.OwnerReference(nil), owners...), metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID,
	}), true
}
