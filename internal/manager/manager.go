// Package manager is the setup shared by every ocp-capi manager binary:
// flags, logging, the controller-runtime manager with secure metrics, health
// probes, leader election and graceful shutdown. A binary describes itself
// with a Spec and calls Main; everything else happens here, once.
package manager

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Version is the version of the binaries, stamped at build time with
// -ldflags "-X github.com/ocp-capi/ocp-capi/internal/manager.Version=v1.2.3".
var Version = "dev"

// GracefulShutdownTimeout bounds how long runnables get to stop after
// SIGTERM before the manager gives up on them.
const GracefulShutdownTimeout = 5 * time.Second

// Spec describes one manager binary.
type Spec struct {
	// Name is the binary's name. It heads --help and --version, and prefixes
	// the leader election ID (<Name>-leader-election).
	Name string
	// Description is one line for --help (optional).
	Description string
	// AddToScheme registers the API types the manager uses, beyond
	// client-go's built-in ones (which are always registered).
	AddToScheme []func(*runtime.Scheme) error
	// Controllers are set up in order once the manager exists.
	Controllers []Controller
	// Webhooks registers the admission and conversion webhooks (optional).
	// When set, the webhook server is started and /readyz checks it.
	Webhooks func(mgr ctrl.Manager) error
	// ExtraFlags adds flags of this manager only (optional). Bind them to
	// variables that the Setup functions read.
	ExtraFlags func(fs *pflag.FlagSet)
	// Cache is how the manager's cache differs from the default (optional).
	Cache Cache
}

// Cache is how a manager's cache and client differ from controller-runtime's
// defaults. Every manager's cache transforms what it stores with
// CacheTransform (no managedFields, compacted).
type Cache struct {
	// Unstructured makes the client read unstructured objects from the
	// cache, as it reads typed ones; by default it reads them from the API
	// server. The informer of a kind starts on its first read and stays, so
	// the manager needs list and watch on every kind it reads unstructured.
	Unstructured bool
	// Trim, when set, runs on every object the cache stores, after
	// CacheTransform: a manager keeps of an object only the
	// fields it reads (docs/reliability.md, Scale). It must keep every field
	// the manager's readers use, and the manager must write such objects
	// only by patches made from them.
	Trim func(obj any) (any, error)
	// ByObject narrows the cache of some kinds, e.g. to the objects with a
	// label.
	ByObject func() (map[client.Object]cache.ByObject, error)
}

// ApplyCache sets c on o, as a manager binary does; tests that build a
// provider's manager call it with the provider's Cache.
func ApplyCache(o *ctrl.Options, c Cache) error {
	base := CacheTransform()
	o.Cache.DefaultTransform = base
	if c.Trim != nil {
		o.Cache.DefaultTransform = func(obj any) (any, error) {
			obj, err := base(obj)
			if err != nil {
				return obj, err
			}
			return c.Trim(obj)
		}
	}
	if c.Unstructured {
		o.Client.Cache = &client.CacheOptions{Unstructured: true}
	}
	if c.ByObject != nil {
		byObject, err := c.ByObject()
		if err != nil {
			return fmt.Errorf("narrowing the cache: %w", err)
		}
		o.Cache.ByObject = byObject
	}
	return nil
}

// Controller is one reconciler of a manager.
type Controller struct {
	// Name is the controller's name in lower case, e.g. "openstackmachine".
	// It yields the flag --<Name>-concurrency.
	Name string
	// DefaultConcurrency is the default of --<Name>-concurrency; 0 means 10.
	DefaultConcurrency int
	// Setup registers the controller with the manager.
	Setup func(ctx context.Context, mgr ctrl.Manager, opts ControllerOptions) error
}

// DefaultConcurrency is the number of parallel reconciles of a controller
// whose DefaultConcurrency is not set.
const DefaultConcurrency = 10

// ControllerOptions carry the flag values a controller needs.
type ControllerOptions struct {
	// MaxConcurrentReconciles is the value of --<controller>-concurrency.
	MaxConcurrentReconciles int
	// WatchFilterValue is --watch-filter: when set, reconcile only objects
	// labelled cluster.x-k8s.io/watch-filter=<value>.
	WatchFilterValue string
	// Namespace is --namespace: the only namespace watched, or "" for all.
	// The manager's cache is already restricted to it.
	Namespace string
}

// Options returns the controller-runtime options for these flags.
func (o ControllerOptions) Options() controller.Options {
	return controller.Options{MaxConcurrentReconciles: o.MaxConcurrentReconciles}
}

// Main runs the manager described by spec with the process's arguments and
// exits: 0 after a graceful shutdown (SIGTERM or SIGINT), --help or
// --version; 2 on invalid flags; 1 on any other error.
func Main(spec Spec) {
	ctx := ctrl.SetupSignalHandler()
	err := Run(ctx, spec, os.Args[1:])
	if err == nil {
		os.Exit(0)
	}
	var usage *UsageError
	if errors.As(err, &usage) {
		// The logger is not set up yet: flags decide its format.
		fmt.Fprintf(os.Stderr, "%s: %v\nRun '%s --help' for usage.\n", spec.Name, err, spec.Name)
		os.Exit(2)
	}
	ctrl.Log.WithName("setup").Error(err, "Manager exited with an error")
	os.Exit(1)
}

// Run parses args (without the program name), then starts the manager and
// blocks until ctx is cancelled. It returns nil after a graceful shutdown and
// after --help or --version; invalid flags give a *UsageError.
func Run(ctx context.Context, spec Spec, args []string) error {
	return run(ctx, spec, args, os.Stdout, os.Stderr)
}

// run is Run with its output streams. It is over 80 lines because it is
// the managers' start-up read top to bottom (flags, logger, REST config,
// scheme, manager, checks, webhooks, controllers, start), each step a few
// lines that return its error with context.
func run(ctx context.Context, spec Spec, args []string, stdout, stderr io.Writer) error {
	cfg, fs, err := parseFlags(spec, args, flag.CommandLine)
	if errors.Is(err, pflag.ErrHelp) {
		_, err := io.WriteString(stdout, usage(spec, fs))
		return err
	}
	if err != nil {
		return err
	}
	if cfg.ShowVersion {
		_, err := fmt.Fprintf(stdout, "%s %s\n", spec.Name, Version)
		return err
	}

	logger, err := newLogger(cfg.LogFormat, cfg.Verbosity, stderr)
	if err != nil {
		return err
	}
	if err := setGlobalLoggers(logger, cfg.Verbosity); err != nil {
		return err
	}
	log := logger.WithName("setup")

	restConfig, err := loadRESTConfig(cfg.Kubeconfig)
	if err == nil {
		// The same client rate whether the config came from a file or
		// from the cluster (a file alone would get client-go's 5 QPS).
		restConfig.QPS, restConfig.Burst = cfg.KubeAPIQPS, cfg.KubeAPIBurst
	}
	if err != nil {
		return err
	}
	restConfig.UserAgent = fmt.Sprintf("%s/%s", spec.Name, Version)
	logConfig(log, spec, cfg, restConfig)

	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, spec.AddToScheme...) {
		if err := add(scheme); err != nil {
			return fmt.Errorf("building the scheme: %w", err)
		}
	}

	opts, err := managerOptions(spec, cfg, scheme)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restConfig, opts)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	if spec.Webhooks != nil && cfg.WebhookPort == 0 {
		log.Info("Webhooks are disabled (--webhook-port=0): the API server will not call this manager; use this only for local runs")
	}
	if spec.Webhooks != nil && cfg.WebhookPort != 0 {
		if err := spec.Webhooks(mgr); err != nil {
			return fmt.Errorf("setting up webhooks: %w", err)
		}
		// Asking for the webhook server is what makes the manager run it.
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return fmt.Errorf("adding the webhook readiness check: %w", err)
		}
	}
	for _, c := range spec.Controllers {
		opts := ControllerOptions{
			MaxConcurrentReconciles: cfg.Concurrency[c.Name],
			WatchFilterValue:        cfg.WatchFilter,
			Namespace:               cfg.Namespace,
		}
		if err := c.Setup(ctx, mgr, opts); err != nil {
			return fmt.Errorf("setting up controller %q: %w", c.Name, err)
		}
	}

	log.Info("Starting manager")
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	log.Info("Manager stopped gracefully")
	return nil
}

// loadRESTConfig reads the kubeconfig at path. An empty path falls back to
// controller-runtime's rules: $KUBECONFIG, the in-cluster config, then
// ~/.kube/config.
func loadRESTConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("loading the API server configuration (in-cluster or $KUBECONFIG; use --kubeconfig to name a file): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading --kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// disableHTTP2 keeps the metrics and webhook servers on HTTP/1.1, out of
// reach of the HTTP/2 stream-reset and rapid-reset attacks (CVE-2023-44487,
// CVE-2023-39325).
func disableHTTP2(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }

func managerOptions(spec Spec, cfg *Config, scheme *runtime.Scheme) (ctrl.Options, error) {
	metrics := metricsserver.Options{
		BindAddress:   cfg.MetricsBindAddress,
		SecureServing: cfg.MetricsSecure,
	}
	if cfg.MetricsSecure {
		// Serve with a self-signed certificate; every request must carry a
		// token that the API server authenticates (TokenReview) and that
		// may get /metrics (SubjectAccessReview).
		metrics.FilterProvider = metricsAuth
		metrics.TLSOpts = []func(*tls.Config){disableHTTP2}
	}
	var namespaces map[string]cache.Config
	if cfg.Namespace != "" {
		namespaces = map[string]cache.Config{cfg.Namespace: {}}
	}
	leaseDuration, renewDeadline, retryPeriod := cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod
	syncPeriod := cfg.SyncPeriod
	gracefulShutdown := GracefulShutdownTimeout
	opts := ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metrics,
		HealthProbeBindAddress:        cfg.HealthProbeBindAddress,
		PprofBindAddress:              cfg.ProfilerAddress,
		LeaderElection:                cfg.LeaderElect,
		LeaderElectionID:              leaderElectionID(spec),
		LeaderElectionNamespace:       cfg.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true, // the process exits right after Start returns
		LeaseDuration:                 &leaseDuration,
		RenewDeadline:                 &renewDeadline,
		RetryPeriod:                   &retryPeriod,
		Cache: cache.Options{
			DefaultNamespaces: namespaces,
			SyncPeriod:        &syncPeriod,
		},
		WebhookServer: webhook.NewServer(webhook.Options{
			Port:    cfg.WebhookPort,
			CertDir: cfg.WebhookCertDir,
			TLSOpts: []func(*tls.Config){disableHTTP2},
		}),
		GracefulShutdownTimeout: &gracefulShutdown,
	}
	return opts, ApplyCache(&opts, spec.Cache)
}

func leaderElectionID(spec Spec) string { return spec.Name + "-leader-election" }

// logConfig logs the effective configuration. Nothing in it is secret: the
// kubeconfig is named, not read out.
func logConfig(log logr.Logger, spec Spec, cfg *Config, rc *rest.Config) {
	namespace := cfg.Namespace
	if namespace == "" {
		namespace = "(all)"
	}
	kubeconfig := cfg.Kubeconfig
	if kubeconfig == "" {
		kubeconfig = "(in-cluster or $KUBECONFIG)"
	}
	concurrency := make([]string, 0, len(cfg.Concurrency))
	for _, n := range slices.Sorted(maps.Keys(cfg.Concurrency)) {
		concurrency = append(concurrency, fmt.Sprintf("%s=%d", n, cfg.Concurrency[n]))
	}
	log.Info("Effective configuration",
		"manager", spec.Name,
		"version", Version,
		"kubeconfig", kubeconfig,
		"apiServer", rc.Host,
		"namespace", namespace,
		"watchFilter", cfg.WatchFilter,
		"syncPeriod", cfg.SyncPeriod.String(),
		"metricsBindAddress", cfg.MetricsBindAddress,
		"metricsSecure", cfg.MetricsSecure,
		"healthProbeBindAddress", cfg.HealthProbeBindAddress,
		"profilerAddress", cfg.ProfilerAddress,
		"leaderElect", cfg.LeaderElect,
		"leaderElectionID", leaderElectionID(spec),
		"leaderElectionNamespace", cfg.LeaderElectionNamespace,
		"leaseDuration", cfg.LeaseDuration.String(),
		"renewDeadline", cfg.RenewDeadline.String(),
		"retryPeriod", cfg.RetryPeriod.String(),
		"webhooks", spec.Webhooks != nil,
		"webhookPort", cfg.WebhookPort,
		"webhookCertDir", cfg.WebhookCertDir,
		"controllers", concurrency,
		"logFormat", cfg.LogFormat,
		"verbosity", cfg.Verbosity,
	)
}
