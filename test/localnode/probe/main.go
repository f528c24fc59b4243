// Command probe is the test image of the local node cluster's tests: there
// is no registry, so the tests build it, pack it with bin/imgbuild and let
// `mgmt up --images` import it.
//
//	probe serve -listen :8080 -text T     answer every HTTP request with T, log each one
//	probe check [-resolve NAME]... [-get URL=WANT]... [-timeout D]
//
// check retries each check until it passes or the timeout runs out (a
// Service's endpoints and DNS records appear a moment after the pod
// starts), prints one line per check and exits 1 if any failed. Its output
// is what the tests read back through `kubectl logs`.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe serve|check [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "check":
		err = check(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	listen := fs.String("listen", ":8080", "address to listen on")
	text := fs.String("text", "probe", "response body")
	_ = fs.Parse(args)
	host, _ := os.Hostname()
	fmt.Printf("probe serving %q on %s (host %s)\n", *text, *listen, host)
	srv := &http.Server{
		Addr:              *listen,
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Printf("request %s %s from %s\n", r.Method, r.URL.Path, r.RemoteAddr)
			_, _ = io.WriteString(w, *text)
		}),
	}
	return srv.ListenAndServe()
}

// list is a repeatable flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func check(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	var resolve, get list
	fs.Var(&resolve, "resolve", "a name that must resolve (repeatable)")
	fs.Var(&get, "get", "URL=WANT: GET URL must answer 200 with a body containing WANT (repeatable)")
	timeout := fs.Duration("timeout", time.Minute, "how long each check is retried")
	_ = fs.Parse(args)

	var failed []string
	for _, name := range resolve {
		out, err := retry(*timeout, func(ctx context.Context) (string, error) {
			addrs, err := net.DefaultResolver.LookupHost(ctx, name)
			return strings.Join(addrs, ","), err
		})
		report("resolve "+name, out, err, &failed)
	}
	for _, g := range get {
		url, want, ok := strings.Cut(g, "=")
		if !ok {
			return fmt.Errorf("-get %q: want URL=WANT", g)
		}
		out, err := retry(*timeout, func(ctx context.Context) (string, error) { return httpGet(ctx, url, want) })
		report("get "+url, out, err, &failed)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d check(s) failed: %s", len(failed), strings.Join(failed, "; "))
	}
	fmt.Println("ALL OK")
	return nil
}

func report(what, out string, err error, failed *[]string) {
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", what, err)
		*failed = append(*failed, what)
		return
	}
	fmt.Printf("OK %s: %s\n", what, out)
}

func httpGet(ctx context.Context, url, want string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		return "", fmt.Errorf("status %d, body %q, want 200 with %q", resp.StatusCode, body, want)
	}
	return fmt.Sprintf("%d %q", resp.StatusCode, body), nil
}

// retry runs f with a short per-attempt timeout until it succeeds or the
// overall timeout passes; the last error is returned.
func retry(timeout time.Duration, f func(context.Context) (string, error)) (string, error) {
	deadline := time.Now().Add(timeout)
	var last error
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, err := f(ctx)
		cancel()
		if err == nil {
			return out, nil
		}
		last = err
		if time.Now().After(deadline) {
			return "", fmt.Errorf("after %d attempts: %w", attempt, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
