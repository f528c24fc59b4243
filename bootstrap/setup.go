package bootstrap

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/agent"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/index"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/openshiftassistedconfig"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/ignition"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infra"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
	"github.com/ocp-capi/ocp-capi/internal/manager"
)

// AddToScheme registers the types the provider uses: CAPI core, its own
// API, the assisted-service and hive APIs, and the infrastructure kinds it
// reads typed (BareMetalHost, OpenStackMachine, OpenStackServer).
// Metal3Machines are read unstructured, at the version the cluster serves.
var AddToScheme = []func(*runtime.Scheme) error{
	clusterv1.AddToScheme, bootstrapv1.AddToScheme,
	aiv1beta1.AddToScheme, hivev1.AddToScheme, hiveextv1beta1.AddToScheme,
	bmhv1alpha1.AddToScheme, infrav1.AddToScheme, infrav1alpha1.AddToScheme,
}

// Cache is the manager's cache: infrastructure machines and templates are
// read unstructured, at every pass, from the cache; of the machines it
// keeps only what the controllers read (infra.TrimForCache).
var Cache = manager.Cache{Unstructured: true, Trim: infra.TrimForCache}

// Options are the bootstrap-manager's own settings.
type Options struct {
	// CABundleFile is a PEM file of CAs to trust for assisted-service,
	// beyond the system roots.
	CABundleFile string
	// CABundle is PEM data trusted as well (tests, embedders).
	CABundle []byte
	// InsecureSkipTLSVerify turns off verification of assisted-service's
	// certificate.
	InsecureSkipTLSVerify bool
	// AssistedServiceURL replaces the scheme and host of the ignition URLs
	// InfraEnvs publish, e.g. an in-cluster service address.
	AssistedServiceURL string
	// IgnitionTimeout bounds one discovery ignition fetch.
	IgnitionTimeout time.Duration
}

// AddFlags binds the options to the manager's flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CABundleFile, "assisted-ca-bundle", "",
		"PEM file of the CA(s) that sign assisted-service's certificate, trusted in addition to the system roots when fetching discovery ignitions. An empty file adds none.")
	fs.BoolVar(&o.InsecureSkipTLSVerify, "assisted-insecure-skip-tls-verify", false,
		"Do not verify assisted-service's certificate. Unsafe: anyone on the path could hand machines an ignition. For experiments only.")
	fs.StringVar(&o.AssistedServiceURL, "assisted-service-url", "",
		"Base URL (scheme://host[:port]) that replaces the one InfraEnvs publish when fetching discovery ignitions, e.g. the in-cluster "+
			"https://assisted-service.multicluster-engine.svc:8090. Empty: use the published URL.")
	fs.DurationVar(&o.IgnitionTimeout, "assisted-ignition-timeout", ignition.DefaultTimeout,
		"Timeout of one discovery ignition fetch.")
}

// Controllers returns the provider's controllers: OpenshiftAssistedConfig
// and Agent. They share the cache indexes and the ignition fetcher, made
// once, when the first controller is set up (after the flags are parsed).
func Controllers(o *Options) []manager.Controller {
	shared := manager.NewShared(func(ctx context.Context, mgr ctrl.Manager) (*sharedState, error) {
		s := &sharedState{}
		return s, s.init(ctx, mgr, o)
	})
	return []manager.Controller{
		{
			Name: "openshiftassistedconfig",
			Setup: manager.SetupWith(shared, func(mgr ctrl.Manager, co manager.ControllerOptions, s *sharedState) manager.Reconciler {
				return &openshiftassistedconfig.Reconciler{
					Client:           mgr.GetClient(),
					APIReader:        mgr.GetAPIReader(),
					Recorder:         mgr.GetEventRecorder("openshiftassistedconfig-controller"),
					Fetcher:          s.fetcher,
					AssistedURL:      s.assistedURL,
					Kinds:            s.kinds,
					Freshness:        s.freshness,
					WatchFilterValue: co.WatchFilterValue,
				}
			}),
		},
		{
			Name: "agent",
			Setup: manager.SetupWith(shared, func(mgr ctrl.Manager, co manager.ControllerOptions, s *sharedState) manager.Reconciler {
				return &agent.Reconciler{
					Client:           mgr.GetClient(),
					APIReader:        mgr.GetAPIReader(),
					Recorder:         mgr.GetEventRecorder("agent-controller"),
					Kinds:            s.kinds,
					Freshness:        s.freshness,
					WatchFilterValue: co.WatchFilterValue,
				}
			}),
		},
	}
}

type sharedState struct {
	kinds       index.Kinds
	fetcher     *ignition.Fetcher
	assistedURL *url.URL
	// freshness is the stale-cache guard of both controllers: both write
	// configs (the Agent controller their status.agentRef).
	freshness *freshness.Tracker
}

func (s *sharedState) init(ctx context.Context, mgr ctrl.Manager, o *Options) error {
	s.freshness = freshness.New()
	var err error
	if s.fetcher, err = ignition.New(ignition.Options{
		CABundleFile: o.CABundleFile, CABundle: o.CABundle,
		InsecureSkipVerify: o.InsecureSkipTLSVerify, Timeout: o.IgnitionTimeout,
	}); err != nil {
		return err
	}
	log := ctrl.LoggerFrom(ctx).WithName("bootstrap")
	if o.InsecureSkipTLSVerify {
		log.Info("WARNING: --assisted-insecure-skip-tls-verify is set: assisted-service's certificate is not verified")
	}
	if o.AssistedServiceURL != "" {
		u, err := url.Parse(o.AssistedServiceURL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return fmt.Errorf("--assisted-service-url %q: want scheme://host[:port] with scheme http or https", o.AssistedServiceURL)
		}
		s.assistedURL = u
	}
	s.kinds, err = index.Setup(ctx, mgr, log)
	return err
}
