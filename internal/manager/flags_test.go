package manager

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
)

func noopSetup(context.Context, ctrl.Manager, ControllerOptions) error { return nil }

// testSpec has two controllers: one with the package default concurrency,
// one with its own.
func testSpec() Spec {
	return Spec{
		Name: "test-manager",
		Controllers: []Controller{
			{Name: "openstackmachine", Setup: noopSetup},
			{Name: "openstackcluster", DefaultConcurrency: 3, Setup: noopSetup},
		},
	}
}

func defaultConfig() Config {
	return Config{
		KubeAPIQPS:             20,
		KubeAPIBurst:           30,
		MetricsBindAddress:     ":8443",
		MetricsSecure:          true,
		HealthProbeBindAddress: ":9440",
		LeaseDuration:          15 * time.Second,
		RenewDeadline:          10 * time.Second,
		RetryPeriod:            2 * time.Second,
		SyncPeriod:             10 * time.Minute,
		Concurrency:            map[string]int{"openstackmachine": 10, "openstackcluster": 3},
		WebhookPort:            9443,
		WebhookCertDir:         "/tmp/k8s-webhook-server/serving-certs",
		LogFormat:              "text",
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// want changes the default Config into the expected one.
		want func(c *Config)
	}{
		{name: "defaults", args: nil, want: func(*Config) {}},
		{
			name: "every flag",
			args: []string{
				"--kubeconfig=/tmp/kc",
				"--metrics-bind-address=127.0.0.1:8080", "--metrics-secure=false",
				"--health-probe-bind-address", "127.0.0.1:9000", "--profiler-address=localhost:6060",
				"--leader-elect", "--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s",
				"--leader-elect-retry-period=5s", "--leader-election-namespace=capi-system",
				"--namespace=foo", "--watch-filter=team-a", "--sync-period=1h",
				"--openstackmachine-concurrency=4", "--openstackcluster-concurrency", "1",
				"--webhook-port=10443", "--webhook-cert-dir=/certs",
				"--log-format=json", "--v=4",
			},
			want: func(c *Config) {
				c.Kubeconfig = "/tmp/kc"
				c.MetricsBindAddress, c.MetricsSecure = "127.0.0.1:8080", false
				c.HealthProbeBindAddress = "127.0.0.1:9000"
				c.ProfilerAddress = "localhost:6060"
				c.LeaderElect, c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = true, 30*time.Second, 20*time.Second, 5*time.Second
				c.LeaderElectionNamespace = "capi-system"
				c.Namespace, c.WatchFilter, c.SyncPeriod = "foo", "team-a", time.Hour
				c.Concurrency = map[string]int{"openstackmachine": 4, "openstackcluster": 1}
				c.WebhookPort, c.WebhookCertDir = 10443, "/certs"
				c.LogFormat, c.Verbosity = "json", 4
			},
		},
		{name: "metrics disabled", args: []string{"--metrics-bind-address=0"}, want: func(c *Config) { c.MetricsBindAddress = "0" }},
		{name: "health probes disabled", args: []string{"--health-probe-bind-address=0"}, want: func(c *Config) { c.HealthProbeBindAddress = "0" }},
		{name: "-v N", args: []string{"-v", "2"}, want: func(c *Config) { c.Verbosity = 2 }},
		{name: "-vN", args: []string{"-v3"}, want: func(c *Config) { c.Verbosity = 3 }},
		{name: "--v N", args: []string{"--v", "5"}, want: func(c *Config) { c.Verbosity = 5 }},
		{name: "version", args: []string{"--version"}, want: func(c *Config) { c.ShowVersion = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := parseFlags(testSpec(), tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := defaultConfig()
			tt.want(&want)
			if diff := cmp.Diff(want, *got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseFlagsErrors checks that each invalid command line is a
// *UsageError whose message names the offending flag.
func TestParseFlagsErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantFlag string // must appear in the message
	}{
		{"unknown flag", []string{"--no-such-flag"}, "--no-such-flag"},
		{"positional argument", []string{"extra"}, `"extra"`},
		{"bad duration", []string{"--sync-period=soon"}, "--sync-period"},
		{"zero sync period", []string{"--sync-period=0s"}, "--sync-period"},
		{"negative concurrency", []string{"--openstackmachine-concurrency=-1"}, "--openstackmachine-concurrency"},
		{"zero concurrency", []string{"--openstackcluster-concurrency=0"}, "--openstackcluster-concurrency"},
		{"non-numeric concurrency", []string{"--openstackcluster-concurrency=many"}, "--openstackcluster-concurrency"},
		{"renew deadline equals lease", []string{"--leader-elect-renew-deadline=15s"}, "--leader-elect-renew-deadline"},
		{"renew deadline above lease", []string{"--leader-elect-lease-duration=5s"}, "--leader-elect-lease-duration"},
		{"retry period too long", []string{"--leader-elect-retry-period=9s"}, "--leader-elect-retry-period"},
		{"negative retry period", []string{"--leader-elect-retry-period=-1s"}, "--leader-elect-retry-period"},
		{"zero lease duration", []string{"--leader-elect-lease-duration=0"}, "--leader-elect-lease-duration"},
		{"bad log format", []string{"--log-format=yaml"}, "--log-format"},
		{"negative verbosity", []string{"-v=-1"}, "-v"},
		{"huge verbosity", []string{"--v=200"}, "-v"},
		{"bad namespace", []string{"--namespace=Foo_Bar"}, "--namespace"},
		{"bad leader election namespace", []string{"--leader-election-namespace=a.b"}, "--leader-election-namespace"},
		{"bad watch filter", []string{"--watch-filter=not a label"}, "--watch-filter"},
		{"metrics address without port", []string{"--metrics-bind-address=localhost"}, "--metrics-bind-address"},
		{"health address with bad port", []string{"--health-probe-bind-address=:http"}, "--health-probe-bind-address"},
		{"profiler address without port", []string{"--profiler-address=localhost"}, "--profiler-address"},
		{"webhook port out of range", []string{"--webhook-port=70000"}, "--webhook-port"},
		{"empty webhook cert dir", []string{"--webhook-cert-dir="}, "--webhook-cert-dir"},
		{"bool given a word", []string{"--leader-elect=maybe"}, "--leader-elect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseFlags(testSpec(), tt.args, nil)
			var usage *UsageError
			if !errors.As(err, &usage) {
				t.Fatalf("got %v (%T), want a *UsageError", err, err)
			}
			if !strings.Contains(err.Error(), tt.wantFlag) {
				t.Errorf("error %q does not name %s", err, tt.wantFlag)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		_, fs, err := parseFlags(testSpec(), []string{arg}, nil)
		if !errors.Is(err, pflag.ErrHelp) {
			t.Fatalf("%s: got %v, want pflag.ErrHelp", arg, err)
		}
		text := usage(Spec{Name: "test-manager", Description: "Test manager."}, fs)
		for _, want := range []string{
			"Test manager.", "Usage:\n  test-manager [flags]",
			"--kubeconfig", "--metrics-bind-address", "--metrics-secure", "--health-probe-bind-address", "--profiler-address",
			"--leader-elect ", "--leader-elect-lease-duration", "--leader-elect-renew-deadline",
			"--leader-elect-retry-period", "--leader-election-namespace", "--namespace", "--watch-filter",
			"cluster.x-k8s.io/watch-filter", "--sync-period", "--openstackmachine-concurrency", "--openstackcluster-concurrency",
			"--webhook-port", "--webhook-cert-dir", "--log-format", "-v, --v", "--version", "-h, --help",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: help lacks %q:\n%s", arg, want, text)
			}
		}
	}
}

// TestConcurrencyFlags checks the flags generated from Spec.Controllers.
func TestConcurrencyFlags(t *testing.T) {
	tests := []struct {
		name        string
		controllers []Controller
		wantDefault map[string]string // flag -> default value
		wantErr     string
	}{
		{name: "none", controllers: nil, wantDefault: map[string]string{}},
		{
			name: "package default and own default",
			controllers: []Controller{
				{Name: "machineset-sync", Setup: noopSetup},
				{Name: "openstackserver", DefaultConcurrency: 25, Setup: noopSetup},
			},
			wantDefault: map[string]string{"machineset-sync-concurrency": "10", "openstackserver-concurrency": "25"},
		},
		{name: "empty name", controllers: []Controller{{Setup: noopSetup}}, wantErr: "controller name"},
		{name: "upper case name", controllers: []Controller{{Name: "OpenStackMachine", Setup: noopSetup}}, wantErr: "OpenStackMachine"},
		{
			name:        "duplicate",
			controllers: []Controller{{Name: "a", Setup: noopSetup}, {Name: "a", Setup: noopSetup}},
			wantErr:     "listed twice",
		},
		{name: "no setup", controllers: []Controller{{Name: "a"}}, wantErr: "no Setup"},
		{name: "negative default", controllers: []Controller{{Name: "a", DefaultConcurrency: -2, Setup: noopSetup}}, wantErr: "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ptrs := map[string]*int{}
			fs, err := newFlagSet(Spec{Name: "m", Controllers: tt.controllers}, &Config{}, ptrs, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			fs.VisitAll(func(f *pflag.Flag) {
				if strings.HasSuffix(f.Name, "-concurrency") {
					got[f.Name] = f.DefValue
				}
			})
			if diff := cmp.Diff(tt.wantDefault, got); diff != "" {
				t.Errorf("concurrency flags (-want +got):\n%s", diff)
			}
			if len(ptrs) != len(tt.controllers) {
				t.Errorf("got %d concurrency values, want %d", len(ptrs), len(tt.controllers))
			}
		})
	}
}

func TestExtraFlags(t *testing.T) {
	var bastion bool
	spec := testSpec()
	spec.ExtraFlags = func(fs *pflag.FlagSet) { fs.BoolVar(&bastion, "enable-bastion", false, "Create a bastion.") }
	if _, _, err := parseFlags(spec, []string{"--enable-bastion"}, nil); err != nil {
		t.Fatal(err)
	}
	if !bastion {
		t.Error("--enable-bastion was not bound")
	}

	spec.ExtraFlags = func(fs *pflag.FlagSet) { fs.String("namespace", "", "again") }
	if _, _, err := parseFlags(spec, nil, nil); err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Errorf("redefining --namespace: got %v, want an error naming it", err)
	}
}

// TestRunWithoutServer covers the paths of Run that end before it connects
// to an API server.
func TestRunWithoutServer(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStdout string
		wantUsage  string // a *UsageError containing this
	}{
		{name: "version", args: []string{"--version"}, wantStdout: "test-manager dev\n"},
		{name: "help", args: []string{"--help"}, wantStdout: "--openstackmachine-concurrency"},
		{name: "invalid flag", args: []string{"--log-format=xml"}, wantUsage: "--log-format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), testSpec(), tt.args, &stdout, &stderr)
			if tt.wantUsage != "" {
				var usage *UsageError
				if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.wantUsage) {
					t.Fatalf("got %v, want a *UsageError naming %s", err, tt.wantUsage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout %q lacks %q", stdout.String(), tt.wantStdout)
			}
			if stderr.Len() != 0 {
				t.Errorf("unexpected stderr %q", stderr.String())
			}
		})
	}
}

func TestControllerOptions(t *testing.T) {
	o := ControllerOptions{MaxConcurrentReconciles: 7, WatchFilterValue: "x", Namespace: "ns"}
	if got := o.Options().MaxConcurrentReconciles; got != 7 {
		t.Errorf("MaxConcurrentReconciles = %d, want 7", got)
	}
}
