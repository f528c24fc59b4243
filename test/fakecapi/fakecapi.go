// Package fakecapi plays, in envtest suites, the part of Cluster API core
// (v1.14) that our providers rely on and that envtest does not run: CAPI
// core's Machine controller, as far as a Machine's bootstrap config and
// infrastructure machine go, and the infrastructure provider of a Machine
// (CAPM3 or the OpenStack provider) as far as its host's boot goes. It is
// one controller, FakeCAPI, run next to the providers under test (see
// envtest.RunStandIns), and two helpers for what a test plays itself:
// MachineOwner and ProvisionCluster.
//
// docs/testing.md ("The fake CAPI core") has its table: each behaviour,
// and the place in CAPI core it mirrors. fakecapi_test.go tests every row
// against a real API server. What it does not play (the MachineSet and
// MachineDeployment controllers, the Cluster controller's owner references,
// drain, Node deletion, providerID and addresses) the suites play
// explicitly, or do not need.
package fakecapi

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
)

// HoldBootAnnotation on a Machine keeps its infrastructure machine from
// being provisioned (its host does not boot, so it does not register) until
// the test removes it.
const HoldBootAnnotation = "test.ocp-capi.io/hold-boot"

// InfraGroupVersion is the version of the infrastructure machines the
// fake watches (Metal3Machine, OpenStackMachine): the storage version of
// both, which the tests write.
var InfraGroupVersion = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2"}

// Options say which optional parts of CAPI core the fake plays. The
// defaults play neither: a suite that plays each deletion order itself, or
// that looks at a Machine without a Node, needs them off.
type Options struct {
	// MachineDeletion plays CAPI core's deletion of a Machine: the Machine
	// gets CAPI's finalizer; when it is deleted, its infrastructure machine
	// and bootstrap config are deleted and, once both are gone, the
	// finalizer is removed. Off, a Machine has no finalizer and goes at
	// once, leaving its config and infrastructure machine to the test.
	MachineDeletion bool
	// Nodes plays the workload cluster's Nodes: a Machine gets
	// status.nodeRef and Ready and Available True once an Agent bound to
	// its config (bootstrapv1.ConfigLabel) is approved and installed (or
	// added to the existing cluster), which is when its kubelet would
	// register.
	Nodes bool
}

// FakeCAPI is the controller. Make it with New and register it with
// SetupWithManager.
type FakeCAPI struct {
	opts Options
	c    client.Client
}

// New returns the fake with the given options.
func New(opts Options) *FakeCAPI { return &FakeCAPI{opts: opts} }

// SetupWithManager registers the fake as the controller "fake-capi". Its
// Machines are enqueued by their own events and by those of the objects
// they own: configs and infrastructure machines (and Agents, with Nodes).
func (f *FakeCAPI) SetupWithManager(_ context.Context, mgr ctrl.Manager) error {
	f.c = mgr.GetClient()
	b := ctrl.NewControllerManagedBy(mgr).
		Named("fake-capi").
		WithOptions(controller.Options{MaxConcurrentReconciles: 10}).
		For(&clusterv1.Machine{}).
		Watches(&bootstrapv1.OpenshiftAssistedConfig{}, handler.EnqueueRequestsFromMapFunc(toOwnerMachine))
	for _, kind := range []string{"Metal3Machine", "OpenStackMachine"} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(InfraGroupVersion.WithKind(kind))
		b = b.Watches(u, handler.EnqueueRequestsFromMapFunc(toOwnerMachine))
	}
	if f.opts.Nodes {
		// The config, its Machine and its Agent's label share the name.
		b = b.Watches(&aiv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if name := o.GetLabels()[bootstrapv1.ConfigLabel]; name != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
			}
			return nil
		}))
	}
	return b.Complete(f)
}

func toOwnerMachine(_ context.Context, o client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "Machine" {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}})
		}
	}
	return out
}

// Reconcile plays one Machine: deletion, ownership, bootstrap data, the
// host's boot, then the Machine's status.
func (f *FakeCAPI) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &clusterv1.Machine{}
	if err := f.c.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !f.opts.MachineDeletion && !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	config, err := f.external(ctx, m, m.Spec.Bootstrap.ConfigRef)
	if err != nil {
		return ctrl.Result{}, err
	}
	infra, err := f.external(ctx, m, m.Spec.InfrastructureRef)
	if err != nil {
		return ctrl.Result{}, err
	}
	if f.opts.MachineDeletion {
		if !m.DeletionTimestamp.IsZero() {
			return ctrl.Result{}, f.deleteMachine(ctx, m, config, infra)
		}
		if !controllerutil.ContainsFinalizer(m, clusterv1.MachineFinalizer) {
			base := m.DeepCopy()
			controllerutil.AddFinalizer(m, clusterv1.MachineFinalizer)
			return ctrl.Result{}, f.c.Patch(ctx, m, client.MergeFrom(base))
		}
	}
	// An object the Machine refers to that does not exist yet is looked
	// for again later, as CAPI core does; once it exists and is owned, its
	// events bring the Machine back.
	var res ctrl.Result
	if (config == nil && m.Spec.Bootstrap.ConfigRef.IsDefined()) || infra == nil {
		res.RequeueAfter = ExternalReadyWait
	}
	for _, o := range []*unstructured.Unstructured{config, infra} {
		if err := f.own(ctx, m, o); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if m.Spec.Bootstrap.DataSecretName == nil {
		return res, f.copyDataSecretName(ctx, m, config)
	}
	if infra != nil && !provisioned(infra) {
		if _, held := m.Annotations[HoldBootAnnotation]; held {
			return res, nil
		}
		return res, client.IgnoreNotFound(f.provision(ctx, m, infra))
	}
	return res, f.status(ctx, m, infra)
}

// ExternalReadyWait is how long CAPI core waits before it looks again for
// a Machine's bootstrap config or infrastructure machine that does not
// exist (machine_controller_phases.go, externalReadyWait).
const ExternalReadyWait = 30 * time.Second

// external reads the object a Machine refers to at the version its CRD's
// contract label gives, as CAPI core does; nil when the reference is not
// set or the object does not exist.
func (f *FakeCAPI) external(ctx context.Context, m *clusterv1.Machine, ref clusterv1.ContractVersionedObjectReference) (*unstructured.Unstructured, error) {
	if !ref.IsDefined() {
		return nil, nil
	}
	u, err := external.GetObjectFromContractVersionedRef(ctx, f.c, ref, m.Namespace)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// deleteMachine is CAPI core's reconcileDelete without drain and Node
// deletion: the infrastructure machine and the bootstrap config go first
// (their own finalizers run), then the Machine's finalizer.
func (f *FakeCAPI) deleteMachine(ctx context.Context, m *clusterv1.Machine, config, infra *unstructured.Unstructured) error {
	gone := true
	for _, o := range []*unstructured.Unstructured{infra, config} {
		if o == nil {
			continue
		}
		gone = false
		if o.GetDeletionTimestamp().IsZero() {
			if err := f.c.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	if !gone {
		return nil // their deletion enqueues the Machine (owner reference)
	}
	base := m.DeepCopy()
	controllerutil.RemoveFinalizer(m, clusterv1.MachineFinalizer)
	return client.IgnoreNotFound(f.c.Patch(ctx, m, client.MergeFrom(base)))
}

// own makes the Machine the controller of o, as CAPI core's
// ensureExternalOwnershipAndWatch does: the owner references a MachineSet
// or the control plane set when it made o are removed, the Machine's
// controller reference is set, and so is the cluster-name label.
func (f *FakeCAPI) own(ctx context.Context, m *clusterv1.Machine, o *unstructured.Unstructured) error {
	if o == nil {
		return nil
	}
	onCreate, err := f.onCreateOwner(ctx, m)
	if err != nil {
		return err
	}
	refs := o.GetOwnerReferences()
	kept := refs[:0:0]
	for _, ref := range refs {
		if !onCreate(ref) {
			kept = append(kept, ref)
		}
	}
	if len(kept) == len(refs) && metav1.IsControlledBy(o, m) && o.GetLabels()[clusterv1.ClusterNameLabel] == m.Spec.ClusterName {
		return nil
	}
	base := o.DeepCopy()
	o.SetOwnerReferences(kept)
	if err := controllerutil.SetControllerReference(m, o, f.c.Scheme()); err != nil {
		return err
	}
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[clusterv1.ClusterNameLabel] = m.Spec.ClusterName
	o.SetLabels(labels)
	return f.c.Patch(ctx, o, client.MergeFrom(base))
}

// onCreateOwner tells the owner references that CAPI core's
// removeOnCreateOwnerRefs removes: a MachineSet's, and, on a control-plane
// Machine, the control plane's (the kind the Cluster's controlPlaneRef
// names).
func (f *FakeCAPI) onCreateOwner(ctx context.Context, m *clusterv1.Machine) (func(metav1.OwnerReference) bool, error) {
	var cp *schema.GroupKind
	if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; ok {
		cluster := &clusterv1.Cluster{}
		err := f.c.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.ClusterName}, cluster)
		switch {
		case err == nil && cluster.Spec.ControlPlaneRef.IsDefined():
			cp = &schema.GroupKind{Group: cluster.Spec.ControlPlaneRef.APIGroup, Kind: cluster.Spec.ControlPlaneRef.Kind}
		case err != nil && !apierrors.IsNotFound(err):
			return nil, err
		}
	}
	return func(ref metav1.OwnerReference) bool {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return false
		}
		return (gv.Group == clusterv1.GroupVersion.Group && ref.Kind == "MachineSet") ||
			(cp != nil && gv.Group == cp.Group && ref.Kind == cp.Kind)
	}, nil
}

// copyDataSecretName is CAPI core's reconcileBootstrap: once the config
// reports its data secret (the v1beta2 bootstrap contract), the Machine
// gets spec.bootstrap.dataSecretName.
func (f *FakeCAPI) copyDataSecretName(ctx context.Context, m *clusterv1.Machine, config *unstructured.Unstructured) error {
	if config == nil || !config.GetDeletionTimestamp().IsZero() {
		return nil
	}
	created, _, _ := unstructured.NestedBool(config.Object, "status", "initialization", "dataSecretCreated")
	name, _, _ := unstructured.NestedString(config.Object, "status", "dataSecretName")
	if !created || name == "" {
		return nil
	}
	base := m.DeepCopy()
	m.Spec.Bootstrap.DataSecretName = ptr.To(name)
	return client.IgnoreNotFound(f.c.Patch(ctx, m, client.MergeFrom(base)))
}

func provisioned(infra *unstructured.Unstructured) bool {
	p, _, _ := unstructured.NestedBool(infra.Object, "status", "initialization", "provisioned")
	return p
}

// provision plays the infrastructure provider once the Machine has its
// bootstrap data: the host boots with it, and the infrastructure machine
// reports status.initialization.provisioned (the v1beta2 infrastructure
// machine contract).
//   - Metal3Machine (CAPM3): without a metal3.io/BareMetalHost annotation,
//     a BareMetalHost "bmh-<machine>" of its own is made and claimed (a
//     MAC derived from the Machine's name); a claimed host is used as it is.
//   - OpenStackMachine (the OpenStack provider): the OpenStackServer of
//     the same name and the machine get an instance ID "srv-<name>".
func (f *FakeCAPI) provision(ctx context.Context, m *clusterv1.Machine, infra *unstructured.Unstructured) error {
	switch infra.GetKind() {
	case "Metal3Machine":
		if err := f.claimHost(ctx, m, infra); err != nil {
			return err
		}
	case "OpenStackMachine":
		oss := &infrav1alpha1.OpenStackServer{}
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(infra), oss); err != nil {
			return err
		}
		base := oss.DeepCopy()
		oss.Status.InstanceID = ptr.To("srv-" + oss.Name)
		if err := f.c.Status().Patch(ctx, oss, client.MergeFrom(base)); err != nil {
			return err
		}
	}
	base := infra.DeepCopy()
	if infra.GetKind() == "OpenStackMachine" {
		_ = unstructured.SetNestedField(infra.Object, "srv-"+infra.GetName(), "status", "instanceID")
	}
	_ = unstructured.SetNestedField(infra.Object, true, "status", "initialization", "provisioned")
	return f.c.Status().Patch(ctx, infra, client.MergeFrom(base))
}

// hostAnnotation is CAPM3's annotation naming a Metal3Machine's host.
const hostAnnotation = "metal3.io/BareMetalHost"

func (f *FakeCAPI) claimHost(ctx context.Context, m *clusterv1.Machine, infra *unstructured.Unstructured) error {
	if infra.GetAnnotations()[hostAnnotation] != "" {
		return nil
	}
	bmh := &bmhv1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: "bmh-" + m.Name, Namespace: m.Namespace},
		Spec: bmhv1alpha1.BareMetalHostSpec{
			Online: true, BootMACAddress: MAC(m.Namespace + "/" + m.Name),
			BMC: bmhv1alpha1.BMCDetails{Address: "redfish-virtualmedia://192.0.2.1/redfish/v1/Systems/" + m.Name, CredentialsName: "bmc"},
			ConsumerRef: &corev1.ObjectReference{APIVersion: infra.GetAPIVersion(), Kind: infra.GetKind(), Name: infra.GetName(),
				Namespace: m.Namespace},
		},
	}
	if err := f.c.Create(ctx, bmh); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	base := infra.DeepCopy()
	anns := infra.GetAnnotations()
	if anns == nil {
		anns = map[string]string{}
	}
	anns[hostAnnotation] = m.Namespace + "/" + bmh.Name
	infra.SetAnnotations(anns)
	return f.c.Patch(ctx, infra, client.MergeFrom(base))
}

// MAC is a MAC address derived from a host's name.
func MAC(name string) string {
	s := sha256.Sum256([]byte(name))
	return fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", s[0], s[1], s[2], s[3])
}

// status is what CAPI core records on the Machine: bootstrap data and
// infrastructure ready (reconcileBootstrap, reconcileInfrastructure) and,
// with Nodes, the Node (reconcileNode, and the Ready and Available
// conditions it leads to).
func (f *FakeCAPI) status(ctx context.Context, m *clusterv1.Machine, infra *unstructured.Unstructured) error {
	base := m.DeepCopy()
	m.Status.Initialization.BootstrapDataSecretCreated = ptr.To(true)
	if infra != nil && provisioned(infra) {
		m.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		if f.opts.Nodes {
			joined, err := f.joined(ctx, m)
			if err != nil {
				return err
			}
			if joined {
				m.Status.NodeRef = clusterv1.MachineNodeReference{Name: m.Name}
				for _, t := range []string{clusterv1.MachineReadyCondition, clusterv1.MachineAvailableCondition} {
					capiconditions.Set(m, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: "Simulated"})
				}
			}
		}
	}
	if equality.Semantic.DeepEqual(base.Status, m.Status) {
		return nil
	}
	// Locked, as CAPI core's patch helper merges conditions: a merge patch
	// from a stale copy would drop conditions others wrote (the control
	// plane's UpToDate).
	return client.IgnoreNotFound(f.c.Status().Patch(ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
}

// joined tells whether the Machine's host has joined the cluster: an
// approved Agent bound to its config is installed.
func (f *FakeCAPI) joined(ctx context.Context, m *clusterv1.Machine) (bool, error) {
	agents := &aiv1beta1.AgentList{}
	if err := f.c.List(ctx, agents, client.InNamespace(m.Namespace),
		client.MatchingLabels{bootstrapv1.ConfigLabel: m.Spec.Bootstrap.ConfigRef.Name}); err != nil {
		return false, err
	}
	for _, a := range agents.Items {
		if st := a.Status.DebugInfo.State; a.Spec.Approved && (st == "installed" || st == "added-to-existing-cluster") {
			return true, nil
		}
	}
	return false, nil
}

// MachineOwner is the owner reference CAPI core's Machine controller puts
// on the Machine's bootstrap config and infrastructure machine (the
// Machine as their controller); a test that makes those objects for a
// Machine sets it as CAPI would have.
func MachineOwner(m *clusterv1.Machine) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// ProvisionCluster records on the Cluster what CAPI core's Cluster
// controller copies from a provisioned infrastructure cluster
// (reconcileInfrastructure): status.initialization.infrastructureProvisioned
// and the failure domains (here, control-plane ones with the given names;
// none clears them). The suites have no infrastructure cluster: the test
// calls this where the copy would happen.
func ProvisionCluster(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, failureDomains ...string) error {
	base := cluster.DeepCopy()
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	cluster.Status.FailureDomains = nil
	for _, fd := range failureDomains {
		cluster.Status.FailureDomains = append(cluster.Status.FailureDomains, clusterv1.FailureDomain{Name: fd, ControlPlane: ptr.To(true)})
	}
	return c.Status().Patch(ctx, cluster, client.MergeFrom(base))
}
