// Command chaostable prints the summary table of a `make chaos` run: the
// rows the scenarios appended to the results file (test/chaos), with a
// line for every expected scenario that wrote none. It exits 1 unless
// every expected scenario wrote rows and all of them passed.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ocp-capi/ocp-capi/test/chaos"
)

func main() {
	results := flag.String("results", "", "the results file the scenarios appended to")
	expect := flag.String("expect", "", "comma-separated scenario names that must have written a row")
	flag.Parse()
	rows, err := chaos.ReadRows(*results)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaostable:", err)
		os.Exit(2)
	}
	var want []string
	for _, s := range strings.Split(*expect, ",") {
		if s = strings.TrimSpace(s); s != "" {
			want = append(want, s)
		}
	}
	fmt.Print(chaos.Table(rows, want))
	if !chaos.Passed(rows, want) {
		os.Exit(1)
	}
}
