// Package identity turns an OpenStack identityRef into authenticated
// clients: it reads the identity Secret (uncached) and asks the client
// factory, which caches clients per Secret version. It is the controllers'
// only way to OpenStack credentials; the plain-Go steps under cloud/ take
// the clients it returns.
package identity

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// Factory builds clients for identity references.
type Factory struct {
	// Reader reads Secrets. Use the manager's API reader: the manager then
	// needs only `get` on Secrets, not a cluster-wide watch of them.
	Reader  client.Reader
	Clients *clients.Factory
}

// For returns the clients for ref in namespace.
func (f *Factory) For(ctx context.Context, namespace string, ref infrav1.OpenStackIdentityReference) (*clients.Clients, error) {
	if ref.Type != "" && ref.Type != infrav1.IdentityRefTypeSecret {
		return nil, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec,
			Message: fmt.Sprintf("identityRef type %q is not supported; use Secret", ref.Type)}
	}
	secret := &corev1.Secret{}
	if err := f.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			f.Clients.Forget(namespace + "/" + ref.Name)
			return nil, &clients.Error{Class: clients.Transient, Reason: clients.ReasonAuthFailed,
				Message: fmt.Sprintf("identity Secret %s/%s not found", namespace, ref.Name), Err: err}
		}
		return nil, err
	}
	return f.Clients.For(ctx, clients.Identity{
		Key:        namespace + "/" + ref.Name,
		Version:    secret.ResourceVersion,
		CloudsYAML: secret.Data[clients.CloudsYAMLKey],
		CACert:     secret.Data[clients.CACertKey],
		CloudName:  ref.CloudName,
		Region:     ref.Region,
	})
}
