package machinesync

import (
	"context"
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/jsonfields"
)

// capiDomain is CAPI's own label and annotation domain.
const capiDomain = "cluster.x-k8s.io/"

// providerKeys are the labels and annotations the providers set from the
// server or host: status, not configuration.
var providerKeys = map[string]bool{
	mapi2capi.MAPIInstanceTypeLabel: true, mapi2capi.MAPIRegionLabel: true, mapi2capi.MAPIZoneLabel: true,
	mapi2capi.MAPIInstanceStateAnnotation: true, mapi2capi.MAPOResourceIDAnnotation: true, mapi2capi.HostAnnotation: true,
}

// configKeys drops what is not the configuration both sides mirror: CAPI's
// bookkeeping (its cluster.x-k8s.io/ keys but delete-machine), the sync's
// marks, the providers' status keys and kubectl's record.
func configKeys(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		switch {
		case strings.HasPrefix(k, capiDomain) && k != clusterv1.DeleteMachineAnnotation,
			strings.HasPrefix(k, "sync.machine.openshift.io/"), providerKeys[k], k == mapi2capi.LastAppliedAnnotation:
		default:
			out[k] = v
		}
	}
	return out
}

// mirrors tells whether the MAPI Machine m, converted as the forward sync
// converts it, describes the CAPI Machine and infrastructure machine there
// are: then it already says what they say, whatever its form.
func mirrors(m *mapiv1beta1.Machine, capi *clusterv1.Machine, im client.Object, fwd mapi2capi.Infra) bool {
	want, wantIM, _, errs := mapi2capi.Machine(m, fwd)
	if len(errs) > 0 {
		return false
	}
	return maps.Equal(configKeys(want.Labels), configKeys(capi.Labels)) &&
		maps.Equal(configKeys(want.Annotations), configKeys(capi.Annotations)) &&
		sameJSON(want.Spec, capi.Spec) && sameJSON(infraSpec(wantIM), infraSpec(im))
}

// infraSpec is the spec of an infrastructure machine, but its providerID
// (the provider's to set).
func infraSpec(o client.Object) any {
	switch t := o.(type) {
	case *infrav1.OpenStackMachine:
		s := t.Spec.DeepCopy()
		s.ProviderID = ""
		return s
	case *metal3v1.Metal3Machine:
		s := t.Spec.DeepCopy()
		s.ProviderID = nil
		return s
	}
	return nil
}

// sameJSON tells whether a and b encode to the same JSON value; what does
// not encode is not the same.
func sameJSON(a, b any) bool {
	same, err := jsonfields.Same(a, b)
	return err == nil && same
}

// machineSetOwner is the name of the MachineSet of group that refs name.
func machineSetOwner(refs []metav1.OwnerReference, group string) (string, bool) {
	for _, ref := range refs {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == group && ref.Kind == "MachineSet" {
			return ref.Name, true
		}
	}
	return "", false
}

func ownedBy(refs []metav1.OwnerReference, group, name string) bool {
	n, ok := machineSetOwner(refs, group)
	return ok && n == name
}

// ownerRef is the controller reference of a machine to its MachineSet (or
// of an infrastructure machine to its Machine), as CAPI and MAPI set it.
func ownerRef(apiVersion, kind string, o client.Object) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: o.GetName(), UID: o.GetUID(), Controller: &t, BlockOwnerDeletion: &t}
}

// context reads the cluster context of a conversion.
func (r *Reconciler) context(ctx context.Context) (mapi2capi.Infra, error) {
	var infra *configv1.Infrastructure
	if r.installed["Infrastructure"] {
		infra = &configv1.Infrastructure{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: InfrastructureName}, infra); err != nil {
			if !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
				return mapi2capi.Infra{}, err
			}
			infra = nil
		}
	}
	return mapi2capi.InfraFrom(infra, r.ClusterName, r.CAPINamespace), nil
}
