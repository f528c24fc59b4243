package localnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The node lives in its own network namespace, bind-mounted on a file under
// the state dir. kube-apiserver refuses loopback endpoints for the
// `kubernetes` Service, and ClusterIPs dialled from the root namespace
// would leave through its default route; inside the namespace both work.
// The kernel has no dummy driver, so the node IP sits on an empty bridge,
// and the namespace's default route points into that bridge: there is no
// way out except the socat forwards.

// nodeSysctls are set inside the namespace (they are per namespace).
var nodeSysctls = map[string]string{
	"net/ipv4/ip_forward":                 "1",
	"net/ipv4/conf/all/route_localnet":    "1",
	"net/bridge/bridge-nf-call-iptables":  "1",
	"net/bridge/bridge-nf-call-ip6tables": "1",
}

// netnsMounted says whether p is a mount point of a namespace file.
func netnsMounted(p string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, m := range MountsUnder(string(data), p) {
		if m == p {
			return true
		}
	}
	return false
}

// run runs a command and returns its combined output in the error.
func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// inNode runs a command inside the node's namespace. nsenter, not
// `ip netns exec`, which remounts /sys and would hide the cgroup mounts.
func inNode(ctx context.Context, l Layout, name string, args ...string) error {
	return run(ctx, "nsenter", append([]string{"--net=" + l.NetNS(), name}, args...)...)
}

// SetupNetNS creates the namespace (or reuses it) and configures the node
// bridge, the node IP, the black-hole default route and the sysctls.
func SetupNetNS(ctx context.Context, i Instance, l Layout) error {
	ns := l.NetNS()
	if !netnsMounted(ns) {
		if err := os.MkdirAll(filepath.Dir(ns), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(ns, nil, 0o600); err != nil {
			return err
		}
		if err := run(ctx, "unshare", "--net="+ns, "true"); err != nil {
			return fmt.Errorf("creating the node's network namespace: %w", err)
		}
	}
	br := i.NodeBridge()
	steps := [][]string{
		{"ip", "link", "set", "lo", "up"},
	}
	if inNode(ctx, l, "ip", "link", "show", br) != nil {
		steps = append(steps, []string{"ip", "link", "add", br, "type", "bridge"})
	}
	steps = append(steps,
		[]string{"ip", "addr", "replace", i.NodeIP() + "/24", "dev", br},
		[]string{"ip", "link", "set", br, "up"},
		[]string{"ip", "route", "replace", "default", "dev", br},
	)
	for _, s := range steps {
		if err := inNode(ctx, l, s[0], s[1:]...); err != nil {
			return err
		}
	}
	return withNetNS(ns, func() error {
		for k, v := range nodeSysctls {
			if err := os.WriteFile("/proc/sys/"+k, []byte(v), 0o644); err != nil {
				return fmt.Errorf("sysctl %s in the node namespace: %w", k, err)
			}
		}
		return nil
	})
}

// withNetNS runs fn on an OS thread switched into the namespace at nsPath.
// Files opened under /proc/sys/net there belong to that namespace.
func withNetNS(nsPath string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		// The thread is never unlocked when switching back fails, so
		// the runtime throws it away with the goroutine.
		runtime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", syscall.Gettid()))
		if err != nil {
			errc <- err
			return
		}
		defer func() { _ = self.Close() }()
		target, err := os.Open(nsPath)
		if err != nil {
			errc <- err
			return
		}
		defer func() { _ = target.Close() }()
		if err := setns(int(target.Fd())); err != nil {
			errc <- fmt.Errorf("entering %s: %w", nsPath, err)
			return
		}
		ferr := fn()
		if err := setns(int(self.Fd())); err != nil {
			errc <- errors.Join(ferr, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

func setns(fd int) error { return unix.Setns(fd, unix.CLONE_NEWNET) }

// netnsInode identifies the namespace; processes still in it after `down`
// are found by it.
func netnsInode(p string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// RemoveNetNS unmounts and removes the namespace file. The namespace itself
// goes away with its last process.
func RemoveNetNS(l Layout) error {
	ns := l.NetNS()
	if netnsMounted(ns) {
		if err := syscall.Unmount(ns, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmounting %s: %w", ns, err)
		}
	}
	if err := os.Remove(ns); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
