package controlplane

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	controlplanev1beta1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1beta1"
	"github.com/ocp-capi/ocp-capi/controlplane/controllers/openshiftassistedcontrolplane"
	"github.com/ocp-capi/ocp-capi/controlplane/controllers/workload"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
	"github.com/ocp-capi/ocp-capi/internal/manager"
)

// AddToScheme registers the types the provider uses: CAPI core, its own
// API, the bootstrap API (the configs it makes), hive and the
// AgentClusterInstall, and ClusterVersion (read in workload clusters).
// Infrastructure machines are handled unstructured, at the version their
// CRD's contract label gives. The control-plane API's v1beta1 is only
// converted (by the conversion webhook), never reconciled.
var AddToScheme = []func(*runtime.Scheme) error{
	clusterv1.AddToScheme, controlplanev1.AddToScheme, controlplanev1beta1.AddToScheme, bootstrapv1.AddToScheme,
	hivev1.AddToScheme, hiveextv1beta1.AddToScheme, configv1.AddToScheme,
}

// Options are the controlplane-manager's own settings.
type Options struct {
	// UpgradePollInterval is how often the ClusterVersion of a workload
	// cluster whose upgrade is running is read (the workload cluster is
	// read, not watched). 0 means openshiftassistedcontrolplane.DefaultUpgradePollInterval.
	UpgradePollInterval time.Duration
}

// AddFlags binds the options to flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.UpgradePollInterval, "upgrade-poll-interval", openshiftassistedcontrolplane.DefaultUpgradePollInterval,
		"How often the ClusterVersion of a workload cluster is read while its upgrade runs.")
}

// Controllers returns the provider's controller: OpenshiftAssistedControlPlane.
// o may be nil (the defaults).
func Controllers(o *Options) []manager.Controller {
	if o == nil {
		o = &Options{}
	}
	return []manager.Controller{{
		Name: "openshiftassistedcontrolplane",
		Setup: func(ctx context.Context, mgr ctrl.Manager, co manager.ControllerOptions) error {
			secrets, err := NewSecretCache(mgr, co.Namespace)
			if err != nil {
				return err
			}
			workers, err := NewWorkerMachineCache(mgr, co.Namespace)
			if err != nil {
				return err
			}
			clients, err := workload.New()
			if err != nil {
				return err
			}
			return (&openshiftassistedcontrolplane.Reconciler{
				Client:           mgr.GetClient(),
				APIReader:        mgr.GetAPIReader(),
				Secrets:          secrets,
				WorkerMachines:   workers,
				Recorder:         mgr.GetEventRecorder("openshiftassistedcontrolplane-controller"),
				Workload:         clients,
				Freshness:        freshness.New(),
				UpgradePoll:      o.UpgradePollInterval,
				WatchFilterValue: co.WatchFilterValue,
			}).SetupWithManager(ctx, mgr, co.Options())
		},
	}}
}

// Cache is the manager's cache: infrastructure machines and templates are
// read unstructured, at every pass, from the cache; of the
// OpenshiftAssistedConfigs and Machines it holds only the control planes'
// own (cacheByObject).
var Cache = manager.Cache{Unstructured: true, ByObject: cacheByObject}

// cacheByObject narrows the cache: of the OpenshiftAssistedConfigs and the
// Machines it holds only the control planes' own, labelled with their name
// when they are made, the only ones the controller reads whole. A
// management cluster's worker configs and Machines, as many as its
// workers, stay out of its memory; of the worker Machines it keeps only
// metadata (NewWorkerMachineCache; docs/reliability.md, Scale).
func cacheByObject() (map[client.Object]cache.ByObject, error) {
	req, err := labels.NewRequirement(clusterv1.MachineControlPlaneNameLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	own := labels.NewSelector().Add(*req)
	return map[client.Object]cache.ByObject{
		&bootstrapv1.OpenshiftAssistedConfig{}: {Label: own},
		&clusterv1.Machine{}:                   {Label: own},
	}, nil
}

// sideCache is a cache the manager's own does not cover; GetCache files it
// with the manager's caches, which start and sync before the controllers.
type sideCache struct{ cache.Cache }

func (c sideCache) GetCache() cache.Cache { return c.Cache }

// newSideCache makes, and adds to the manager, a cache of the objects that
// byObject selects (in namespace, or all when ""), transformed as the
// manager's own cache is (manager.CacheTransform).
func newSideCache(mgr ctrl.Manager, namespace string, byObject map[client.Object]cache.ByObject) (cache.Cache, error) {
	opts := cache.Options{
		HTTPClient:       mgr.GetHTTPClient(),
		Scheme:           mgr.GetScheme(),
		Mapper:           mgr.GetRESTMapper(),
		ByObject:         byObject,
		DefaultTransform: manager.CacheTransform(),
	}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	c, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(sideCache{c}); err != nil {
		return nil, err
	}
	return c, nil
}

// NewSecretCache makes, and adds to the manager, a cache of the Secrets
// labelled cluster.x-k8s.io/cluster-name (in namespace, or all when ""):
// the cluster kubeconfig Secrets and the admin kubeconfigs the controller
// labels. The manager's own cache does not hold Secrets: that would be
// every Secret of the management cluster.
func NewSecretCache(mgr ctrl.Manager, namespace string) (cache.Cache, error) {
	req, err := labels.NewRequirement(clusterv1.ClusterNameLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	c, err := newSideCache(mgr, namespace, map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: labels.NewSelector().Add(*req)}})
	if err != nil {
		return nil, fmt.Errorf("making the Secrets cache: %w", err)
	}
	return c, nil
}

// NewWorkerMachineCache makes, and adds to the manager, a cache for the
// metadata of the worker Machines, those without the
// cluster.x-k8s.io/control-plane label (in namespace, or all when ""). The
// control plane reads of a worker Machine only its name, labels and
// deletion timestamp, to delete its cluster's workers first; the manager's
// own cache holds only control-plane Machines (cacheByObject), so no
// Machine is cached twice. The controller reads this cache only as
// metav1.PartialObjectMetadata, so it holds no Machine's spec or status.
func NewWorkerMachineCache(mgr ctrl.Manager, namespace string) (cache.Cache, error) {
	req, err := labels.NewRequirement(clusterv1.MachineControlPlaneLabel, selection.DoesNotExist, nil)
	if err != nil {
		return nil, err
	}
	c, err := newSideCache(mgr, namespace, map[client.Object]cache.ByObject{&clusterv1.Machine{}: {Label: labels.NewSelector().Add(*req)}})
	if err != nil {
		return nil, fmt.Errorf("making the worker Machines cache: %w", err)
	}
	return c, nil
}
