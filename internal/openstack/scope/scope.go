// Package scope turns an identityRef into authenticated OpenStack clients:
// it reads the identity Secret and asks the client factory, which caches
// clients per Secret version.
package scope

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/clients"
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

// Scope is what every OpenStack step needs: the clients of one identity
// and a logger.
type Scope struct {
	Clients *clients.Clients
	Log     logr.Logger
}

// Progress says that a step is not finished and when to look again. It is
// not an error: nothing went wrong, OpenStack is still working.
type Progress struct {
	Reason  string
	Message string
	After   time.Duration
}

func (p *Progress) Error() string { return p.Message }

// WaitReason is the condition reason while waiting.
func (p *Progress) WaitReason() string { return p.Reason }

// WaitAfter is when to look again.
func (p *Progress) WaitAfter() time.Duration { return p.After }

// Wait returns a Progress.
func Wait(reason string, after time.Duration, format string, args ...any) *Progress {
	return &Progress{Reason: reason, Message: fmt.Sprintf(format, args...), After: after}
}
