package assisted

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
)

const infraGroup = "infrastructure.cluster.x-k8s.io"

// hostReconciler "boots" hosts: it watches one kind of infrastructure
// machine and registers an Agent once the machine is provisioned.
type hostReconciler struct {
	s      *Simulator
	c      client.Client
	reader client.Reader // uncached, for what was just created
	gvk    schema.GroupVersionKind
}

func (s *Simulator) setupHosts(_ context.Context, mgr ctrl.Manager) error {
	for _, kind := range []string{"Metal3Machine", "OpenStackMachine"} {
		mapping, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: infraGroup, Kind: kind})
		if meta.IsNoMatchError(err) {
			continue // that provider is not installed
		}
		if err != nil {
			return err
		}
		r := &hostReconciler{s: s, c: mgr.GetClient(), reader: mgr.GetAPIReader(), gvk: mapping.GroupVersionKind}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(r.gvk)
		if err := ctrl.NewControllerManagedBy(mgr).
			Named("assisted-simulator-" + strings.ToLower(kind)).
			WithOptions(s.controllerOptions()).
			For(u).
			Complete(r); err != nil {
			return err
		}
	}
	return nil
}

// Reconcile registers the host of a provisioned infrastructure machine.
func (r *hostReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(r.gvk)
	if err := r.c.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if provisioned, _, _ := unstructured.NestedBool(obj.Object, "status", "initialization", "provisioned"); !provisioned || !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	ie, err := r.bootedInfraEnv(ctx, obj)
	if err != nil || ie == nil {
		return ctrl.Result{}, err
	}
	h, err := r.host(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if h == nil {
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	r.s.mu.Lock()
	extra := r.s.extra
	r.s.mu.Unlock()
	// Duplicates register at the same time, as a host racing itself would.
	errs := make(chan error, extra+1)
	for i := 0; i <= extra; i++ {
		id := h.id
		if i > 0 {
			id = fmt.Sprintf("%s#%d", h.id, i)
		}
		go func() { errs <- r.register(ctx, ie, uuid5("host/"+id), h) }()
	}
	var first error
	for i := 0; i <= extra; i++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return ctrl.Result{}, first
}

// bootedInfraEnv finds what the host booted: the discovery ignition in its
// Machine's bootstrap data (any provider), or the live ISO on its
// Metal3Machine. nil when it booted neither.
func (r *hostReconciler) bootedInfraEnv(ctx context.Context, obj *unstructured.Unstructured) (*aiv1beta1.InfraEnv, error) {
	machine := &clusterv1.Machine{}
	var machineName string
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == "Machine" {
			machineName = ref.Name
		}
	}
	if machineName == "" {
		return nil, nil
	}
	if err := r.c.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: machineName}, machine); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if name := ptr.Deref(machine.Spec.Bootstrap.DataSecretName, ""); name != "" {
		secret := &corev1.Secret{}
		if err := r.c.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, secret); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		if data := secret.Data["value"]; len(data) > 0 {
			id := infraEnvIDFromIgnition(data)
			if id == "" {
				return nil, nil // some other user data: not a discovery boot
			}
			return r.infraEnvByID(ctx, obj.GetNamespace(), id)
		}
	}
	if r.gvk.Kind != "Metal3Machine" {
		return nil, nil
	}
	formatField := "diskFormat"
	if r.gvk.Version == "v1beta1" {
		formatField = "format"
	}
	url, _, _ := unstructured.NestedString(obj.Object, "spec", "image", "url")
	format, _, _ := unstructured.NestedString(obj.Object, "spec", "image", formatField)
	if url == "" || format != "live-iso" {
		return nil, nil // BMO would write a disk image: no discovery boot
	}
	list := &aiv1beta1.InfraEnvList{}
	if err := r.c.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Status.ISODownloadURL == url {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

func (r *hostReconciler) infraEnvByID(ctx context.Context, namespace, id string) (*aiv1beta1.InfraEnv, error) {
	list := &aiv1beta1.InfraEnvList{}
	if err := r.c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if infraEnvID(list.Items[i].UID) == id {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// simHost is what the agent on a host reports.
type simHost struct {
	id       string // system identity
	hostname string
	macs     []string
}

// host reads the machine's host: the BareMetalHost (Metal3) or the
// OpenStack server; nil while its MAC is not known.
func (r *hostReconciler) host(ctx context.Context, obj *unstructured.Unstructured) (*simHost, error) {
	h := &simHost{hostname: obj.GetName()}
	switch r.gvk.Kind {
	case "Metal3Machine":
		ns, name, ok := strings.Cut(obj.GetAnnotations()["metal3.io/BareMetalHost"], "/")
		if !ok {
			return nil, nil
		}
		bmh := &bmhv1alpha1.BareMetalHost{}
		if err := r.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, bmh); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		if bmh.Spec.BootMACAddress == "" {
			return nil, nil
		}
		h.id, h.macs = "bmh/"+string(bmh.UID), []string{bmh.Spec.BootMACAddress}
	case "OpenStackMachine":
		oss := &infrav1alpha1.OpenStackServer{}
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(obj), oss); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		if oss.Status.Resources == nil || ptr.Deref(oss.Status.InstanceID, "") == "" {
			return nil, nil
		}
		for _, p := range oss.Status.Resources.Ports {
			if p.MACAddress != "" {
				h.macs = append(h.macs, p.MACAddress)
			}
		}
		if len(h.macs) == 0 {
			return nil, nil
		}
		h.id = "server/" + *oss.Status.InstanceID
	}
	return h, nil
}

// register creates (or refreshes) the Agent name in the InfraEnv, as the
// discovery agent's registration does.
func (r *hostReconciler) register(ctx context.Context, ie *aiv1beta1.InfraEnv, name string, h *simHost) error {
	// Uncached: the installation moves the Agent's state meanwhile, and a
	// status computed from a stale copy would put it back.
	agent := &aiv1beta1.Agent{}
	err := r.reader.Get(ctx, types.NamespacedName{Namespace: ie.Namespace, Name: name}, agent)
	if apierrors.IsNotFound(err) {
		labels := map[string]string{aiv1beta1.InfraEnvNameLabel: ie.Name}
		for k, v := range ie.Spec.AgentLabels {
			labels[k] = v
		}
		agent = &aiv1beta1.Agent{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ie.Namespace, Labels: labels},
			Spec:       aiv1beta1.AgentSpec{Role: aiv1beta1.HostRoleAutoAssign},
		}
		if ref := ie.Spec.ClusterRef; ref != nil {
			agent.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Name: ref.Name, Namespace: ref.Namespace}
		}
		switch err := r.c.Create(ctx, agent); {
		case apierrors.IsAlreadyExists(err):
			if err := r.reader.Get(ctx, client.ObjectKeyFromObject(agent), agent); err != nil {
				return err
			}
		case err != nil:
			return err
		}
	} else if err != nil {
		return err
	}
	base := agent.DeepCopy()
	now := metav1.Now()
	st := &agent.Status
	if st.Role == "" {
		st.Role = aiv1beta1.HostRoleAutoAssign
	}
	st.Inventory.Hostname = h.hostname
	st.Inventory.SystemVendor = aiv1beta1.HostSystemVendor{Manufacturer: "assisted-service simulator", ProductName: "simulated host",
		SerialNumber: h.id, Virtual: true}
	st.Inventory.Interfaces = nil
	for i, mac := range h.macs {
		st.Inventory.Interfaces = append(st.Inventory.Interfaces, aiv1beta1.HostInterface{
			Name: fmt.Sprintf("eth%d", i), MacAddress: strings.ToLower(mac),
			IPV4Addresses: []string{}, IPV6Addresses: []string{}, Flags: []string{"up", "broadcast", "running"},
		})
	}
	if st.DebugInfo.State == "" {
		// A new host first sends its inventory; the installation's next
		// step validates it (host registration: discovering).
		st.DebugInfo.State = HostDiscovering
		st.DebugInfo.StateInfo = hostStateInfo(HostDiscovering, "")
	}
	for _, c := range agentConditions(st.DebugInfo.State, agent.Spec.Approved, st.DebugInfo.StateInfo) {
		setCondition(&st.Conditions, c, now)
	}
	if equality.Semantic.DeepEqual(base.Status, agent.Status) {
		return nil
	}
	return r.c.Status().Patch(ctx, agent, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

var _ reconcile.Reconciler = &hostReconciler{}
