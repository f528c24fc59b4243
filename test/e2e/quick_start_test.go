//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
)

var _ = Describe("Quick start, openstack-agent flavor", func() {
	It("creates an OpenShift cluster on the local OpenStack with clusterctl, reaches Available, and deletes it without leaving OpenStack resources", func() {
		quickStart(suiteCtx, quickStartInput{
			Proxy:             mgmt,
			Sim:               sim,
			Prefix:            "qs",
			Flavor:            "openstack-agent",
			ControlPlaneCount: 3,
			WorkerCount:       2,
		})
	})
})

type quickStartInput struct {
	Proxy framework.ClusterProxy
	// Sim plays assisted-service for Proxy's cluster.
	Sim               *localenv.Simulator
	Prefix, Flavor    string
	ControlPlaneCount int64
	WorkerCount       int64
	// ClusterctlConfig, InfrastructureProvider and CloudsYAML, when set,
	// replace the suite's clusterctl configuration, the configuration's
	// "openstack:<version>" and the test cloud's clouds.yaml in
	// `clusterctl generate cluster` (the upgrade suite: the previous
	// release's repository, its version, and the counting proxy).
	ClusterctlConfig       string
	InfrastructureProvider string
	CloudsYAML             []byte
	// AfterAvailable, when set, runs with the cluster Available, before
	// it is deleted (the move suite moves it there, and points Proxy at
	// the target: the deletion and its checks use quickStartCluster.Proxy).
	AfterAvailable func(ctx context.Context, c *quickStartCluster)
}

// quickStartCluster is what a running quick start knows.
type quickStartCluster struct {
	Namespace, Name string
	// LogFolder is the cluster's artifacts folder.
	LogFolder string
	// Proxy is the management cluster that holds the cluster's objects.
	Proxy     framework.ClusterProxy
	Workload  *localenv.WorkloadCluster
	OpenStack *localenv.OpenStack
	// Recorded are the cluster's OpenStack resources once it is Available.
	Recorded map[string]localenv.OSResource
}

// quickStart is the quick start: clusterctl generate cluster from the
// flavor's template, apply, wait for the OpenStack infrastructure, the
// simulated installation, the control plane's Available and every Machine's
// providerID, addresses and nodeRef; then delete the Cluster and check
// through the OpenStack API that nothing of it is left.
func quickStart(ctx context.Context, in quickStartInput) {
	name := in.Prefix + "-" + util.RandomString(6)
	logFolder := filepath.Join(*artifactFolder, "clusters", name)
	qs := &quickStartCluster{Namespace: name, Name: name, LogFolder: logFolder, Proxy: in.Proxy}
	cdKey := types.NamespacedName{Namespace: name, Name: name} // the control plane names the ClusterDeployment after the cluster

	By("Connecting to the local OpenStack")
	cloudName := e2eConfig.MustGetVariable("OPENSTACK_CLOUD")
	var err error
	qs.OpenStack, err = localenv.NewOpenStack(ctx, *cloudsYAML, cloudName)
	Expect(err).NotTo(HaveOccurred())
	before, err := qs.OpenStack.All(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(localenv.ClusterResources(before, name, nil)).To(BeEmpty(), "OpenStack resources of a cluster named %s exist before it does", name)

	By("Starting the API server that plays the workload cluster")
	qs.Workload, err = localenv.StartWorkloadCluster(intVariable("E2E_WORKLOAD_API_PORT"), "")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(qs.Workload.Stop()).To(Succeed()) })
	Expect(in.Sim.SetWorkload(ctx, cdKey, qs.Workload)).To(Succeed())
	DeferCleanup(func() { in.Sim.ForgetWorkload(cdKey) })

	By("Creating namespace " + name)
	framework.CreateNamespaceAndWatchEvents(ctx, framework.CreateNamespaceAndWatchEventsInput{
		Creator: in.Proxy.GetClient(), ClientSet: in.Proxy.GetClientSet(), Name: name, LogFolder: logFolder,
	})

	By(fmt.Sprintf("clusterctl generate cluster %s --flavor %s (%d control-plane, %d worker machines)", name, in.Flavor, in.ControlPlaneCount, in.WorkerCount))
	clouds := in.CloudsYAML
	if clouds == nil {
		clouds, err = localenv.SingleCloudYAML(*cloudsYAML, cloudName)
		Expect(err).NotTo(HaveOccurred())
	}
	manifest := clusterctl.ConfigCluster(ctx, clusterctl.ConfigClusterInput{
		LogFolder:                logFolder,
		ClusterctlConfigPath:     cmp.Or(in.ClusterctlConfig, clusterctlConfigPath),
		KubeconfigPath:           in.Proxy.GetKubeconfigPath(),
		InfrastructureProvider:   cmp.Or(in.InfrastructureProvider, infraProviderVersion()),
		Flavor:                   in.Flavor,
		Namespace:                name,
		ClusterName:              name,
		ControlPlaneMachineCount: ptr.To(in.ControlPlaneCount),
		WorkerMachineCount:       ptr.To(in.WorkerCount),
		ClusterctlVariables:      map[string]string{"OPENSTACK_CLOUD_YAML_B64": base64.StdEncoding.EncodeToString(clouds)},
	})
	Expect(manifest).NotTo(BeEmpty())
	Expect(os.WriteFile(filepath.Join(logFolder, name+".yaml"), manifest, 0o600)).To(Succeed())

	By("Applying the cluster")
	Eventually(func() error { return in.Proxy.CreateOrUpdate(ctx, manifest) }, time.Minute, 5*time.Second).Should(Succeed())

	// Log `clusterctl describe cluster` while the cluster comes up.
	stopDescribe := describeEvery(ctx, in.Proxy, logFolder, name)
	defer stopDescribe()

	c := in.Proxy.GetClient()
	cluster := &clusterv1.Cluster{}
	By("Waiting for the OpenStack infrastructure (network, router, security groups, API load balancer)")
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: name, Name: name}, cluster)).To(Succeed())
		g.Expect(ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false)).To(BeTrue(), "Cluster %s: infrastructure not provisioned; conditions %s", name, condSummary(cluster.Status.Conditions))
	}, e2eConfig.GetIntervals("default", "wait-cluster-provisioned")...).Should(Succeed())

	By("Waiting for the control plane to be Available (servers ACTIVE, Agents registered and installed by the simulator)")
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{}
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: name, Name: name}, oacp)).To(Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(oacp.Status.Conditions, controlplanev1.AvailableCondition)).To(BeTrue(),
			"OpenshiftAssistedControlPlane %s: %s", name, condSummary(oacp.Status.Conditions))
	}, e2eConfig.GetIntervals("default", "wait-control-plane-available")...).Should(Succeed())

	By("Waiting for every Machine to have a providerID, addresses and a nodeRef")
	want := int(in.ControlPlaneCount + in.WorkerCount)
	Eventually(func(g Gomega) {
		machines := &clusterv1.MachineList{}
		g.Expect(c.List(ctx, machines, client.InNamespace(name), client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(want))
		nodes, err := qs.Workload.NodesByProviderID(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		for _, m := range machines.Items {
			g.Expect(m.Spec.ProviderID).NotTo(BeEmpty(), "Machine %s has no providerID", m.Name)
			g.Expect(m.Status.Addresses).NotTo(BeEmpty(), "Machine %s has no addresses", m.Name)
			g.Expect(nodes).To(HaveKey(m.Spec.ProviderID), "no Node in the workload cluster has Machine %s's providerID", m.Name)
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no nodeRef; conditions %s", m.Name, condSummary(m.Status.Conditions))
			g.Expect(m.Status.NodeRef.Name).To(Equal(nodes[m.Spec.ProviderID]))
		}
	}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())

	By("Waiting for the Cluster to be Available (control plane and workers available, Machines Ready)")
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: name, Name: name}, cluster)).To(Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.ClusterControlPlaneAvailableCondition)).To(BeTrue(),
			"Cluster %s: %s", name, condSummary(cluster.Status.Conditions))
		g.Expect(apimeta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.AvailableCondition)).To(BeTrue(),
			"Cluster %s: %s", name, condSummary(cluster.Status.Conditions))
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: name, Name: name}, oacp)).To(Succeed())
		g.Expect(ptr.Deref(oacp.Status.AvailableReplicas, 0)).To(BeEquivalentTo(in.ControlPlaneCount), "control plane available replicas")
	}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())
	stopDescribe()
	logDescribe(ctx, in.Proxy, logFolder, name)

	By("Recording the cluster's OpenStack resources")
	all, err := qs.OpenStack.All(ctx)
	Expect(err).NotTo(HaveOccurred())
	mine := localenv.ClusterResources(all, name, nil)
	qs.Recorded = localenv.ByKey(mine)
	counts := localenv.Kinds(mine)
	GinkgoWriter.Printf("OpenStack resources of %s: %v\n", name, counts)
	Expect(counts).To(HaveKeyWithValue("server", want), "one server per Machine")
	for _, k := range []string{"network", "subnet", "router", "security group", "load balancer", "floating IP"} {
		Expect(counts).To(HaveKey(k), "the cluster has a %s", k)
	}
	osc := &infrav1.OpenStackCluster{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: name, Name: name}, osc)).To(Succeed())

	if in.AfterAvailable != nil {
		in.AfterAvailable(ctx, qs)
	}

	By("Deleting the cluster")
	// framework.DeleteClusterAndWait's argument check (BeEmpty on a
	// *Cluster) fails with this module's gomega; these are its steps.
	toDelete := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: name}}
	framework.DeleteCluster(ctx, framework.DeleteClusterInput{Deleter: qs.Proxy.GetClient(), Cluster: toDelete})
	framework.WaitForClusterDeleted(ctx, framework.WaitForClusterDeletedInput{
		ClusterProxy: qs.Proxy, ClusterctlConfigPath: clusterctlConfigPath, Cluster: toDelete, ArtifactFolder: *artifactFolder,
	}, e2eConfig.GetIntervals("default", "wait-delete-cluster")...)
	expectNoOpenStackLeftovers(ctx, qs.OpenStack, name, qs.Recorded)

	By("Checking that no Cluster API object is left in namespace " + name)
	// Templates go with the Cluster because their users (MachineDeployment,
	// control plane) make the Cluster their owner, as KCP does.
	Eventually(capiObjectsLeft(ctx, qs.Proxy.GetClient(), name), time.Minute, time.Second).Should(BeEmpty(), "Cluster API objects left in namespace %s after the Cluster was deleted", name)

	Expect(qs.Proxy.GetClient().Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
}

// expectNoOpenStackLeftovers is the leak check: through the OpenStack API,
// nothing that belongs to the cluster is left (by name, description, tag,
// Octavia VIP port, or ID recorded while the cluster ran).
func expectNoOpenStackLeftovers(ctx context.Context, o *localenv.OpenStack, cluster string, recorded map[string]localenv.OSResource) {
	By("Checking through the OpenStack API that nothing of " + cluster + " is left")
	Eventually(func(g Gomega) {
		all, err := o.All(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(localenv.ClusterResources(all, cluster, recorded)).To(BeEmpty(), "OpenStack resources left by cluster %s", cluster)
	}, e2eConfig.GetIntervals("default", "wait-openstack-clean")...).Should(Succeed())
}

// describeEvery logs `clusterctl describe cluster` every
// -e2e.describe-interval until the returned function is called.
func describeEvery(ctx context.Context, proxy framework.ClusterProxy, logFolder, name string) context.CancelFunc {
	describeCtx, stop := context.WithCancel(ctx)
	go func() {
		defer GinkgoRecover()
		t := time.NewTicker(*describeInterval)
		defer t.Stop()
		for {
			select {
			case <-describeCtx.Done():
				return
			case <-t.C:
				logDescribe(describeCtx, proxy, logFolder, name)
			}
		}
	}()
	return stop
}

// logDescribe runs `clusterctl describe cluster` (the binary users run)
// and logs its output. It never fails the spec: it only reports.
func logDescribe(ctx context.Context, proxy framework.ClusterProxy, logFolder, name string) {
	if ctx.Err() != nil {
		return
	}
	cmd := exec.CommandContext(ctx, *clusterctlBin, "describe", "cluster", name, "-n", name,
		"--config", clusterctlConfigPath, "--kubeconfig", proxy.GetKubeconfigPath(), "--show-conditions", "all")
	out, err := cmd.CombinedOutput()
	stamp := time.Now().UTC().Format(time.TimeOnly)
	if err != nil {
		GinkgoWriter.Printf("clusterctl describe cluster %s at %s failed: %v\n%s\n", name, stamp, err, out)
		return
	}
	_ = os.WriteFile(filepath.Join(logFolder, "clusterctl-describe-cluster-"+name+".txt"), out, 0o600)
	GinkgoWriter.Printf("clusterctl describe cluster %s at %s:\n%s\n", name, stamp, out)
}

// condSummary is a one-line view of conditions for failure messages.
func condSummary(conds []metav1.Condition) string {
	s := ""
	for _, c := range conds {
		s += fmt.Sprintf("[%s=%s %s: %s] ", c.Type, c.Status, c.Reason, c.Message)
	}
	return s
}

// infraProviderVersion is "openstack:<version>" of the configuration: a
// management cluster where Helm installed the providers has no clusterctl
// inventory to read the version from.
func infraProviderVersion() string {
	for _, p := range e2eConfig.Providers {
		if p.Name == infraProvider && p.Type == "InfrastructureProvider" {
			return infraProvider + ":" + p.Versions[0].Name
		}
	}
	Fail("no " + infraProvider + " infrastructure provider in the configuration")
	return ""
}

// capiObjectsLeft lists, for Eventually, the Cluster API objects (of the
// clusterctl-installed kinds) left in namespace.
func capiObjectsLeft(ctx context.Context, lister framework.Lister, namespace string) func() []string {
	return func() []string {
		var left []string
		for _, o := range framework.GetCAPIResources(ctx, framework.GetCAPIResourcesInput{Lister: lister, Namespace: namespace}) {
			left = append(left, o.GetKind()+" "+o.GetName())
		}
		return left
	}
}
