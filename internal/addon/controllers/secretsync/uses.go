package secretsync

import (
	"context"
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// uses says what the machines use a Secret for.
type uses struct{ userData, credentials bool }

func (u uses) any() bool { return u.userData || u.credentials }

// data is the copy's data: the credentials as they are, the user data
// under the key the bootstrap contract names. A source that already has
// that key keeps it.
func (u uses) data(src *corev1.Secret) map[string][]byte {
	out := map[string][]byte{}
	if u.credentials {
		maps.Copy(out, src.Data)
	}
	if u.userData {
		if ud, ok := src.Data[MAPIUserDataKey]; ok {
			out[CAPIUserDataKey] = ud
		} else if v, ok := src.Data[CAPIUserDataKey]; ok {
			out[CAPIUserDataKey] = v
		}
	}
	return out
}

// refs are the Secrets a providerSpec names. MAPO and the bare-metal
// actuator read providerSpecs case-insensitively, and so does this.
type refs struct {
	UserDataSecret *secretRef `json:"userDataSecret"`
	UserData       *secretRef `json:"userData"`
	CloudsSecret   *secretRef `json:"cloudsSecret"`
}

type secretRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// referencedSecrets are the Secrets in the MAPI namespace that spec uses,
// by name.
func (r *Reconciler) referencedSecrets(spec *mapiv1beta1.MachineSpec) map[string]uses {
	out := map[string]uses{}
	v := spec.ProviderSpec.Value
	if v == nil {
		return out
	}
	var ps refs
	if err := json.Unmarshal(v.Raw, &ps); err != nil {
		return out
	}
	mine := func(ref *secretRef) (string, bool) {
		if ref == nil || ref.Name == "" || (ref.Namespace != "" && ref.Namespace != r.MAPINamespace) {
			return "", false
		}
		return ref.Name, true
	}
	for _, ref := range []*secretRef{ps.UserDataSecret, ps.UserData} {
		if n, ok := mine(ref); ok {
			u := out[n]
			u.userData = true
			out[n] = u
		}
	}
	if n, ok := mine(ps.CloudsSecret); ok {
		u := out[n]
		u.credentials = true
		out[n] = u
	}
	return out
}

// uses is what the MachineSets and Machines of the MAPI namespace use the
// Secret called name for.
func (r *Reconciler) uses(ctx context.Context, name string) (uses, error) {
	var out uses
	sets := &mapiv1beta1.MachineSetList{}
	if err := r.Client.List(ctx, sets, client.InNamespace(r.MAPINamespace)); err != nil {
		return out, err
	}
	machines := &mapiv1beta1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(r.MAPINamespace)); err != nil {
		return out, err
	}
	var specs []*mapiv1beta1.MachineSpec
	for i := range sets.Items {
		specs = append(specs, &sets.Items[i].Spec.Template.Spec)
	}
	for i := range machines.Items {
		specs = append(specs, &machines.Items[i].Spec)
	}
	for _, s := range specs {
		u := r.referencedSecrets(s)[name]
		out.userData = out.userData || u.userData
		out.credentials = out.credentials || u.credentials
	}
	return out, nil
}

// referencedBy maps a MachineSet or Machine to the Secrets it names (on
// an update, the old object's too, so that a dropped reference is seen).
func (r *Reconciler) referencedBy(_ context.Context, o client.Object) []reconcile.Request {
	var spec *mapiv1beta1.MachineSpec
	switch t := o.(type) {
	case *mapiv1beta1.MachineSet:
		spec = &t.Spec.Template.Spec
	case *mapiv1beta1.Machine:
		spec = &t.Spec
	default:
		return nil
	}
	var out []reconcile.Request
	for name := range r.referencedSecrets(spec) {
		out = append(out, r.request(name)...)
	}
	return out
}
