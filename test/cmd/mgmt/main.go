// Command mgmt runs the local management cluster, in one of two sizes:
//
//   - apiserver (default): etcd and kube-apiserver on loopback with CAPI
//     core's CRDs, ours and the consumed APIs' CRDs. What the integration
//     tests use, kept running for people.
//
//   - node: a real single-node Kubernetes cluster (etcd, kube-apiserver,
//     kube-controller-manager, kube-scheduler, kubelet, kube-proxy,
//     containerd, bridge CNI, CoreDNS) inside its own network namespace,
//     with the API server forwarded to 127.0.0.1. Pods really run. Needs
//     root and Debian's containerd (see docs/local-cluster.md).
//
//     mgmt up     [--size apiserver|node] [--state-dir D] [--kubeconfig F] [--port N] ...
//     mgmt down   [--state-dir D] [--keep-data]   stop, leave no process (and for the node size no mount, namespace, cgroup) behind
//     mgmt status [--state-dir D]                 say whether it runs
//
// The data (etcd; for the node size also containerd's images and the
// kubelet's state) stays in the state dir between `up`s unless `down`
// removes it, so a warm start keeps the objects.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/localnode"
)

const usage = `Usage: mgmt <up|down|status> [flags]

  up      start the management cluster in the background and write a
          kubeconfig; returns once it is ready. --size apiserver (default):
          etcd and kube-apiserver with all CRDs. --size node: a real
          single-node cluster where pods run (root, make node-deps).
  down    stop it and remove the state (unless --keep-data)
  status  print whether it runs and where its kubeconfig is

Run "mgmt up -h" for the flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "up":
		err = up(args)
	case "down":
		err = down(args)
	case "status":
		err = status(args)
	case "serve": // the background process started by `up`
		err = serve(args)
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mgmt:", err)
		os.Exit(1)
	}
}

type config struct {
	size         string
	stateDir     string
	kubeconfig   string
	port         int
	portGiven    bool
	binDir       string
	upstreamCRDs string
	timeout      time.Duration
	keepData     bool
	verbose      bool

	// The node size's flags.
	instance   int
	images     string
	nodeImages string
	hostPorts  string
	crds       string
	cloudsYAML string
}

const (
	sizeAPIServer = "apiserver"
	sizeNode      = "node"
)

func parse(name string, args []string, withStart bool) (config, error) {
	var c config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&c.stateDir, "state-dir", "", "directory for the pid file, logs and data (default .mgmt, or .mgmt-<n> for --instance n>0)")
	if withStart {
		fs.StringVar(&c.size, "size", sizeAPIServer, "apiserver (etcd + kube-apiserver with all CRDs) or node (a real single-node cluster; root)")
		fs.StringVar(&c.kubeconfig, "kubeconfig", "", "where to write the admin kubeconfig (default <state-dir>/kubeconfig)")
		fs.IntVar(&c.port, "port", 0, "kube-apiserver port on 127.0.0.1 (apiserver size: 0 picks a free one; node size: 0 means 6443+instance, or the port of the last start)")
		fs.StringVar(&c.binDir, "bin-dir", "", "directory with kube-apiserver, etcd and kubectl, and for the node size the other Kubernetes binaries (default <repo>/bin)")
		fs.StringVar(&c.upstreamCRDs, "upstream-crds", "", `upstream CRDs of the consumed APIs ("none" to use the generated ones)`)
		fs.DurationVar(&c.timeout, "timeout", 0, "how long `up` waits (default 2m for the apiserver size, 5m for the node size)")
		fs.BoolVar(&c.verbose, "v", false, "attach the control plane's output to the log (apiserver size)")
		fs.IntVar(&c.instance, "instance", 0, "node size: instance index 0..255; each has its own subnets, port, cgroups and state dir, so two can run at once")
		fs.StringVar(&c.images, "images", "", `node size: import every *.tar image in this directory (default <repo>/out/images when it exists; "none" for none)`)
		fs.StringVar(&c.nodeImages, "node-images", "", "node size: directory with pause.tar and coredns.tar (default <repo>/bin/images; make node-images)")
		fs.StringVar(&c.hostPorts, "forward-host-ports", "default", `node size: host ports (127.0.0.1) reachable from inside the node: "default" (the local OpenStack's API ports), "none", or a list such as 5000,8774`)
		fs.StringVar(&c.crds, "crds", "none", "node size: CRDs to install: none, consumed (the APIs our providers consume; clusterctl installs the rest), or all (as the apiserver size)")
		fs.StringVar(&c.cloudsYAML, "clouds-yaml", "/etc/openstack/clouds.yaml", "node size: clouds.yaml whose loopback auth_url ports are forwarded by default")
	}
	if name == "down" {
		fs.BoolVar(&c.keepData, "keep-data", false, "keep the data (etcd; node size: also images and kubelet state) for a warm start")
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "port" {
			c.portGiven = true
		}
	})
	if withStart && c.size != sizeAPIServer && c.size != sizeNode {
		return c, fmt.Errorf("--size %q: want %s or %s", c.size, sizeAPIServer, sizeNode)
	}
	if c.stateDir == "" {
		c.stateDir = ".mgmt"
		if c.instance > 0 {
			c.stateDir = fmt.Sprintf(".mgmt-%d", c.instance)
		}
	}
	abs, err := filepath.Abs(c.stateDir)
	if err != nil {
		return c, err
	}
	c.stateDir = abs
	if withStart && c.kubeconfig == "" {
		c.kubeconfig = filepath.Join(c.stateDir, "kubeconfig")
	}
	if c.kubeconfig != "" {
		if c.kubeconfig, err = filepath.Abs(c.kubeconfig); err != nil {
			return c, err
		}
	}
	if withStart && c.timeout == 0 {
		c.timeout = 2 * time.Minute
		if c.size == sizeNode {
			c.timeout = 5 * time.Minute
		}
	}
	return c, nil
}

func (c config) pidFile() string   { return filepath.Join(c.stateDir, "mgmt.pid") }
func (c config) readyFile() string { return filepath.Join(c.stateDir, "ready") }
func (c config) logFile() string   { return filepath.Join(c.stateDir, "mgmt.log") }
func (c config) dataDir() string   { return filepath.Join(c.stateDir, "etcd") }

func (c config) serveArgs() []string {
	args := []string{"serve", "--size", c.size, "--state-dir", c.stateDir, "--kubeconfig", c.kubeconfig, "--port", strconv.Itoa(c.port),
		"--timeout", c.timeout.String()}
	if c.binDir != "" {
		args = append(args, "--bin-dir", c.binDir)
	}
	if c.upstreamCRDs != "" {
		args = append(args, "--upstream-crds", c.upstreamCRDs)
	}
	if c.verbose {
		args = append(args, "-v")
	}
	if c.size == sizeNode {
		args = append(args, "--instance", strconv.Itoa(c.instance), "--images", c.images, "--node-images", c.nodeImages,
			"--forward-host-ports", c.hostPorts, "--crds", c.crds, "--clouds-yaml", c.cloudsYAML)
		if !c.portGiven {
			// serve must know the port was not chosen, to reuse the
			// recorded one on a warm start.
			args = removeFlag(args, "--port")
		}
	}
	return args
}

// removeFlag drops "--name value" from args.
func removeFlag(args []string, name string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == name && i+1 < len(args) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// runningPID returns the pid of a live `serve` process, or 0.
func runningPID(c config) int {
	b, err := os.ReadFile(c.pidFile())
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	if !localnode.Alive(pid) {
		return 0
	}
	return pid
}

func up(args []string) error {
	c, err := parse("up", args, true)
	if err != nil {
		return err
	}
	if pid := runningPID(c); pid != 0 {
		fmt.Printf("already running (pid %d); kubeconfig: %s\n", pid, c.kubeconfig)
		return nil
	}
	if err := checkSize(c); err != nil {
		return err
	}
	if c.size == sizeNode {
		if c, err = resolveNodeDefaults(c); err != nil {
			return err
		}
		if err := localnode.CheckPrerequisites(c.binDir, c.nodeImages); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(c.stateDir, 0o700); err != nil {
		return err
	}
	_ = os.Remove(c.readyFile())
	logf, err := os.OpenFile(c.logFile(), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }()

	self, err := os.Executable()
	if err != nil {
		return err
	}
	start := time.Now()
	cmd := exec.Command(self, c.serveArgs()...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: every process of the plane inherits it, so
	// `down` can always reach them even if `serve` died uncleanly.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// serve bounds its own start by --timeout and stops cleanly when it
	// runs out; this deadline only catches a serve that hangs.
	deadline := time.After(c.timeout + time.Minute)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("the management cluster exited during start (%w); log: %s\n%s", err, c.logFile(), tail(c.logFile(), 30))
		case <-deadline:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			return fmt.Errorf("not ready after %s; log: %s\n%s", c.timeout, c.logFile(), tail(c.logFile(), 30))
		case <-tick.C:
			if _, err := os.Stat(c.readyFile()); err == nil {
				fmt.Printf("management cluster (%s size) up in %.1fs (pid %d)\n", c.size, time.Since(start).Seconds(), cmd.Process.Pid)
				ready, _ := os.ReadFile(c.readyFile())
				fmt.Print(string(ready))
				fmt.Printf("export KUBECONFIG=%s\n", c.kubeconfig)
				return nil
			}
		}
	}
}

// checkSize refuses to start one size on the other's state.
func checkSize(c config) error {
	isNode := localnode.IsNode(c.stateDir)
	_, err := os.Stat(c.dataDir())
	isAPIServer := err == nil && !isNode
	switch {
	case c.size == sizeNode && isAPIServer:
		return fmt.Errorf("%s holds an apiserver-size plane: run `mgmt down --state-dir %s` first, or use another --state-dir", c.stateDir, c.stateDir)
	case c.size == sizeAPIServer && isNode:
		return fmt.Errorf("%s holds a node-size cluster: pass --size node, or run `mgmt down --state-dir %s` first", c.stateDir, c.stateDir)
	}
	return nil
}

func serve(args []string) error {
	c, err := parse("serve", args, true)
	if err != nil {
		return err
	}
	// Stop on SIGTERM/SIGINT from `down`; ignore SIGHUP from a closing terminal.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	signal.Ignore(syscall.SIGHUP)
	if c.size == sizeNode {
		return serveNode(c, sig)
	}

	env, err := envtest.Start(envtest.Options{
		BinDir:        c.binDir,
		UpstreamCRDs:  c.upstreamCRDs,
		APIServerPort: c.port,
		DataDir:       c.dataDir(),
		AttachOutput:  c.verbose,
	})
	if err != nil {
		return err
	}
	defer func() {
		_ = os.Remove(c.readyFile())
		_ = os.Remove(c.pidFile())
	}()
	kc, err := env.KubeConfig()
	if err == nil {
		err = os.MkdirAll(filepath.Dir(c.kubeconfig), 0o700)
	}
	if err == nil {
		err = os.WriteFile(c.kubeconfig, kc, 0o600)
	}
	if err == nil {
		err = os.WriteFile(c.pidFile(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	}
	if err != nil {
		_ = env.Stop()
		return err
	}

	var summary strings.Builder
	fmt.Fprintf(&summary, "API server: %s\n", env.Config.Host)
	fmt.Fprintf(&summary, "CRDs: %d (CAPI core from %s", len(env.CRDs()), env.Paths.CAPICRDs)
	if env.Paths.UpstreamCRDs != "" {
		fmt.Fprintf(&summary, "; consumed APIs from upstream CRDs in %s where present", env.Paths.UpstreamCRDs)
	}
	summary.WriteString(")\n")
	fmt.Print(summary.String())
	if err := os.WriteFile(c.readyFile(), []byte(summary.String()), 0o600); err != nil {
		_ = env.Stop()
		return err
	}

	s := <-sig
	fmt.Printf("received %s, stopping\n", s)
	return env.Stop()
}

func down(args []string) error {
	c, err := parse("down", args, false)
	if err != nil {
		return err
	}
	node := localnode.IsNode(c.stateDir)
	// The node size stops its pods and containerd gracefully; that takes
	// longer than stopping an API server.
	grace := 30 * time.Second
	if node {
		grace = 90 * time.Second
	}
	pid := runningPID(c)
	if pid != 0 {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		if !waitGone(pid, grace) {
			fmt.Fprintf(os.Stderr, "pid %d did not stop in %s; killing its process group\n", pid, grace)
		}
		// Whatever is left of the group (etcd, kube-apiserver after an
		// unclean exit) goes too.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		waitGone(pid, 5*time.Second)
		fmt.Printf("stopped (pid %d)\n", pid)
	} else {
		fmt.Println("not running")
	}
	_ = os.Remove(c.pidFile())
	_ = os.Remove(c.readyFile())
	if node {
		return downNode(c)
	}
	if !c.keepData {
		if err := os.RemoveAll(c.stateDir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func status(args []string) error {
	c, err := parse("status", args, false)
	if err != nil {
		return err
	}
	pid := runningPID(c)
	if pid == 0 {
		fmt.Println("not running")
		return nil
	}
	ready, _ := os.ReadFile(c.readyFile())
	fmt.Printf("running (pid %d)\n%s", pid, ready)
	if localnode.IsNode(c.stateDir) {
		fmt.Print(nodeStatus(c))
	}
	return nil
}

// waitGone polls until pid no longer exists; this is a CLI, not a reconciler.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !localnode.Alive(pid) {
			return true
		}
		// Reap it if it is our child (it is not for `down`, but cheap).
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		time.Sleep(100 * time.Millisecond)
	}
	return !localnode.Alive(pid)
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
