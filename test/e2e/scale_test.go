//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// scaleClusters is how many clusters the scale suite makes at once; 0 (the
// default) skips it: it is opt-in, outside the CI run (make test-e2e-scale).
var scaleClusters = flag.Int("e2e.scale-clusters", 0, "the scale suite's number of 1 + 1 clusters made at once (0: skip the suite; make test-e2e-scale sets 5)")

// The nearest honest equivalent of CAPI's ScaleSpec (docs/e2e.md, "CAPI's
// own e2e specs", why the spec itself cannot run): several single-node
// OpenShift clusters with one day-2 worker each, applied at once on the
// local OpenStack, each with its own workload API server (and forwarded
// port), all Available with every Machine's nodeRef, then deleted at once
// and leak-checked. The provider's OpenStack calls go through the counting
// proxy, reported per machine.
var _ = Describe("Scale, openstack-agent flavor", Label("scale"), func() {
	It("creates several 1 + 1 clusters at once on the local OpenStack, all reach Available with every Machine's nodeRef, and deletes them at once without leaving OpenStack resources", func() {
		n := *scaleClusters
		if n == 0 {
			Skip("opt-in, not part of make test-e2e: -e2e.scale-clusters is 0; run `sudo make test-e2e-scale` (5 clusters)")
		}
		scale(suiteCtx, n)
	})
})

// scaleCluster is one cluster of the scale suite.
type scaleCluster struct {
	name      string
	port      int
	manifest  []byte
	workload  *localenv.WorkloadCluster
	available time.Duration
	gone      time.Duration
	recorded  map[string]localenv.OSResource
}

func scale(ctx context.Context, n int) {
	const cp, workers = 1, 1
	ports := scaleWorkloadPorts()
	Expect(len(ports)).To(BeNumerically(">=", n),
		"E2E_SCALE_WORKLOAD_PORTS %v: one forwarded port per cluster's workload API server (hack/make/e2e.mk)", ports)

	cloud := e2eConfig.MustGetVariable("OPENSTACK_CLOUD")
	o, err := localenv.NewOpenStack(ctx, *cloudsYAML, cloud)
	Expect(err).NotTo(HaveOccurred())
	proxy := newCountingProxy(cloud)
	DeferCleanup(proxy.Close)
	clouds := cloudsYAMLVia(proxy, cloud, cloud)

	c := mgmt.GetClient()
	clusters := make([]*scaleCluster, n)
	before, err := o.All(ctx)
	Expect(err).NotTo(HaveOccurred())
	suffix := util.RandomString(5)
	for i := range clusters {
		sc := &scaleCluster{name: fmt.Sprintf("scale%d-%s", i, suffix), port: ports[i]}
		clusters[i] = sc
		Expect(localenv.ClusterResources(before, sc.name, nil)).To(BeEmpty(), "OpenStack resources of a cluster named %s exist before it does", sc.name)
		logFolder := filepath.Join(*artifactFolder, "clusters", sc.name)
		cdKey := types.NamespacedName{Namespace: sc.name, Name: sc.name}

		By(fmt.Sprintf("Starting %s's workload API server on port %d, behind the Service %s", sc.name, sc.port, localenv.WorkloadServiceFor(sc.port)))
		sc.workload, err = localenv.StartWorkloadClusterBehind(sc.port, localenv.WorkloadServiceFor(sc.port), "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(sc.workload.Stop()).To(Succeed()) })
		Expect(localenv.ApplyWorkloadService(ctx, c, nodeIP, localenv.WorkloadServiceFor(sc.port), int32(sc.port))).To(Succeed())
		DeferCleanup(func() {
			Expect(localenv.DeleteWorkloadService(ctx, c, localenv.WorkloadServiceFor(sc.port))).To(Succeed())
		})
		Expect(sim.SetWorkload(ctx, cdKey, sc.workload)).To(Succeed())
		DeferCleanup(func() { sim.ForgetWorkload(cdKey) })

		framework.CreateNamespaceAndWatchEvents(ctx, framework.CreateNamespaceAndWatchEventsInput{
			Creator: c, ClientSet: mgmt.GetClientSet(), Name: sc.name, LogFolder: logFolder,
		})
		sc.manifest = clusterctl.ConfigCluster(ctx, clusterctl.ConfigClusterInput{
			LogFolder:                logFolder,
			ClusterctlConfigPath:     clusterctlConfigPath,
			KubeconfigPath:           mgmt.GetKubeconfigPath(),
			InfrastructureProvider:   infraProviderVersion(),
			Flavor:                   "openstack-agent",
			Namespace:                sc.name,
			ClusterName:              sc.name,
			ControlPlaneMachineCount: ptr.To[int64](cp),
			WorkerMachineCount:       ptr.To[int64](workers),
			ClusterctlVariables:      map[string]string{"OPENSTACK_CLOUD_YAML_B64": base64.StdEncoding.EncodeToString(clouds)},
		})
		Expect(sc.manifest).NotTo(BeEmpty())
		Expect(os.WriteFile(filepath.Join(logFolder, sc.name+".yaml"), sc.manifest, 0o600)).To(Succeed())
	}

	// A failed run deletes its clusters too (best effort), so that 2n
	// servers and n load balancers are not left on the local OpenStack.
	// Cleanups run last-in first-out: this one before the workload API
	// servers stop.
	deleted := false
	DeferCleanup(func() {
		if deleted {
			return
		}
		for _, sc := range clusters {
			_ = c.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: sc.name, Name: sc.name}})
		}
		_ = waitScaleGone(ctx, c, clusters, time.Now())
	})

	proxy.Reset()
	By(fmt.Sprintf("Applying %d clusters of %d control-plane + %d worker Machines at once", n, cp, workers))
	start := time.Now()
	var wg sync.WaitGroup
	for _, sc := range clusters {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			Eventually(func() error { return mgmt.CreateOrUpdate(ctx, sc.manifest) }, time.Minute, 5*time.Second).Should(Succeed(), "applying %s", sc.name)
		}()
	}
	wg.Wait()

	By("Waiting for every cluster to be Available with every Machine's providerID, addresses and nodeRef")
	Eventually(func() error {
		var errs []error
		for _, sc := range clusters {
			if sc.available > 0 {
				continue
			}
			if err := scaleClusterReady(ctx, c, sc, cp, workers); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", sc.name, err))
				continue
			}
			sc.available = time.Since(start)
			GinkgoWriter.Printf("%s Available after %s\n", sc.name, sc.available.Round(time.Second))
		}
		return errors.Join(errs...)
	}, e2eConfig.GetIntervals("default", "wait-scale-available")...).Should(Succeed())
	allAvailable := time.Since(start)
	createCalls := proxy.Calls()
	createSummary := proxy.Summary()
	proxy.Reset()
	for _, sc := range clusters {
		logDescribe(ctx, mgmt, filepath.Join(*artifactFolder, "clusters", sc.name), sc.name)
	}

	By("Recording the clusters' OpenStack resources")
	all, err := o.All(ctx)
	Expect(err).NotTo(HaveOccurred())
	for _, sc := range clusters {
		mine := localenv.ClusterResources(all, sc.name, nil)
		sc.recorded = localenv.ByKey(mine)
		counts := localenv.Kinds(mine)
		GinkgoWriter.Printf("OpenStack resources of %s: %v\n", sc.name, counts)
		Expect(counts).To(HaveKeyWithValue("server", cp+workers), "%s: one server per Machine", sc.name)
		for _, k := range []string{"network", "subnet", "router", "security group", "load balancer", "floating IP"} {
			Expect(counts).To(HaveKey(k), "%s has a %s", sc.name, k)
		}
	}

	By(fmt.Sprintf("Deleting the %d clusters at once", n))
	idleCalls := proxy.Calls()
	proxy.Reset()
	deleteStart := time.Now()
	deleted = true
	for _, sc := range clusters {
		framework.DeleteCluster(ctx, framework.DeleteClusterInput{Deleter: c,
			Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: sc.name, Name: sc.name}}})
	}
	Expect(waitScaleGone(ctx, c, clusters, deleteStart)).To(Succeed())
	allGone := time.Since(deleteStart)
	deleteCalls := proxy.Calls()
	deleteSummary := proxy.Summary()

	for _, sc := range clusters {
		expectNoOpenStackLeftovers(ctx, o, sc.name, sc.recorded)
		Eventually(capiObjectsLeft(ctx, c, sc.name), time.Minute, time.Second).Should(BeEmpty(), "Cluster API objects left in namespace %s after the Cluster was deleted", sc.name)
		Expect(c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sc.name}})).To(Succeed())
	}

	machines := n * (cp + workers)
	report := scaleReport(n, cp, workers, clusters, allAvailable, allGone, machines, createCalls, idleCalls, deleteCalls) +
		"\ncreation, by path:\n" + createSummary + "\ndeletion, by path:\n" + deleteSummary
	GinkgoWriter.Println(report)
	AddReportEntry("scale figures", report)
	Expect(os.WriteFile(filepath.Join(*artifactFolder, "scale-figures.txt"), []byte(report), 0o600)).To(Succeed())
}

// scaleWorkloadPorts are the host ports of the scale suite's workload API
// servers, which every e2e node forwards (E2E_SCALE_WORKLOAD_PORTS).
func scaleWorkloadPorts() []int {
	var ports []int
	for _, f := range strings.Split(e2eConfig.MustGetVariable("E2E_SCALE_WORKLOAD_PORTS"), ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		Expect(err).NotTo(HaveOccurred(), "E2E_SCALE_WORKLOAD_PORTS")
		ports = append(ports, p)
	}
	return ports
}

// scaleClusterReady is nil once sc's Cluster and control plane are
// Available and each of its Machines has a providerID, addresses and a
// nodeRef to the Node with that providerID in its own workload cluster.
func scaleClusterReady(ctx context.Context, c client.Client, sc *scaleCluster, cp, workers int) error {
	key := client.ObjectKey{Namespace: sc.name, Name: sc.name}
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := c.Get(ctx, key, oacp); err != nil {
		return err
	}
	if !apimeta.IsStatusConditionTrue(oacp.Status.Conditions, controlplanev1.AvailableCondition) || ptr.Deref(oacp.Status.AvailableReplicas, 0) != int32(cp) {
		return fmt.Errorf("control plane: %d available replicas, %s", ptr.Deref(oacp.Status.AvailableReplicas, 0), condSummary(oacp.Status.Conditions))
	}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.InNamespace(sc.name), client.MatchingLabels{clusterv1.ClusterNameLabel: sc.name}); err != nil {
		return err
	}
	if len(machines.Items) != cp+workers {
		return fmt.Errorf("%d Machines, want %d", len(machines.Items), cp+workers)
	}
	nodes, err := sc.workload.NodesByProviderID(ctx)
	if err != nil {
		return err
	}
	for _, m := range machines.Items {
		switch {
		case m.Spec.ProviderID == "" || len(m.Status.Addresses) == 0:
			return fmt.Errorf("Machine %s: providerID %q, %d addresses", m.Name, m.Spec.ProviderID, len(m.Status.Addresses))
		case nodes[m.Spec.ProviderID] == "":
			return fmt.Errorf("Machine %s: no Node with its providerID in the workload cluster", m.Name)
		case !m.Status.NodeRef.IsDefined() || m.Status.NodeRef.Name != nodes[m.Spec.ProviderID]:
			return fmt.Errorf("Machine %s: nodeRef %q, want %q; %s", m.Name, m.Status.NodeRef.Name, nodes[m.Spec.ProviderID], condSummary(m.Status.Conditions))
		}
	}
	cluster := &clusterv1.Cluster{}
	if err := c.Get(ctx, key, cluster); err != nil {
		return err
	}
	if !apimeta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.ClusterControlPlaneAvailableCondition) ||
		!apimeta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.AvailableCondition) {
		return fmt.Errorf("Cluster: %s", condSummary(cluster.Status.Conditions))
	}
	return nil
}

// waitScaleGone waits until every cluster's Cluster is gone, recording
// when each went.
func waitScaleGone(ctx context.Context, c client.Client, clusters []*scaleCluster, start time.Time) error {
	intervals := e2eConfig.GetIntervals("default", "wait-scale-deleted")
	timeout, err := time.ParseDuration(intervals[0].(string))
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		var left []string
		for _, sc := range clusters {
			if sc.gone > 0 {
				continue
			}
			err := c.Get(ctx, client.ObjectKey{Namespace: sc.name, Name: sc.name}, &clusterv1.Cluster{})
			switch {
			case apierrors.IsNotFound(err):
				sc.gone = time.Since(start)
				GinkgoWriter.Printf("%s gone after %s\n", sc.name, sc.gone.Round(time.Second))
			default:
				left = append(left, sc.name)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Clusters not deleted after %s: %v", timeout, left)
		}
		time.Sleep(5 * time.Second)
	}
}

// scaleReport is the suite's figures: times, and the OpenStack calls per
// machine by service and method for each phase.
func scaleReport(n, cp, workers int, clusters []*scaleCluster, available, gone time.Duration, machines int, create, idle, del []openstackproxy.Call) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d clusters of %d + %d (%d machines) applied at once: all Available after %s, all deleted after %s\n",
		n, cp, workers, machines, available.Round(time.Second), gone.Round(time.Second))
	for _, sc := range clusters {
		fmt.Fprintf(&sb, "  %s: Available after %s, gone after %s\n", sc.name, sc.available.Round(time.Second), sc.gone.Round(time.Second))
	}
	phase := func(title string, calls []openstackproxy.Call) {
		by := map[string]int{}
		for _, c := range calls {
			by[c.Service+" "+c.Method]++
		}
		keys := make([]string, 0, len(by))
		for k := range by {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&sb, "OpenStack calls, %s: %d, %.1f per machine\n", title, len(calls), float64(len(calls))/float64(machines))
		for _, k := range keys {
			fmt.Fprintf(&sb, "  %-22s %5d  %6.1f per machine\n", k, by[k], float64(by[k])/float64(machines))
		}
	}
	phase("apply to all Available", create)
	phase("all Available to the deletion", idle)
	phase("deletion to all gone", del)
	all := append(append(append([]openstackproxy.Call(nil), create...), idle...), del...)
	phase("in all", all)
	return sb.String()
}
