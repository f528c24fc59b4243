package localenv

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/assisted"
)

// kubeletEnvPath is where the bootstrap provider's Ignition override puts
// KUBELET_PROVIDERID for OpenShift's kubelet (bootstrap/internal/agentspec).
const kubeletEnvPath = "/etc/kubernetes/kubelet-env"

// Kubelets play the kubelets of installed hosts: when the simulator
// reports an Agent installed (day 1) or added to the cluster (day 2), it
// registers the host's Node in the API server that plays the workload
// cluster, named after the host and with the provider ID the bootstrap
// provider handed to kubelet through the Agent's Ignition override. CAPI
// core then finds the Node by provider ID and sets the Machine's nodeRef,
// as it does with a real cluster. A host whose override carries no provider
// ID registers a Node without one, as kubelet would: no Machine then gets a
// nodeRef, and the suite fails.
type Kubelets struct {
	c client.Client

	mu sync.Mutex
	// workloads maps a cluster's namespace to the client of its workload
	// API server.
	workloads map[string]client.Client
}

// NewKubelets makes the stand-in; add it to a manager with SetupWithManager.
func NewKubelets() *Kubelets {
	return &Kubelets{workloads: map[string]client.Client{}}
}

// SetWorkload makes Agents of namespace register their Nodes through c
// (nil stops it).
func (r *Kubelets) SetWorkload(namespace string, c client.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c == nil {
		delete(r.workloads, namespace)
		return
	}
	r.workloads[namespace] = c
}

func (r *Kubelets) workload(namespace string) client.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.workloads[namespace]
}

// SetupWithManager watches Agents in the manager's cluster.
func (r *Kubelets) SetupWithManager(mgr ctrl.Manager) error {
	r.c = mgr.GetClient()
	return ctrl.NewControllerManagedBy(mgr).Named("e2e-kubelet").For(&aiv1beta1.Agent{}).Complete(r)
}

// Reconcile registers the Node of an installed host.
func (r *Kubelets) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wl := r.workload(req.Namespace)
	if wl == nil {
		return ctrl.Result{}, nil
	}
	agent := &aiv1beta1.Agent{}
	if err := r.c.Get(ctx, req.NamespacedName, agent); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch agent.Status.DebugInfo.State {
	case "installed", "added-to-existing-cluster":
	default:
		return ctrl.Result{}, nil
	}
	name := nodeName(agent)
	providerID, err := kubeletProviderID(agent.Spec.IgnitionConfigOverrides)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("agent %s: %w", req, err)
	}
	node := &corev1.Node{}
	err = wl.Get(ctx, types.NamespacedName{Name: name}, node)
	switch {
	case err == nil:
		// Registered; its status may still be missing when the write after
		// the create failed (CAPI core annotates a Node as soon as it finds
		// it), so a kubelet posts it again.
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return ctrl.Result{}, nil
			}
		}
		return ctrl.Result{}, r.postStatus(ctx, wl, node, agent)
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}
	role := "worker"
	if agent.Spec.Role == "master" {
		role = "master"
	}
	// The labels the installer puts on the host's kubelet: the Agent's
	// nodeLabels (metal3.io/uuid for Metal3 hosts, kubeletExtraLabels), and
	// the usual ones.
	nodeLabels := map[string]string{}
	for k, v := range agent.Spec.NodeLabels {
		nodeLabels[k] = v
	}
	nodeLabels["kubernetes.io/hostname"] = name
	nodeLabels["node-role.kubernetes.io/"+role] = ""
	nodeLabels["node.openshift.io/os_id"] = "rhcos"
	nodeLabels["ocp-capi.io/e2e-registered-by-agent"] = agent.Name
	node = &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: nodeLabels},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
	}
	if err := wl.Create(ctx, node); err != nil {
		// AlreadyExists: the next reconcile finds it and posts its status.
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.postStatus(ctx, wl, node, agent)
}

// postStatus posts the status of a healthy kubelet's Node, as a patch: no
// conflict with the annotations CAPI core writes meanwhile.
func (r *Kubelets) postStatus(ctx context.Context, wl client.Client, node *corev1.Node, agent *aiv1beta1.Agent) error {
	name := node.Name
	base := node.DeepCopy()
	now := metav1.Now()
	node.Status = corev1.NodeStatus{
		// The conditions a healthy kubelet posts; CAPI's NodeHealthy reads them.
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
				Message: "kubelet has sufficient memory available", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure",
				Message: "kubelet has no disk pressure", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID",
				Message: "kubelet has sufficient PID available", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status (e2e stand-in)", LastHeartbeatTime: now, LastTransitionTime: now},
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}},
		NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: r.kubeletVersion(ctx, agent), OperatingSystem: "linux", Architecture: "amd64"},
	}
	return wl.Status().Patch(ctx, node, client.MergeFrom(base))
}

// nodeName is the host's name as kubelet registers it.
func nodeName(a *aiv1beta1.Agent) string {
	for _, n := range []string{a.Spec.Hostname, a.Status.Inventory.Hostname, a.Name} {
		if n != "" {
			return strings.ToLower(n)
		}
	}
	return ""
}

// kubeletProviderID reads KUBELET_PROVIDERID from the kubelet environment
// file of an Ignition config; "" when the config has none.
func kubeletProviderID(ignition string) (string, error) {
	if ignition == "" {
		return "", nil
	}
	v, err := assisted.EnvFileValue([]byte(ignition), kubeletEnvPath, "KUBELET_PROVIDERID")
	if err != nil {
		return "", fmt.Errorf("ignitionConfigOverrides: %w", err)
	}
	return v, nil
}

// kubeletVersion is the Kubernetes version the control plane reports
// (status.version), which the installed release's kubelets run; "" when
// it is not known, as a kubelet that could not report it.
func (r *Kubelets) kubeletVersion(ctx context.Context, agent *aiv1beta1.Agent) string {
	name := agent.Labels[clusterv1.ClusterNameLabel]
	if name == "" {
		return ""
	}
	cluster := &clusterv1.Cluster{}
	if err := r.c.Get(ctx, types.NamespacedName{Namespace: agent.Namespace, Name: name}, cluster); err != nil || !cluster.Spec.ControlPlaneRef.IsDefined() {
		return ""
	}
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := r.c.Get(ctx, types.NamespacedName{Namespace: agent.Namespace, Name: cluster.Spec.ControlPlaneRef.Name}, cp); err != nil {
		return ""
	}
	return cp.Status.Version
}
