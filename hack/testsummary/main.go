// Command testsummary reads `go test -json` on stdin and prints a readable
// report: one line per test and subtest that passed (so the log shows what
// ran, e.g. each consumed kind's round trip through the real API server),
// every skipped test with its reason (nothing is skipped silently), and the
// full output of every failure. It exits non-zero when anything failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type key struct{ pkg, test string }

func main() {
	failed, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) (bool, error) {
	outputs := map[key]*strings.Builder{}
	// Tests that started and have not ended: when go test kills a package
	// (its -timeout, a panic in another goroutine), they get no pass or fail
	// event of their own, and the panic that names them lands in their output.
	running := map[key]bool{}
	var (
		passed, skipped, failedTests int
		failed                       bool
		pkgs                         = map[string]string{}
		pkgElapsed                   = map[string]float64{}
		skips                        []string
		failures                     []string
	)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			// Build errors and other non-JSON lines: show them as they are.
			fmt.Fprintln(out, string(line))
			if strings.Contains(string(line), "FAIL") || strings.HasPrefix(string(line), "#") {
				failed = true
			}
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "run":
			running[k] = true
		case "output":
			b := outputs[k]
			if b == nil {
				b = &strings.Builder{}
				outputs[k] = b
			}
			b.WriteString(e.Output)
		case "pass":
			delete(running, k)
			if e.Test == "" {
				pkgs[e.Package], pkgElapsed[e.Package] = "ok", e.Elapsed
				continue
			}
			passed++
			fmt.Fprintf(out, "PASS  %-60s %s (%.2fs)\n", short(e.Package), e.Test, e.Elapsed)
			delete(outputs, k)
		case "skip":
			delete(running, k)
			if e.Test == "" {
				pkgs[e.Package] = "no tests"
				continue
			}
			skipped++
			reason := lastLines(outputs[k], 2)
			skips = append(skips, fmt.Sprintf("%s %s: %s", short(e.Package), e.Test, reason))
			fmt.Fprintf(out, "SKIP  %-60s %s: %s\n", short(e.Package), e.Test, reason)
		case "fail":
			failed = true
			delete(running, k)
			if e.Test == "" {
				pkgs[e.Package], pkgElapsed[e.Package] = "FAIL", e.Elapsed
				failedTests += unfinished(out, running, outputs, e.Package)
				if b := outputs[k]; b != nil {
					fmt.Fprintf(out, "----- output of package %s -----\n%s", e.Package, b.String())
				}
				continue
			}
			failedTests++
			failures = append(failures, fmt.Sprintf("%s %s: %s", short(e.Package), e.Test, failureExcerpt(outputs[k])))
			fmt.Fprintf(out, "FAIL  %-60s %s (%.2fs)\n", short(e.Package), e.Test, e.Elapsed)
			if b := outputs[k]; b != nil {
				fmt.Fprintf(out, "----- output of %s -----\n%s-----\n", e.Test, b.String())
			}
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	if n := unfinished(out, running, outputs, ""); n > 0 {
		failed, failedTests = true, failedTests+n
	}

	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	fmt.Fprintln(out, "\nPackages:")
	for _, p := range names {
		if pkgs[p] == "no tests" {
			continue
		}
		fmt.Fprintf(out, "  %-4s %-70s %6.1fs\n", pkgs[p], p, pkgElapsed[p])
	}
	fmt.Fprintf(out, "\n%d passed, %d failed, %d skipped\n", passed, failedTests, skipped)
	for _, s := range skips {
		fmt.Fprintln(out, "  skipped:", s)
	}
	// The failures again, last: CI shows only the tail of a long log, and
	// the full output of each failure is further up.
	for _, f := range failures {
		fmt.Fprintln(out, "  failed:", f)
	}
	return failed, nil
}

// unfinished reports, as failures with their output, the tests of pkg (of
// every package when pkg is empty) that started and never ended, and forgets
// them. It returns how many there were.
func unfinished(out io.Writer, running map[key]bool, outputs map[key]*strings.Builder, pkg string) int {
	var ks []key
	for k := range running {
		if pkg == "" || k.pkg == pkg {
			ks = append(ks, k)
		}
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].pkg != ks[j].pkg {
			return ks[i].pkg < ks[j].pkg
		}
		return ks[i].test < ks[j].test
	})
	for _, k := range ks {
		delete(running, k)
		fmt.Fprintf(out, "FAIL  %-60s %s (did not finish: the package was stopped)\n", short(k.pkg), k.test)
		if b := outputs[k]; b != nil {
			fmt.Fprintf(out, "----- output of %s -----\n%s-----\n", k.test, b.String())
		}
	}
	return len(ks)
}

func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/ocp-capi/ocp-capi/")
}

// failureExcerpt is what the closing summary repeats of a failed test: its
// last reported line (t.Fatal's and gomega's failure ends a test, and it
// starts with file:line) and the lines after it, enough for the assertion.
func failureExcerpt(b *strings.Builder) string {
	const keep = 12
	if b == nil {
		return "(no output)"
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	start := -1
	for i, l := range lines {
		if reportedError.MatchString(l) {
			start = i
		}
	}
	if start < 0 {
		start = max(0, len(lines)-keep)
	}
	end := min(len(lines), start+keep)
	return strings.Join(lines[start:end], "\n    ")
}

// reportedError is the start of a line t.Log/t.Error writes: "file.go:123: ".
var reportedError = regexp.MustCompile(`^\s+[\w.-]+\.go:\d+: `)

// lastLines is the tail of a test's output, where t.Skip puts its reason.
func lastLines(b *strings.Builder, n int) string {
	if b == nil {
		return "(no reason given)"
	}
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	if len(keep) == 0 {
		return "(no reason given)"
	}
	return strings.Join(keep, " ")
}
