// Command mgmt runs the local management plane: etcd and kube-apiserver on
// loopback with CAPI core's CRDs, ours and the consumed APIs' CRDs, built
// from the Go module proxy (see the Makefile). It is what the integration
// tests use, kept running for people and for e2e work.
//
//	mgmt up     [--state-dir D] [--kubeconfig F] [--port N]   start in the background, wait until ready
//	mgmt down   [--state-dir D] [--keep-data]                   stop, leave no process behind
//	mgmt status [--state-dir D]                                 say whether it runs
//
// etcd's data stays in <state-dir>/etcd between `up`s unless `down` removes
// it, so a warm start keeps the objects.
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
)

const usage = `Usage: mgmt <up|down|status> [flags]

  up      start etcd and kube-apiserver in the background with all CRDs and
          write a kubeconfig; returns once the API server is ready
  down    stop them and remove the state (unless --keep-data)
  status  print whether the plane runs and where its kubeconfig is
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
	stateDir     string
	kubeconfig   string
	port         int
	binDir       string
	upstreamCRDs string
	timeout      time.Duration
	keepData     bool
	verbose      bool
}

func parse(name string, args []string, withStart bool) (config, error) {
	var c config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&c.stateDir, "state-dir", ".mgmt", "directory for the pid file, logs and etcd data")
	if withStart {
		fs.StringVar(&c.kubeconfig, "kubeconfig", "", "where to write the admin kubeconfig (default <state-dir>/kubeconfig)")
		fs.IntVar(&c.port, "port", 0, "kube-apiserver secure port on 127.0.0.1 (0 picks a free one)")
		fs.StringVar(&c.binDir, "bin-dir", "", "directory with kube-apiserver, etcd and kubectl (default <repo>/bin)")
		fs.StringVar(&c.upstreamCRDs, "upstream-crds", "", `upstream CRDs of the consumed APIs ("none" to use the generated ones)`)
		fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "how long `up` waits for the API server")
		fs.BoolVar(&c.verbose, "v", false, "attach the control plane's output to the log")
	}
	if name == "down" {
		fs.BoolVar(&c.keepData, "keep-data", false, "keep etcd's data for a warm start")
	}
	if err := fs.Parse(args); err != nil {
		return c, err
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
	return c, nil
}

func (c config) pidFile() string   { return filepath.Join(c.stateDir, "mgmt.pid") }
func (c config) readyFile() string { return filepath.Join(c.stateDir, "ready") }
func (c config) logFile() string   { return filepath.Join(c.stateDir, "mgmt.log") }
func (c config) dataDir() string   { return filepath.Join(c.stateDir, "etcd") }

func (c config) serveArgs() []string {
	args := []string{"serve", "--state-dir", c.stateDir, "--kubeconfig", c.kubeconfig, "--port", strconv.Itoa(c.port)}
	if c.binDir != "" {
		args = append(args, "--bin-dir", c.binDir)
	}
	if c.upstreamCRDs != "" {
		args = append(args, "--upstream-crds", c.upstreamCRDs)
	}
	if c.verbose {
		args = append(args, "-v")
	}
	return args
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
	if syscall.Kill(pid, 0) != nil {
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
	// Its own process group: etcd and kube-apiserver inherit it, so `down`
	// can always reach every process even if `serve` died uncleanly.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.After(c.timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("the management plane exited during start (%w); log: %s\n%s", err, c.logFile(), tail(c.logFile(), 20))
		case <-deadline:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			return fmt.Errorf("not ready after %s; log: %s\n%s", c.timeout, c.logFile(), tail(c.logFile(), 20))
		case <-tick.C:
			if _, err := os.Stat(c.readyFile()); err == nil {
				fmt.Printf("management plane up in %.1fs (pid %d)\n", time.Since(start).Seconds(), cmd.Process.Pid)
				ready, _ := os.ReadFile(c.readyFile())
				fmt.Print(string(ready))
				fmt.Printf("export KUBECONFIG=%s\n", c.kubeconfig)
				return nil
			}
		}
	}
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
	pid := runningPID(c)
	if pid != 0 {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		if !waitGone(pid, 30*time.Second) {
			fmt.Fprintf(os.Stderr, "pid %d did not stop in 30s; killing its process group\n", pid)
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
	return nil
}

// waitGone polls until pid no longer exists; this is a CLI, not a reconciler.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		// Reap it if it is our child (it is not for `down`, but cheap).
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		time.Sleep(100 * time.Millisecond)
	}
	return syscall.Kill(pid, 0) != nil
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
