package envtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
)

// RestartAPIServer kills the kube-apiserver process with SIGKILL, waits
// down, and starts it again with the same command line and environment
// (the same port, certificates and etcd), then waits until it is ready: a
// real restart, as a crashed or upgraded API server does, not an outage
// played at a proxy. Stop stops the new process.
func (e *Environment) RestartAPIServer(ctx context.Context, down time.Duration) error {
	u, err := url.Parse(e.Config.Host)
	if err != nil {
		return err
	}
	pid, args, environ, err := findAPIServer(u.Port())
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing kube-apiserver (pid %d): %w", pid, err)
	}
	for deadline := time.Now().Add(30 * time.Second); processAlive(pid); {
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver (pid %d) did not exit after SIGKILL", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	e.restarted = append(e.restarted, cmd)
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	var last error
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var body []byte
		if body, last = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); last == nil && bytes.Equal(body, []byte("ok")) {
			return nil
		}
	}
	return fmt.Errorf("kube-apiserver not ready 90 s after its restart: %w", last)
}

// stopRestarted stops the API servers RestartAPIServer started.
func (e *Environment) stopRestarted() error {
	var errs []error
	for _, cmd := range e.restarted {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		// A server stopped by SIGTERM exits with the signal as its status.
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			errs = append(errs, fmt.Errorf("kube-apiserver (pid %d) did not stop on SIGTERM", cmd.Process.Pid))
		}
	}
	e.restarted = nil
	return errors.Join(errs...)
}

// findAPIServer finds the kube-apiserver process serving port, and its
// command line and environment.
func findAPIServer(port string) (int, []string, []string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, nil, nil, err
	}
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
		if filepath.Base(args[0]) != "kube-apiserver" || !servesPort(args, port) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil {
			return 0, nil, nil, err
		}
		return pid, args, strings.Split(strings.TrimSuffix(string(env), "\x00"), "\x00"), nil
	}
	return 0, nil, nil, fmt.Errorf("no kube-apiserver process serves port %s", port)
}

func servesPort(args []string, port string) bool {
	for i, a := range args {
		if a == "--secure-port="+port || (a == "--secure-port" && i+1 < len(args) && args[i+1] == port) {
			return true
		}
	}
	return false
}

func processAlive(pid int) bool {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// A killed child that its parent has not reaped yet is a zombie (Z).
	s := string(raw)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
