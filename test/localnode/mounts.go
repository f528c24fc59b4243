package localnode

import (
	"errors"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// MountsUnder returns the mount points in mountinfo (the format of
// /proc/self/mountinfo) that are dir or below it, deepest first so that
// they can be unmounted in order. Mount points are unescaped (\040 is a
// space).
func MountsUnder(mountinfo, dir string) []string {
	dir = strings.TrimSuffix(dir, "/")
	var out []string
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMountPath(f[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	// Deeper (longer) paths first; a path mounted twice appears twice and
	// is unmounted twice.
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// unescapeMountPath undoes mountinfo's octal escapes (\040, \011, \012, \134).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountAll detaches every mount under dir. Lazy unmounts succeed even
// while a dying process still holds a file open.
func unmountAll(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return []string{err.Error()}
	}
	var failed []string
	for _, m := range MountsUnder(string(data), dir) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			failed = append(failed, m+": "+err.Error())
		}
	}
	return failed
}
