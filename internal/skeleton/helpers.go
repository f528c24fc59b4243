package skeleton

import (
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// NotStatusOnly drops updates of the reconciled objects that change only
// their status: the controller's own writes (the skeleton writes every
// owned condition in one patch; reacting to it would be a reconcile per
// write). Spec (the generation), labels, annotations, finalizers, owner
// references and deletion pass.
func NotStatusOnly() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		if o == nil || n == nil {
			return true
		}
		return o.GetGeneration() != n.GetGeneration() ||
			!maps.Equal(o.GetLabels(), n.GetLabels()) || !maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
			!slices.Equal(o.GetFinalizers(), n.GetFinalizers()) ||
			o.GetDeletionTimestamp().IsZero() != n.GetDeletionTimestamp().IsZero() ||
			!equality.Semantic.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences())
	}}
}

// ClusterByName reads the Cluster of that name in namespace: nil, without
// an error, when name is empty or there is no such Cluster (yet, or any
// more), which a scope takes as normal.
func ClusterByName(ctx context.Context, c client.Reader, namespace, name string) (*clusterv1.Cluster, error) {
	if name == "" {
		return nil, nil
	}
	cluster := &clusterv1.Cluster{}
	err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cluster)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return cluster, nil
}
