package localnode

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// State is what an instance records in its state dir (node.json).
type State struct {
	Instance Instance `json:"instance"`
	// NetNSInode identifies the node's namespace of the last start, so a
	// `down` after a crash still finds processes left in it.
	NetNSInode uint64 `json:"netnsInode,omitempty"`
	// Kubeconfig is where the admin kubeconfig was written.
	Kubeconfig string `json:"kubeconfig"`
	// HostPorts are the forwarded host ports of the last start.
	HostPorts []int `json:"hostPorts,omitempty"`
}

// IsNode says whether stateDir holds a node-size instance.
func IsNode(stateDir string) bool {
	_, err := os.Stat(Layout{Dir: stateDir}.StateFile())
	return err == nil
}

// LoadState reads node.json; a missing file gives ok=false.
func LoadState(l Layout) (s State, ok bool, err error) {
	data, err := os.ReadFile(l.StateFile())
	if errors.Is(err, os.ErrNotExist) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return State{}, false, fmt.Errorf("%s: %w", l.StateFile(), err)
	}
	return s, true, nil
}

// SaveState writes node.json.
func SaveState(l Layout, s State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(l.StateFile(), append(data, '\n'), 0o600)
}

// ReconcileInstance decides the instance of an `up`: the recorded one on a
// warm start (its PKI names its node IP), the requested one otherwise. A
// different index than the recorded one is refused; a different API port
// is allowed (only the admin kubeconfig changes).
func ReconcileInstance(requested Instance, portGiven bool, recorded State, hasRecord bool) (Instance, error) {
	if !hasRecord {
		return requested, nil
	}
	if requested.Index != recorded.Instance.Index {
		return Instance{}, fmt.Errorf("this state dir holds instance %d, not %d: run `mgmt down` on it first, or use another --state-dir",
			recorded.Instance.Index, requested.Index)
	}
	if !portGiven {
		return recorded.Instance, nil
	}
	return requested, nil
}

// cniCacheDir is libcni's cache; containerd 1.6 offers no way to move it.
const cniCacheDir = "/var/lib/cni/results"

// containerLogLinks is where the kubelet links every container's log
// (hard-wired, unlike podLogsDir).
const containerLogLinks = "/var/log/containers"

// cniCacheEntries lists libcni's cache files of the instance: those of its
// bridge network (named after it), and those of containerd's own
// "cni-loopback" network (shared by every containerd on the host) whose
// recorded sandbox lies under the state dir. A forced stop skips CNI DEL,
// which would have removed them.
func cniCacheEntries(i Instance, l Layout) []string {
	return cniCacheEntriesIn(cniCacheDir, i.CNINetwork(), l.Dir)
}

func cniCacheEntriesIn(cacheDir, network, stateDir string) []string {
	entries, err := os.ReadDir(cacheDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(cacheDir, e.Name())
		if strings.HasPrefix(e.Name(), network+"-") {
			out = append(out, p)
			continue
		}
		if data, err := os.ReadFile(p); err == nil && cniCacheSandboxUnder(data, stateDir) {
			out = append(out, p)
		}
	}
	return out
}

// cniCacheSandboxUnder says whether a libcni cache entry's result names an
// interface whose sandbox (the pod's network namespace, which containerd
// keeps under its state dir with netns_mounts_under_state_dir) is under dir.
func cniCacheSandboxUnder(entry []byte, dir string) bool {
	var c struct {
		Result struct {
			Interfaces []struct {
				Sandbox string `json:"sandbox"`
			} `json:"interfaces"`
		} `json:"result"`
	}
	if json.Unmarshal(entry, &c) != nil {
		return false
	}
	for _, itf := range c.Result.Interfaces {
		if strings.HasPrefix(itf.Sandbox, dir+"/") {
			return true
		}
	}
	return false
}

// shimSocketDir is where containerd 1.6's runc shims put their sockets,
// whatever containerd's state dir (hard-wired).
const shimSocketDir = "/run/containerd/s"

// ShimSocket is the socket path containerd 1.6 gives the shim of a task:
// /run/containerd/s/<sha256(containerd's address/namespace/id)>. A shim
// that is killed rather than shut down leaves it.
func ShimSocket(containerdSocket, namespace, id string) string {
	sum := sha256.Sum256([]byte(filepath.Join(containerdSocket, namespace, id)))
	return filepath.Join(shimSocketDir, hex.EncodeToString(sum[:]))
}

// shimSockets lists the shim sockets of the tasks whose bundles are in
// containerd's state dir and that are still there.
func shimSockets(l Layout) []string {
	const ns = "k8s.io"
	entries, err := os.ReadDir(filepath.Join(l.ContainerdState(), "io.containerd.runtime.v2.task", ns))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		s := ShimSocket(l.ContainerdSocket(), ns, e.Name())
		if _, err := os.Lstat(s); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// containerLogLinksInto lists the kubelet's links that point into dir.
func containerLogLinksInto(dir string) []string {
	entries, err := os.ReadDir(containerLogLinks)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(containerLogLinks, e.Name())
		if t, err := os.Readlink(p); err == nil && strings.HasPrefix(t, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// Cleanup removes whatever a previous run of the instance left: processes
// (components, forwards, shims, pods), mounts under the state dir, the
// namespace, the cgroup tree, libcni's cache entries, the kubelet's log
// links, killed shims' sockets and run/. Without keepData it removes the
// state dir too. It is idempotent, and it is what `down` runs after the
// graceful stop, and what `up` runs before starting.
func Cleanup(i Instance, l Layout, nsInode uint64, keepData bool) error {
	var errs []error
	if ino, err := netnsInode(l.NetNS()); err == nil && netnsMounted(l.NetNS()) {
		nsInode = ino
	}
	if left := killAll(InstanceProcesses(l.Dir, nsInode, i.CgroupRoot()), 10*time.Second); len(left) > 0 {
		errs = append(errs, fmt.Errorf("processes did not exit after SIGKILL: %s", describe(left)))
	}
	for _, f := range unmountAll(l.Dir) {
		errs = append(errs, errors.New("unmount "+f))
	}
	if err := RemoveNetNS(l); err != nil {
		errs = append(errs, err)
	}
	// A killed process leaves its cgroup a moment after it is reaped.
	var cgErr error
	for try := 0; try < 50; try++ {
		if cgErr = RemoveCgroupRoot(i.CgroupRoot()); cgErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cgErr != nil {
		errs = append(errs, cgErr)
	}
	// The shims' sockets are found from the task bundles under run/,
	// which goes below.
	files := append(cniCacheEntries(i, l), containerLogLinksInto(l.Dir)...)
	for _, f := range append(files, shimSockets(l)...) {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if err := os.RemoveAll(l.RunDir()); err != nil {
			errs = append(errs, err)
		}
		if !keepData {
			if err := os.RemoveAll(l.Dir); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Leftovers lists what of the instance is still there: after `down` the
// list must be empty (with keepData, the state dir itself is expected).
func Leftovers(i Instance, l Layout, nsInode uint64, keepData bool) []string {
	var out []string
	if pids := InstanceProcesses(l.Dir, nsInode, i.CgroupRoot()); len(pids) > 0 {
		out = append(out, "processes: "+describe(pids))
	}
	if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		if m := MountsUnder(string(data), l.Dir); len(m) > 0 {
			out = append(out, "mounts: "+strings.Join(m, ", "))
		}
	}
	if _, err := os.Stat(l.NetNS()); err == nil {
		out = append(out, "network namespace file "+l.NetNS())
	}
	if d := CgroupDirs(i.CgroupRoot()); len(d) > 0 {
		out = append(out, "cgroups: "+strings.Join(d, ", "))
	}
	if c := cniCacheEntries(i, l); len(c) > 0 {
		out = append(out, "CNI cache entries: "+strings.Join(c, ", "))
	}
	if c := containerLogLinksInto(l.Dir); len(c) > 0 {
		out = append(out, "container log links: "+strings.Join(c, ", "))
	}
	if s := shimSockets(l); len(s) > 0 {
		out = append(out, "containerd shim sockets: "+strings.Join(s, ", "))
	}
	if !keepData {
		if _, err := os.Stat(l.Dir); err == nil {
			out = append(out, "state dir "+l.Dir)
		}
	}
	return out
}

// timeNow is replaced by tests that need fixed certificates.
var timeNow = time.Now
