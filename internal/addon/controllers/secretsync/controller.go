// Package secretsync puts in the CAPI namespace the Secrets the Machine
// API's machines use, in the form Cluster API reads them, so that the CAPI
// side can run the machines once it is authoritative:
//
//   - a user data Secret (providerSpec userDataSecret, or userData on bare
//     metal; MAPI's key userData) becomes a Secret of the same name with
//     the key value, which the bootstrap contract names (the machines'
//     bootstrap.dataSecretName);
//   - a cloud credentials Secret (providerSpec cloudsSecret) is copied as
//     it is (clouds.yaml, cacert): the OpenStackMachines' identityRef names
//     it.
//
// A Secret in the CAPI namespace that the sync did not create is never
// changed (OpenShift's cloud credential operator makes its own credentials
// there). A copy is updated when its source changes, made again when
// deleted, and deleted when no MachineSet or Machine refers to its name
// any more. When both namespaces are the same, the user data Secret gets
// the key value beside userData, and nothing else is written.
//
// Secrets are read through a cache of their own, limited to the two
// namespaces.
package secretsync

import (
	"context"
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// Reads in both namespaces; writes only in the CAPI namespace, through a Role
// that config/build-rbac binds there (a cluster-wide Secret write would let
// the add-on change any Secret of the management cluster).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=openshift-cluster-api,resources=secrets,verbs=create;patch;delete
// +kubebuilder:rbac:groups=machine.openshift.io,resources=machinesets;machines,verbs=get;list;watch

// Names the sync puts on the copies.
const (
	// CreatedForAnnotation marks a copy; its value is the source's name.
	CreatedForAnnotation = authority.CreatedForAnnotation
	// FieldOwner is the field manager of the writes.
	FieldOwner = "secret-sync-controller"
	// Keys of the data.
	MAPIUserDataKey = "userData"
	CAPIUserDataKey = "value"
)

// Event reasons.
const (
	EventCopied   = "SecretCopied"
	EventUpdated  = "SecretUpdated"
	EventDeleted  = "SecretDeleted"
	EventNotOurs  = "SecretNotOwned"
	EventNoSource = "SourceSecretMissing"
)

// Reconciler copies the Secrets.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// MAPINamespace holds the sources, CAPINamespace the copies.
	MAPINamespace, CAPINamespace string

	secrets client.Reader
}

// SetupWithManager registers the controller with a Secret cache of its
// own, limited to the two namespaces.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, opts controller.Options) error {
	namespaces := map[string]cache.Config{r.MAPINamespace: {}, r.CAPINamespace: {}}
	c, err := cache.New(mgr.GetConfig(), cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), DefaultNamespaces: namespaces})
	if err != nil {
		return err
	}
	if err := mgr.Add(c); err != nil {
		return err
	}
	r.secrets = c
	inMAPI := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == r.MAPINamespace }))
	byName := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, s *corev1.Secret) []reconcile.Request {
		return r.request(s.Name)
	})
	return ctrl.NewControllerManagedBy(mgr).Named("secretsync").WithOptions(opts).
		WatchesRawSource(source.Kind[*corev1.Secret](c, &corev1.Secret{}, byName)).
		Watches(&mapiv1beta1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(r.referencedBy), inMAPI).
		Watches(&mapiv1beta1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.referencedBy), inMAPI).
		Complete(r)
}

func (r *Reconciler) request(name string) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.MAPINamespace, Name: name}}}
}

// Reconcile makes the copy of the Secret named by req what its uses ask.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	uses, err := r.uses(ctx, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	src, err := r.get(ctx, r.MAPINamespace, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if r.MAPINamespace == r.CAPINamespace {
		return ctrl.Result{}, r.sameNamespace(ctx, src, uses)
	}
	dst, err := r.get(ctx, r.CAPINamespace, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case dst != nil && dst.Annotations[CreatedForAnnotation] != req.Name:
		if uses.any() && src != nil && !maps.EqualFunc(dst.Data, uses.data(src), bytesEqual) {
			r.Recorder.Eventf(dst, nil, corev1.EventTypeNormal, EventNotOurs, "Sync",
				"Secret %s/%s exists and the sync did not create it: left as it is (the machines use it as it is)", dst.Namespace, dst.Name)
		}
		return ctrl.Result{}, nil
	case !uses.any():
		return ctrl.Result{}, r.deleteCopy(ctx, dst)
	case src == nil:
		if dst == nil {
			r.Recorder.Eventf(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.MAPINamespace, Name: req.Name}}, nil, corev1.EventTypeWarning,
				EventNoSource, "Sync", "Machines refer to Secret %s/%s, which does not exist", r.MAPINamespace, req.Name)
		}
		return ctrl.Result{}, nil // the copy, if any, stays: the machines still use it
	}
	return ctrl.Result{}, r.ensureCopy(ctx, src, dst, uses.data(src))
}

func (r *Reconciler) get(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := r.secrets.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return s, nil
}

// ensureCopy creates the copy, or writes its data when it differs. The
// copy is ours alone; its data is replaced whole (a merge patch of data).
func (r *Reconciler) ensureCopy(ctx context.Context, src, dst *corev1.Secret, data map[string][]byte) error {
	if dst == nil {
		dst = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: r.CAPINamespace, Name: src.Name, Annotations: map[string]string{CreatedForAnnotation: src.Name}},
			Type:       corev1.SecretTypeOpaque,
			Data:       data,
		}
		if err := r.Client.Create(ctx, dst, client.FieldOwner(FieldOwner)); err != nil {
			return client.IgnoreAlreadyExists(err)
		}
		r.Recorder.Eventf(dst, nil, corev1.EventTypeNormal, EventCopied, "Sync", "Copied from %s/%s for the Cluster API machines", src.Namespace, src.Name)
		return nil
	}
	if maps.EqualFunc(dst.Data, data, bytesEqual) {
		return nil
	}
	base := dst.DeepCopy()
	dst.Data = data
	if err := r.Client.Patch(ctx, dst, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldOwner)); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.Recorder.Eventf(dst, nil, corev1.EventTypeNormal, EventUpdated, "Sync", "Updated from %s/%s", src.Namespace, src.Name)
	return nil
}

// deleteCopy deletes a copy nothing refers to any more.
func (r *Reconciler) deleteCopy(ctx context.Context, dst *corev1.Secret) error {
	if dst == nil || !dst.DeletionTimestamp.IsZero() {
		return nil
	}
	uid := dst.UID
	if err := r.Client.Delete(ctx, dst, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return err
	}
	r.Recorder.Eventf(dst, nil, corev1.EventTypeNormal, EventDeleted, "Sync", "No MachineSet or Machine refers to %s any more", dst.Name)
	return nil
}

// sameNamespace: with one namespace for both sides, the user data Secret
// gets the key value beside userData (a merge patch of that key; the
// Secret is someone else's).
func (r *Reconciler) sameNamespace(ctx context.Context, src *corev1.Secret, uses uses) error {
	if src == nil || !uses.userData {
		return nil
	}
	ud, ok := src.Data[MAPIUserDataKey]
	if !ok || bytesEqual(src.Data[CAPIUserDataKey], ud) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"data": map[string][]byte{CAPIUserDataKey: ud}})
	if err != nil {
		return err
	}
	return client.IgnoreNotFound(r.Client.Patch(ctx, src, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldOwner)))
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }
