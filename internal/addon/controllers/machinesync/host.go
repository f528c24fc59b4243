package machinesync

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch;patch

// returnHost gives the BareMetalHost of a bare-metal machine back to the
// MAPI Machine once the Machine API is authoritative again (a rollback).
//
// Going to Cluster API needs nothing: CAPM3 makes the Metal3Machine the
// consumer of the host the annotation metal3.io/BareMetalHost names, on
// every pass. The Machine API's bare-metal actuator does not: it sets the
// consumer only when it creates a machine, and when deleting one whose
// host has another consumer, it leaves the host as it is. And CAPM3 made
// the Metal3Machine the host's controller owner, so deleting the paused
// Metal3Machine (the mirror of a deleted MAPI Machine) would have the
// garbage collector delete the host. So, while the Metal3Machine is paused
// (CAPM3 does not touch the host), the host's consumerRef is set back to
// the MAPI Machine and the Metal3Machine's ownerReference is dropped
// (only the latter when there is no MAPI Machine: a paused mirror about to
// be deleted).
//
// The host is the Bare Metal Operator's object, which its consumer writes
// too: a merge patch that carries the resourceVersion, of these two fields,
// written only when one is wrong; a concurrent write makes it fail (and
// the pass is retried) rather than be overwritten.
func (r *Reconciler) returnHost(ctx context.Context, s *scope) error {
	m3m, ok := s.infra.(*metal3v1.Metal3Machine)
	if !ok || !annotations.HasPaused(m3m) {
		return nil
	}
	key := m3m.Annotations[mapi2capi.HostAnnotation]
	if s.mapi != nil && s.mapi.Annotations[mapi2capi.HostAnnotation] != "" {
		key = s.mapi.Annotations[mapi2capi.HostAnnotation]
	}
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return nil
	}
	host := &bmhv1alpha1.BareMetalHost{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, host); err != nil {
		if meta.IsNoMatchError(err) {
			return nil
		}
		return client.IgnoreNotFound(err)
	}
	return write.LockedPatch(ctx, r.Client, host, func() bool {
		changed := false
		if s.mapi != nil && isConsumer(host.Spec.ConsumerRef, m3m) {
			host.Spec.ConsumerRef = &corev1.ObjectReference{
				APIVersion: mapiv1beta1.GroupVersion.String(), Kind: "Machine", Namespace: s.mapi.Namespace, Name: s.mapi.Name,
			}
			changed = true
		}
		var refs []metav1.OwnerReference
		for _, ref := range host.OwnerReferences {
			if isOwnerRef(ref, m3m) {
				changed = true
				continue
			}
			refs = append(refs, ref)
		}
		host.OwnerReferences = refs
		return changed
	}, client.FieldOwner(FieldOwner))
}

// isConsumer: ref names the Metal3Machine m3m.
func isConsumer(ref *corev1.ObjectReference, m3m *metal3v1.Metal3Machine) bool {
	if ref == nil || ref.Kind != mapi2capi.Metal3MachineKind || ref.Namespace != m3m.Namespace || ref.Name != m3m.Name {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == metal3v1.GroupVersion.Group
}

// isOwnerRef: ref is an ownerReference to m3m (any version of its group).
func isOwnerRef(ref metav1.OwnerReference, m3m *metal3v1.Metal3Machine) bool {
	if ref.Kind != mapi2capi.Metal3MachineKind || ref.Name != m3m.Name {
		return false
	}
	if ref.UID != "" && m3m.UID != "" && ref.UID != m3m.UID {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == metal3v1.GroupVersion.Group
}
