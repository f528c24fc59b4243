package localnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options configure Run.
type Options struct {
	Instance Instance
	Layout   Layout
	// Kubeconfig is where the admin kubeconfig is written.
	Kubeconfig string
	// BinDir holds etcd and the Kubernetes binaries.
	BinDir string
	// NodeImagesDir holds pause.tar and coredns.tar.
	NodeImagesDir string
	// ImageDirs are imported too (every *.tar in each).
	ImageDirs []string
	// HostPorts are forwarded from the root namespace's loopback into the node.
	HostPorts []int
	// Objects are applied once the API server is up (e.g. CRDs).
	Objects []client.Object
	// Timeout bounds the start; 0 means no bound.
	Timeout time.Duration
	// Out receives progress lines.
	Out io.Writer
}

// node is one running instance.
type node struct {
	o     Options
	l     Layout
	sup   *supervisor
	ctr   Ctr
	start time.Time
	out   io.Writer
	steps []string
	lock  net.Listener
}

func (n *node) logf(format string, args ...any) {
	line := fmt.Sprintf("[%6.2fs] ", time.Since(n.start).Seconds()) + fmt.Sprintf(format, args...)
	n.steps = append(n.steps, line)
	fmt.Fprintln(n.out, line)
}

// Run brings the instance up, calls ready with a summary once the node is
// Ready and cluster DNS answers, and keeps it running until ctx ends; then
// it stops every process and pod and unmounts what they mounted (the data
// stays; `down` decides whether to remove it).
func Run(ctx context.Context, o Options, ready func(summary string) error) error {
	n := &node{o: o, l: o.Layout, sup: newSupervisor(o.Layout), ctr: Ctr{Socket: o.Layout.ContainerdSocket()}, start: time.Now(), out: o.Out}
	if n.out == nil {
		n.out = io.Discard
	}
	startCtx := ctx
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		startCtx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	defer func() {
		if n.lock != nil {
			_ = n.lock.Close()
		}
	}()
	summary, err := n.up(startCtx)
	if err == nil {
		err = ready(summary)
	}
	if err != nil {
		n.logf("start failed: %v; stopping", err)
		n.stop()
		return err
	}
	for {
		select {
		case <-ctx.Done():
			n.logf("stopping")
			n.stop()
			n.logf("stopped")
			return nil
		case p := <-n.sup.exited:
			n.logf("%s exited unexpectedly (%v); its log: %s\n%s", p.name, p.err, n.l.Log(p.name), tail(n.l.Log(p.name), 10))
		}
	}
}

func (n *node) up(ctx context.Context) (string, error) {
	i, l := n.o.Instance, n.l
	if err := l.checkSocketPaths(); err != nil {
		return "", err
	}
	prev, _, err := LoadState(l)
	if err != nil {
		return "", err
	}
	// One instance index, one runner: two state dirs with the same index
	// would share the cgroup root, and the cleanup below would kill the
	// other one's pods. An abstract socket is the lock: it leaves no file
	// and dies with this process.
	lock, err := net.Listen("unix", "@"+i.Name())
	if err != nil {
		return "", fmt.Errorf("instance %d is already running from another state dir (%w); use another --instance", i.Index, err)
	}
	n.lock = lock
	if err := raiseInotifyLimit(n.logf); err != nil {
		return "", err
	}
	probe, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", i.APIPort))
	if err != nil {
		return "", fmt.Errorf("127.0.0.1:%d, the API forward port, is in use (%w); pass another --port", i.APIPort, err)
	}
	_ = probe.Close()
	// Whatever an unclean stop left (processes, mounts, the namespace)
	// goes first; the data stays.
	if err := Cleanup(i, l, prev.NetNSInode, true); err != nil {
		return "", fmt.Errorf("cleaning up the previous run: %w", err)
	}
	for _, d := range []string{l.PKIDir(), l.KubeconfigDir(), l.EtcDir(), l.CNIConfDir(), l.DataDir(), l.LogDir(), l.RunDir(), filepath.Dir(l.ForwardSocket("x")), l.IPAMDir(), l.PodLogs()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", err
		}
	}
	if err := n.writeFiles(); err != nil {
		return "", err
	}
	if err := EnsureCgroupRoot(i.CgroupRoot()); err != nil {
		return "", fmt.Errorf("creating cgroup %s: %w", i.CgroupRoot(), err)
	}
	if err := SetupNetNS(ctx, i, l); err != nil {
		return "", err
	}
	ino, err := netnsInode(l.NetNS())
	if err != nil {
		return "", err
	}
	if err := SaveState(l, State{Instance: i, NetNSInode: ino, Kubeconfig: n.o.Kubeconfig, HostPorts: n.o.HostPorts}); err != nil {
		return "", err
	}
	n.logf("network namespace %s: node IP %s on bridge %s, pods %s", l.NetNS(), i.NodeIP(), i.NodeBridge(), i.PodCIDR())

	comps := map[string]Component{}
	var order []string
	for _, c := range Components(i, l, n.o.BinDir) {
		comps[c.Name], order = c, append(order, c.Name)
	}
	startComp := func(name string) error {
		c := comps[name]
		return n.sup.start(c.Name, c.InNode, c.Path, c.Args...)
	}
	startForwards := func(fs []Forward) error {
		for _, f := range fs {
			if err := n.sup.start(f.Name, f.InNode, "socat", f.Args...); err != nil {
				return err
			}
		}
		return nil
	}

	if err := startComp("containerd"); err != nil {
		return "", err
	}
	if err := n.waitFor(ctx, "containerd", func(ctx context.Context) (bool, error) {
		_, err := n.ctr.run(ctx, "version")
		return err == nil, nil
	}); err != nil {
		return "", err
	}
	if err := n.importImages(ctx); err != nil {
		return "", err
	}
	for _, c := range []string{"etcd", "kube-apiserver"} {
		if err := startComp(c); err != nil {
			return "", err
		}
	}
	if err := startForwards(APIForward(i, l)); err != nil {
		return "", err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", n.o.Kubeconfig)
	if err != nil {
		return "", err
	}
	cfg.Timeout = 10 * time.Second
	if err := n.waitFor(ctx, "kube-apiserver (through 127.0.0.1:"+fmt.Sprint(i.APIPort)+")", func(ctx context.Context) (bool, error) {
		return apiReady(ctx, cfg), nil
	}); err != nil {
		return "", err
	}
	for _, c := range order {
		if c == "containerd" || c == "etcd" || c == "kube-apiserver" {
			continue
		}
		if err := startComp(c); err != nil {
			return "", err
		}
	}
	if err := startForwards(HostPortForwards(l, n.o.HostPorts)); err != nil {
		return "", err
	}

	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return "", err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return "", err
	}
	cl, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return "", err
	}
	coreDNSImage, err := ReadImageTarball(filepath.Join(n.o.NodeImagesDir, CoreDNSImageFile))
	if err != nil {
		return "", err
	}
	if err := n.waitFor(ctx, "CoreDNS and extra objects applied", func(ctx context.Context) (bool, error) {
		// The first attempts may race the API server's own bootstrap
		// (kube-system, priority classes); retry until they apply.
		return Ensure(ctx, cl, append(CoreDNSObjects(coreDNSImage.Tags[0]), n.o.Objects...)) == nil, nil
	}); err != nil {
		return "", err
	}
	if err := n.waitFor(ctx, "node "+i.NodeName()+" Ready", func(ctx context.Context) (bool, error) {
		var nd corev1.Node
		if cl.Get(ctx, client.ObjectKey{Name: i.NodeName()}, &nd) != nil {
			return false, nil //nolint:nilerr // not registered yet (or the API server busy): poll again
		}
		for _, c := range nd.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	}); err != nil {
		return "", err
	}
	if err := n.waitFor(ctx, "CoreDNS available", func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if cl.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "coredns"}, &d) != nil {
			return false, nil //nolint:nilerr // not created yet (or the API server busy): poll again
		}
		return d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas > 0 && d.Status.UpdatedReplicas == d.Status.Replicas, nil
	}); err != nil {
		return "", err
	}
	if err := n.waitFor(ctx, "default ServiceAccount", func(ctx context.Context) (bool, error) {
		return cl.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{}) == nil, nil
	}); err != nil {
		return "", err
	}
	return n.summary(), nil
}

// writeFiles writes the PKI (once), the kubeconfigs and the configuration
// files. Files are rewritten only when their content changes.
func (n *node) writeFiles() error {
	i, l := n.o.Instance, n.l
	pki, err := EnsurePKI(i, l.PKIDir(), timeNow())
	if err != nil {
		return err
	}
	admin, err := Kubeconfig(i, pki, "admin", i.AdminServer())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(n.o.Kubeconfig), 0o700); err != nil {
		return err
	}
	files := map[string][]byte{n.o.Kubeconfig: admin}
	for name, v := range componentKubeconfigs(i) {
		kc, err := Kubeconfig(i, pki, v[0], v[1])
		if err != nil {
			return err
		}
		files[l.ComponentKubeconfig(name)] = kc
	}
	pause, err := ReadImageTarball(filepath.Join(n.o.NodeImagesDir, PauseImageFile))
	if err != nil {
		return err
	}
	if files[l.ContainerdConfig()], err = ContainerdConfig(l, pause.Tags[0]); err != nil {
		return err
	}
	if files[l.KubeletConfig()], err = KubeletConfig(i, l); err != nil {
		return err
	}
	if files[l.KubeProxyConfig()], err = KubeProxyConfig(i, l); err != nil {
		return err
	}
	if files[filepath.Join(l.CNIConfDir(), "10-"+i.CNINetwork()+".conflist")], err = CNIConfig(i, l); err != nil {
		return err
	}
	files[l.ResolvConf()] = ResolvConf()
	for p, data := range files {
		if cur, err := os.ReadFile(p); err == nil && string(cur) == string(data) {
			continue
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (n *node) importImages(ctx context.Context) error {
	var tars []string
	for _, f := range NodeImageFiles {
		tars = append(tars, filepath.Join(n.o.NodeImagesDir, f))
	}
	for _, d := range n.o.ImageDirs {
		t, err := TarballsIn(d)
		if err != nil {
			return err
		}
		tars = append(tars, t...)
	}
	start := time.Now()
	res, err := n.ctr.ImportImages(ctx, tars)
	if err != nil {
		return err
	}
	var imported, kept []string
	for _, r := range res {
		name := strings.Join(r.Tarball.Tags, ",")
		if r.Imported {
			imported = append(imported, name)
		} else {
			kept = append(kept, name)
		}
	}
	n.logf("images: %d imported %v, %d already present %v (%.2fs)", len(imported), imported, len(kept), kept, time.Since(start).Seconds())
	return nil
}

// waitFor polls cond until it holds. A process that exits meanwhile fails
// the wait with its log's tail. This is a CLI's start, not a reconciler.
func (n *node) waitFor(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			n.logf("%s ready", what)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case p := <-n.sup.exited:
			exit := p.err
			if exit == nil {
				exit = errors.New("exit status 0")
			}
			return fmt.Errorf("%s exited (%w) while waiting for %s; its log (%s):\n%s", p.name, exit, what, n.l.Log(p.name), tail(n.l.Log(p.name), 15))
		case <-tick.C:
		}
	}
}

func apiReady(ctx context.Context, cfg *rest.Config) bool {
	rc, err := rest.UnversionedRESTClientFor(withCodec(cfg))
	if err != nil {
		return false
	}
	body, err := rc.Get().AbsPath("/readyz").DoRaw(ctx)
	return err == nil && string(body) == "ok"
}

func withCodec(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	return c
}

func (n *node) summary() string {
	i, l := n.o.Instance, n.l
	var b strings.Builder
	fmt.Fprintf(&b, "node %s Ready (Kubernetes, containerd, CoreDNS) in %.1fs\n", i.NodeName(), time.Since(n.start).Seconds())
	fmt.Fprintf(&b, "API server: %s (forwarded into the node's namespace %s)\n", i.AdminServer(), l.NetNS())
	fmt.Fprintf(&b, "node IP %s, pods %s, services %s, cluster DNS %s\n", i.NodeIP(), i.PodCIDR(), ServiceCIDR, DNSServiceIP)
	if len(n.o.HostPorts) > 0 {
		fmt.Fprintf(&b, "host ports forwarded into the node: %v (127.0.0.1 for hostNetwork pods, %s for pods)\n", n.o.HostPorts, i.NodeIP())
	}
	fmt.Fprintf(&b, "inside the node: nsenter --net=%s kubectl --kubeconfig %s ...\n", l.NetNS(), l.ComponentKubeconfig("admin-in-node"))
	for _, s := range n.steps {
		b.WriteString("  " + s + "\n")
	}
	return b.String()
}

// stop stops the node gracefully: the kubelet first (so it restarts
// nothing), then every pod through containerd, then the control plane and
// containerd, then the cleanup of mounts and namespace (data kept).
func (n *node) stop() {
	n.sup.stop(5*time.Second, "forward-host", "kube-proxy", "kubelet")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.ctr.removeAll(ctx); err != nil {
		n.logf("removing pods: %v", err)
	}
	n.sup.stop(10*time.Second, "kube-scheduler", "kube-controller-manager", "kube-apiserver", "forward-api", "etcd", "containerd")
	n.sup.stop(5*time.Second, n.sup.names()...)
	if err := Cleanup(n.o.Instance, n.l, 0, true); err != nil {
		n.logf("cleanup: %v", err)
	}
}

// removeAll kills and deletes every task and container, pods included; the
// kubelet recreates them on the next start.
func (c Ctr) removeAll(ctx context.Context) error {
	if _, err := os.Stat(c.Socket); err != nil {
		return nil //nolint:nilerr // no containerd socket: containerd never ran, nothing to remove
	}
	var errs []error
	for _, kind := range []string{"tasks", "containers"} {
		out, err := c.run(ctx, kind, "ls", "-q")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids := strings.Fields(string(out))
		if len(ids) == 0 {
			continue
		}
		args := []string{kind, "delete"}
		if kind == "tasks" {
			args = append(args, "--force")
		}
		if _, err := c.run(ctx, append(args, ids...)...); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
