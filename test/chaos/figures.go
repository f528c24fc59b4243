package chaos

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Spread is "median (max max)" of ds, each rounded to 100 ms, or "-"
// without any: how the storms report their times to converge.
func Spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("%s median (max %s)", s[len(s)/2].Round(100*time.Millisecond), s[len(s)-1].Round(100*time.Millisecond))
}

// LoadAverage is the first three fields of /proc/loadavg, or "unknown":
// other work on the machine skews the wall times, so the logs say how busy
// it was.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Tail is the last n lines of the file at path (a manager's log), or ""
// when it cannot be read.
func Tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
