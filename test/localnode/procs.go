package localnode

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ownBinaries are the programs an instance runs; a process of one of them
// whose command line names the state dir is the instance's.
var ownBinaries = map[string]bool{
	"containerd": true, "containerd-shim-runc-v2": true, "runc": true, "socat": true, "nsenter": true,
	"etcd": true, "kube-apiserver": true, "kube-controller-manager": true, "kube-scheduler": true,
	"kubelet": true, "kube-proxy": true,
}

// IsInstanceProcess says whether a command line belongs to the instance in
// stateDir: one of its programs (containerd's shims name the containerd
// socket, the components their config files), or the `serve` process of
// the mgmt command. A shell or editor that merely names the directory is
// not the instance's.
func IsInstanceProcess(argv []string, stateDir string) bool {
	if len(argv) == 0 || stateDir == "" {
		return false
	}
	names := false
	for _, a := range argv[1:] {
		if a == stateDir || strings.Contains(a, stateDir+"/") {
			names = true
			break
		}
	}
	if !names {
		return false
	}
	if ownBinaries[filepath.Base(argv[0])] {
		return true
	}
	return len(argv) > 1 && argv[1] == "serve"
}

func readCmdline(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

func netnsOf(pid int) uint64 {
	l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return 0
	}
	// "net:[4026532290]"
	l = strings.TrimSuffix(strings.TrimPrefix(l, "net:["), "]")
	n, _ := strconv.ParseUint(l, 10, 64)
	return n
}

// InstanceProcesses finds every live process of the instance: by command
// line, by network namespace (pods and anything started inside the node)
// and by cgroup (the pods' processes). The calling process and its parent
// are never included.
func InstanceProcesses(stateDir string, nsInode uint64, cgroupRoot string) []int {
	self, parent := os.Getpid(), os.Getppid()
	found := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid == parent {
			continue
		}
		if IsInstanceProcess(readCmdline(pid), stateDir) || (nsInode != 0 && netnsOf(pid) == nsInode) {
			found[pid] = true
		}
	}
	if cgroupRoot != "" {
		for _, pid := range CgroupPIDs(cgroupRoot) {
			if pid != self && pid != parent {
				found[pid] = true
			}
		}
	}
	out := make([]int, 0, len(found))
	for pid := range found {
		if alive(pid) {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out
}

// Alive is true for a process that exists and is not a zombie: a `serve`
// killed while nobody reaps it stays a zombie, and is not running.
func Alive(pid int) bool { return alive(pid) }

// alive is true for a process that exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// killAll sends SIGKILL to each pid and waits (bounded) until they are gone.
func killAll(pids []int, wait time.Duration) []int {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	deadline := time.Now().Add(wait)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// describe names processes for messages: "1234 (kubelet)".
func describe(pids []int) string {
	parts := make([]string, 0, len(pids))
	for _, p := range pids {
		name := "?"
		if c := readCmdline(p); len(c) > 0 {
			name = filepath.Base(c[0])
		}
		parts = append(parts, strconv.Itoa(p)+" ("+name+")")
	}
	return strings.Join(parts, ", ")
}
