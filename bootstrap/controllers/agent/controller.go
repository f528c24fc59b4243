// Package agent reconciles the Agents that register from this provider's
// InfraEnvs: it binds each Agent to its Machine (by InfraEnv when the
// InfraEnv serves one machine, by MAC address against the machine's host
// otherwise), claims it in the machine's config with an optimistic lock so
// that a machine never has two, and sets its role, hostname, node labels,
// install-time Ignition overrides and approval. Agents of other InfraEnvs
// are not touched.
package agent

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/index"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/gate"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
)

// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=agents,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=infraenvs,verbs=get;list;watch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs/status,verbs=get;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=hive.openshift.io,resources=clusterdeployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=extensions.hive.openshift.io,resources=agentclusterinstalls,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines;openstackmachines;openstackservers,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

// Requeue delays; the controller never waits, it comes back.
const (
	// hostRetry: the Agent's host is not known yet (a BareMetalHost not
	// claimed, a MAC not on any host yet).
	hostRetry = 30 * time.Second
	// claimRetry: the config or the Agent changed under our write
	// (optimistic lock).
	claimRetry = 200 * time.Millisecond
)

// Reconciler reconciles Agents.
type Reconciler struct {
	Client client.Client
	// APIReader confirms, uncached, that a claimed Agent is gone before
	// another takes the machine over.
	APIReader        client.Reader
	Recorder         events.EventRecorder
	Kinds            index.Kinds
	WatchFilterValue string
	// Freshness is the stale-cache guard the provider's controllers share:
	// a cached Agent or config that our own write replaced is not acted on.
	Freshness *freshness.Tracker
}

// SetupWithManager registers the controller. The indexes of package index
// must be registered first.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	log := ctrl.LoggerFrom(ctx)
	return ctrl.NewControllerManagedBy(mgr).
		For(&aiv1beta1.Agent{}, builder.WithPredicates(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue))).
		Named("agent").
		WithOptions(opts).
		Watches(&bootstrapv1.OpenshiftAssistedConfig{}, r.configHandler()).
		Watches(&hiveextv1beta1.AgentClusterInstall{}, handler.EnqueueRequestsFromMapFunc(r.installToAgents),
			builder.WithPredicates(installStateChanged())).
		Complete(r)
}

// installStateChanged passes AgentClusterInstall changes of state or of
// the day-1/day-2 gate's decision (which also reads its conditions in state
// ready): the gate opens on them.
func installStateChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*hiveextv1beta1.AgentClusterInstall)
			n, ok2 := e.ObjectNew.(*hiveextv1beta1.AgentClusterInstall)
			if !ok1 || !ok2 {
				return false
			}
			oldOpen, _ := gate.WorkerMayJoin(o)
			newOpen, _ := gate.WorkerMayJoin(n)
			return o.Status.DebugInfo.State != n.Status.DebugInfo.State || oldOpen != newOpen
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

func refName(r *bootstrapv1.LocalObjectReference) string {
	if r == nil {
		return ""
	}
	return r.Name
}

// configHandler enqueues the Agents a config change concerns: when the
// config gets its InfraEnv, the unbound Agents of it (they may have
// registered before); when its claimed Agent changes, the previous holder
// and, if the claim was dropped, the unbound Agents. Not the new holder: it
// made the change itself, and a requeue would only read a stale cache.
func (r *Reconciler) configHandler() handler.Funcs {
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, ok1 := e.ObjectOld.(*bootstrapv1.OpenshiftAssistedConfig)
			n, ok2 := e.ObjectNew.(*bootstrapv1.OpenshiftAssistedConfig)
			if !ok1 || !ok2 {
				return
			}
			oldIE, newIE := refName(o.Status.InfraEnvRef), refName(n.Status.InfraEnvRef)
			oldAgent, newAgent := refName(o.Status.AgentRef), refName(n.Status.AgentRef)
			if oldAgent != newAgent && oldAgent != "" {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: n.Namespace, Name: oldAgent}})
			}
			// Unpaused: what the pause left undone (binding, approval) is
			// done now, not at the next resync.
			unpaused := annotations.HasPaused(o) && !annotations.HasPaused(n)
			if unpaused && newAgent != "" {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: n.Namespace, Name: newAgent}})
			}
			if newIE != "" && newAgent == "" && (oldIE != newIE || oldAgent != "" || unpaused) {
				for _, req := range r.unboundAgents(ctx, n.Namespace, newIE) {
					q.Add(req)
				}
			}
		},
	}
}

// unboundAgents lists the Agents of an InfraEnv that no config holds.
func (r *Reconciler) unboundAgents(ctx context.Context, namespace, infraEnv string) []reconcile.Request {
	all := &aiv1beta1.AgentList{}
	if err := r.Client.List(ctx, all, client.InNamespace(namespace), client.MatchingLabels{aiv1beta1.InfraEnvNameLabel: infraEnv}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range all.Items {
		if all.Items[i].Labels[bootstrapv1.ConfigLabel] == "" {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&all.Items[i])})
		}
	}
	return out
}

// installToAgents maps an AgentClusterInstall to its cluster's Agents that
// are not approved yet (workers held by the gate). Agents carry the cluster
// label from their InfraEnv's agentLabels.
func (r *Reconciler) installToAgents(ctx context.Context, o client.Object) []reconcile.Request {
	cluster := o.GetLabels()[clusterv1.ClusterNameLabel]
	if aci, ok := o.(*hiveextv1beta1.AgentClusterInstall); ok && cluster == "" && aci.Spec.ClusterDeploymentRef.Name != "" {
		cd := &hivev1.ClusterDeployment{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: aci.Namespace, Name: aci.Spec.ClusterDeploymentRef.Name}, cd); err == nil {
			cluster = cd.Labels[clusterv1.ClusterNameLabel]
		}
	}
	if cluster == "" {
		return nil
	}
	agents := &aiv1beta1.AgentList{}
	if err := r.Client.List(ctx, agents, client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range agents.Items {
		if !agents.Items[i].Spec.Approved {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&agents.Items[i])})
		}
	}
	return reqs
}
