// Package identity turns an OpenStack identityRef into authenticated
// clients: it reads the identity Secret (uncached) and asks the client
// factory, which caches clients per Secret version. It is the controllers'
// only way to OpenStack credentials; the plain-Go steps under cloud/ take
// the clients it returns.
//
// An identityRef names either a Secret in the object's own namespace (type
// Secret) or an OpenStackClusterIdentity (type ClusterIdentity), a
// cluster-scoped object that points at a Secret in any namespace and says,
// with its namespaceSelector, which namespaces may use it. The Secret of a
// ClusterIdentity is read only after the requesting namespace was found to
// match: an object can reach no other namespace's Secret by any other way.
package identity

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusteridentities,verbs=get
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// Factory builds clients for identity references.
type Factory struct {
	// Reader reads Secrets, OpenStackClusterIdentities and Namespaces. Use
	// the manager's API reader: the manager then needs only `get` on them,
	// not cluster-wide watches, and a change is seen at once.
	Reader  client.Reader
	Clients *clients.Factory
}

// For returns the clients for ref in namespace.
func (f *Factory) For(ctx context.Context, namespace string, ref infrav1.OpenStackIdentityReference) (*clients.Clients, error) {
	secretKey := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	switch ref.Type {
	case "", infrav1.IdentityRefTypeSecret:
	case infrav1.IdentityRefTypeClusterIdentity:
		key, err := f.clusterIdentitySecret(ctx, namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		secretKey = key
	default:
		return nil, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec,
			Message: fmt.Sprintf("identityRef type %q is not supported; use Secret or ClusterIdentity", ref.Type)}
	}
	secret := &corev1.Secret{}
	if err := f.Reader.Get(ctx, secretKey, secret); err != nil {
		if apierrors.IsNotFound(err) {
			f.Clients.Forget(secretKey.String())
			return nil, &clients.Error{Class: clients.Transient, Reason: clients.ReasonAuthFailed,
				Message: fmt.Sprintf("identity Secret %s not found", secretKey), Err: err}
		}
		return nil, err
	}
	return f.Clients.For(ctx, clients.Identity{
		Key:        secretKey.String(),
		Version:    secret.ResourceVersion,
		CloudsYAML: secret.Data[clients.CloudsYAMLKey],
		CACert:     secret.Data[clients.CACertKey],
		CloudName:  ref.CloudName,
		Region:     ref.Region,
	})
}

// clusterIdentitySecret is the Secret of the OpenStackClusterIdentity
// name, if namespace may use it.
func (f *Factory) clusterIdentitySecret(ctx context.Context, namespace, name string) (client.ObjectKey, error) {
	id := &infrav1alpha1.OpenStackClusterIdentity{}
	if err := f.Reader.Get(ctx, client.ObjectKey{Name: name}, id); err != nil {
		if apierrors.IsNotFound(err) {
			return client.ObjectKey{}, &clients.Error{Class: clients.Transient, Reason: clients.ReasonAuthFailed,
				Message: fmt.Sprintf("OpenStackClusterIdentity %s not found", name), Err: err}
		}
		return client.ObjectKey{}, err
	}
	allowed, err := f.namespaceAllowed(ctx, id, namespace)
	if err != nil {
		return client.ObjectKey{}, err
	}
	if !allowed {
		// Terminal: retried after five minutes or when the object changes
		// (neither the identity nor the namespace is watched).
		return client.ObjectKey{}, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonIdentityAccessDenied,
			Message: fmt.Sprintf("namespace %s may not use OpenStackClusterIdentity %s: its labels do not match the identity's namespaceSelector", namespace, name)}
	}
	return client.ObjectKey{Namespace: id.Spec.SecretRef.Namespace, Name: id.Spec.SecretRef.Name}, nil
}

// namespaceAllowed tells whether the identity's namespaceSelector selects
// namespace. No selector allows every namespace, as in CAPO; a selector
// that does not parse allows none.
func (f *Factory) namespaceAllowed(ctx context.Context, id *infrav1alpha1.OpenStackClusterIdentity, namespace string) (bool, error) {
	if id.Spec.NamespaceSelector == nil {
		return true, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(id.Spec.NamespaceSelector)
	if err != nil {
		return false, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec,
			Message: fmt.Sprintf("OpenStackClusterIdentity %s: namespaceSelector: %v", id.Name, err)}
	}
	ns := &corev1.Namespace{}
	if err := f.Reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return false, err
	}
	return selector.Matches(labels.Set(ns.Labels)), nil
}
