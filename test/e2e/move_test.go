//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
	"github.com/ocp-capi/ocp-capi/test/scheme"
)

// The move suite runs the quick start on the first management cluster and,
// once the cluster is Available, moves it with `clusterctl move` to a third
// one (the second belongs to the Helm suite, and ginkgo orders top-level
// specs at random). clusterctl carries only Cluster API objects: the
// assisted-service objects stay with the source's installer and go when
// their owners go; the target's control plane imports the installed cluster
// into the target's own assisted-service (its simulator here) from the moved
// kubeconfig, and the OpenStack provider finds its resources by name. The
// suite checks that the target takes the cluster over without reinstalling a
// host or touching an OpenStack resource, that the source is left clean, and
// then deletes the cluster from the target (the quick start's deletion and
// OpenStack leak check).
var _ = Describe("clusterctl move to a second management cluster", func() {
	It("moves an Available openstack-agent cluster to another clusterctl-installed management cluster, which imports it without reinstalling a host or recreating an OpenStack resource, and deletes it there without leaving OpenStack resources", func() {
		ctx := suiteCtx
		const cp, workers = 3, 2
		Expect(*mgmt3Kubeconfig).NotTo(BeEmpty(), "-e2e.mgmt3-kubeconfig: the move suite needs a third management cluster as the target (make test-e2e starts one)")
		kubeconfig, err := filepath.Abs(*mgmt3Kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Expect(kubeconfig).To(BeAnExistingFile())
		Expect(e2eConfig.HasVariable("E2E_ASSISTED_PORT_3")).To(BeTrue(),
			"E2E_ASSISTED_PORT_3: the host port of the target's simulator, which the management nodes forward (make test-e2e exports it)")
		assistedPort := intVariable("E2E_ASSISTED_PORT_3")

		// The target is prepared here rather than in BeforeSuite, so that the
		// other suites do not wait for a third clusterctl init; and before
		// the cluster exists, so that a failure here leaves nothing to clean.
		target := startManagementCluster(ctx, "mgmt-move", kubeconfig, assistedPort, initProviders)

		quickStart(ctx, quickStartInput{
			Proxy: mgmt, Sim: sim, Prefix: "move", Flavor: "openstack-agent",
			ControlPlaneCount: cp, WorkerCount: workers,
			AfterAvailable: func(ctx context.Context, qs *quickStartCluster) {
				// Cleanups run last-in first-out: this one stops the
				// simulator (which watches the workload API server from
				// now on) before the quick start stops that server; the
				// earlier cleanup then only waits for it.
				DeferCleanup(target.Stop)
				moveAndCheck(ctx, qs, target.Proxy, cp, cp+workers)
			},
		})
	})
})

// moveAndCheck moves the Available cluster qs from qs.Proxy to target,
// checks the target's takeover and the source's cleanup, and leaves
// qs.Proxy pointing at the target for the quick start's deletion.
func moveAndCheck(ctx context.Context, qs *quickStartCluster, target framework.ClusterProxy, controlPlane, machines int) {
	source := qs.Proxy
	name, ns := qs.Name, qs.Namespace
	key := client.ObjectKey{Namespace: ns, Name: name}
	src := source.GetClient()

	By("Recording on the source what the target must keep: providerIDs, the installed cluster's identity, the ClusterImageSet")
	providerIDs := machineProviderIDs(ctx, src, ns, name)
	Expect(providerIDs).To(HaveLen(machines))
	for m, id := range providerIDs {
		Expect(id).NotTo(BeEmpty(), "Machine %s has no providerID before the move", m)
	}
	cd := &hivev1.ClusterDeployment{}
	Expect(src.Get(ctx, key, cd)).To(Succeed(), "the source's ClusterDeployment")
	Expect(cd.Spec.Installed).To(BeTrue(), "ClusterDeployment %s is not installed on the source", key)
	Expect(cd.Spec.ClusterMetadata).NotTo(BeNil(), "ClusterDeployment %s has no clusterMetadata on the source", key)
	Expect(cd.Spec.ClusterMetadata.ClusterID).NotTo(BeEmpty(), "ClusterDeployment %s has no clusterID on the source", key)
	clusterMetadata := *cd.Spec.ClusterMetadata
	// Cluster-scoped, so clusterctl cannot move it and the source's control
	// plane must delete it; test/e2e cannot import the control plane's name
	// function (controlplane/internal), hence the label and owner.
	imageSets := clusterImageSets(ctx, src, ns, name)
	Expect(imageSets).To(HaveLen(1), "the source should have one ClusterImageSet of %s", key)
	imageSet := imageSets[0]

	// The target's simulator is not given the workload cluster: the cluster
	// is installed, and nothing of the installation is played again (the
	// source's simulator still plays its cluster-version operator).
	moveLogs := filepath.Join(qs.LogFolder, "mgmt-move")
	_, stopEvents := framework.CreateNamespaceAndWatchEvents(ctx, framework.CreateNamespaceAndWatchEventsInput{
		Creator: target.GetClient(), ClientSet: target.GetClientSet(), Name: ns, LogFolder: moveLogs, IgnoreAlreadyExists: true,
	})
	DeferCleanup(stopEvents)

	By(fmt.Sprintf("clusterctl move -n %s from %s to %s", ns, source.GetName(), target.GetName()))
	clusterctl.Move(ctx, clusterctl.MoveInput{
		LogFolder:            qs.LogFolder,
		ClusterctlConfigPath: clusterctlConfigPath,
		FromKubeconfigPath:   source.GetKubeconfigPath(),
		ToKubeconfigPath:     target.GetKubeconfigPath(),
		Namespace:            ns,
	})
	stopDescribe := describeEvery(ctx, target, moveLogs, name)
	defer stopDescribe()

	tc := target.GetClient()
	By("Waiting on the target for the imported ClusterDeployment: installed, with the source's cluster ID and infrastructure ID")
	Eventually(func(g Gomega) {
		got := &hivev1.ClusterDeployment{}
		g.Expect(tc.Get(ctx, key, got)).To(Succeed(), "no ClusterDeployment %s on the target: the control plane has not imported the installed cluster", key)
		g.Expect(got.Spec.Installed).To(BeTrue(), "ClusterDeployment %s on the target: spec.installed is false", key)
		g.Expect(got.Spec.ClusterMetadata).NotTo(BeNil(), "ClusterDeployment %s on the target has no clusterMetadata", key)
		g.Expect(got.Spec.ClusterMetadata.ClusterID).To(Equal(clusterMetadata.ClusterID), "ClusterDeployment %s on the target: clusterID", key)
		g.Expect(got.Spec.ClusterMetadata.InfraID).To(Equal(clusterMetadata.InfraID), "ClusterDeployment %s on the target: infraID", key)
		secret := got.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name
		g.Expect(secret).To(Equal(name+"-admin-kubeconfig"), "ClusterDeployment %s on the target: adminKubeconfigSecretRef", key)
		g.Expect(tc.Get(ctx, client.ObjectKey{Namespace: ns, Name: secret}, &corev1.Secret{})).To(Succeed(), "the admin kubeconfig Secret %s on the target", secret)
		g.Expect(got.Spec.ClusterInstallRef).NotTo(BeNil(), "ClusterDeployment %s on the target has no clusterInstallRef", key)
		g.Expect(tc.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Spec.ClusterInstallRef.Name}, &hiveextv1beta1.AgentClusterInstall{})).
			To(Succeed(), "the AgentClusterInstall %s that the target's ClusterDeployment names", got.Spec.ClusterInstallRef.Name)
	}, e2eConfig.GetIntervals("default", "wait-control-plane-available")...).Should(Succeed())

	By("Waiting on the target for the control plane: Available, initialized, every replica available")
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{}
	Eventually(func(g Gomega) {
		g.Expect(tc.Get(ctx, key, oacp)).To(Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(oacp.Status.Conditions, controlplanev1.AvailableCondition)).To(BeTrue(),
			"OpenshiftAssistedControlPlane %s on the target: %s", name, condSummary(oacp.Status.Conditions))
		g.Expect(ptr.Deref(oacp.Status.Initialization.ControlPlaneInitialized, false)).To(BeTrue(),
			"OpenshiftAssistedControlPlane %s on the target: not initialized; %s", name, condSummary(oacp.Status.Conditions))
		g.Expect(ptr.Deref(oacp.Status.AvailableReplicas, 0)).To(BeEquivalentTo(controlPlane),
			"OpenshiftAssistedControlPlane %s on the target: available replicas; %s", name, condSummary(oacp.Status.Conditions))
	}, e2eConfig.GetIntervals("default", "wait-control-plane-available")...).Should(Succeed())

	By("Waiting on the target for the OpenStack infrastructure: OpenStackCluster and every OpenStackMachine provisioned (adopted, not recreated)")
	Eventually(func(g Gomega) {
		osc := &infrav1.OpenStackCluster{}
		g.Expect(tc.Get(ctx, key, osc)).To(Succeed())
		g.Expect(osc.Status.Initialization).NotTo(BeNil(), "OpenStackCluster %s on the target: no status.initialization; %s", name, condSummary(osc.Status.Conditions))
		g.Expect(ptr.Deref(osc.Status.Initialization.Provisioned, false)).To(BeTrue(),
			"OpenStackCluster %s on the target: not provisioned; %s", name, condSummary(osc.Status.Conditions))
		oscms := &infrav1.OpenStackMachineList{}
		g.Expect(tc.List(ctx, oscms, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Succeed())
		g.Expect(oscms.Items).To(HaveLen(machines), "OpenStackMachines on the target")
		for _, m := range oscms.Items {
			g.Expect(m.Status.Initialization).NotTo(BeNil(), "OpenStackMachine %s on the target: no status.initialization; %s", m.Name, condSummary(m.Status.Conditions))
			g.Expect(ptr.Deref(m.Status.Initialization.Provisioned, false)).To(BeTrue(),
				"OpenStackMachine %s on the target: not provisioned; %s", m.Name, condSummary(m.Status.Conditions))
		}
	}, e2eConfig.GetIntervals("default", "wait-cluster-provisioned")...).Should(Succeed())

	By("Waiting on the target for every Machine: the same providerID as on the source, addresses, a nodeRef")
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(tc.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Succeed())
		got := map[string]string{}
		for _, m := range list.Items {
			got[m.Name] = m.Spec.ProviderID
		}
		g.Expect(got).To(Equal(providerIDs), "Machines on the target (name: providerID) differ from the source's")
		nodes, err := qs.Workload.NodesByProviderID(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		for _, m := range list.Items {
			g.Expect(m.Status.Addresses).NotTo(BeEmpty(), "Machine %s on the target has no addresses; %s", m.Name, condSummary(m.Status.Conditions))
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s on the target has no nodeRef; %s", m.Name, condSummary(m.Status.Conditions))
			g.Expect(m.Status.NodeRef.Name).To(Equal(nodes[m.Spec.ProviderID]), "Machine %s on the target: nodeRef", m.Name)
		}
	}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())

	By("Waiting on the target for the Cluster to be Available")
	cluster := &clusterv1.Cluster{}
	Eventually(func(g Gomega) {
		g.Expect(tc.Get(ctx, key, cluster)).To(Succeed())
		g.Expect(ptr.Deref(cluster.Spec.Paused, false)).To(BeFalse(), "Cluster %s on the target is still paused", name)
		g.Expect(apimeta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.ClusterControlPlaneAvailableCondition)).To(BeTrue(),
			"Cluster %s on the target: %s", name, condSummary(cluster.Status.Conditions))
		g.Expect(apimeta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.AvailableCondition)).To(BeTrue(),
			"Cluster %s on the target: %s", name, condSummary(cluster.Status.Conditions))
	}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())
	stopDescribe()
	logDescribe(ctx, target, moveLogs, name)

	By("Checking that the target registered no host: no Agent in namespace " + ns)
	agents := &aiv1beta1.AgentList{}
	Expect(tc.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
	Expect(objectNames(agents)).To(BeEmpty(), "Agents on the target: hosts were re-registered after the move")

	expectRecordedOpenStackResources(ctx, qs, "the move")

	By("Checking that the source holds nothing of the cluster any more")
	Eventually(capiObjectsLeft(ctx, src, ns), time.Minute, time.Second).Should(BeEmpty(), "Cluster API objects left on the source in namespace %s after the move", ns)
	// The assisted-service objects are not moved: their owners' deletion
	// on the source takes them away, through the source simulator's
	// finalizers (deprovisioning).
	Eventually(func(g Gomega) {
		for _, l := range []client.ObjectList{
			&hivev1.ClusterDeploymentList{}, &hiveextv1beta1.AgentClusterInstallList{}, &aiv1beta1.InfraEnvList{}, &aiv1beta1.AgentList{},
		} {
			g.Expect(src.List(ctx, l, client.InNamespace(ns))).To(Succeed())
			g.Expect(objectNames(l)).To(BeEmpty(), "%T left on the source in namespace %s after the move", l, ns)
		}
	}, e2eConfig.GetIntervals("default", "wait-delete-cluster")...).Should(Succeed())
	Eventually(func() error {
		return src.Get(ctx, types.NamespacedName{Name: imageSet}, &hivev1.ClusterImageSet{})
	}, e2eConfig.GetIntervals("default", "wait-delete-cluster")...).Should(Satisfy(apierrors.IsNotFound),
		"ClusterImageSet %s is still on the source after the move", imageSet)
	Expect(src.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	// The quick start deletes the cluster where it now lives, and runs the
	// OpenStack leak check.
	qs.Proxy = target
}

// expectRecordedOpenStackResources checks through the OpenStack API that
// the cluster's resources are exactly those recorded once it was Available:
// none made and none gone since, through what (e.g. "the move").
func expectRecordedOpenStackResources(ctx context.Context, qs *quickStartCluster, what string) {
	By("Checking through the OpenStack API that the cluster's resources are exactly the recorded ones")
	all, err := qs.OpenStack.All(ctx)
	Expect(err).NotTo(HaveOccurred())
	now := localenv.ByKey(localenv.ClusterResources(all, qs.Name, nil))
	var made, gone []string
	for k, r := range now {
		if _, ok := qs.Recorded[k]; !ok {
			made = append(made, r.String())
		}
	}
	for k, r := range qs.Recorded {
		if _, ok := now[k]; !ok {
			gone = append(gone, r.String())
		}
	}
	slices.Sort(made)
	slices.Sort(gone)
	Expect(made).To(BeEmpty(), "OpenStack resources of %s that did not exist before %s", qs.Name, what)
	Expect(gone).To(BeEmpty(), "OpenStack resources of %s that existed before %s and are gone", qs.Name, what)
}

// managementCluster is a management cluster that a suite prepares for
// itself (startManagementCluster).
type managementCluster struct {
	Proxy framework.ClusterProxy
	// Sim plays assisted-service for it; Stop stops Sim (also done when
	// the spec ends).
	Sim  *localenv.Simulator
	Stop context.CancelFunc
	// Logs is its artifacts folder.
	Logs string
	// IP is its node's address, AssistedPort the host port of Sim.
	IP           string
	AssistedPort int
}

// fit fits the providers installed on m to the machine (fitProviders).
func (m *managementCluster) fit() {
	fitProviders(m.Proxy, m.Logs, m.Sim, m.IP, m.AssistedPort)
}

// startManagementCluster prepares the management cluster of kubeconfig
// for a suite: the consumed CRDs, the providers that install installs, an
// assisted-service simulator on assistedPort, and the providers fitted to
// it (fitProviders).
func startManagementCluster(ctx context.Context, name, kubeconfig string, assistedPort int, install func(framework.ClusterProxy, string)) *managementCluster {
	s := runtime.NewScheme()
	Expect(scheme.AddAll(s)).To(Succeed())
	m := &managementCluster{Proxy: framework.NewClusterProxy(name, kubeconfig, s), Logs: filepath.Join(*artifactFolder, "clusters", name), AssistedPort: assistedPort}

	By("Installing the consumed CRDs on " + name)
	Expect(localenv.InstallConsumedCRDs(ctx, m.Proxy.GetClient())).To(Succeed())
	install(m.Proxy, m.Logs)

	By("Starting an assisted-service simulator for " + name)
	var err error
	m.IP, err = localenv.NodeAddress(ctx, m.Proxy.GetClient())
	Expect(err).NotTo(HaveOccurred())
	simCtx, stop := context.WithCancel(ctx)
	m.Sim, err = localenv.StartSimulator(simCtx, m.Proxy.GetRESTConfig(), s, assistedPort, time.Second)
	Expect(err).NotTo(HaveOccurred())
	m.Stop = stop
	sim := m.Sim
	DeferCleanup(func() {
		stop()
		Expect(sim.Wait()).To(Succeed())
	})
	m.fit()
	return m
}

// machineProviderIDs maps the cluster's Machines' names to their
// providerIDs.
func machineProviderIDs(ctx context.Context, c client.Client, namespace, cluster string) map[string]string {
	list := &clusterv1.MachineList{}
	Expect(c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster})).To(Succeed())
	out := map[string]string{}
	for _, m := range list.Items {
		out[m.Name] = m.Spec.ProviderID
	}
	return out
}

// clusterImageSets names the ClusterImageSets of the control plane
// namespace/name (by the cluster-name label and the owner annotation).
func clusterImageSets(ctx context.Context, c client.Client, namespace, name string) []string {
	list := &hivev1.ClusterImageSetList{}
	Expect(c.List(ctx, list, client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Succeed())
	var out []string
	for _, is := range list.Items {
		if is.Annotations[controlplanev1.OwnerAnnotation] == namespace+"/"+name {
			out = append(out, is.Name)
		}
	}
	return out
}

// objectNames lists the names of a list's items, for failure messages.
func objectNames(l client.ObjectList) []string {
	items, err := apimeta.ExtractList(l)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, o := range items {
		if obj, ok := o.(client.Object); ok {
			out = append(out, obj.GetName())
		}
	}
	return out
}
