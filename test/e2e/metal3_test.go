//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
)

// The metal3-agent flavor: the seed's live-ISO flow. CAPM3 and the Bare
// Metal Operator are played by localenv.Metal3 (hosts "provision" and boot
// the ISO URL put on them; nothing boots), assisted-service by the
// simulator, which registers an Agent for each host that booted an
// InfraEnv's ISO.
var _ = Describe("Quick start, metal3-agent flavor (live ISO)", func() {
	It("creates an OpenShift cluster on BareMetalHosts booted from the discovery ISO, reaches Available, and releases the hosts on deletion", func() {
		ctx := suiteCtx
		const cp, workers = 3, 2
		name := "m3-" + util.RandomString(6)
		logFolder := filepath.Join(*artifactFolder, "clusters", name)
		c := mgmt.GetClient()

		By("Starting the API server that plays the workload cluster")
		wl, err := localenv.StartWorkloadCluster(intVariable("E2E_WORKLOAD_API_PORT"), "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(wl.Stop()).To(Succeed()) })
		cdKey := types.NamespacedName{Namespace: name, Name: name}
		Expect(sim.SetWorkload(ctx, cdKey, wl)).To(Succeed())
		DeferCleanup(func() { sim.ForgetWorkload(cdKey) })

		framework.CreateNamespaceAndWatchEvents(ctx, framework.CreateNamespaceAndWatchEventsInput{
			Creator: c, ClientSet: mgmt.GetClientSet(), Name: name, LogFolder: logFolder,
		})

		registerBareMetalHosts(ctx, c, name, name, cp, workers)

		By("clusterctl generate cluster " + name + " --flavor metal3-agent")
		manifest := clusterctl.ConfigCluster(ctx, clusterctl.ConfigClusterInput{
			LogFolder: logFolder, ClusterctlConfigPath: clusterctlConfigPath, KubeconfigPath: mgmt.GetKubeconfigPath(),
			InfrastructureProvider: infraProviderVersion(), Flavor: "metal3-agent", Namespace: name, ClusterName: name,
			ControlPlaneMachineCount: ptr.To[int64](cp), WorkerMachineCount: ptr.To[int64](workers),
			ClusterctlVariables: map[string]string{"OPENSHIFT_API_VIP": "192.0.2.100", "OPENSHIFT_INGRESS_VIP": "192.0.2.101"},
		})
		Expect(os.WriteFile(filepath.Join(logFolder, name+".yaml"), manifest, 0o600)).To(Succeed())
		Eventually(func() error { return mgmt.CreateOrUpdate(ctx, manifest) }, time.Minute, 5*time.Second).Should(Succeed())

		By("Waiting for the control plane to be Available")
		oacp := &controlplanev1.OpenshiftAssistedControlPlane{}
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: name, Name: name}, oacp)).To(Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(oacp.Status.Conditions, controlplanev1.AvailableCondition)).To(BeTrue(),
				"OpenshiftAssistedControlPlane %s: %s", name, condSummary(oacp.Status.Conditions))
		}, e2eConfig.GetIntervals("default", "wait-control-plane-available")...).Should(Succeed())

		By("Waiting for every Machine to have a providerID, addresses and a nodeRef, and the Cluster to be Available")
		Eventually(func(g Gomega) {
			machines := &clusterv1.MachineList{}
			g.Expect(c.List(ctx, machines, client.InNamespace(name), client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Succeed())
			g.Expect(machines.Items).To(HaveLen(cp + workers))
			for _, m := range machines.Items {
				g.Expect(m.Spec.ProviderID).To(HavePrefix("metal3://"), "Machine %s", m.Name)
				g.Expect(m.Status.Addresses).NotTo(BeEmpty(), "Machine %s has no addresses", m.Name)
				g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no nodeRef; %s", m.Name, condSummary(m.Status.Conditions))
			}
			cluster := &clusterv1.Cluster{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: name, Name: name}, cluster)).To(Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.AvailableCondition)).To(BeTrue(),
				"Cluster %s: %s", name, condSummary(cluster.Status.Conditions))
		}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())
		logDescribe(ctx, mgmt, logFolder, name)

		expectLiveISOBoot(ctx, c, name, cp+workers)

		By("Deleting the cluster")
		toDelete := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: name}}
		framework.DeleteCluster(ctx, framework.DeleteClusterInput{Deleter: c, Cluster: toDelete})
		framework.WaitForClusterDeleted(ctx, framework.WaitForClusterDeletedInput{
			ClusterProxy: mgmt, ClusterctlConfigPath: clusterctlConfigPath, Cluster: toDelete, ArtifactFolder: *artifactFolder,
		}, e2eConfig.GetIntervals("default", "wait-delete-cluster")...)

		By("Checking that every host was released")
		Eventually(func(g Gomega) {
			hosts := &bmhv1alpha1.BareMetalHostList{}
			g.Expect(c.List(ctx, hosts, client.InNamespace(name))).To(Succeed())
			for _, h := range hosts.Items {
				g.Expect(h.Spec.ConsumerRef).To(BeNil(), "host %s still consumed", h.Name)
				g.Expect(string(h.Status.Provisioning.State)).To(Equal("available"), "host %s", h.Name)
			}
		}, time.Minute, time.Second).Should(Succeed())

		By("Checking that no Cluster API object is left in namespace " + name)
		Eventually(capiObjectsLeft(ctx, c, name), time.Minute, time.Second).Should(BeEmpty(), "Cluster API objects left in namespace %s after the Cluster was deleted", name)
		// GetCAPIResources lists only clusterctl-installed kinds; the Metal3
		// kinds (CAPM3's) are checked here.
		Eventually(func(g Gomega) {
			for _, kind := range []string{"Metal3MachineTemplate", "Metal3Machine", "Metal3Cluster"} {
				list := &unstructured.UnstructuredList{}
				list.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta2")
				list.SetKind(kind + "List")
				g.Expect(c.List(ctx, list, client.InNamespace(name))).To(Succeed())
				var left []string
				for _, o := range list.Items {
					left = append(left, o.GetName())
				}
				g.Expect(left).To(BeEmpty(), "%s objects left in namespace %s after the Cluster was deleted", kind, name)
			}
		}, time.Minute, time.Second).Should(Succeed())
		Expect(c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	})
})

// registerBareMetalHosts creates, in namespace, the BMC Secret and cp+workers
// BareMetalHosts as the Bare Metal Operator leaves them once registered and
// inspected, in the pools the metal3-agent flavor selects for cluster
// (<cluster>-control-plane, <cluster>-worker).
func registerBareMetalHosts(ctx context.Context, c client.Client, namespace, cluster string, cp, workers int) {
	By(fmt.Sprintf("Registering %d BareMetalHosts (%d control-plane, %d worker pool)", cp+workers, cp, workers))
	Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "bmc"},
		StringData: map[string]string{"username": "admin", "password": "e2e"}})).To(Succeed())
	for i := 0; i < cp+workers; i++ {
		pool := cluster + "-control-plane"
		if i >= cp {
			pool = cluster + "-worker"
		}
		h := &bmhv1alpha1.BareMetalHost{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("host-%d", i),
				Labels:      map[string]string{"ocp-capi.io/host-pool": pool},
				Annotations: map[string]string{localenv.IPAnnotation: fmt.Sprintf("192.0.2.%d", 10+i)}},
			Spec: bmhv1alpha1.BareMetalHostSpec{
				BMC:            bmhv1alpha1.BMCDetails{Address: fmt.Sprintf("redfish-virtualmedia://192.0.2.1/redfish/v1/Systems/%d", i), CredentialsName: "bmc"},
				BootMACAddress: fmt.Sprintf("52:54:00:e2:e0:%02x", i),
			},
		}
		Expect(c.Create(ctx, h)).To(Succeed())
		// As the Bare Metal Operator leaves a registered, inspected host
		// (the whole status: its schema requires every field).
		h.Status.Provisioning.State = "available"
		h.Status.Provisioning.ID = fmt.Sprintf("e2e-ironic-node-%d", i)
		h.Status.OperationalStatus = "OK"
		Expect(c.Status().Update(ctx, h)).To(Succeed())
	}
}

// expectLiveISOBoot checks the live-ISO flow of the metal3-agent flavor in
// namespace: one InfraEnv per Metal3MachineTemplate, every host consumed
// and booting its template's InfraEnv ISO, one Metal3Machine per Machine.
func expectLiveISOBoot(ctx context.Context, c client.Client, namespace string, machines int) {
	By("Checking the live-ISO flow: every host booted its template's InfraEnv ISO")
	infraEnvs := &aiv1beta1.InfraEnvList{}
	Expect(c.List(ctx, infraEnvs, client.InNamespace(namespace))).To(Succeed())
	isos := map[string]string{}
	for _, ie := range infraEnvs.Items {
		isos[ie.Status.ISODownloadURL] = ie.Name
	}
	Expect(infraEnvs.Items).To(HaveLen(2), "one InfraEnv per Metal3MachineTemplate (control plane, workers)")
	hosts := &bmhv1alpha1.BareMetalHostList{}
	Expect(c.List(ctx, hosts, client.InNamespace(namespace))).To(Succeed())
	for _, h := range hosts.Items {
		Expect(h.Spec.ConsumerRef).NotTo(BeNil(), "host %s not consumed", h.Name)
		Expect(h.Spec.Image).NotTo(BeNil())
		Expect(isos).To(HaveKey(h.Spec.Image.URL), "host %s boots %s, not an InfraEnv's ISO", h.Name, h.Spec.Image.URL)
		Expect(ptr.Deref(h.Spec.Image.DiskFormat, "")).To(Equal("live-iso"))
	}
	m3ms := &unstructured.UnstructuredList{}
	m3ms.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta2")
	m3ms.SetKind("Metal3MachineList")
	Expect(c.List(ctx, m3ms, client.InNamespace(namespace))).To(Succeed())
	Expect(m3ms.Items).To(HaveLen(machines))
}
