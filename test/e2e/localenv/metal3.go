package localenv

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
)

// Metal3 plays what CAPM3 and the Bare Metal Operator do for the
// metal3-agent flavor, as far as the agent providers and CAPI core see it:
//
//   - a Metal3Cluster is provisioned at once (its control-plane endpoint is
//     the API VIP of the template);
//   - a Metal3Machine, once its Machine has bootstrap data and the bootstrap
//     provider has put the discovery ISO on it (LiveISO), claims a free
//     BareMetalHost that matches its hostSelector (consumerRef, image,
//     online), which "provisions" (state provisioned) and boots the ISO; the
//     Metal3Machine gets the annotation metal3.io/BareMetalHost, the
//     providerID metal3://<namespace>/<host>/<machine>, the host's address
//     (the annotation IPAnnotation, as inspection would find it) and
//     status.initialization.provisioned;
//   - the workload Node labelled metal3.io/uuid=<host UID> (which the
//     bootstrap provider asks the installer to put on the host) gets the
//     machine's providerID, as CAPM3 sets it;
//   - deleting a Metal3Machine releases its host (deprovisioned: available);
//   - a paused Metal3Machine (cluster.x-k8s.io/paused, or its Cluster's
//     spec.paused) is not acted on at all, its deletion included (CAPM3's
//     metal3machine controller returns for a paused object);
//   - a Metal3Machine that names its host in the annotation
//     metal3.io/BareMetalHost (<namespace>/<name>, any namespace) gets that
//     host: it becomes the host's consumer, and a host that already has an
//     image keeps it and is not provisioned again (CAPM3's getHost,
//     setHostConsumerRef, setHostSpec in baremetal/metal3machine_manager.go).
//     This is how a machine the Machine API ran keeps its host when it
//     moves to Cluster API. An existing spec.providerID is kept;
//   - a host a Metal3Machine takes gets it as controller owner (CAPM3's
//     setHostConsumerRef), which release drops;
//   - a free host is taken only in state available (or ready) and without
//     an error message (CAPM3's chooseHost).
//
// It drives no BMC, runs no Ironic and boots nothing.
type Metal3 struct {
	c        client.Client
	kubelets *Kubelets
}

// IPAnnotation on a BareMetalHost is the address its inspection found.
const IPAnnotation = "e2e.ocp-capi.io/ip"

const metal3Finalizer = "metal3machine.infrastructure.cluster.x-k8s.io"

var (
	metal3ClusterGVK = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "Metal3Cluster"}
	metal3MachineGVK = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "Metal3Machine"}
)

// NewMetal3 makes the stand-in; it registers providerIDs on the Nodes that
// kubelets registered.
func NewMetal3(kubelets *Kubelets) *Metal3 { return &Metal3{kubelets: kubelets} }

// SetupWithManager adds its controllers to mgr.
func (m *Metal3) SetupWithManager(mgr ctrl.Manager) error {
	m.c = mgr.GetClient()
	mc := &unstructured.Unstructured{}
	mc.SetGroupVersionKind(metal3ClusterGVK)
	if err := ctrl.NewControllerManagedBy(mgr).Named("e2e-metal3cluster").For(mc).
		Complete(ctrlFunc(m.reconcileCluster)); err != nil {
		return err
	}
	mm := &unstructured.Unstructured{}
	mm.SetGroupVersionKind(metal3MachineGVK)
	// A Metal3Machine waits for its Machine's bootstrap data: Machine
	// changes wake it up.
	toInfra := func(_ context.Context, o client.Object) []reconcile.Request {
		machine, ok := o.(*clusterv1.Machine)
		if !ok || machine.Spec.InfrastructureRef.Kind != "Metal3Machine" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: machine.Namespace, Name: machine.Spec.InfrastructureRef.Name}}}
	}
	return ctrl.NewControllerManagedBy(mgr).Named("e2e-metal3machine").For(mm).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(toInfra)).
		Complete(ctrlFunc(m.reconcileMachine))
}

type ctrlFunc func(context.Context, ctrl.Request) (ctrl.Result, error)

func (f ctrlFunc) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return f(ctx, req)
}

func (m *Metal3) reconcileCluster(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(metal3ClusterGVK)
	if err := m.c.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if done, _, _ := unstructured.NestedBool(obj.Object, "status", "initialization", "provisioned"); done || !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	base := obj.DeepCopy()
	_ = unstructured.SetNestedField(obj.Object, true, "status", "initialization", "provisioned")
	_ = unstructured.SetNestedSlice(obj.Object, []any{map[string]any{
		"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
	}}, "status", "conditions")
	return ctrl.Result{}, m.c.Status().Patch(ctx, obj, client.MergeFrom(base))
}

func (m *Metal3) reconcileMachine(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(metal3MachineGVK)
	if err := m.c.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if paused, err := m.paused(ctx, obj); err != nil || paused {
		return ctrl.Result{}, err
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, m.release(ctx, obj)
	}
	if !controllerutil.ContainsFinalizer(obj, metal3Finalizer) {
		controllerutil.AddFinalizer(obj, metal3Finalizer)
		return ctrl.Result{}, m.c.Update(ctx, obj)
	}
	machine, err := m.ownerMachine(ctx, obj)
	if err != nil || machine == nil || machine.Spec.Bootstrap.DataSecretName == nil {
		return ctrl.Result{}, err // CAPM3 provisions nothing without bootstrap data
	}
	url, _, _ := unstructured.NestedString(obj.Object, "spec", "image", "url")
	// v1beta2 calls the image format diskFormat, v1beta1 format.
	format, _, _ := unstructured.NestedString(obj.Object, "spec", "image", "diskFormat")
	if format == "" {
		format, _, _ = unstructured.NestedString(obj.Object, "spec", "image", "format")
	}
	if url == "" {
		return ctrl.Result{}, nil
	}
	host, err := m.claimHost(ctx, obj, url, format)
	if err != nil || host == nil {
		return ctrl.Result{RequeueAfter: 5 * time.Second}, err
	}
	// An existing providerID (a machine that moved from the Machine API) is
	// kept: CAPM3 reads it back (GetProviderIDAndBMHID).
	providerID, _, _ := unstructured.NestedString(obj.Object, "spec", "providerID")
	keepID := providerID != ""
	if !keepID {
		providerID = fmt.Sprintf("metal3://%s/%s/%s", host.Namespace, host.Name, obj.GetName())
	}
	if provisioned, _, _ := unstructured.NestedBool(obj.Object, "status", "initialization", "provisioned"); !provisioned {
		base := obj.DeepCopy()
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann["metal3.io/BareMetalHost"] = host.Namespace + "/" + host.Name
		obj.SetAnnotations(ann)
		if !keepID {
			_ = unstructured.SetNestedField(obj.Object, providerID, "spec", "providerID")
		}
		if err := m.c.Patch(ctx, obj, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, err
		}
		base = obj.DeepCopy()
		addrs := []any{map[string]any{"type": "Hostname", "address": host.Name}}
		if ip := host.Annotations[IPAnnotation]; ip != "" {
			addrs = append(addrs, map[string]any{"type": "InternalIP", "address": ip})
		}
		_ = unstructured.SetNestedSlice(obj.Object, addrs, "status", "addresses")
		_ = unstructured.SetNestedField(obj.Object, true, "status", "initialization", "provisioned")
		_ = unstructured.SetNestedSlice(obj.Object, []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
		}}, "status", "conditions")
		return ctrl.Result{}, m.c.Status().Patch(ctx, obj, client.MergeFrom(base))
	}
	// CAPM3 sets the providerID of the Node labelled with the host's UID.
	wl := m.kubelets.workload(obj.GetNamespace())
	if wl == nil {
		return ctrl.Result{}, nil
	}
	nodes := &corev1.NodeList{}
	if err := wl.List(ctx, nodes, client.MatchingLabels{"metal3.io/uuid": string(host.UID)}); err != nil {
		return ctrl.Result{}, err
	}
	if len(nodes.Items) == 0 {
		return ctrl.Result{RequeueAfter: 2 * time.Second}, nil // not installed yet
	}
	n := &nodes.Items[0]
	if n.Spec.ProviderID == providerID {
		return ctrl.Result{}, nil
	}
	base := n.DeepCopy()
	n.Spec.ProviderID = providerID
	return ctrl.Result{}, wl.Patch(ctx, n, client.MergeFrom(base))
}

func (m *Metal3) ownerMachine(ctx context.Context, obj *unstructured.Unstructured) (*clusterv1.Machine, error) {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind != "Machine" {
			continue
		}
		machine := &clusterv1.Machine{}
		err := m.c.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}, machine)
		return machine, client.IgnoreNotFound(err)
	}
	return nil, nil
}

// paused tells whether obj, or its Cluster, is paused.
func (m *Metal3) paused(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	if _, ok := obj.GetAnnotations()[clusterv1.PausedAnnotation]; ok {
		return true, nil
	}
	name := obj.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return false, nil
	}
	cl := &clusterv1.Cluster{}
	if err := m.c.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, cl); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return ptr.Deref(cl.Spec.Paused, false), nil
}

// annotatedHost is the host obj names in metal3.io/BareMetalHost, if any.
func (m *Metal3) annotatedHost(ctx context.Context, obj *unstructured.Unstructured) (*bmhv1alpha1.BareMetalHost, error) {
	ns, name, ok := strings.Cut(obj.GetAnnotations()["metal3.io/BareMetalHost"], "/")
	if !ok {
		return nil, nil
	}
	h := &bmhv1alpha1.BareMetalHost{}
	if err := m.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, h); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return h, nil
}

// adoptHost makes obj the consumer of the host it names; an image the host
// has stays.
func (m *Metal3) adoptHost(ctx context.Context, obj *unstructured.Unstructured, h *bmhv1alpha1.BareMetalHost, url, format string) (*bmhv1alpha1.BareMetalHost, error) {
	ref := &corev1.ObjectReference{APIVersion: metal3MachineGVK.GroupVersion().String(), Kind: "Metal3Machine", Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if h.Spec.ConsumerRef != nil && *h.Spec.ConsumerRef == *ref && h.Spec.Image != nil && h.Spec.Online && ownedBy(h.OwnerReferences, obj) {
		return h, nil
	}
	base := h.DeepCopy()
	h.Spec.ConsumerRef = ref
	h.OwnerReferences = withOwner(h.OwnerReferences, obj)
	if h.Spec.Image == nil {
		h.Spec.Image = &bmhv1alpha1.Image{URL: url}
		if format != "" {
			h.Spec.Image.DiskFormat = &format
		}
	}
	h.Spec.Online = true
	if err := m.c.Patch(ctx, h, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return nil, nil
		}
		return nil, err
	}
	if h.Status.Provisioning.State == "provisioned" {
		return h, nil
	}
	base = h.DeepCopy()
	h.Status.Provisioning.State = "provisioned"
	h.Status.PoweredOn = true
	h.Status.OperationalStatus = "OK"
	return h, m.c.Status().Patch(ctx, h, client.MergeFrom(base))
}

// claimHost returns the host the machine holds (the one it names, or whose
// consumer it is), or claims a free one of its namespace that matches its
// hostSelector and boots it from url.
func (m *Metal3) claimHost(ctx context.Context, obj *unstructured.Unstructured, url, format string) (*bmhv1alpha1.BareMetalHost, error) {
	if h, err := m.annotatedHost(ctx, obj); err != nil || h != nil {
		if h == nil {
			return nil, err
		}
		return m.adoptHost(ctx, obj, h, url, format)
	}
	hosts := &bmhv1alpha1.BareMetalHostList{}
	if err := m.c.List(ctx, hosts, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, err
	}
	for i := range hosts.Items {
		h := &hosts.Items[i]
		if h.Spec.ConsumerRef != nil && h.Spec.ConsumerRef.Name == obj.GetName() && h.Spec.ConsumerRef.Kind == "Metal3Machine" {
			return h, nil
		}
	}
	selector, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "hostSelector", "matchLabels")
	for i := range hosts.Items {
		h := &hosts.Items[i]
		if h.Spec.ConsumerRef != nil || !h.DeletionTimestamp.IsZero() || !labels.SelectorFromSet(selector).Matches(labels.Set(h.Labels)) {
			continue
		}
		// CAPM3 takes only a host that is ready to be provisioned and has
		// no error.
		if st := h.Status.Provisioning.State; (st != "available" && st != "ready") || h.Status.ErrorMessage != "" {
			continue
		}
		base := h.DeepCopy()
		h.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: metal3MachineGVK.GroupVersion().String(), Kind: "Metal3Machine",
			Namespace: obj.GetNamespace(), Name: obj.GetName()}
		h.OwnerReferences = withOwner(h.OwnerReferences, obj)
		h.Spec.Image = &bmhv1alpha1.Image{URL: url}
		if format != "" {
			h.Spec.Image.DiskFormat = &format
		}
		h.Spec.Online = true
		if err := m.c.Patch(ctx, h, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				return nil, nil // another machine took it: look again
			}
			return nil, err
		}
		base = h.DeepCopy()
		h.Status.Provisioning.State = "provisioned"
		h.Status.PoweredOn = true
		h.Status.OperationalStatus = "OK"
		return h, m.c.Status().Patch(ctx, h, client.MergeFrom(base))
	}
	return nil, nil // no free host: wait for one, as CAPM3 does
}

// release frees the machine's host (deprovisioned) and drops the finalizer.
func (m *Metal3) release(ctx context.Context, obj *unstructured.Unstructured) error {
	hosts := &bmhv1alpha1.BareMetalHostList{}
	if err := m.c.List(ctx, hosts, client.InNamespace(obj.GetNamespace())); err != nil {
		return err
	}
	if h, err := m.annotatedHost(ctx, obj); err != nil {
		return err
	} else if h != nil && h.Namespace != obj.GetNamespace() {
		hosts.Items = append(hosts.Items, *h)
	}
	for i := range hosts.Items {
		h := &hosts.Items[i]
		if h.Spec.ConsumerRef == nil || h.Spec.ConsumerRef.Name != obj.GetName() || h.Spec.ConsumerRef.Kind != "Metal3Machine" {
			continue
		}
		base := h.DeepCopy()
		h.Spec.ConsumerRef, h.Spec.Image, h.Spec.Online = nil, nil, false
		h.OwnerReferences = withoutOwner(h.OwnerReferences, obj)
		if err := m.c.Patch(ctx, h, client.MergeFrom(base)); err != nil {
			return err
		}
		base = h.DeepCopy()
		h.Status.Provisioning.State = "available"
		h.Status.PoweredOn = false
		if err := m.c.Status().Patch(ctx, h, client.MergeFrom(base)); err != nil {
			return err
		}
	}
	if controllerutil.RemoveFinalizer(obj, metal3Finalizer) {
		return m.c.Update(ctx, obj)
	}
	return nil
}

// withOwner adds the Metal3Machine obj as the host's controller owner, as
// CAPM3 does when it takes a host (setHostConsumerRef). In another
// namespace than the host's, the garbage collector takes that owner for a
// missing one (and deletes the host): the add-on never moves a machine
// whose host is outside the CAPI namespace.
func withOwner(refs []metav1.OwnerReference, obj *unstructured.Unstructured) []metav1.OwnerReference {
	if ownedBy(refs, obj) {
		return refs
	}
	return append(withoutOwner(refs, obj), metav1.OwnerReference{APIVersion: metal3MachineGVK.GroupVersion().String(), Kind: "Metal3Machine",
		Name: obj.GetName(), UID: obj.GetUID(), Controller: ptr.To(true)})
}

func withoutOwner(refs []metav1.OwnerReference, obj *unstructured.Unstructured) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, r := range refs {
		if r.Kind != "Metal3Machine" || r.Name != obj.GetName() {
			out = append(out, r)
		}
	}
	return out
}

func ownedBy(refs []metav1.OwnerReference, obj *unstructured.Unstructured) bool {
	for _, r := range refs {
		if r.Kind == "Metal3Machine" && r.UID == obj.GetUID() {
			return true
		}
	}
	return false
}
