//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// The upgrade suite stands in for CAPI's ClusterctlUpgradeSpec
// (docs/e2e.md): on a fourth management cluster it installs the previous
// release (make previous-release: a recorded commit of this repository)
// with `clusterctl init`, creates an openstack-agent cluster with it, then
// runs `clusterctl upgrade apply` to this tree's release. Throughout, the
// Cluster must stay Available and no Machine may be replaced or added; the
// cluster's OpenStack calls go through the counting proxy, which must see
// no resource created or deleted, and the OpenStack API must show the
// same resources after. The objects the previous release wrote must read
// back unchanged and take a write through the new release's webhooks.
var _ = Describe("clusterctl upgrade from the previous release", func() {
	It("installs the previous release, creates an openstack-agent cluster with it, upgrades the providers to this release with clusterctl upgrade apply, and the cluster stays Available with the same Machines and OpenStack resources", func() {
		ctx := suiteCtx
		const cp, workers = 3, 1
		prev := previousRelease()
		Expect(*mgmt4Kubeconfig).NotTo(BeEmpty(), "-e2e.mgmt4-kubeconfig: the upgrade suite needs a fourth management cluster (make test-e2e starts one)")
		kubeconfig, err := filepath.Abs(*mgmt4Kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Expect(kubeconfig).To(BeAnExistingFile())
		Expect(e2eConfig.HasVariable("E2E_ASSISTED_PORT_4")).To(BeTrue(),
			"E2E_ASSISTED_PORT_4: the host port of the upgrade suite's simulator, which the management nodes forward (make test-e2e exports it)")

		config := upgradeRepository(ctx, prev)
		m := startManagementCluster(ctx, "mgmt-upgrade", kubeconfig, intVariable("E2E_ASSISTED_PORT_4"), func(p framework.ClusterProxy, logs string) {
			By("Importing the previous release's manager images into the node's containerd")
			tars, err := filepath.Glob(filepath.Join(prev.dir, "images", "*.tar"))
			Expect(err).NotTo(HaveOccurred())
			Expect(tars).NotTo(BeEmpty(), "no images in %s/images (make previous-release)", prev.dir)
			importImages(kubeconfig, tars...)
			initRelease(p, logs, config, prev.dir, prev.version)
		})
		expectProviderVersions(ctx, m.Proxy, prev.version)

		cloud := e2eConfig.MustGetVariable("OPENSTACK_CLOUD")
		proxy := newCountingProxy(cloud)
		DeferCleanup(proxy.Close)
		quickStart(ctx, quickStartInput{
			Proxy: m.Proxy, Sim: m.Sim, Prefix: "upgrade", Flavor: "openstack-agent",
			ControlPlaneCount: cp, WorkerCount: workers,
			ClusterctlConfig:       config,
			InfrastructureProvider: infraProvider + ":" + prev.version,
			CloudsYAML:             cloudsYAMLVia(proxy, cloud, cloud),
			AfterAvailable: func(ctx context.Context, qs *quickStartCluster) {
				// Stops the simulator before the quick start stops the
				// workload API server it watches (cleanups run last-in
				// first-out).
				DeferCleanup(m.Stop)
				upgradeAndCheck(ctx, qs, m, config, prev, proxy)
			},
		})
	})
})

// previousReleaseBuild is what make previous-release built.
type previousReleaseBuild struct {
	dir, commit, version string
}

// previousRelease reads the previous release's directory: skips (fails
// under CI) when it was not built.
func previousRelease() previousReleaseBuild {
	dir, err := filepath.Abs(*previousReleaseDir)
	Expect(err).NotTo(HaveOccurred())
	reason := "no " + filepath.Join(dir, "COMMIT") + ": run make previous-release (make test-e2e does)"
	if data, err := os.ReadFile(filepath.Join(dir, "SKIPPED")); err == nil {
		reason = "the previous release was not built: " + strings.TrimSpace(string(data))
	}
	data, err := os.ReadFile(filepath.Join(dir, "COMMIT"))
	if err != nil {
		Expect(os.Getenv("CI")).To(BeEmpty(), reason)
		Skip(reason)
	}
	f := strings.Fields(string(data))
	Expect(f).To(HaveLen(2), "%s/COMMIT: want \"<commit> <version>\"", dir)
	return previousReleaseBuild{dir: dir, commit: f[0], version: f[1]}
}

// upgradeRepository writes a clusterctl repository holding the suite's
// configuration plus the previous release's version of each of our
// providers (CAPI core is the same in both), and returns its clusterctl
// configuration.
func upgradeRepository(ctx context.Context, prev previousReleaseBuild) string {
	By("Writing a clusterctl repository that holds " + prev.version + " and this release")
	cfg := e2eConfig.DeepCopy()
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		if p.Type == "CoreProvider" {
			continue
		}
		// <release>/<provider label>/<version>/<components file>
		cur := p.Versions[0].Value
		label, file := filepath.Base(filepath.Dir(filepath.Dir(cur))), filepath.Base(cur)
		dir := filepath.Join(prev.dir, label, prev.version)
		v := clusterctl.ProviderVersionSource{
			Name: prev.version, Value: filepath.Join(dir, file), Type: clusterctl.URLSource, Contract: p.Versions[0].Contract,
		}
		// Its metadata.yaml and its own cluster templates.
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		for _, f := range files {
			if f != v.Value {
				v.Files = append(v.Files, clusterctl.Files{SourcePath: f, TargetName: filepath.Base(f)})
			}
		}
		Expect(v.Value).To(BeAnExistingFile(), "%s %s (make previous-release)", p.Name, prev.version)
		p.Versions = append(p.Versions, v)
	}
	path := clusterctl.CreateRepository(ctx, clusterctl.CreateRepositoryInput{
		RepositoryFolder: filepath.Join(*artifactFolder, "repository-upgrade"),
		E2EConfig:        cfg,
	})
	fitRepository(filepath.Join(*artifactFolder, "repository-upgrade"))
	Expect(setCertManager(path, *releaseDir)).To(Succeed())
	return path
}

// expectProviderVersions checks clusterctl's inventory: each of our
// providers is installed at version.
func expectProviderVersions(ctx context.Context, proxy framework.ClusterProxy, version string) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("clusterctl.cluster.x-k8s.io/v1alpha3")
	list.SetKind("ProviderList")
	Expect(proxy.GetClient().List(ctx, list)).To(Succeed())
	got := map[string]string{}
	for _, p := range list.Items {
		v, _, _ := unstructured.NestedString(p.Object, "version")
		got[p.GetName()] = v
	}
	for _, name := range []string{"bootstrap-" + bootstrapProvider, "control-plane-" + controlPlaneProvider, "infrastructure-" + infraProvider, "addon-" + addonProvider} {
		Expect(got).To(HaveKeyWithValue(name, version), "clusterctl's inventory on %s", proxy.GetName())
	}
}

// upgradeAndCheck runs `clusterctl upgrade apply` on m while watching the
// Available cluster qs, then checks what must not have changed.
func upgradeAndCheck(ctx context.Context, qs *quickStartCluster, m *managementCluster, config string, prev previousReleaseBuild, proxy *openstackproxy.Proxy) {
	c := m.Proxy.GetClient()
	ns := qs.Namespace

	By("Recording the Machines and the objects the previous release wrote")
	machines := machineUIDs(ctx, c, ns, qs.Name)
	before := providerObjects(ctx, c, ns)
	for kind, objs := range before {
		Expect(objs).NotTo(BeEmpty(), "no %s in namespace %s", kind, ns)
	}

	w := watchCluster(ctx, c, types.NamespacedName{Namespace: ns, Name: qs.Name}, machines)
	defer w.stop()
	proxy.Reset()

	// A user keeps a private assisted-service CA through upgrades with the
	// clusterctl variable: the upgrade renders the components again from it.
	const caVar = "OCP_CAPI_BOOTSTRAP_ASSISTED_CA_BUNDLE_B64"
	Expect(os.Setenv(caVar, base64.StdEncoding.EncodeToString(m.Sim.CABundle()))).To(Succeed())
	defer func() { Expect(os.Unsetenv(caVar)).To(Succeed()) }()

	start := time.Now()
	By(fmt.Sprintf("clusterctl upgrade apply --contract v1beta2 on %s (%s to %s)", m.Proxy.GetName(), prev.version, *releaseVersion))
	clusterctl.UpgradeManagementClusterAndWait(ctx, clusterctl.UpgradeManagementClusterAndWaitInput{
		ClusterProxy: m.Proxy, ClusterctlConfigPath: config, Contract: clusterv1.GroupVersion.Version, LogFolder: m.Logs,
	}, e2eConfig.GetIntervals("default", "wait-controllers")...)
	upgraded := time.Since(start)
	expectProviderVersions(ctx, m.Proxy, *releaseVersion)
	// The repository's components carry the OpenStack provider's
	// hostNetwork (fitRepository), so the manager clusterctl installed
	// reaches OpenStack without a fit after the upgrade.
	infra := &appsv1.DeploymentList{}
	Expect(c.List(ctx, infra, client.InNamespace(localenv.InfraNamespace))).To(Succeed())
	Expect(infra.Items).To(HaveLen(1))
	Expect(infra.Items[0].Spec.Template.Spec.HostNetwork).To(BeTrue(), "the OpenStack provider as clusterctl upgrade apply installed it")
	// The previous release had no CA variable: its trust of the simulator
	// was the fit's own ConfigMap. The upgraded provider's comes from the
	// variable alone.
	ca, err := localenv.BootstrapCABundle(ctx, c)
	Expect(err).NotTo(HaveOccurred())
	Expect(string(ca)).To(Equal(string(m.Sim.CABundle())), "the bootstrap provider's CA bundle after clusterctl upgrade apply with %s", caVar)
	// The fit's Services stay; this restarts the provider once more (the
	// CA's hash on the pod template) and follows the new pod's logs.
	m.fit()
	applyBuildRBAC(m.Proxy, *releaseDir)

	// clusterctl scales the old manager down and deletes it before it
	// installs the new one, so every call from the new pod's start on is
	// the new provider's.
	pods := &corev1.PodList{}
	Expect(c.List(ctx, pods, client.InNamespace(localenv.InfraNamespace))).To(Succeed())
	Expect(pods.Items).To(HaveLen(1), "the OpenStack provider's pods after the upgrade")
	Expect(pods.Items[0].Status.StartTime).NotTo(BeNil())
	started := pods.Items[0].Status.StartTime.Time

	By("Waiting for the new OpenStack provider to read every server of the cluster")
	var servers []string
	for _, id := range machineProviderIDs(ctx, c, ns, qs.Name) {
		servers = append(servers, strings.TrimPrefix(id, "openstack:///"))
	}
	Eventually(func(g Gomega) {
		var calls []openstackproxy.Call
		for _, call := range proxy.Calls() {
			if !call.Time.Before(started) {
				calls = append(calls, call)
			}
		}
		for _, id := range servers {
			g.Expect(calls).To(ContainElement(HaveField("RawPath", HaveSuffix("/servers/"+id))), "no read of server %s by the new provider (started %s) yet", id, started)
		}
	}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())
	// An observation window, not a deadline: a rollout or a lost
	// condition would show within it.
	By("Watching the cluster for one more minute")
	time.Sleep(time.Minute)
	w.stop()
	total := time.Since(start)

	Expect(w.notAvailable).To(BeEmpty(), "the Cluster was not Available during the upgrade")
	Expect(w.newMachines).To(BeEmpty(), "Machines that appeared during the upgrade (a rollout)")
	Expect(machineUIDs(ctx, c, ns, qs.Name)).To(Equal(machines), "the cluster's Machines (name: UID) changed")
	calls := proxy.Calls()
	Expect(openstackproxy.CreatesAndDeletes(calls)).To(BeEmpty(), "OpenStack resources created or deleted during the upgrade:\n%s", proxy.Summary())
	expectRecordedOpenStackResources(ctx, qs, "the upgrade")

	By("Reading back the objects the previous release wrote, and writing each through the new release's webhooks")
	after := providerObjects(ctx, c, ns)
	Expect(after).To(Equal(before), "the objects (kind: name: UID and spec) changed through the upgrade")
	for _, l := range providerLists() {
		Expect(c.List(ctx, l, client.InNamespace(ns))).To(Succeed())
		items, err := apimeta.ExtractList(l)
		Expect(err).NotTo(HaveOccurred())
		for _, o := range items {
			obj := o.(client.Object)
			patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
			obj.SetAnnotations(map[string]string{"e2e.ocp-capi.io/upgraded-from": prev.version})
			Expect(c.Patch(ctx, obj, patch)).To(Succeed(), "%T %s, written by %s, refused by %s", obj, obj.GetName(), prev.version, *releaseVersion)
		}
	}

	figures := fmt.Sprintf("%s to %s: clusterctl upgrade apply %s, until the new provider read all %d servers and 1 min more %s; "+
		"%d OpenStack calls, %d creates/deletes; Cluster checks %d, not Available %d; Machines %d, replaced 0",
		prev.version, *releaseVersion, upgraded.Round(time.Second), len(servers), total.Round(time.Second),
		len(calls), len(openstackproxy.CreatesAndDeletes(calls)), w.checks, len(w.notAvailable), len(machines))
	AddReportEntry("upgrade", figures)
	GinkgoWriter.Println(figures)
	GinkgoWriter.Println(proxy.Summary())
}

// machineUIDs maps the cluster's Machines' names to their UIDs.
func machineUIDs(ctx context.Context, c client.Client, namespace, cluster string) map[string]types.UID {
	list := &clusterv1.MachineList{}
	Expect(c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster})).To(Succeed())
	out := map[string]types.UID{}
	for _, m := range list.Items {
		out[m.Name] = m.UID
	}
	return out
}

// providerLists are the kinds of our providers that a cluster of the
// openstack-agent flavor has, read with this tree's API types.
func providerLists() map[string]client.ObjectList {
	return map[string]client.ObjectList{
		"OpenStackCluster":                &infrav1.OpenStackClusterList{},
		"OpenStackMachine":                &infrav1.OpenStackMachineList{},
		"OpenStackMachineTemplate":        &infrav1.OpenStackMachineTemplateList{},
		"OpenStackServer":                 &infrav1alpha1.OpenStackServerList{},
		"OpenshiftAssistedControlPlane":   &controlplanev1.OpenshiftAssistedControlPlaneList{},
		"OpenshiftAssistedConfig":         &bootstrapv1.OpenshiftAssistedConfigList{},
		"OpenshiftAssistedConfigTemplate": &bootstrapv1.OpenshiftAssistedConfigTemplateList{},
	}
}

// providerObjects reads every object of providerLists in namespace: kind,
// then name, to UID and spec.
func providerObjects(ctx context.Context, c client.Client, namespace string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for kind, l := range providerLists() {
		Expect(c.List(ctx, l, client.InNamespace(namespace))).To(Succeed(), "listing %s", kind)
		items, err := apimeta.ExtractList(l)
		Expect(err).NotTo(HaveOccurred())
		out[kind] = map[string]string{}
		for _, o := range items {
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
			Expect(err).NotTo(HaveOccurred())
			obj := o.(client.Object)
			out[kind][obj.GetName()] = fmt.Sprintf("%s %v", obj.GetUID(), u["spec"])
		}
	}
	return out
}

// clusterWatch polls a Cluster and its Machines until stopped.
type clusterWatch struct {
	stop         func()
	mu           sync.Mutex
	checks       int
	notAvailable []string
	newMachines  []string
}

// watchCluster checks every second that the Cluster key is Available and
// that its Machines are those of machines, recording what is not.
func watchCluster(ctx context.Context, c client.Client, key types.NamespacedName, machines map[string]types.UID) *clusterWatch {
	w := &clusterWatch{}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var once sync.Once
	w.stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	go func() {
		defer GinkgoRecover()
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
			cluster := &clusterv1.Cluster{}
			list := &clusterv1.MachineList{}
			err := c.Get(wctx, key, cluster)
			if err == nil {
				err = c.List(wctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: key.Name})
			}
			if wctx.Err() != nil {
				return
			}
			w.mu.Lock()
			w.checks++
			stamp := time.Now().UTC().Format(time.TimeOnly)
			switch {
			case err != nil:
				// The management cluster's API server is not what is
				// upgraded; an error reading it is a failure too.
				w.notAvailable = append(w.notAvailable, stamp+" reading: "+err.Error())
			case !apimeta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.AvailableCondition):
				w.notAvailable = append(w.notAvailable, stamp+" "+condSummary(cluster.Status.Conditions))
			}
			for _, m := range list.Items {
				if uid, ok := machines[m.Name]; !ok || uid != m.UID {
					w.newMachines = append(w.newMachines, stamp+" "+m.Name+" "+string(m.UID))
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}
