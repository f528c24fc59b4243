package localnode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrNotRoot is returned when the node size is started without root.
var ErrNotRoot = errors.New("the node size needs root to run containerd and create a network namespace (run as root, or use --size apiserver)")

// DebianPackages are what the node size runs besides the binaries built
// into bin/: `make node-deps` installs exactly these.
var DebianPackages = []string{"containerd", "runc", "containernetworking-plugins", "socat", "iptables", "conntrack", "iproute2", "util-linux"}

// requirement is a command or file and the Debian package that ships it.
type requirement struct {
	command string // looked up in PATH
	file    string // an absolute path
	pkg     string
}

var requirements = []requirement{
	{command: "containerd", pkg: "containerd"},
	{command: "containerd-shim-runc-v2", pkg: "containerd"},
	{command: "ctr", pkg: "containerd"},
	{command: "runc", pkg: "runc"},
	{file: filepath.Join(CNIBinDir, "bridge"), pkg: "containernetworking-plugins"},
	{file: filepath.Join(CNIBinDir, "host-local"), pkg: "containernetworking-plugins"},
	{file: filepath.Join(CNIBinDir, "loopback"), pkg: "containernetworking-plugins"},
	{file: filepath.Join(CNIBinDir, "portmap"), pkg: "containernetworking-plugins"},
	{command: "socat", pkg: "socat"},
	{command: "iptables", pkg: "iptables"},
	{command: "conntrack", pkg: "conntrack"},
	{command: "ip", pkg: "iproute2"},
	{command: "nsenter", pkg: "util-linux"},
	{command: "unshare", pkg: "util-linux"},
}

// MissingPackages lists the Debian packages whose commands or files are
// missing, each with what is missing, sorted.
func MissingPackages(lookPath func(string) (string, error), exists func(string) bool) []string {
	missing := map[string][]string{}
	for _, r := range requirements {
		switch {
		case r.command != "":
			if _, err := lookPath(r.command); err != nil {
				missing[r.pkg] = append(missing[r.pkg], r.command)
			}
		case !exists(r.file):
			missing[r.pkg] = append(missing[r.pkg], r.file)
		}
	}
	out := make([]string, 0, len(missing))
	for pkg, what := range missing {
		out = append(out, fmt.Sprintf("%s (%s)", pkg, strings.Join(what, ", ")))
	}
	sort.Strings(out)
	return out
}

// NodeBinaries are the binaries of bin/ the node size runs.
var NodeBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kubectl"}

// CheckPrerequisites says, in one error, everything that is missing to run
// the node size: root, Debian packages, binaries, node images.
func CheckPrerequisites(binDir, nodeImagesDir string) error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	var problems []string
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	if pkgs := MissingPackages(exec.LookPath, exists); len(pkgs) > 0 {
		problems = append(problems, "missing Debian packages: "+strings.Join(pkgs, "; ")+"; `make node-deps` installs them (as root)")
	}
	var bins []string
	for _, b := range NodeBinaries {
		if !exists(filepath.Join(binDir, b)) {
			bins = append(bins, b)
		}
	}
	if len(bins) > 0 {
		problems = append(problems, fmt.Sprintf("missing in %s: %s; `make %s` builds them (about 5 minutes the first time)",
			binDir, strings.Join(bins, ", "), "node-tools"))
	}
	var imgs []string
	for _, f := range NodeImageFiles {
		if !exists(filepath.Join(nodeImagesDir, f)) {
			imgs = append(imgs, f)
		}
	}
	if len(imgs) > 0 {
		problems = append(problems, fmt.Sprintf("missing node images in %s: %s; `make node-images` builds them",
			nodeImagesDir, strings.Join(imgs, ", ")))
	}
	if len(problems) > 0 {
		return errors.New("the node size cannot start:\n  - " + strings.Join(problems, "\n  - "))
	}
	return nil
}

// inotifyInstancesPerNode is about what one node uses (kubelet, kube-proxy,
// containerd, CoreDNS, the pods' managers), measured at ~25; the kernel's
// default limit of 128 per user lets only four nodes run at once, and the
// fifth one's kube-proxy dies with "too many open files".
const inotifyInstancesPerNode = 64

// raiseInotifyLimit makes room for this node on the host's per-user inotify
// limit. It only ever raises it: it is host-wide and others may rely on it.
func raiseInotifyLimit(logf func(string, ...any)) error {
	const path = "/proc/sys/fs/inotify/max_user_instances"
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	cur, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("parsing %s (%q): %w", path, b, err)
	}
	want := wantedInotifyInstances(cur)
	if want == cur {
		return nil
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(want)), 0o644); err != nil {
		return fmt.Errorf("raising %s from %d to %d (several nodes need more than the default): %w", path, cur, want, err)
	}
	logf("raised %s from %d to %d", path, cur, want)
	return nil
}

// wantedInotifyInstances is the limit raiseInotifyLimit sets: enough for
// eight nodes at once.
func wantedInotifyInstances(cur int) int {
	return max(cur, 8*inotifyInstancesPerNode)
}
