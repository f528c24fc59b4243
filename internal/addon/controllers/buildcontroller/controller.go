// Package buildcontroller is the add-on's BuildController: it builds a layered OS
// image for every MachineConfigPool labelled
// machineconfiguration.openshift.io/layering-enabled, from the pool's
// rendered MachineConfig and the configuration in the build namespace, with
// the OpenShift Build API or a Kubernetes Job, and writes the outcome back to
// the pool (conditions BuildPending, Building, BuildSuccess, BuildFailed and
// the annotation machineconfiguration.openshift.io/desired-os-image). The
// pure parts (inputs, names, Containerfile, backends) are internal/addon/internal/osbuild.
// docs/addon/build-controller.md describes it for users.
package buildcontroller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	buildv1 "github.com/ocp-capi/ocp-capi/internal/consumed/build/v1"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
	"github.com/ocp-capi/ocp-capi/internal/manager"
)

// Pools and MachineConfigs are cluster-scoped: a ClusterRole. Pools get
// patched (annotations) and their status patched (conditions); nothing is
// created or deleted at cluster scope.
// +kubebuilder:rbac:groups=machineconfiguration.openshift.io,resources=machineconfigpools,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=machineconfiguration.openshift.io,resources=machineconfigpools/status,verbs=get;patch
// +kubebuilder:rbac:groups=machineconfiguration.openshift.io,resources=machineconfigs,verbs=get;list;watch
//
// The MachineOSConfig flow: MachineOSConfigs are the user's (read, their
// annotations and status patched); MachineOSBuilds are the controller's.
// +kubebuilder:rbac:groups=machineconfiguration.openshift.io,resources=machineosconfigs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=machineconfiguration.openshift.io,resources=machineosconfigs/status,verbs=get;patch
// +kubebuilder:rbac:groups=machineconfiguration.openshift.io,resources=machineosbuilds,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=machineconfiguration.openshift.io,resources=machineosbuilds/status,verbs=get;patch
//
// Everything else lives in the build namespace: a Role there, not a
// ClusterRole. Secrets are only read (get, no list or watch), one by name,
// when a build is about to start. If --build-namespace changes, bind the Role
// in that namespace instead.
// +kubebuilder:rbac:groups="",namespace=openshift-machine-config-operator,resources=configmaps,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",namespace=openshift-machine-config-operator,resources=secrets,verbs=get
// +kubebuilder:rbac:groups=build.openshift.io,namespace=openshift-machine-config-operator,resources=builds,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=batch,namespace=openshift-machine-config-operator,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",namespace=openshift-machine-config-operator,resources=pods,verbs=get;list;watch

// ControllerName is the controller's name: it yields --build-concurrency.
const ControllerName = "build"

// AddToScheme registers the API types the controller uses beyond client-go's.
var AddToScheme = []func(*runtime.Scheme) error{mcfgv1.AddToScheme, buildv1.AddToScheme}

// Controller returns the manager.Controller of the BuildController. opts is
// read when the manager sets the controller up, after the flags are parsed,
// so pass the Options that Options.AddFlags bound.
func Controller(opts *Options) manager.Controller {
	return manager.Controller{
		Name:               ControllerName,
		DefaultConcurrency: 5, // upstream's worker count
		Setup: func(ctx context.Context, mgr ctrl.Manager, o manager.ControllerOptions) error {
			r, err := NewReconciler(mgr, *opts, o.WatchFilterValue)
			if err != nil {
				return err
			}
			return r.SetupWithManager(ctx, mgr, o.Options())
		},
	}
}

// Reconciler reconciles MachineConfigPools.
type Reconciler struct {
	// Client reads pools from the manager's cache and writes everything.
	// It must not read namespaced objects: that would start cluster-wide
	// informers.
	Client client.Client
	// Cache reads the build namespace's ConfigMaps, build objects and pods
	// (set by SetupWithManager).
	Cache client.Reader
	// MachineConfigs reads MachineConfigs from a cache that keeps their
	// image fields only (no Ignition config), for the rebuild rule (set by
	// SetupWithManager).
	MachineConfigs client.Reader
	// Registry looks up and deletes images in their registries.
	Registry Registry
	// APIReader reads Secrets and MachineConfigs uncached, when a build
	// starts.
	APIReader client.Reader
	// NewReconciler and SetupWithManager give each of the three a deadline
	// per call (Options.APITimeout; bounded.go).
	Recorder events.EventRecorder
	Backend  osbuild.Backend
	Options  Options
	// WatchFilterValue is the cluster.x-k8s.io/watch-filter label value.
	WatchFilterValue string
	// machineOSAPI is whether the API server serves MachineOSConfigs and
	// MachineOSBuilds (OpenShift 4.19 and later): without them only the
	// label drives pools (set by SetupWithManager).
	machineOSAPI bool
}

// NewReconciler validates opts and builds a reconciler on mgr's clients.
func NewReconciler(mgr ctrl.Manager, opts Options, watchFilter string) (*Reconciler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	backend, err := osbuild.NewBackend(opts.Backend, osbuild.BackendOptions{
		Timeout:        opts.Timeout,
		ServiceAccount: opts.ServiceAccount,
		BuilderImage:   opts.BuilderImage,
		Retries:        int32(opts.Retries),
	})
	if err != nil {
		return nil, err
	}
	registry := opts.Registry
	if registry == nil {
		registry = &HTTPRegistry{Timeout: opts.APITimeout}
	}
	return &Reconciler{
		Client:           newBoundedClient(mgr.GetClient(), opts.APITimeout),
		APIReader:        newBoundedReader(mgr.GetAPIReader(), opts.APITimeout),
		Recorder:         mgr.GetEventRecorder("build-controller"),
		Backend:          backend,
		Registry:         registry,
		Options:          opts,
		WatchFilterValue: watchFilter,
	}, nil
}

// namespaceCache lets the manager run a cache in its Caches group: started
// before the controllers, whatever the leader election.
type namespaceCache struct{ cache.Cache }

func (c namespaceCache) GetCache() cache.Cache { return c.Cache }

// SetupWithManager registers the controller, its cache of the build
// namespace, and the one-off sweep of the other backend's objects. It is
// over 80 lines because it is one builder: each watch is a line with the
// reason it exists, and split up they would no longer read as the list of
// what wakes the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.Options.Backend == osbuild.BackendBuild {
		// Say plainly when the Build API is missing, rather than fail later
		// in a watch.
		if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: buildv1.GroupVersion.Group, Kind: "Build"}, buildv1.GroupVersion.Version); err != nil {
			return fmt.Errorf("--build-backend=%s needs the OpenShift Build API (build.openshift.io/v1 Build), which the API server does not serve; use --build-backend=%s: %w",
				osbuild.BackendBuild, osbuild.BackendJob, err)
		}
	}
	managed := labels.SelectorFromSet(labels.Set{osbuild.ManagedByLabel: osbuild.ManagedByValue})
	// One namespace only, so a Role there suffices; the build objects and
	// pods only when they are ours.
	nsCache, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:        mgr.GetHTTPClient(),
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{r.Options.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			r.Backend.NewObject(): {Label: managed},
			&corev1.Pod{}:         {Label: managed},
		},
	})
	if err != nil {
		return fmt.Errorf("creating the cache of namespace %s: %w", r.Options.Namespace, err)
	}
	if err := mgr.Add(namespaceCache{nsCache}); err != nil {
		return err
	}
	r.Cache = newBoundedReader(nsCache, r.Options.APITimeout)
	// MachineConfigs without their Ignition config: the rebuild rule needs
	// only the image fields, and rendered configs can be large.
	mcCache, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(),
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{
			&mcfgv1.MachineConfig{}: {Transform: stripMachineConfig},
		},
	})
	if err != nil {
		return fmt.Errorf("creating the cache of MachineConfigs: %w", err)
	}
	if err := mgr.Add(namespaceCache{mcCache}); err != nil {
		return err
	}
	r.MachineConfigs = newBoundedReader(mcCache, r.Options.APITimeout)
	RegisterMetrics()
	if err := mgr.Add(&sweeper{
		reader: newBoundedReader(mgr.GetAPIReader(), r.Options.APITimeout), client: r.Client,
		namespace: r.Options.Namespace, active: r.Options.Backend,
	}); err != nil {
		return err
	}

	log := ctrl.LoggerFrom(ctx)
	r.machineOSAPI = servesMachineOS(mgr)
	if !r.machineOSAPI {
		log.Info("The API server serves no MachineOSConfigs and MachineOSBuilds (machineconfiguration.openshift.io/v1, OpenShift 4.19): only the layering-enabled label drives pools")
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("machineconfigpool-build").
		For(&mcfgv1.MachineConfigPool{}, builder.WithPredicates(
			predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue),
			// The MCO updates pool status often (machine counts); only spec,
			// labels and annotations matter here. The resyncs too: they are
			// what --sync-period promises, every pool reconciled again.
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{},
				predicate.Funcs{UpdateFunc: isResync}),
		)).
		WithOptions(opts).
		// A pool may name its rendered MachineConfig before it exists.
		WatchesRawSource(source.Kind(mcCache, client.Object(&mcfgv1.MachineConfig{}), handler.EnqueueRequestsFromMapFunc(r.machineConfigToPools),
			predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})).
		WatchesRawSource(source.Kind(nsCache, client.Object(&corev1.ConfigMap{}), handler.EnqueueRequestsFromMapFunc(r.configMapToPools))).
		WatchesRawSource(source.Kind(nsCache, r.Backend.NewObject(), handler.EnqueueRequestsFromMapFunc(ownerPool)))
	if r.Options.Backend == osbuild.BackendJob {
		b = b.WatchesRawSource(source.Kind(nsCache, client.Object(&corev1.Pod{}), handler.EnqueueRequestsFromMapFunc(ownerPool)))
	}
	if r.machineOSAPI {
		// The user's changes to a MachineOSConfig (spec, annotations), not
		// the status the controller writes; MachineOSBuilds made or
		// deleted, not their status.
		b = b.Watches(&mcfgv1.MachineOSConfig{}, handler.EnqueueRequestsFromMapFunc(r.machineOSConfigToPool),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
			Watches(&mcfgv1.MachineOSBuild{}, handler.EnqueueRequestsFromMapFunc(r.machineOSBuildToPool),
				builder.WithPredicates(predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}))
	}
	return b.Complete(r)
}

// isResync tells an informer's periodic resync, which delivers the object
// it holds as an update of itself.
func isResync(e event.UpdateEvent) bool {
	return e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion()
}

// servesMachineOS reports whether the API server serves MachineOSConfigs
// and MachineOSBuilds.
func servesMachineOS(mgr ctrl.Manager) bool {
	for _, kind := range []string{"MachineOSConfig", "MachineOSBuild"} {
		if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: mcfgv1.GroupVersion.Group, Kind: kind}, mcfgv1.GroupVersion.Version); err != nil {
			return false
		}
	}
	return true
}

// stripMachineConfig keeps what the rebuild rule reads: the name and the
// image fields.
func stripMachineConfig(o any) (any, error) {
	if mc, ok := o.(*mcfgv1.MachineConfig); ok {
		mc.Spec.Config = runtime.RawExtension{}
		mc.ManagedFields = nil
		mc.Annotations = nil
	}
	return o, nil
}

// ownerPool maps one of our objects to its pool.
func ownerPool(_ context.Context, o client.Object) []reconcile.Request {
	if o.GetLabels()[osbuild.ManagedByLabel] != osbuild.ManagedByValue {
		return nil
	}
	pool := o.GetAnnotations()[osbuild.PoolAnnotation]
	if pool == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: pool}}}
}

// configMapToPools maps an input ConfigMap to every layered pool, and one of
// ours to its pool.
func (r *Reconciler) configMapToPools(ctx context.Context, o client.Object) []reconcile.Request {
	switch o.GetName() {
	case osbuild.BuilderConfigMapName, osbuild.BuilderConfigMapAlias, osbuild.OSImageURLConfigMapName, osbuild.CustomContainerfileConfigMapName:
		return r.layeredPools(ctx, func(*mcfgv1.MachineConfigPool) bool { return true })
	}
	return ownerPool(ctx, o)
}

// machineConfigToPools maps a MachineConfig to the layered pools that name it.
func (r *Reconciler) machineConfigToPools(ctx context.Context, o client.Object) []reconcile.Request {
	return r.layeredPools(ctx, func(p *mcfgv1.MachineConfigPool) bool { return p.Spec.Configuration.Name == o.GetName() })
}

func (r *Reconciler) layeredPools(ctx context.Context, match func(*mcfgv1.MachineConfigPool) bool) []reconcile.Request {
	list := &mcfgv1.MachineConfigPoolList{}
	sel := client.HasLabels{osbuild.LayeringEnabledLabel}
	opts := []client.ListOption{sel}
	if r.WatchFilterValue != "" {
		opts = append(opts, client.MatchingLabels{clusterv1.WatchLabel: r.WatchFilterValue})
	}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing MachineConfigPools")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if match(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: list.Items[i].Name}})
		}
	}
	return out
}
