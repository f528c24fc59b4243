package openstack

// Benchmarks of machine provisioning against the real local cloud, for the
// figures in docs/openstack/performance.md. Run them one iteration each:
//
//	KUBEBUILDER_ASSETS=$PWD/bin go test -run '^$' -bench . -benchtime=1x ./test/integration/openstack/
//
// Each creates N OpenStackMachines at once and measures the wall time until
// every one is provisioned (status.initialization.provisioned), and the
// OpenStack calls per machine counted at the proxy, for the creation and
// for the deletion that follows (not timed). The Subprocess variant
// runs the real infrastructure-manager binary instead of the in-process
// controllers, to read the manager's peak memory from /proc.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	osprovider "github.com/ocp-capi/ocp-capi/internal/openstack"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/test/chaos"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

func BenchmarkProvision1(b *testing.B)  { benchmarkProvision(b, 1, inProcess) }
func BenchmarkProvision20(b *testing.B) { benchmarkProvision(b, 20, inProcess) }

// BenchmarkProvision20Subprocess is BenchmarkProvision20 with the real
// infrastructure-manager binary, whose peak RSS (VmHWM) it reports.
func BenchmarkProvision20Subprocess(b *testing.B) { benchmarkProvision(b, 20, subprocess) }

type managerKind int

const (
	inProcess managerKind = iota
	subprocess
)

// provisionWait bounds one provisioning run; it is only reached on failure.
const provisionWait = 10 * time.Minute

func benchmarkProvision(b *testing.B, n int, kind managerKind) {
	g := NewWithT(b)
	b.StopTimer()
	var bin string
	if kind == subprocess {
		bin = buildManager(b)
	}
	var total time.Duration
	var calls, deleteCalls int
	var peakMiB float64
	for i := 0; i < b.N; i++ {
		ns := benchNamespace(b)
		prefix := fmt.Sprintf("%s-b%d-%d", fx.prefix, n, i)
		var mgr *subprocessManager
		var stopInProcess func()
		switch kind {
		case inProcess:
			stopInProcess = startBenchManager(b)
		case subprocess:
			mgr = startSubprocessManager(b, bin)
		}

		// What CAPI core would have made; not part of the measurement.
		osms := make([]*infrav1.OpenStackMachine, 0, n)
		for j := 0; j < n; j++ {
			osms = append(osms, benchMachineObjects(b, ns, fmt.Sprintf("%s-%02d", prefix, j)))
		}

		proxy.Reset()
		b.StartTimer()
		start := time.Now()
		for _, osm := range osms {
			g.Expect(env.Client.Create(context.Background(), osm)).To(Succeed())
		}
		waitAllProvisioned(b, ns, n)
		elapsed := time.Since(start)
		b.StopTimer()
		total += elapsed
		calls += proxy.CountFunc(func(openstackproxy.Call) bool { return true })
		b.Logf("%d machine(s) provisioned in %s (load average %s); OpenStack calls:\n%s", n, elapsed.Round(time.Millisecond), chaos.LoadAverage(), proxy.Summary())
		if n == 1 {
			b.Logf("call sequence, create to provisioned:\n%s", callSequence(proxy.Calls()))
		}
		if mgr != nil {
			b.Logf("manager VmHWM after provisioning: %.1f MiB", mgr.peakMiB(b))
		}

		// Delete with the same manager (deletion needs the controllers),
		// counting its calls too; it is not part of the timed figure.
		proxy.Reset()
		deleteStart := time.Now()
		deleteAllAndWait(b, ns, osms)
		deleteElapsed := time.Since(deleteStart)
		benchExpectNoLeftovers(b, prefix)
		deleteCalls += proxy.CountFunc(func(openstackproxy.Call) bool { return true })
		b.Logf("%d machine(s) deleted in %s; OpenStack calls:\n%s", n, deleteElapsed.Round(time.Millisecond), proxy.Summary())
		if n == 1 {
			b.Logf("call sequence, delete to gone:\n%s", callSequence(proxy.Calls()))
		}
		if mgr != nil {
			peak := mgr.peakMiB(b)
			b.Logf("manager VmHWM after deleting: %.1f MiB", peak)
			peakMiB = max(peakMiB, peak)
			mgr.stop(b)
		}
		if stopInProcess != nil {
			stopInProcess()
		}
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/provision-all")
	b.ReportMetric(float64(calls)/float64(b.N*n), "calls/machine")
	b.ReportMetric(float64(deleteCalls)/float64(b.N*n), "calls/machine-delete")
	if kind == subprocess {
		b.ReportMetric(peakMiB, "MiB-peak-rss")
	}
}

// callSequence renders calls one a line, in order.
func callSequence(calls []openstackproxy.Call) string {
	var sb strings.Builder
	for i, c := range calls {
		q := ""
		if c.Query != "" {
			q = "?" + c.Query
		}
		fmt.Fprintf(&sb, "%2d. %-8s %-6s %s%s -> %d\n", i+1, c.Service, c.Method, c.Path, q, c.Status)
	}
	return sb.String()
}

// benchNamespace is newNamespace for benchmarks.
func benchNamespace(b *testing.B) string {
	b.Helper()
	ctx := context.Background()
	ns, err := env.NewNamespace(ctx, "osbench")
	if err != nil {
		b.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: ns.Name},
		Data:       map[string][]byte{clients.CloudsYAMLKey: fx.identitySecretYAML},
	}
	if err := env.Client.Create(ctx, secret); err != nil {
		b.Fatal(err)
	}
	return ns.Name
}

// benchMachineObjects is machineObjects for benchmarks: it creates the
// Cluster, the bootstrap Secret and the Machine, and returns the
// OpenStackMachine for the caller to create.
func benchMachineObjects(b *testing.B, ns, name string) *infrav1.OpenStackMachine {
	b.Helper()
	ctx := context.Background()
	g := NewWithT(b)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name}},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	g.Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())
	bootstrap := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: ns},
		Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")}, Type: clusterv1.ClusterSecretType}
	g.Expect(env.Client.Create(ctx, bootstrap)).To(Succeed())
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
		Spec: clusterv1.MachineSpec{
			ClusterName: name,
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(bootstrap.Name)},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: name},
		},
	}
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())
	// A tag, like the cluster tags of CAPO's reference machine: on this
	// cloud (Neutron without tag-creation) it costs one PUT per port.
	spec := machineSpec()
	spec.Tags = []string{"ocp-capi-bench"}
	return &infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: machine.Name, UID: machine.UID}}},
		Spec: spec,
	}
}

// waitAllProvisioned polls until n OpenStackMachines of ns are provisioned.
func waitAllProvisioned(b *testing.B, ns string, n int) {
	b.Helper()
	NewWithT(b).Eventually(func(g Gomega) {
		list := &infrav1.OpenStackMachineList{}
		g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		done := 0
		var waiting []string
		for i := range list.Items {
			m := &list.Items[i]
			if m.Status.Initialization != nil && ptr.Deref(m.Status.Initialization.Provisioned, false) {
				done++
			} else {
				waiting = append(waiting, m.Name+": "+condition(m, infrav1.InstanceReadyCondition))
			}
		}
		g.Expect(done).To(Equal(n), "not provisioned yet: %v", waiting)
	}, provisionWait, 50*time.Millisecond).Should(Succeed())
}

func deleteAllAndWait(b *testing.B, ns string, osms []*infrav1.OpenStackMachine) {
	b.Helper()
	ctx := context.Background()
	g := NewWithT(b)
	for _, osm := range osms {
		if err := env.Client.Delete(ctx, osm); err != nil && !apierrors.IsNotFound(err) {
			b.Fatal(err)
		}
	}
	g.Eventually(func(g Gomega) {
		machines := &infrav1.OpenStackMachineList{}
		g.Expect(env.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
		g.Expect(machines.Items).To(BeEmpty())
		servers := &infrav1alpha1.OpenStackServerList{}
		g.Expect(env.Client.List(ctx, servers, client.InNamespace(ns))).To(Succeed())
		g.Expect(servers.Items).To(BeEmpty())
	}, provisionWait, 250*time.Millisecond).Should(Succeed())
}

// benchExpectNoLeftovers waits until no server, port or volume named
// prefix is left in OpenStack (Nova and Cinder delete asynchronously).
func benchExpectNoLeftovers(b *testing.B, prefix string) {
	b.Helper()
	ctx := context.Background()
	NewWithT(b).Eventually(func(g Gomega) {
		var left []string
		pages, err := servers.List(direct.compute, servers.ListOpts{Name: "^" + prefix}).AllPages(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		srvs, _ := servers.ExtractServers(pages)
		for _, s := range srvs {
			if strings.HasPrefix(s.Name, prefix) {
				left = append(left, "server "+s.Name)
			}
		}
		pp, err := ports.List(direct.network, ports.ListOpts{}).AllPages(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		pl, _ := ports.ExtractPorts(pp)
		for _, p := range pl {
			if strings.HasPrefix(p.Name, prefix) {
				left = append(left, "port "+p.Name)
			}
		}
		if direct.volume != nil {
			vp, err := volumes.List(direct.volume, volumes.ListOpts{}).AllPages(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			vl, _ := volumes.ExtractVolumes(vp)
			for _, v := range vl {
				if strings.HasPrefix(v.Name, prefix) {
					left = append(left, "volume "+v.Name)
				}
			}
		}
		g.Expect(left).To(BeEmpty(), "OpenStack resources left")
	}, 2*time.Minute, time.Second).Should(Succeed())
}

// startBenchManager is startManager for benchmarks: the provider's
// controllers in-process, with a cold client factory. It returns once the
// caches of the provider's kinds are synced.
func startBenchManager(b *testing.B) func() {
	b.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	for _, c := range osprovider.Controllers(osprovider.Options{}) {
		if err := c.Setup(ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: manager.DefaultConcurrency}); err != nil {
			cancel()
			b.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	for _, obj := range []client.Object{&infrav1.OpenStackMachine{}, &infrav1alpha1.OpenStackServer{}, &clusterv1.Machine{}, &clusterv1.Cluster{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			cancel()
			b.Fatal(err)
		}
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		b.Fatal("the manager's caches did not sync")
	}
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				b.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			b.Error("manager did not stop in 30s")
		}
	}
}

// buildManager builds bin/infrastructure-manager into a temporary
// directory, as `make` would, without -race.
func buildManager(b testing.TB) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "infrastructure-manager")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/infrastructure-manager")
	cmd.Dir = env.Paths.RepoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/infrastructure-manager: %v\n%s", err, out)
	}
	return bin
}

// subprocessManager is the infrastructure-manager binary running against
// the test's API server.
type subprocessManager struct {
	cmd  *exec.Cmd
	log  string
	done chan error
}

func startSubprocessManager(b testing.TB, bin string) *subprocessManager {
	b.Helper()
	kubeconfig, err := env.KubeConfig()
	if err != nil {
		b.Fatal(err)
	}
	return startSubprocessManagerWith(b, bin, kubeconfig, true)
}

// startSubprocessManagerWith starts the manager with the given kubeconfig.
// Untracked, it is not stopped by a cleanup of b (the caller stops it)
// and its files are not removed: for a manager started from a cleanup.
func startSubprocessManagerWith(b testing.TB, bin string, kubeconfig []byte, tracked bool) *subprocessManager {
	b.Helper()
	var dir string
	if tracked {
		dir = b.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp("", "manager-"); err != nil {
			b.Fatal(err)
		}
	}
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcPath, kubeconfig, 0o600); err != nil {
		b.Fatal(err)
	}
	health := freeLocalAddress(b)
	logPath := filepath.Join(dir, "manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--kubeconfig="+kcPath,
		"--webhook-port=0",
		"--metrics-bind-address=0",
		"--health-probe-bind-address="+health,
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	m := &subprocessManager{cmd: cmd, log: logPath, done: make(chan error, 1)}
	go func() { m.done <- cmd.Wait(); _ = logFile.Close() }()
	if tracked {
		b.Cleanup(func() { m.stop(b) })
	}

	// Ready: the health server answers, and the three controllers started
	// their workers (so their caches are synced).
	NewWithT(b).Eventually(func(g Gomega) {
		select {
		case err := <-m.done:
			m.done <- err
			StopTrying(fmt.Sprintf("the manager exited (%v):\n%s", err, m.tail())).Now()
		default:
		}
		resp, err := http.Get("http://" + health + "/readyz")
		g.Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
		data, err := os.ReadFile(logPath)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.Count(string(data), "Starting workers")).To(BeNumerically(">=", 3), "controllers not started yet:\n%s", m.tail())
	}, 2*time.Minute, 100*time.Millisecond).Should(Succeed())
	return m
}

// peakMiB is the process's peak resident set size (VmHWM) in MiB.
func (m *subprocessManager) peakMiB(b *testing.B) float64 {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "VmHWM:	   81234 kB"
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				b.Fatalf("VmHWM: %v", err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// stop ends the manager with SIGTERM (a graceful shutdown), and kills it
// if it does not stop in 30 s.
func (m *subprocessManager) stop(b testing.TB) {
	b.Helper()
	select {
	case err := <-m.done:
		m.done <- err
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-m.done:
		m.done <- err
		if err != nil {
			b.Errorf("the manager did not exit cleanly: %v\n%s", err, m.tail())
		}
	case <-time.After(30 * time.Second):
		_ = m.cmd.Process.Kill()
		b.Errorf("the manager did not stop in 30s after SIGTERM")
	}
}

func (m *subprocessManager) tail() string {
	return chaos.Tail(m.log, 30)
}

// freeLocalAddress is a loopback address with a port nothing listens on.
func freeLocalAddress(b testing.TB) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
