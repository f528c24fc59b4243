// Package openshiftassistedconfig reconciles OpenshiftAssistedConfigs: for
// the Machine that owns a config it creates the InfraEnv the machine boots
// from, hands the machine its boot artifact (the live ISO URL on a
// Metal3Machine, or the discovery ignition as bootstrap data), creates the
// bootstrap data Secret and sets status.initialization.dataSecretCreated
// (the CAPI v1beta2 bootstrap contract). It reports the Agent the Agent
// controller bound to the machine, and on deletion removes the InfraEnv and
// unbinds the Agents without ever waiting for the Machine or the Cluster.
package openshiftassistedconfig

import (
	"context"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/index"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/ignition"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs/status,verbs=get;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=infraenvs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=agents,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=hive.openshift.io,resources=clusterdeployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=extensions.hive.openshift.io,resources=agentclusterinstalls,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines;metal3machinetemplates,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines;openstackservers,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create

var (
	summaryConditions = []string{bootstrapv1.DataSecretAvailableCondition}
	ownedConditions   = []string{bootstrapv1.ReadyCondition, bootstrapv1.DataSecretAvailableCondition,
		bootstrapv1.AgentApprovedCondition, clusterv1.PausedCondition}
)

// Reconciler reconciles OpenshiftAssistedConfigs.
type Reconciler struct {
	Client client.Client
	// APIReader reads Secrets without caching every Secret of the cluster.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Fetcher gets discovery ignitions from assisted-service.
	Fetcher *ignition.Fetcher
	// AssistedURL, when set, replaces the scheme and host of the ignition
	// URLs that InfraEnvs publish (an in-cluster assisted-service address).
	AssistedURL *url.URL
	// Kinds are the optional infrastructure kinds this cluster serves.
	Kinds index.Kinds
	// Freshness is the stale-cache guard the provider's controllers share.
	Freshness        *freshness.Tracker
	WatchFilterValue string
}

// SetupWithManager registers the controller. The indexes of package index
// must be registered first.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	log := ctrl.LoggerFrom(ctx)
	clusterToConfigs, err := util.ClusterToTypedObjectsMapper(mgr.GetClient(), &bootstrapv1.OpenshiftAssistedConfigList{}, mgr.GetScheme())
	if err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		// Status-only updates are this controller's own writes, and the Agent
		// controller's claim, whose Agent's approval comes as an Agent event
		// right after.
		For(&bootstrapv1.OpenshiftAssistedConfig{},
			builder.WithPredicates(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue), skeleton.NotStatusOnly())).
		Named("openshiftassistedconfig").
		WithOptions(opts).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineToConfig),
			builder.WithPredicates(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue))).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterToConfigs),
			builder.WithPredicates(predicates.ClusterPausedTransitionsOrInfrastructureProvisioned(mgr.GetScheme(), log))).
		Watches(&hivev1.ClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.clusterLabelToConfigs)).
		Watches(&hiveextv1beta1.AgentClusterInstall{}, handler.EnqueueRequestsFromMapFunc(r.installToConfigs)).
		Watches(&aiv1beta1.InfraEnv{}, handler.EnqueueRequestsFromMapFunc(r.infraEnvToConfigs)).
		Watches(&aiv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(agentToConfig))
	if r.Kinds.Metal3 {
		m3m := &unstructured.Unstructured{}
		m3m.SetGroupVersionKind(r.Kinds.Metal3MachineGVK)
		b = b.Watches(m3m, handler.EnqueueRequestsFromMapFunc(r.infraMachineToConfig))
	}
	return b.Complete(r)
}

// Reconcile is the skeleton every controller of this project's own objects
// shares (internal/skeleton): the config, its Machine and Cluster, the
// stale-cache guard, Paused, the finalizer (once a Machine owns the config),
// CAPI's patch helper with a deferred Ready summary, then reconcileDelete or
// reconcileNormal.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, req, skeleton.Spec[*bootstrapv1.OpenshiftAssistedConfig, *scope]{
		Client: r.Client, Freshness: r.Freshness, WatchFilterValue: r.WatchFilterValue,
		Kind: "OpenshiftAssistedConfig", Finalizer: bootstrapv1.ConfigFinalizer,
		FinalizerDue: func(s *scope) bool { return s.machine != nil },
		Owned:        ownedConditions, Summary: summaryConditions,
		Scope: r.newScope, Normal: r.reconcileNormal, Delete: r.reconcileDelete,
	})
}

// scope is what one reconcile works on. machine and cluster are nil when
// they do not exist (yet, or any more): both are normal. The phases of
// reconcileNormal fill in the rest, in their order.
type scope struct {
	config  *bootstrapv1.OpenshiftAssistedConfig
	machine *clusterv1.Machine
	cluster *clusterv1.Cluster

	// cd and aci are the cluster's hive objects; installMsg says which is
	// missing.
	cd         *hivev1.ClusterDeployment
	aci        *hiveextv1beta1.AgentClusterInstall
	installMsg string
	// infraObj is the Machine's infrastructure machine, mode its boot mode.
	infraObj *unstructured.Unstructured
	mode     bootstrapv1.BootMode
	// boot is the InfraEnv the machine boots from.
	boot *boot
	// data is the bootstrap data to write; nil when the Secret exists.
	data []byte
}

// newScope reads the config's Machine and Cluster.
func (r *Reconciler) newScope(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig) (*scope, *clusterv1.Cluster, error) {
	s := &scope{config: config}
	machine, err := util.GetOwnerMachine(ctx, r.Client, config.ObjectMeta)
	switch {
	case apierrors.IsNotFound(err):
		// The owner is gone: deletion must still work (CAPOA, the provider
		// this one replaces, stalled on a nil Machine here: MGMT-24420,
		// docs/bootstrap.md, Flow, Deletion).
	case err != nil:
		return nil, nil, err
	default:
		s.machine = machine
	}
	clusterName := config.Labels[clusterv1.ClusterNameLabel]
	if clusterName == "" && s.machine != nil {
		clusterName = s.machine.Spec.ClusterName
	}
	if s.cluster, err = skeleton.ClusterByName(ctx, r.Client, config.Namespace, clusterName); err != nil {
		return nil, nil, err
	}
	return s, s.cluster, nil
}

// machineToConfig maps a Machine to its OpenshiftAssistedConfig.
func machineToConfig(_ context.Context, o client.Object) []reconcile.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	ref := m.Spec.Bootstrap.ConfigRef
	if ref.Kind != "OpenshiftAssistedConfig" || ref.APIGroup != bootstrapv1.GroupVersion.Group || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: ref.Name}}}
}

// agentToConfig maps an Agent bound to a config to that config.
func agentToConfig(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[bootstrapv1.ConfigLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// configsOfCluster lists the configs labelled with the cluster's name.
func (r *Reconciler) configsOfCluster(ctx context.Context, namespace, cluster string) []reconcile.Request {
	if cluster == "" {
		return nil
	}
	list := &bootstrapv1.OpenshiftAssistedConfigList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing OpenshiftAssistedConfigs of a cluster", "cluster", cluster)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// clusterLabelToConfigs maps a ClusterDeployment to its cluster's configs.
func (r *Reconciler) clusterLabelToConfigs(ctx context.Context, o client.Object) []reconcile.Request {
	return r.configsOfCluster(ctx, o.GetNamespace(), o.GetLabels()[clusterv1.ClusterNameLabel])
}

// installToConfigs maps an AgentClusterInstall to its cluster's configs,
// through its label or its ClusterDeployment's.
func (r *Reconciler) installToConfigs(ctx context.Context, o client.Object) []reconcile.Request {
	if cluster := o.GetLabels()[clusterv1.ClusterNameLabel]; cluster != "" {
		return r.configsOfCluster(ctx, o.GetNamespace(), cluster)
	}
	aci, ok := o.(*hiveextv1beta1.AgentClusterInstall)
	if !ok || aci.Spec.ClusterDeploymentRef.Name == "" {
		return nil
	}
	cd := &hivev1.ClusterDeployment{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: aci.Namespace, Name: aci.Spec.ClusterDeploymentRef.Name}, cd); err != nil {
		return nil
	}
	return r.configsOfCluster(ctx, cd.Namespace, cd.Labels[clusterv1.ClusterNameLabel])
}

// infraEnvToConfigs maps an InfraEnv to the configs whose machines boot
// from it.
func (r *Reconciler) infraEnvToConfigs(ctx context.Context, o client.Object) []reconcile.Request {
	out := map[types.NamespacedName]bool{}
	if name := o.GetLabels()[bootstrapv1.ConfigLabel]; name != "" {
		out[types.NamespacedName{Namespace: o.GetNamespace(), Name: name}] = true
	}
	if o.GetLabels()[bootstrapv1.TemplateInfraEnvLabel] != "" {
		list := &bootstrapv1.OpenshiftAssistedConfigList{}
		if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{index.ConfigInfraEnv: o.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the OpenshiftAssistedConfigs of an InfraEnv", "infraEnv", o.GetName())
		}
		for i := range list.Items {
			out[client.ObjectKeyFromObject(&list.Items[i])] = true
		}
	}
	reqs := make([]reconcile.Request, 0, len(out))
	for k := range out {
		reqs = append(reqs, reconcile.Request{NamespacedName: k})
	}
	return reqs
}

// infraMachineToConfig maps a Metal3Machine to its Machine's config, so that
// an image changed behind the controller's back is put back at once.
func (r *Reconciler) infraMachineToConfig(ctx context.Context, o client.Object) []reconcile.Request {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind != "Machine" {
			continue
		}
		m := &clusterv1.Machine{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}, m); err != nil {
			return nil
		}
		return machineToConfig(ctx, m)
	}
	return nil
}
