package main

import (
	"os"
	"strings"
	"testing"
)

// testdata/timeout.json is what `go test -json -timeout 1s` printed for a
// package whose second test sleeps past the timeout: the killed test gets no
// fail event, only the package does. The summary used to print the package's
// bare FAIL line and "0 failed", hiding which test was running.
func TestTimedOutTestIsReported(t *testing.T) {
	in, err := os.Open("testdata/timeout.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out strings.Builder
	failed, err := run(in, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !failed {
		t.Error("a package stopped by its timeout must fail the run")
	}
	for _, want := range []string{
		"PASS  tt",
		"FAIL  tt                                                           TestSlow (did not finish: the package was stopped)",
		"panic: test timed out after 1s",
		"1 passed, 1 failed, 0 skipped",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}

// A package that passes leaves nothing unfinished, subtests included.
func TestPassingRunHasNoUnfinishedTests(t *testing.T) {
	in := strings.NewReader(`{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestA/sub"}
{"Action":"pass","Package":"p","Test":"TestA/sub"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p"}
`)
	var out strings.Builder
	failed, err := run(in, &out)
	if err != nil || failed {
		t.Fatalf("failed=%v err=%v:\n%s", failed, err, out.String())
	}
	if strings.Contains(out.String(), "did not finish") {
		t.Errorf("a finished test reported as unfinished:\n%s", out.String())
	}
}

// CI shows only the tail of a long log: the summary's last lines name each
// failed test with its assertion, not only a count.
func TestFailuresRepeatedAtTheEnd(t *testing.T) {
	in := strings.NewReader(`{"Action":"run","Package":"github.com/ocp-capi/ocp-capi/p","Test":"TestA"}
{"Action":"output","Package":"github.com/ocp-capi/ocp-capi/p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"github.com/ocp-capi/ocp-capi/p","Test":"TestA","Output":"    a_test.go:10: starting\n"}
{"Action":"output","Package":"github.com/ocp-capi/ocp-capi/p","Test":"TestA","Output":"    a_test.go:42: \n"}
{"Action":"output","Package":"github.com/ocp-capi/ocp-capi/p","Test":"TestA","Output":"        Timed out after 120s.\n"}
{"Action":"output","Package":"github.com/ocp-capi/ocp-capi/p","Test":"TestA","Output":"--- FAIL: TestA (120.00s)\n"}
{"Action":"fail","Package":"github.com/ocp-capi/ocp-capi/p","Test":"TestA"}
{"Action":"fail","Package":"github.com/ocp-capi/ocp-capi/p"}
`)
	var out strings.Builder
	failed, err := run(in, &out)
	if err != nil || !failed {
		t.Fatalf("failed=%v err=%v:\n%s", failed, err, out.String())
	}
	_, tail, ok := strings.Cut(out.String(), "0 passed, 1 failed, 0 skipped\n")
	if !ok {
		t.Fatalf("no count line:\n%s", out.String())
	}
	want := "  failed: p TestA:     a_test.go:42: \n            Timed out after 120s.\n    --- FAIL: TestA (120.00s)\n"
	if tail != want {
		t.Errorf("closing lines\n%q\nwant\n%q", tail, want)
	}
}
