package manager

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Config is the effective configuration of a manager, read from its flags.
type Config struct {
	Kubeconfig string
	// KubeAPIQPS and KubeAPIBurst bound the client's request rate.
	KubeAPIQPS   float32
	KubeAPIBurst int

	MetricsBindAddress     string
	MetricsSecure          bool
	HealthProbeBindAddress string
	// ProfilerAddress serves net/http/pprof; empty disables it.
	ProfilerAddress string

	LeaderElect             bool
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration
	LeaderElectionNamespace string

	Namespace   string
	WatchFilter string
	SyncPeriod  time.Duration
	// Concurrency maps each controller's name to --<name>-concurrency.
	Concurrency map[string]int

	WebhookPort    int
	WebhookCertDir string

	LogFormat string
	Verbosity int

	ShowVersion bool
}

// Log formats of --log-format.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// leaderElectionJitter is client-go's leaderelection.JitterFactor: the renew
// deadline must exceed it times the retry period.
const leaderElectionJitter = 1.2

// maxVerbosity is the highest -v: logr levels map to zap's int8 levels.
const maxVerbosity = 127

// UsageError is an invalid command line. Its message names the flag.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// concurrencyFlag is the name of a controller's concurrency flag.
func concurrencyFlag(controller string) string { return controller + "-concurrency" }

// newFlagSet defines every flag of spec on a new flag set bound to cfg, in
// the order --help shows them. concurrency receives one pointer per
// controller. The flags of goFlags (libraries register theirs on Go's
// flag.CommandLine) are merged in, except where a name is already taken.
// It is over 80 lines because it is one definition per flag, in --help
// order; split up, that order would be spread over several functions.
func newFlagSet(spec Spec, cfg *Config, concurrency map[string]*int, goFlags *flag.FlagSet) (*pflag.FlagSet, error) {
	fs := pflag.NewFlagSet(spec.Name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard) // run reports errors and prints --help itself
	fs.Usage = func() {}

	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "",
		"Path to the kubeconfig of the management cluster. Empty: $KUBECONFIG, else the in-cluster configuration, else ~/.kube/config.")
	fs.Float32Var(&cfg.KubeAPIQPS, "kube-api-qps", 20,
		"Maximum queries per second from this manager to the API server.")
	fs.IntVar(&cfg.KubeAPIBurst, "kube-api-burst", 30,
		"Maximum burst of queries from this manager to the API server.")

	fs.StringVar(&cfg.MetricsBindAddress, "metrics-bind-address", ":8443",
		`Address (host:port) of the metrics endpoint /metrics. "0" disables it.`)
	fs.BoolVar(&cfg.MetricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS, allowing only requests whose bearer token the API server authenticates and authorizes for GET /metrics. Set to false to serve plain HTTP for local debugging.")
	fs.StringVar(&cfg.HealthProbeBindAddress, "health-probe-bind-address", ":9440",
		`Address (host:port) of the health probes /healthz and /readyz. "0" disables them.`)
	fs.StringVar(&cfg.ProfilerAddress, "profiler-address", "",
		"Address (host:port) of the Go profiler /debug/pprof/, served without authentication: bind it to localhost. Empty disables it.")

	fs.BoolVar(&cfg.LeaderElect, "leader-elect", false,
		"Enable leader election, so that only one replica of this manager reconciles at a time.")
	fs.DurationVar(&cfg.LeaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"How long non-leaders wait after the last renewal before they take over leadership.")
	fs.DurationVar(&cfg.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"How long the leader keeps trying to renew its lease before it gives up leadership. Must be less than --leader-elect-lease-duration.")
	fs.DurationVar(&cfg.RetryPeriod, "leader-elect-retry-period", 2*time.Second,
		"How long candidates wait between attempts to acquire or renew the lease.")
	fs.StringVar(&cfg.LeaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease. Empty: the namespace the manager runs in (required when running out of cluster with --leader-elect).")

	fs.StringVar(&cfg.Namespace, "namespace", "",
		"Watch and reconcile objects in this namespace only; the cache holds nothing else. Empty: all namespaces.")
	fs.StringVar(&cfg.WatchFilter, "watch-filter", "",
		fmt.Sprintf("Reconcile only objects labelled %s=<value>. Empty: all objects.", clusterv1.WatchLabel))
	fs.DurationVar(&cfg.SyncPeriod, "sync-period", 10*time.Minute,
		"Minimum interval at which every watched object is reconciled again.")

	seen := map[string]bool{}
	for _, c := range spec.Controllers {
		switch {
		case c.Name == "" || len(validation.IsDNS1123Label(c.Name)) > 0:
			return nil, fmt.Errorf("controller name %q must be a lower-case DNS label (it names the flag --<name>-concurrency)", c.Name)
		case seen[c.Name]:
			return nil, fmt.Errorf("controller %q is listed twice", c.Name)
		case c.Setup == nil:
			return nil, fmt.Errorf("controller %q has no Setup function", c.Name)
		case c.DefaultConcurrency < 0:
			return nil, fmt.Errorf("controller %q has a negative DefaultConcurrency", c.Name)
		}
		seen[c.Name] = true
		def := c.DefaultConcurrency
		if def == 0 {
			def = DefaultConcurrency
		}
		concurrency[c.Name] = fs.Int(concurrencyFlag(c.Name), def,
			fmt.Sprintf("Number of %s objects reconciled in parallel.", c.Name))
	}

	fs.IntVar(&cfg.WebhookPort, "webhook-port", 9443,
		"Port of the webhook server (served only by managers that have webhooks); 0 disables the webhooks, for local runs without certificates.")
	fs.StringVar(&cfg.WebhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs",
		"Directory holding the webhook server's certificate and key (tls.crt, tls.key).")

	fs.StringVar(&cfg.LogFormat, "log-format", LogFormatText,
		`Log format: "text" or "json".`)
	fs.IntVarP(&cfg.Verbosity, "v", "v", 0,
		"Log verbosity: 0 logs what operators need; higher numbers add detail (client-go logs request details from 6).")

	fs.BoolVar(&cfg.ShowVersion, "version", false, "Print the version and exit.")
	fs.BoolP("help", "h", false, "Print this help and exit.")

	if spec.ExtraFlags != nil {
		if err := addExtraFlags(fs, spec.ExtraFlags); err != nil {
			return nil, err
		}
	}
	if goFlags != nil {
		fs.AddGoFlagSet(goFlags)
	}
	return fs, nil
}

// addExtraFlags turns pflag's panic on a redefined flag into an error.
func addExtraFlags(fs *pflag.FlagSet, extra func(*pflag.FlagSet)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Spec.ExtraFlags: %v", r)
		}
	}()
	extra(fs)
	return nil
}

// parseFlags parses args into a validated Config. It returns pflag.ErrHelp
// for --help; the flag set is returned to print it.
func parseFlags(spec Spec, args []string, goFlags *flag.FlagSet) (*Config, *pflag.FlagSet, error) {
	cfg := &Config{}
	concurrency := map[string]*int{}
	fs, err := newFlagSet(spec, cfg, concurrency, goFlags)
	if err != nil {
		return nil, nil, err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, fs, err
		}
		return nil, fs, &UsageError{Err: err}
	}
	if help, _ := fs.GetBool("help"); help {
		return nil, fs, pflag.ErrHelp
	}
	if fs.NArg() > 0 {
		return nil, fs, usageErrorf("unexpected arguments %q: this command takes flags only", fs.Args())
	}
	cfg.Concurrency = make(map[string]int, len(concurrency))
	for name, v := range concurrency {
		cfg.Concurrency[name] = *v
	}
	if err := cfg.validate(); err != nil {
		return nil, fs, err
	}
	return cfg, fs, nil
}

// validate checks the values that the types of the flags do not.
func (c *Config) validate() error {
	if err := validateAddress("metrics-bind-address", c.MetricsBindAddress); err != nil {
		return err
	}
	if err := validateAddress("health-probe-bind-address", c.HealthProbeBindAddress); err != nil {
		return err
	}
	if c.ProfilerAddress != "" {
		if err := validateAddress("profiler-address", c.ProfilerAddress); err != nil {
			return err
		}
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{
		{"leader-elect-lease-duration", c.LeaseDuration},
		{"leader-elect-renew-deadline", c.RenewDeadline},
		{"leader-elect-retry-period", c.RetryPeriod},
		{"sync-period", c.SyncPeriod},
	} {
		if d.value <= 0 {
			return usageErrorf("--%s must be positive, got %s", d.flag, d.value)
		}
	}
	if c.RenewDeadline >= c.LeaseDuration {
		return usageErrorf("--leader-elect-renew-deadline (%s) must be less than --leader-elect-lease-duration (%s)", c.RenewDeadline, c.LeaseDuration)
	}
	if float64(c.RenewDeadline) <= leaderElectionJitter*float64(c.RetryPeriod) {
		return usageErrorf("--leader-elect-renew-deadline (%s) must be more than %.1f times --leader-elect-retry-period (%s)",
			c.RenewDeadline, leaderElectionJitter, c.RetryPeriod)
	}
	for _, ns := range []struct{ flag, value string }{
		{"namespace", c.Namespace},
		{"leader-election-namespace", c.LeaderElectionNamespace},
	} {
		if ns.value == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(ns.value); len(errs) > 0 {
			return usageErrorf("--%s %q is not a valid namespace name: %s", ns.flag, ns.value, strings.Join(errs, "; "))
		}
	}
	if errs := validation.IsValidLabelValue(c.WatchFilter); len(errs) > 0 {
		return usageErrorf("--watch-filter %q is not a valid label value: %s", c.WatchFilter, strings.Join(errs, "; "))
	}
	for _, name := range slices.Sorted(maps.Keys(c.Concurrency)) {
		if n := c.Concurrency[name]; n < 1 {
			return usageErrorf("--%s must be at least 1, got %d", concurrencyFlag(name), n)
		}
	}
	if c.KubeAPIQPS <= 0 {
		return usageErrorf("--kube-api-qps must be positive, got %v", c.KubeAPIQPS)
	}
	if c.KubeAPIBurst < 1 {
		return usageErrorf("--kube-api-burst must be at least 1, got %d", c.KubeAPIBurst)
	}
	if c.WebhookPort < 0 || c.WebhookPort > 65535 {
		return usageErrorf("--webhook-port must be between 0 (disabled) and 65535, got %d", c.WebhookPort)
	}
	if c.WebhookCertDir == "" {
		return usageErrorf("--webhook-cert-dir must not be empty")
	}
	if c.LogFormat != LogFormatText && c.LogFormat != LogFormatJSON {
		return usageErrorf("--log-format must be %q or %q, got %q", LogFormatText, LogFormatJSON, c.LogFormat)
	}
	if c.Verbosity < 0 || c.Verbosity > maxVerbosity {
		return usageErrorf("-v must be between 0 and %d, got %d", maxVerbosity, c.Verbosity)
	}
	return nil
}

// validateAddress accepts "0" (disabled) or host:port with a numeric port;
// the host may be empty (all interfaces).
func validateAddress(flagName, addr string) error {
	if addr == "0" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErrorf(`--%s %q must be host:port, :port or "0": %v`, flagName, addr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return usageErrorf("--%s %q has an invalid port %q", flagName, addr, port)
	}
	return nil
}

// usage is the text of --help.
func usage(spec Spec, fs *pflag.FlagSet) string {
	var b strings.Builder
	if spec.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", spec.Description)
	}
	fmt.Fprintf(&b, "Usage:\n  %s [flags]\n\nFlags:\n%s", spec.Name, fs.FlagUsages())
	return b.String()
}
