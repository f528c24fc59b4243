package localnode

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// cgroupMount is where the cgroup hierarchies are mounted. This machine is
// cgroup v1 (hybrid): one directory per controller, plus name=systemd and
// the unified v2 tree, in each of which runc creates the pods' cgroups.
const cgroupMount = "/sys/fs/cgroup"

// cgroupHierarchies lists the hierarchy directories under cgroupMount.
func cgroupHierarchies() []string {
	entries, err := os.ReadDir(cgroupMount)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		// Combined mounts (cpu,cpuacct) appear as a directory plus
		// symlinks to it; the directory is enough.
		if e.IsDir() {
			out = append(out, filepath.Join(cgroupMount, e.Name()))
		}
	}
	return out
}

// EnsureCgroupRoot creates the kubelet's cgroupRoot in every hierarchy
// (the kubelet refuses a cgroupRoot that does not exist). A new cpuset
// cgroup starts with no CPUs and memory nodes; it gets its parent's.
func EnsureCgroupRoot(root string) error {
	for _, h := range cgroupHierarchies() {
		d := filepath.Join(h, root)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if filepath.Base(h) == "cpuset" {
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				cur, _ := os.ReadFile(filepath.Join(d, f))
				if strings.TrimSpace(string(cur)) != "" {
					continue
				}
				parent, err := os.ReadFile(filepath.Join(h, f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(d, f), parent, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// cgroupTree lists dir and every cgroup below it, deepest first.
func cgroupTree(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// CgroupPIDs returns the processes in the cgroup root, in any hierarchy.
func CgroupPIDs(root string) []int {
	seen := map[int]bool{}
	var out []int
	for _, h := range cgroupHierarchies() {
		for _, d := range cgroupTree(filepath.Join(h, root)) {
			data, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					out = append(out, pid)
				}
			}
		}
	}
	sort.Ints(out)
	return out
}

// CgroupDirs returns the cgroup root's directories that exist.
func CgroupDirs(root string) []string {
	var out []string
	for _, h := range cgroupHierarchies() {
		d := filepath.Join(h, root)
		if _, err := os.Stat(d); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// RemoveCgroupRoot removes the cgroup root's tree in every hierarchy; its
// processes must be gone (rmdir of a cgroup with tasks fails with EBUSY).
func RemoveCgroupRoot(root string) error {
	var errs []error
	for _, d := range CgroupDirs(root) {
		for _, c := range cgroupTree(d) {
			if err := syscall.Rmdir(c); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, &os.PathError{Op: "rmdir", Path: c, Err: err})
			}
		}
	}
	return errors.Join(errs...)
}
