// Package localenv is what the e2e suites and the quickstart share to run
// the providers on this machine: the consumed CRDs, the assisted-service
// simulator with a kubelet stand-in, the API server that plays a workload
// cluster, the changes that fit the installed providers to the local
// network, and the OpenStack inventory behind the leak check.
//
// It is test infrastructure: nothing here belongs in a user's cluster.
package localenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/ocp-capi/ocp-capi/test/assisted"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// The providers' namespaces (docs/install.md).
const (
	BootstrapNamespace = "ocp-capi-bootstrap-system"
	InfraNamespace     = "ocp-capi-infrastructure-system"
)

const fieldOwner = client.FieldOwner("ocp-capi-localenv")

// InstallConsumedCRDs installs the CRDs of the APIs that the providers
// consume and the simulators play (InfraEnv, Agent, AgentClusterInstall,
// ClusterDeployment, ClusterImageSet, BareMetalHost, Metal3Machine, ...),
// which assisted-service, hive and Metal3 install on a real cluster, and
// waits until they are established.
func InstallConsumedCRDs(ctx context.Context, c client.Client) error {
	paths, err := envtest.ResolvePaths(envtest.Options{})
	if err != nil {
		return err
	}
	crds, err := envtest.ConsumedCRDs(paths.ConsumedCRDs, paths.UpstreamCRDs)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		obj := crd.Object.DeepCopy()
		obj.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		obj.ResourceVersion = ""
		// CAPI core reads an infrastructure object at the version its
		// CRD's contract label names; CAPM3's release labels its CRDs so
		// (cluster.x-k8s.io/<contract>: <versions>), the bare CRDs do not.
		if obj.Spec.Group == "infrastructure.cluster.x-k8s.io" {
			for _, v := range obj.Spec.Versions {
				if v.Served && (v.Name == "v1beta1" || v.Name == "v1beta2") {
					if obj.Labels == nil {
						obj.Labels = map[string]string{}
					}
					obj.Labels["cluster.x-k8s.io/"+v.Name] = v.Name
				}
			}
		}
		if err := serverSideApply(ctx, c, obj); err != nil {
			return fmt.Errorf("CRD %s: %w", obj.Name, err)
		}
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, crd := range crds {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: crd.Object.Name}, got); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if !slices.ContainsFunc(got.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
				return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
			}) {
				return false, nil
			}
		}
		return true, nil
	})
}

// serverSideApply applies obj (its TypeMeta set) as this package's field
// owner.
func serverSideApply(ctx context.Context, c client.Client, obj client.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), fieldOwner, client.ForceOwnership)
}

// NodeAddress is the management node's InternalIP: normal pods reach the
// host's forwarded ports there.
func NodeAddress(ctx context.Context, c client.Client) (string, error) {
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		return "", err
	}
	if len(nodes.Items) != 1 {
		return "", fmt.Errorf("the local management cluster should have one node, it has %d", len(nodes.Items))
	}
	for _, a := range nodes.Items[0].Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address, nil
		}
	}
	return "", errors.New("the management node has no InternalIP")
}

// Simulator is the assisted-service simulator and the kubelet stand-in,
// running in a controller-runtime manager of this process against the
// management cluster.
type Simulator struct {
	*assisted.Simulator
	Kubelets *Kubelets
	done     chan error
}

// StartSimulator starts them; the simulator's HTTPS server listens on
// 127.0.0.1:port, and an installation takes a step at most every step
// (docs/assisted-simulator.md, Pace). The providers' CRDs must be
// installed (clusterctl init): the simulator watches OpenStackMachines and
// Metal3Machines when their CRDs exist at start. Cancel ctx to stop, then
// Wait.
func StartSimulator(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, port int, step time.Duration) (*Simulator, error) {
	sim, err := assisted.New(assisted.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), StepDelay: step, MinStepInterval: step})
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		// Two simulators (for two management clusters) may run in one
		// process; their controllers have the same names.
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		_ = sim.Close()
		return nil, err
	}
	k := NewKubelets()
	if err := sim.SetupWithManager(ctx, mgr); err != nil {
		_ = sim.Close()
		return nil, err
	}
	if err := k.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	// CAPM3 and the Bare Metal Operator, played when the Metal3 CRDs exist.
	if _, err := mgr.GetRESTMapper().RESTMapping(metal3MachineGVK.GroupKind(), metal3MachineGVK.Version); err == nil {
		if err := NewMetal3(k).SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	s := &Simulator{Simulator: sim, Kubelets: k, done: make(chan error, 1)}
	go func() { s.done <- mgr.Start(ctx) }()
	return s, nil
}

// Wait returns the manager's error once it stopped.
func (s *Simulator) Wait() error { return <-s.done }

// SetWorkload makes w play the installed cluster of the ClusterDeployment
// cd (the control plane names it after the Cluster): the simulator watches
// it through the host's address, the admin kubeconfig that the providers
// and CAPI core read from pods names the Service that FitProviders makes,
// and the hosts of cd's namespace register their Nodes there.
func (s *Simulator) SetWorkload(ctx context.Context, cd client.ObjectKey, w *WorkloadCluster) error {
	if err := s.Simulator.SetWorkload(ctx, cd, w.HostKubeconfig); err != nil {
		return err
	}
	if err := s.SetKubeconfig(ctx, cd, w.PodKubeconfig); err != nil {
		return err
	}
	s.Kubelets.SetWorkload(cd.Namespace, w.Client)
	return nil
}

// ForgetWorkload undoes SetWorkload for cd: no kubelet registers Nodes of
// cd's namespace any more and the simulator stops watching the workload
// API server. Call it before stopping that server.
func (s *Simulator) ForgetWorkload(cd client.ObjectKey) {
	s.Kubelets.SetWorkload(cd.Namespace, nil)
	s.Simulator.ForgetWorkload(cd)
}

// FitProviders fits the installed providers to this machine; a user's
// cluster needs none of it:
//
//   - the bootstrap provider fetches discovery ignitions from the simulator,
//     which listens on the host's loopback. The node forwards that port
//     (mgmt up --forward-host-ports), so the Service "assisted-service" in
//     the provider's namespace points at the node's address (the provider
//     runs with --assisted-service-url https://assisted-service, the
//     clusterctl variable OCP_CAPI_BOOTSTRAP_ASSISTED_SERVICE_URL), and the
//     simulator's CA goes into the ConfigMap the provider mounts for
//     --assisted-ca-bundle (a real assisted-service with a private CA needs
//     the same: the clusterctl variable OCP_CAPI_BOOTSTRAP_ASSISTED_CA_BUNDLE_B64
//     fills it at install; the CA exists only once the simulator runs);
//   - the workload API server (StartWorkloadCluster) listens on the host's
//     loopback too: the Service WorkloadServiceName in
//     WorkloadServiceNamespace points at the node's forward of workloadPort,
//     so that the workload kubeconfig names a Service that every management
//     cluster has, and still works after `clusterctl move`;
//   - the local OpenStack's catalog names 127.0.0.1 endpoints, which a pod
//     reaches only in the node's network namespace, so the infrastructure
//     manager runs with hostNetwork. The e2e's clusterctl repository serves
//     components that already carry it (FitInfrastructureComponents), so
//     that `clusterctl upgrade apply` keeps it; this sets it for the
//     installs that do not come from there (Helm, the quickstart).
//
// It waits until the changed Deployments run their new pods, and returns
// them.
func FitProviders(ctx context.Context, c client.Client, caBundle []byte, nodeIP string, assistedPort, workloadPort int32, timeout time.Duration) ([]*appsv1.Deployment, error) {
	caName, err := caConfigMapName(ctx, c)
	if err != nil {
		return nil, err
	}
	objs := []client.Object{
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: caName, Namespace: BootstrapNamespace},
			BinaryData: map[string][]byte{"ca.crt": caBundle},
		},
	}
	objs = append(objs, hostService(BootstrapNamespace, "assisted-service", nodeIP, 443, assistedPort)...)
	objs = append(objs, hostService(WorkloadServiceNamespace, WorkloadServiceName, nodeIP, workloadPort, workloadPort)...)
	for _, obj := range objs {
		if err := serverSideApply(ctx, c, obj); err != nil {
			return nil, fmt.Errorf("%T %s: %w", obj, obj.GetName(), err)
		}
	}
	// The CA's hash on the pod template restarts the provider when a
	// restarted simulator brings a new CA.
	sum := sha256.Sum256(caBundle)
	boot, err := patchDeployment(ctx, c, BootstrapNamespace, func(tmpl *corev1.PodTemplateSpec) {
		if tmpl.Annotations == nil {
			tmpl.Annotations = map[string]string{}
		}
		tmpl.Annotations["ocp-capi.io/assisted-service-ca-sha256"] = hex.EncodeToString(sum[:])
		spec := &tmpl.Spec
		m := &spec.Containers[0]
		if !slices.Contains(m.Args, caBundleArg) {
			m.Args = append(m.Args, caBundleArg)
		}
		if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == caVolume }) {
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: caVolume, VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: caName}}}})
			m.VolumeMounts = append(m.VolumeMounts, corev1.VolumeMount{Name: caVolume, MountPath: caBundleDir, ReadOnly: true})
		}
	})
	if err != nil {
		return nil, err
	}
	infra, err := patchDeployment(ctx, c, InfraNamespace, func(tmpl *corev1.PodTemplateSpec) {
		tmpl.Spec.HostNetwork = true
		tmpl.Spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	})
	if err != nil {
		return nil, err
	}
	deps := []*appsv1.Deployment{boot, infra}
	for _, d := range deps {
		if err := WaitForRollout(ctx, c, d, timeout); err != nil {
			return nil, err
		}
	}
	return deps, nil
}

// ApplyWorkloadService makes the Service service in
// WorkloadServiceNamespace whose endpoint is the node's forward of the
// workload API server's port (StartWorkloadClusterBehind), as FitProviders
// does for the shared one.
func ApplyWorkloadService(ctx context.Context, c client.Client, nodeIP, service string, port int32) error {
	for _, obj := range hostService(WorkloadServiceNamespace, service, nodeIP, port, port) {
		if err := serverSideApply(ctx, c, obj); err != nil {
			return fmt.Errorf("%T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// DeleteWorkloadService undoes ApplyWorkloadService.
func DeleteWorkloadService(ctx context.Context, c client.Client, service string) error {
	for _, obj := range hostService(WorkloadServiceNamespace, service, "", 0, 0) {
		if err := client.IgnoreNotFound(c.Delete(ctx, obj)); err != nil {
			return fmt.Errorf("%T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// hostService is a selector-less Service namespace/name on port whose one
// endpoint is the node's forward of a host port (nodeIP:hostPort): pods
// reach a server of the test process through it.
func hostService(namespace, name, nodeIP string, port, hostPort int32) []client.Object {
	return []client.Object{
		&corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: port,
				TargetPort: intstr.FromInt32(hostPort), Protocol: corev1.ProtocolTCP}}},
		},
		&discoveryv1.EndpointSlice{
			TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
			ObjectMeta: metav1.ObjectMeta{Name: name + "-host", Namespace: namespace,
				Labels: map[string]string{discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "ocp-capi-localenv"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{nodeIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(hostPort), Protocol: ptr.To(corev1.ProtocolTCP)}},
		},
	}
}

// The bootstrap provider's CA bundle: its manifests mount the ConfigMap
// that the clusterctl variable OCP_CAPI_BOOTSTRAP_ASSISTED_CA_BUNDLE_B64
// fills (docs/install.md); v0.1.0's did not, so the fit adds the mount then.
const (
	caVolume       = "assisted-service-ca"
	caBundleDir    = "/etc/assisted-service-ca"
	caBundleArg    = "--assisted-ca-bundle=" + caBundleDir + "/ca.crt"
	ownCAConfigMap = "assisted-service-ca"
)

// BootstrapCABundle is the CA bundle the bootstrap provider's Deployment
// mounts (empty when it mounts none).
func BootstrapCABundle(ctx context.Context, c client.Client) ([]byte, error) {
	name, err := caConfigMapName(ctx, c)
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: BootstrapNamespace, Name: name}, cm); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return append(cm.BinaryData["ca.crt"], cm.Data["ca.crt"]...), nil
}

// caConfigMapName is the ConfigMap the bootstrap provider's Deployment
// mounts for its CA bundle, or the one the fit makes for a release whose
// manifests mount none.
func caConfigMapName(ctx context.Context, c client.Client) (string, error) {
	d, err := controllerDeployment(ctx, c, BootstrapNamespace)
	if err != nil {
		return "", err
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == caVolume && v.ConfigMap != nil {
			return v.ConfigMap.Name, nil
		}
	}
	return ownCAConfigMap, nil
}

// controllerDeployment is the one controller Deployment of a provider's
// namespace.
func controllerDeployment(ctx context.Context, c client.Client, namespace string) (*appsv1.Deployment, error) {
	list := &appsv1.DeploymentList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	if len(list.Items) != 1 {
		return nil, fmt.Errorf("want one controller Deployment in %s, found %d: is the provider installed?", namespace, len(list.Items))
	}
	return &list.Items[0], nil
}

// patchDeployment changes the pod template of the one controller Deployment
// in namespace (a no-op change writes nothing).
func patchDeployment(ctx context.Context, c client.Client, namespace string, change func(*corev1.PodTemplateSpec)) (*appsv1.Deployment, error) {
	d, err := controllerDeployment(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	base := d.DeepCopy()
	change(&d.Spec.Template)
	if err := c.Patch(ctx, d, client.MergeFrom(base)); err != nil {
		return nil, fmt.Errorf("patching Deployment %s/%s: %w", namespace, d.Name, err)
	}
	return d, nil
}

// WaitForRollout waits until d's new pods are the available ones and no
// old pod is left.
func WaitForRollout(ctx context.Context, c client.Client, d *appsv1.Deployment, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		got := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
			return false, err
		}
		want := ptr.Deref(got.Spec.Replicas, 1)
		st := got.Status
		last = fmt.Sprintf("generation %d observed %d, replicas %d updated %d available %d", got.Generation, st.ObservedGeneration,
			st.Replicas, st.UpdatedReplicas, st.AvailableReplicas)
		return st.ObservedGeneration >= got.Generation && st.UpdatedReplicas == want && st.AvailableReplicas == want && st.Replicas == want, nil
	})
	if err != nil {
		return fmt.Errorf("rollout of Deployment %s/%s (%s): %w", d.Namespace, d.Name, last, err)
	}
	return nil
}

// SingleCloudYAML is a clouds.yaml with only the named cloud: a cluster's
// Secret gets its credentials and no other cloud's.
func SingleCloudYAML(path, name string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Clouds map[string]any `json:"clouds"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	cloud, ok := doc.Clouds[name]
	if !ok {
		return nil, fmt.Errorf("%s has no cloud %q", path, name)
	}
	return yaml.Marshal(map[string]any{"clouds": map[string]any{name: cloud}})
}
