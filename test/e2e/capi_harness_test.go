//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
)

// The harness through which CAPI's own specs (sigs.k8s.io/cluster-api/test/e2e)
// run against our providers, using only the inputs those specs offer
// (docs/e2e.md, "CAPI's own e2e specs").

// capiSpecCtx is the context given to CAPI's specs when ginkgo builds the
// spec tree, before BeforeSuite sets suiteCtx.
var capiSpecCtx = context.Background()

// workloadProxy is the management cluster's proxy, given to a CAPI spec as
// its BootstrapClusterProxy. It differs in GetWorkloadCluster only: the
// kubeconfig Secret of a workload cluster names the Service through which
// pods reach the workload API server, which the test process on the host
// cannot resolve, so for a workload registered here it returns a proxy on
// that server's host kubeconfig (the same server, another address).
type workloadProxy struct {
	framework.ClusterProxy
	mu sync.Mutex
	// kubeconfigs are the host kubeconfig files by cluster key.
	kubeconfigs map[types.NamespacedName]string
}

func newWorkloadProxy(p framework.ClusterProxy) *workloadProxy {
	return &workloadProxy{ClusterProxy: p, kubeconfigs: map[types.NamespacedName]string{}}
}

// register makes w the workload cluster of key, until the returned func runs.
func (p *workloadProxy) register(key types.NamespacedName, w *localenv.WorkloadCluster) func() {
	dir, err := os.MkdirTemp("", "capi-spec-workload-")
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(path, w.HostKubeconfig, 0o600)).To(Succeed())
	p.mu.Lock()
	p.kubeconfigs[key] = path
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.kubeconfigs, key)
		p.mu.Unlock()
		_ = os.RemoveAll(dir)
	}
}

func (p *workloadProxy) GetWorkloadCluster(ctx context.Context, namespace, name string, options ...framework.Option) framework.ClusterProxy {
	p.mu.Lock()
	path, ok := p.kubeconfigs[types.NamespacedName{Namespace: namespace, Name: name}]
	p.mu.Unlock()
	if !ok {
		return p.ClusterProxy.GetWorkloadCluster(ctx, namespace, name, options...)
	}
	return framework.NewClusterProxy(name, path, p.GetScheme(), options...)
}

// capiSpecCluster is one CAPI spec's cluster on the openstack-agent flavor:
// its name (chosen here and given to the spec as ClusterName, or learned
// from the namespace for a spec that chooses it), the namespace the spec
// made, the workload API server that plays it and what our own quick start
// checks on it.
type capiSpecCluster struct {
	// mu guards Name while learnName may still set it.
	mu        sync.Mutex
	Name      string
	Namespace string
	Proxy     *workloadProxy
	OpenStack *localenv.OpenStack
	Workload  *localenv.WorkloadCluster
	// Recorded are its OpenStack resources once every Machine has a Node.
	Recorded map[string]localenv.OSResource
}

// newCAPISpecCluster names the cluster of a spec run; call it in the spec's
// input getter (its BeforeEach).
func newCAPISpecCluster(prefix string) *capiSpecCluster {
	return &capiSpecCluster{Name: prefix + "-" + util.RandomString(6), Proxy: newWorkloadProxy(mgmt)}
}

// newCAPISpecClusterNamedBySpec is newCAPISpecCluster for a spec without a
// ClusterName input: the cluster's name is learned once the spec applies it
// (PostNamespaceCreated).
func newCAPISpecClusterNamedBySpec() *capiSpecCluster {
	return &capiSpecCluster{Proxy: newWorkloadProxy(mgmt)}
}

// name is the cluster's name, empty until it is known.
func (s *capiSpecCluster) name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Name
}

// cloudsYAMLB64 is OPENSTACK_CLOUD_YAML_B64 for the templates: the one cloud
// of the configuration from the suite's clouds.yaml.
func cloudsYAMLB64() string {
	clouds, err := localenv.SingleCloudYAML(*cloudsYAML, e2eConfig.MustGetVariable("OPENSTACK_CLOUD"))
	Expect(err).NotTo(HaveOccurred())
	return base64.StdEncoding.EncodeToString(clouds)
}

// PostNamespaceCreated, openstack-agent flavor: nothing of the cluster's
// name exists on OpenStack yet (so that a leftover cannot hide a leak),
// then the workload starts (startWorkload).
func (s *capiSpecCluster) PostNamespaceCreated(_ framework.ClusterProxy, namespace string) {
	ctx := suiteCtx
	var err error
	s.OpenStack, err = localenv.NewOpenStack(ctx, *cloudsYAML, e2eConfig.MustGetVariable("OPENSTACK_CLOUD"))
	Expect(err).NotTo(HaveOccurred())
	before, err := s.OpenStack.All(ctx)
	Expect(err).NotTo(HaveOccurred())
	// A spec that names its cluster itself names it after no namespace of
	// ours; the namespace (random, new) is in the name of its network,
	// subnet, router and security groups (k8s-clusterapi-cluster-<namespace>-<name>).
	owner := cmp.Or(s.name(), namespace)
	Expect(localenv.ClusterResources(before, owner, nil)).To(BeEmpty(), "OpenStack resources of %s exist before it does", owner)
	s.startWorkload(namespace)
}

// PostNamespaceCreatedMetal3, metal3-agent flavor: the workload starts
// (startWorkload) and the BareMetalHosts of both pools are registered.
func (s *capiSpecCluster) PostNamespaceCreatedMetal3(proxy framework.ClusterProxy, namespace string, cp, workers int) {
	s.startWorkload(namespace)
	registerBareMetalHosts(suiteCtx, proxy.GetClient(), namespace, s.Name, cp, workers)
}

// startWorkload starts the workload API server and registers it with the
// simulator, the kubelet stand-in and the proxy as soon as the spec
// applies the cluster (learnName). It stops after the spec's and our
// AfterEach (DeferCleanup in the spec's BeforeEach).
func (s *capiSpecCluster) startWorkload(namespace string) {
	s.Namespace = namespace
	By("Starting the API server that plays the workload cluster of namespace " + namespace)
	var err error
	s.Workload, err = localenv.StartWorkloadCluster(intVariable("E2E_WORKLOAD_API_PORT"), "")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(s.Workload.Stop()).To(Succeed()) })
	s.learnName(namespace)
}

// learnName registers the workload for the cluster that the spec applies
// in namespace: it polls for the Cluster and registers as soon as it has a
// control plane, long before the simulated installation completes (the
// servers must boot and their Agents register first). The simulator knows
// the workload by the ClusterDeployment, which the control plane names
// after itself: the cluster's name in the plain flavors, a name that CAPI's
// topology controller makes in the topology flavor. A spec that applies
// more than one Cluster fails here.
func (s *capiSpecCluster) learnName(namespace string) {
	ctx, cancel := context.WithCancel(suiteCtx)
	done := make(chan struct{})
	var (
		key, cdKey types.NamespacedName
		unregister func()
		failure    error
	)
	go func() {
		defer close(done)
		failure = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			list := &clusterv1.ClusterList{}
			if err := mgmt.GetClient().List(ctx, list, client.InNamespace(namespace)); err != nil {
				return false, nil //nolint:nilerr // the API server may be busy; poll again
			}
			switch len(list.Items) {
			case 0:
				return false, nil
			case 1:
			default:
				return false, fmt.Errorf("namespace %s holds %d Clusters; the harness plays one", namespace, len(list.Items))
			}
			if list.Items[0].Spec.ControlPlaneRef.Name == "" {
				return false, nil
			}
			key = client.ObjectKeyFromObject(&list.Items[0])
			cdKey = types.NamespacedName{Namespace: namespace, Name: list.Items[0].Spec.ControlPlaneRef.Name}
			if err := sim.SetWorkload(ctx, cdKey, s.Workload); err != nil {
				return false, err
			}
			unregister = s.Proxy.register(key, s.Workload)
			s.mu.Lock()
			s.Name = key.Name
			s.mu.Unlock()
			return true, nil
		})
	}()
	DeferCleanup(func() {
		cancel()
		<-done
		if unregister != nil {
			unregister()
			sim.ForgetWorkload(cdKey)
		}
		if failure != nil && !errors.Is(failure, context.Canceled) {
			Fail("registering the workload cluster of namespace " + namespace + ": " + failure.Error())
		}
	})
}

// ControlPlaneWaiters replace the spec's KubeadmControlPlane defaults with
// the same two waits on the OpenshiftAssistedControlPlane.
func (s *capiSpecCluster) ControlPlaneWaiters() clusterctl.ControlPlaneWaiters {
	return clusterctl.ControlPlaneWaiters{
		WaitForControlPlaneInitialized: func(ctx context.Context, in clusterctl.ApplyCustomClusterTemplateAndWaitInput, res *clusterctl.ApplyCustomClusterTemplateAndWaitResult) {
			By("Waiting for the OpenshiftAssistedControlPlane to be initialized (status.initialization.controlPlaneInitialized)")
			Eventually(func(g Gomega) {
				oacp := s.controlPlane(g, in.ClusterProxy.GetClient(), res.Cluster)
				g.Expect(ptr.Deref(oacp.Status.Initialization.ControlPlaneInitialized, false)).To(BeTrue(),
					"OpenshiftAssistedControlPlane %s not initialized: %s", oacp.Name, condSummary(oacp.Status.Conditions))
			}, in.WaitForControlPlaneIntervals...).Should(Succeed())
		},
		WaitForControlPlaneMachinesReady: func(ctx context.Context, in clusterctl.ApplyCustomClusterTemplateAndWaitInput, res *clusterctl.ApplyCustomClusterTemplateAndWaitResult) {
			By("Waiting for the OpenshiftAssistedControlPlane to be Available with every replica ready and available")
			Eventually(func(g Gomega) {
				oacp := s.controlPlane(g, in.ClusterProxy.GetClient(), res.Cluster)
				g.Expect(apimeta.IsStatusConditionTrue(oacp.Status.Conditions, controlplanev1.AvailableCondition)).To(BeTrue(),
					"OpenshiftAssistedControlPlane %s: %s", oacp.Name, condSummary(oacp.Status.Conditions))
				g.Expect(ptr.Deref(oacp.Status.ReadyReplicas, 0)).To(Equal(oacp.DesiredReplicas()), "ready replicas")
				g.Expect(ptr.Deref(oacp.Status.AvailableReplicas, 0)).To(Equal(oacp.DesiredReplicas()), "available replicas")
			}, in.WaitForControlPlaneIntervals...).Should(Succeed())
		},
	}
}

// controlPlane is the cluster's OpenshiftAssistedControlPlane (by its
// controlPlaneRef).
func (s *capiSpecCluster) controlPlane(g Gomega, c client.Client, cluster *clusterv1.Cluster) *controlplanev1.OpenshiftAssistedControlPlane {
	ref := cluster.Spec.ControlPlaneRef
	g.Expect(ref.Kind).To(Equal("OpenshiftAssistedControlPlane"), "Cluster %s's controlPlaneRef", cluster.Name)
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}, oacp)).To(Succeed())
	return oacp
}

// PostMachinesProvisioned: our quick start's checks once the spec found
// every MachineDeployment's Machines with a nodeRef: every Machine has a
// providerID, addresses and a nodeRef to the workload's Node with that
// providerID; then, on OpenStack, the cluster's resources are recorded for
// the leak check (one server per Machine, network, subnet, router,
// security group, load balancer, floating IP).
func (s *capiSpecCluster) PostMachinesProvisioned(proxy framework.ClusterProxy, namespace, name string, machines int) {
	ctx := suiteCtx
	c := proxy.GetClient()
	By("Checking every Machine's providerID, addresses and nodeRef against the workload cluster's Nodes")
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(machines))
		nodes, err := s.Workload.NodesByProviderID(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		for _, m := range list.Items {
			g.Expect(m.Spec.ProviderID).NotTo(BeEmpty(), "Machine %s has no providerID", m.Name)
			g.Expect(m.Status.Addresses).NotTo(BeEmpty(), "Machine %s has no addresses", m.Name)
			g.Expect(nodes).To(HaveKey(m.Spec.ProviderID), "no Node in the workload cluster has Machine %s's providerID", m.Name)
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no nodeRef; conditions %s", m.Name, condSummary(m.Status.Conditions))
			g.Expect(m.Status.NodeRef.Name).To(Equal(nodes[m.Spec.ProviderID]))
		}
	}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())
	if s.OpenStack == nil {
		return
	}

	By("Recording the cluster's OpenStack resources")
	all, err := s.OpenStack.All(ctx)
	Expect(err).NotTo(HaveOccurred())
	mine := localenv.ClusterResources(all, name, nil)
	s.Recorded = localenv.ByKey(mine)
	counts := localenv.Kinds(mine)
	GinkgoWriter.Printf("OpenStack resources of %s: %v\n", name, counts)
	Expect(counts).To(HaveKeyWithValue("server", machines), "one server per Machine")
	for _, k := range []string{"network", "subnet", "router", "security group", "load balancer", "floating IP"} {
		Expect(counts).To(HaveKey(k), "the cluster has a %s", k)
	}
}

// AfterSpec is our leak check, for an AfterEach declared after the spec in
// the same container: it runs after the spec's AfterEach has deleted the
// cluster. Nothing of the cluster may be left on OpenStack (by name,
// description, tag, Octavia VIP port, or a resource recorded while it ran).
func (s *capiSpecCluster) AfterSpec() {
	if s.OpenStack == nil { // not on OpenStack, or the spec failed before its namespace existed
		return
	}
	ctx := suiteCtx
	name := s.name()
	if name == "" { // the spec failed before it applied its cluster
		expectNoOpenStackLeftovers(ctx, s.OpenStack, s.Namespace, s.Recorded)
		return
	}
	cluster := &clusterv1.Cluster{}
	err := mgmt.GetClient().Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, cluster)
	Expect(client.IgnoreNotFound(err)).To(Succeed())
	Expect(err).To(HaveOccurred(), "Cluster %s still exists after the spec's cleanup", name)
	expectNoOpenStackLeftovers(ctx, s.OpenStack, name, s.Recorded)
}
