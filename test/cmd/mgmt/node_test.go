package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/localnode"
)

// probeImage is the tag of the test image built from test/localnode/probe.
const probeImage = "ocp-capi.local/probe:test"

// TestNodeSize runs the real command with --size node on its own instance
// (index, port and state dir distinct from a developer's .mgmt): pods run
// from an image imported from a tarball, their logs are readable through
// the API server, cluster DNS resolves a Service, a pod on the pod network
// and a hostNetwork pod both reach a server on the host's 127.0.0.1 through
// the forward, a warm restart keeps the objects, and `down` leaves no
// process, mount, network namespace, cgroup or host file of the instance.
func TestNodeSize(t *testing.T) {
	g := NewWithT(t)
	root, err := envtest.FindRepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	binDir, nodeImages := filepath.Join(root, "bin"), filepath.Join(root, "bin", "images")
	requireNodePrerequisites(t, binDir, nodeImages)

	bin := buildMgmt(t, root)
	images := buildProbeImage(t, root, binDir)
	token := "host-says-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	hostPort := serveOnLoopback(t, token)
	// Short: the kubelet's sockets under it must fit in sun_path.
	state, err := os.MkdirTemp("", "mgmt-node-")
	g.Expect(err).NotTo(HaveOccurred())
	l := localnode.Layout{Dir: state}
	t.Cleanup(func() {
		// Runs on failure too; `down` is idempotent.
		if out, err := exec.Command(bin, "down", "--state-dir", state).CombinedOutput(); err != nil {
			t.Errorf("cleanup: mgmt down: %v\n%s", err, out)
		}
		_ = os.RemoveAll(state)
	})

	mgmt := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mgmt %s: %v\n%s\nlog:\n%s", strings.Join(args, " "), err, out, tailFile(filepath.Join(state, "mgmt.log"), 40))
		}
		return string(out)
	}
	var upArgs []string
	out, index, apiPort, err := upOnFreeInstance(t, root, bin, func(index, port int) []string {
		upArgs = []string{"up", "--size", "node", "--state-dir", state, "--instance", strconv.Itoa(index),
			"--port", strconv.Itoa(port), "--bin-dir", binDir, "--node-images", nodeImages, "--images", images,
			"--forward-host-ports", strconv.Itoa(hostPort), "--crds", "none"}
		return upArgs
	})
	t.Log(out)
	g.Expect(err).NotTo(HaveOccurred(), "mgmt up\nlog:\n%s", tailFile(filepath.Join(state, "mgmt.log"), 40))

	st, ok, err := localnode.LoadState(l)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeTrue(), "node.json written")
	g.Expect(st.Instance.Index).To(Equal(index))
	nsInode := st.NetNSInode
	g.Expect(nsInode).NotTo(BeZero())
	g.Expect(mgmt("status", "--state-dir", state)).To(And(ContainSubstring("running (pid"), ContainSubstring("kubelet")))

	kubeconfig := filepath.Join(state, "kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Host).To(Equal(fmt.Sprintf("https://127.0.0.1:%d", apiPort)))
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	ctx := t.Context()

	node, err := cs.CoreV1().Nodes().Get(ctx, st.Instance.NodeName(), metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodeReady(node)).To(BeTrue(), "node Ready once up returns")

	const ns = "probe"
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.AppsV1().Deployments(ns).Create(ctx, echoDeployment(ns), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "echo"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	echoRunning := func() {
		t.Helper()
		var pod corev1.Pod
		g.Eventually(func(g Gomega) {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=echo"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods.Items).To(HaveLen(1))
			pod = pods.Items[0]
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(podReady(&pod)).To(BeTrue())
		}).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
		g.Expect(pod.Spec.Containers[0].ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
		// The log comes from the kubelet through the API server.
		g.Eventually(func() (string, error) { return podLogs(ctx, cs, ns, pod.Name) }).
			WithTimeout(30 * time.Second).Should(ContainSubstring(`probe serving "hello-from-echo"`))
	}
	echoRunning()

	// A pod on the pod network: cluster DNS (short and full names), the
	// Service's ClusterIP, and the host's loopback server at the node IP.
	nodeURL := fmt.Sprintf("http://%s:%d/=%s", st.Instance.NodeIP(), hostPort, token)
	checkPod(t, g, cs, ns, "check-pod", false,
		"-resolve", "echo", "-resolve", "echo."+ns+".svc.cluster.local", "-resolve", "kubernetes.default",
		"-get", "http://echo/=hello-from-echo", "-get", nodeURL)
	// A hostNetwork pod: the host's loopback server at 127.0.0.1, and
	// cluster DNS with ClusterFirstWithHostNet.
	checkPod(t, g, cs, ns, "check-hostnet", true,
		"-get", fmt.Sprintf("http://127.0.0.1:%d/=%s", hostPort, token),
		"-resolve", "echo."+ns+".svc.cluster.local", "-get", "http://echo."+ns+".svc/=hello-from-echo")

	// Warm restart: the data stays, the objects come back, nothing of the
	// running instance is left in between.
	t.Log(mgmt("down", "--state-dir", state, "--keep-data"))
	g.Expect(localnode.Leftovers(st.Instance, l, nsInode, true)).To(BeEmpty())
	g.Expect(processesInNetNS(nsInode)).To(BeEmpty())
	out = mgmt(upArgs...)
	t.Log(out)
	g.Expect(out).To(MatchRegexp(`images: 0 imported \[\], 3 already present`))
	st2, _, err := localnode.LoadState(l)
	g.Expect(err).NotTo(HaveOccurred())
	nsInode2 := st2.NetNSInode
	echoRunning()

	t.Log(mgmt("down", "--state-dir", state))
	g.Expect(localnode.Leftovers(st.Instance, l, nsInode2, false)).To(BeEmpty())
	for _, ino := range []uint64{nsInode, nsInode2} {
		g.Expect(processesInNetNS(ino)).To(BeEmpty(), "processes in the node's network namespace %d", ino)
	}
	g.Expect(processesNaming(state)).To(BeEmpty())
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(localnode.MountsUnder(string(mounts), state)).To(BeEmpty())
	g.Expect(state).NotTo(BeADirectory())
	// The bridges and kube-proxy's rules live in the node's namespace and
	// die with it; none may have leaked into the host's.
	for _, br := range []string{st.Instance.NodeBridge(), st.Instance.PodBridge()} {
		_, err := net.InterfaceByName(br)
		g.Expect(err).To(HaveOccurred(), "link %s in the host's namespace", br)
	}
	if rules, err := exec.Command("iptables-save").Output(); err == nil {
		for _, cidr := range []string{st.Instance.PodCIDR(), st.Instance.NodeCIDR()} {
			g.Expect(string(rules)).NotTo(ContainSubstring(cidr), "host iptables rules name %s", cidr)
		}
	}
	g.Expect(localnode.CgroupDirs(st.Instance.CgroupRoot())).To(BeEmpty())
}

// requireNodePrerequisites fails in CI (where `make test` builds and
// installs everything first) and skips elsewhere, saying what is missing.
func requireNodePrerequisites(t *testing.T, binDir, nodeImages string) {
	t.Helper()
	err := localnode.CheckPrerequisites(binDir, nodeImages)
	if err == nil {
		if _, e := os.Stat(filepath.Join(binDir, "imgbuild")); e != nil {
			err = fmt.Errorf("no %s/imgbuild to pack the probe image (make node-images builds it): %w", binDir, e)
		}
	}
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI: the node size's prerequisites must be there (make node-prereqs): %v", err)
	}
	t.Skipf("skipping the node size's test (outside CI; make node-prereqs and run as root): %v", err)
}

func buildMgmt(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mgmt")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(root, "test", "cmd", "mgmt")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// buildProbeImage builds test/localnode/probe and packs it as an image
// tarball, alone in a directory for --images.
func buildProbeImage(t *testing.T, root, binDir string) string {
	t.Helper()
	tmp := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(tmp, "probe"), "./test/localnode/probe")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the probe: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "images")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pack := exec.Command(filepath.Join(binDir, "imgbuild"), "--out", filepath.Join(dir, "probe.tar"), "--tag", probeImage,
		"--entrypoint", "/probe", "--file", filepath.Join(tmp, "probe")+":/probe")
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("imgbuild: %v\n%s", err, out)
	}
	return dir
}

// serveOnLoopback serves body on the host's 127.0.0.1 and returns the port.
func serveOnLoopback(t *testing.T, body string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(body))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	if err := localnode.CheckHostPorts([]int{port}); err != nil {
		t.Fatalf("the kernel gave a port the node uses itself: %v", err)
	}
	return port
}

// upOnFreeInstance runs `mgmt up` with the arguments args gives for a
// free instance index and API port. Another test run (or person) may take
// either between the check and the start; `up` then refuses before it
// records anything, and another pair is tried.
func upOnFreeInstance(t *testing.T, root, bin string, args func(index, port int) []string) (out string, index, port int, err error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		index, port = freeInstance(t), freePort(t)
		cmd := exec.Command(bin, args(index, port)...)
		cmd.Dir = root
		b, err := cmd.CombinedOutput()
		out = string(b)
		taken := strings.Contains(out, "is already running from another state dir") || strings.Contains(out, "the API forward port, is in use")
		if err == nil || !taken || attempt == 3 {
			return out, index, port, err
		}
		t.Logf("instance %d or port %d was taken meanwhile, trying others: %s", index, port, out)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port
}

// freeInstance picks an index from the top of the range, away from the
// 0, 1, ... that people use, whose lock is free and whose cgroup does not
// exist. `up` takes the lock itself, so a race with another test run
// fails loudly rather than sharing an instance.
func freeInstance(t *testing.T) int {
	t.Helper()
	for i := localnode.MaxIndex; i > localnode.MaxIndex-32; i-- {
		inst, err := localnode.NewInstance(i, 0)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", "@"+inst.Name())
		if err != nil {
			continue
		}
		_ = ln.Close()
		if len(localnode.CgroupDirs(inst.CgroupRoot())) == 0 {
			return i
		}
	}
	t.Fatal("no free instance index")
	return 0
}

func echoDeployment(ns string) *appsv1.Deployment {
	labels := map[string]string{"app": "echo"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "echo", Image: probeImage, ImagePullPolicy: corev1.PullIfNotPresent,
					Args:  []string{"serve", "-listen", ":8080", "-text", "hello-from-echo"},
					Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{
						ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}},
						PeriodSeconds: 1,
					},
				}}},
			},
		},
	}
}

// checkPod runs the probe's checks in a pod and expects every one to pass,
// read back from the pod's log.
func checkPod(t *testing.T, g *WithT, cs kubernetes.Interface, ns, name string, hostNetwork bool, args ...string) {
	t.Helper()
	ctx := t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			HostNetwork:   hostNetwork,
			Containers: []corev1.Container{{
				Name: "check", Image: probeImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Args: append([]string{"check", "-timeout", "60s"}, args...),
			}},
		},
	}
	if hostNetwork {
		pod.Spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() (corev1.PodPhase, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return p.Status.Phase, nil
	}).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(BeElementOf(corev1.PodSucceeded, corev1.PodFailed))
	logs, err := podLogs(ctx, cs, ns, name)
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("%s:\n%s", name, logs)
	g.Expect(logs).To(ContainSubstring("ALL OK"), "every check of %s passes", name)
}

func podLogs(ctx context.Context, cs kubernetes.Interface, ns, name string) (string, error) {
	b, err := cs.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	return string(b), err
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// processesInNetNS lists the processes in the network namespace inode.
func processesInNetNS(ino uint64) []string {
	want := fmt.Sprintf("net:[%d]", ino)
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net")); err == nil && l == want {
			out = append(out, e.Name()+" "+cmdline(e.Name()))
		}
	}
	return out
}

// processesNaming lists the processes whose command line names dir.
func processesNaming(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == strconv.Itoa(os.Getpid()) {
			continue
		}
		if c := cmdline(e.Name()); strings.Contains(c, dir) {
			out = append(out, e.Name()+" "+c)
		}
	}
	return out
}

func cmdline(pid string) string {
	b, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}

func tailFile(p string, n int) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestNodeSizeFailedStart breaks one component: `up` must fail with that
// component's log, and the failed start must leave no process, mount or
// namespace behind (the data stays for `down` to remove).
func TestNodeSizeFailedStart(t *testing.T) {
	g := NewWithT(t)
	root, err := envtest.FindRepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	binDir, nodeImages := filepath.Join(root, "bin"), filepath.Join(root, "bin", "images")
	requireNodePrerequisites(t, binDir, nodeImages)
	bin := buildMgmt(t, root)

	// bin/ with a kube-scheduler that exits at once.
	broken := t.TempDir()
	for _, b := range localnode.NodeBinaries {
		target, err := filepath.EvalSymlinks(filepath.Join(binDir, b))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(os.Symlink(target, filepath.Join(broken, b))).To(Succeed())
	}
	sched := filepath.Join(broken, "kube-scheduler")
	g.Expect(os.Remove(sched)).To(Succeed())
	g.Expect(os.WriteFile(sched, []byte("#!/bin/sh\necho 'scheduler broken on purpose' >&2\nexit 3\n"), 0o755)).To(Succeed())

	state, err := os.MkdirTemp("", "mgmt-fail-")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if out, err := exec.Command(bin, "down", "--state-dir", state).CombinedOutput(); err != nil {
			t.Errorf("cleanup: mgmt down: %v\n%s", err, out)
		}
		_ = os.RemoveAll(state)
	})
	out, _, _, err := upOnFreeInstance(t, root, bin, func(index, port int) []string {
		return []string{"up", "--size", "node", "--state-dir", state, "--instance", strconv.Itoa(index),
			"--port", strconv.Itoa(port), "--bin-dir", broken, "--node-images", nodeImages, "--images", "none",
			"--forward-host-ports", "none", "--timeout", "2m"}
	})
	t.Logf("%s", out)
	g.Expect(err).To(HaveOccurred(), "up with a broken kube-scheduler")
	g.Expect(out).To(And(ContainSubstring("kube-scheduler exited"), ContainSubstring("scheduler broken on purpose")))

	st, ok, err := localnode.LoadState(localnode.Layout{Dir: state})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeTrue())
	g.Expect(localnode.Leftovers(st.Instance, localnode.Layout{Dir: state}, st.NetNSInode, true)).To(BeEmpty())
	g.Expect(processesInNetNS(st.NetNSInode)).To(BeEmpty())
	g.Expect(processesNaming(state)).To(BeEmpty())

	downOut, err := exec.Command(bin, "down", "--state-dir", state).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(downOut))
	g.Expect(state).NotTo(BeADirectory())
}
