package agent

import (
	"context"
	"errors"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/host"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/index"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/install"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/agentspec"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/gate"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infraenv"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// scope is what one reconcile of an Agent works on; its phases fill it in,
// in their order.
type scope struct {
	key types.NamespacedName
	log logr.Logger
	// agent is the Agent; base is it as read.
	agent, base *aiv1beta1.Agent
	infraEnv    *aiv1beta1.InfraEnv
	config      *bootstrapv1.OpenshiftAssistedConfig
	machine     *clusterv1.Machine
	// needClaim: the config does not name this Agent in status.agentRef yet.
	needClaim bool
	host      *host.Host
	// changed: the Agent differs from what the machine asks of it; specErr:
	// what the machine asks cannot be built (a host variable without value).
	changed bool
	specErr error
}

// Reconcile binds one Agent to its Machine and writes what the machine
// asks of it, in phases; each stops the flow when there is nothing (more) to
// do for the Agent. It writes nothing when the Agent already says it all.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := &scope{key: req.NamespacedName, log: ctrl.LoggerFrom(ctx)}
	return skeleton.RunPhases(ctx, s,
		r.readAgent,    // a live Agent, reported on by assisted-service, not stale
		r.readInfraEnv, // its InfraEnv, one this provider made (within --watch-filter)
		r.findConfig,   // the config of the machine it belongs to, not stale, not being deleted
		r.readMachine,  // the config's live Machine and its Cluster, not paused
		r.checkHolder,  // the machine is this Agent's or free (else the Agent is a duplicate)
		r.readHost,     // the machine's host: its variables, labels and provider ID
		r.desire,       // role, hostname, labels, overrides and approval, applied to the copy
		r.claim,        // the config's status.agentRef, under an optimistic lock
		r.writeAgent,   // the Agent's fields we own, under an optimistic lock, and the events
	)
}

// readAgent reads the Agent. It stops at an Agent that is being deleted, at
// a cached copy our own write replaced, at an Agent no InfraEnv names, and at
// one assisted-service has not reported on yet (it creates an Agent, then
// writes its status: that write's event is awaited rather than raced).
func (r *Reconciler) readAgent(ctx context.Context, s *scope) (ctrl.Result, error) {
	agent := &aiv1beta1.Agent{}
	if err := r.Client.Get(ctx, s.key, agent); err != nil {
		return ctrl.Result{}, stopUnlessError(client.IgnoreNotFound(err))
	}
	switch {
	case !agent.DeletionTimestamp.IsZero():
		return ctrl.Result{}, skeleton.ErrStop
	case r.Freshness.Stale(agent):
		return ctrl.Result{RequeueAfter: freshness.Retry}, skeleton.ErrStop
	case agent.Labels[aiv1beta1.InfraEnvNameLabel] == "":
		return ctrl.Result{}, skeleton.ErrStop
	case agent.Status.DebugInfo.State == "" && len(agent.Status.Inventory.Interfaces) == 0:
		return ctrl.Result{}, skeleton.ErrStop
	}
	s.agent, s.base = agent, agent.DeepCopy()
	return ctrl.Result{}, nil
}

// readInfraEnv reads the Agent's InfraEnv; one this provider did not make
// is someone else's discovery environment, and its Agents are left alone.
func (r *Reconciler) readInfraEnv(ctx context.Context, s *scope) (ctrl.Result, error) {
	ie := &aiv1beta1.InfraEnv{}
	key := types.NamespacedName{Namespace: s.agent.Namespace, Name: s.agent.Labels[aiv1beta1.InfraEnvNameLabel]}
	if err := r.Client.Get(ctx, key, ie); err != nil {
		return ctrl.Result{}, stopUnlessError(client.IgnoreNotFound(err))
	}
	perConfig, shared := ie.Labels[bootstrapv1.ConfigLabel], ie.Labels[bootstrapv1.TemplateInfraEnvLabel]
	if perConfig == "" && shared == "" {
		return ctrl.Result{}, skeleton.ErrStop
	}
	if r.WatchFilterValue != "" && ie.Labels[clusterv1.WatchLabel] != r.WatchFilterValue {
		return ctrl.Result{}, skeleton.ErrStop
	}
	s.infraEnv = ie
	return ctrl.Result{}, nil
}

// findConfig finds the config whose machine the Agent belongs to (see
// configFor). A config being deleted unbinds its Agents itself.
func (r *Reconciler) findConfig(ctx context.Context, s *scope) (ctrl.Result, error) {
	config, res, err := r.configFor(ctx, s.agent, s.infraEnv)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case config == nil:
		return res, skeleton.ErrStop
	case r.Freshness.Stale(config):
		return ctrl.Result{RequeueAfter: freshness.Retry}, skeleton.ErrStop
	case !config.DeletionTimestamp.IsZero():
		return ctrl.Result{}, skeleton.ErrStop
	}
	s.config = config
	s.log = s.log.WithValues("OpenshiftAssistedConfig", config.Name)
	return ctrl.Result{}, nil
}

// readMachine reads the config's Machine and stops when there is no live
// Machine to install for, or when its Cluster (or the config) is paused.
func (r *Reconciler) readMachine(ctx context.Context, s *scope) (ctrl.Result, error) {
	machine, err := util.GetOwnerMachine(ctx, r.Client, s.config.ObjectMeta)
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, skeleton.ErrStop
	case err != nil:
		return ctrl.Result{}, err
	case machine == nil || !machine.DeletionTimestamp.IsZero():
		return ctrl.Result{}, skeleton.ErrStop
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: machine.Namespace, Name: machine.Spec.ClusterName}, cluster); err != nil {
		return ctrl.Result{}, stopUnlessError(client.IgnoreNotFound(err))
	}
	if annotations.IsPaused(cluster, s.config) {
		return ctrl.Result{}, skeleton.ErrStop
	}
	s.machine = machine
	return ctrl.Result{}, nil
}

// checkHolder stops unless the Agent holds, or may claim, the machine (see
// mayHold).
func (r *Reconciler) checkHolder(ctx context.Context, s *scope) (ctrl.Result, error) {
	holds, needClaim, err := r.mayHold(ctx, s.config, s.agent)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !holds {
		return ctrl.Result{}, skeleton.ErrStop
	}
	s.needClaim = needClaim
	return ctrl.Result{}, nil
}

// readHost finds the machine's host through its infrastructure machine;
// until it is known the Agent is looked at again after hostRetry.
func (r *Reconciler) readHost(ctx context.Context, s *scope) (ctrl.Result, error) {
	infraObj, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, s.machine.Spec.InfrastructureRef, s.machine.Namespace)
	if err != nil {
		return ctrl.Result{RequeueAfter: hostRetry}, stopUnlessError(client.IgnoreNotFound(err))
	}
	h, err := host.Of(ctx, r.Client, infraObj)
	if errors.Is(err, host.ErrHostUnknown) || apierrors.IsNotFound(err) {
		s.log.V(2).Info("The machine's host is not known yet", "reason", err.Error())
		return ctrl.Result{RequeueAfter: hostRetry}, skeleton.ErrStop
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	s.host = h
	return ctrl.Result{}, nil
}

// desire applies to the Agent (in memory) what the machine asks of it. A
// worker is approved only when the day-1/day-2 gate lets it join.
func (r *Reconciler) desire(ctx context.Context, s *scope) (ctrl.Result, error) {
	controlPlane := util.IsControlPlaneMachine(s.machine)
	approve := true
	if !controlPlane {
		_, aci, _ := install.Find(ctx, r.Client, s.machine.Namespace, s.machine.Spec.ClusterName)
		approve = aci != nil
		if approve {
			approve, _ = gate.WorkerMayJoin(aci)
		}
	}
	desired, err := agentspec.Build(agentspec.Input{
		Spec: s.config.Spec, ControlPlane: controlPlane, Vars: s.host.Vars,
		HostLabels: s.host.Labels, DefaultProviderID: s.host.ProviderID, Approve: approve,
	})
	s.specErr = err
	if err == nil {
		s.changed = agentspec.Apply(s.agent, infraenv.LabelValue(s.config.Name), desired)
	}
	return ctrl.Result{}, nil
}

// claim records the Agent in the config's status.agentRef unless it is
// there (see claimConfig); a lost race is looked at again.
func (r *Reconciler) claim(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !s.needClaim {
		return ctrl.Result{}, nil
	}
	won, err := r.claimConfig(ctx, s.config, s.agent)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !won {
		return ctrl.Result{RequeueAfter: claimRetry}, skeleton.ErrStop
	}
	return ctrl.Result{}, nil
}

// writeAgent patches the Agent with what the machine asks of it, and says
// so in an event. A spec that cannot be built is said instead: the spec is
// immutable (a new config fixes it), and a host that would come up wrong is
// not approved.
func (r *Reconciler) writeAgent(ctx context.Context, s *scope) (ctrl.Result, error) {
	agent, config := s.agent, s.config
	if s.specErr != nil {
		r.Recorder.Eventf(config, agent, corev1.EventTypeWarning, "AgentSpecInvalid", "Bind",
			"Agent %s is not approved: %v", agent.Name, s.specErr)
		return ctrl.Result{}, skeleton.ErrStop
	}
	if !s.changed {
		return ctrl.Result{}, nil
	}
	// Agents are assisted-service's: a merge patch of only the fields we own
	// (role, hostname, labels, overrides, approval), under an optimistic lock
	// so that a copy older than the latest (assisted-service wrote the status
	// meanwhile) never approves twice or undoes another writer.
	err := r.Client.Patch(ctx, agent, client.MergeFromWithOptions(s.base, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: claimRetry}, skeleton.ErrStop
	case err != nil:
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.Freshness.Wrote(agent, s.base.ResourceVersion)
	switch {
	case agent.Spec.Approved && !s.base.Spec.Approved:
		r.Recorder.Eventf(config, agent, corev1.EventTypeNormal, "AgentApproved", "Bind",
			"Approved Agent %s (%s) as %s for Machine %s", agent.Name, agent.Status.Inventory.Hostname, agent.Spec.Role, s.machine.Name)
	case s.needClaim:
		r.Recorder.Eventf(config, agent, corev1.EventTypeNormal, "AgentBound", "Bind",
			"Bound Agent %s (%s) to Machine %s; it is approved once the cluster accepts it",
			agent.Name, agent.Status.Inventory.Hostname, s.machine.Name)
	}
	return ctrl.Result{}, nil
}

// stopUnlessError is err, or ErrStop when there is none: a read whose
// object is gone ends the flow quietly.
func stopUnlessError(err error) error {
	if err != nil {
		return err
	}
	return skeleton.ErrStop
}

// configFor finds the config whose machine the Agent belongs to: the one it
// is bound to already, the InfraEnv's only config, or the config of the
// Machine whose host has one of the Agent's MAC addresses. nil means none
// (yet).
func (r *Reconciler) configFor(ctx context.Context, agent *aiv1beta1.Agent, ie *aiv1beta1.InfraEnv) (*bootstrapv1.OpenshiftAssistedConfig, ctrl.Result, error) {
	users := &bootstrapv1.OpenshiftAssistedConfigList{}
	if err := r.Client.List(ctx, users, client.InNamespace(agent.Namespace), client.MatchingFields{index.ConfigInfraEnv: ie.Name}); err != nil {
		return nil, ctrl.Result{}, err
	}
	byLabel := func(label string) *bootstrapv1.OpenshiftAssistedConfig {
		for i := range users.Items {
			if infraenv.LabelValue(users.Items[i].Name) == label {
				return &users.Items[i]
			}
		}
		return nil
	}
	if bound := agent.Labels[bootstrapv1.ConfigLabel]; bound != "" {
		if c := byLabel(bound); c != nil {
			return c, ctrl.Result{}, nil
		}
	}
	if label := ie.Labels[bootstrapv1.ConfigLabel]; label != "" {
		// One machine boots from this InfraEnv: the Agent is its.
		return byLabel(label), ctrl.Result{}, nil
	}
	var macs []string
	for _, nic := range agent.Status.Inventory.Interfaces {
		macs = append(macs, nic.MacAddress)
	}
	machineName, err := host.MachineByMAC(ctx, r.Client, r.Kinds, agent.Namespace, macs)
	if err != nil {
		r.Recorder.Eventf(agent, nil, corev1.EventTypeWarning, "AgentAmbiguous", "Bind", "%v", err)
		return nil, ctrl.Result{}, nil
	}
	if machineName == "" {
		ctrl.LoggerFrom(ctx).V(2).Info("No Machine's host has the Agent's MAC addresses yet", "macs", macs)
		return nil, ctrl.Result{RequeueAfter: hostRetry}, nil
	}
	for i := range users.Items {
		for _, ref := range users.Items[i].OwnerReferences {
			if ref.Kind == "Machine" && ref.Name == machineName {
				return &users.Items[i], ctrl.Result{}, nil
			}
		}
	}
	// Not among the InfraEnv's configs: the index may lag, or the host
	// escaped its ISO. Ask the Machine's config itself.
	machine := &clusterv1.Machine{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: agent.Namespace, Name: machineName}, machine); err != nil {
		return nil, ctrl.Result{}, client.IgnoreNotFound(err)
	}
	config := &bootstrapv1.OpenshiftAssistedConfig{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: agent.Namespace, Name: machine.Spec.Bootstrap.ConfigRef.Name}, config); err != nil {
		return nil, ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch ref := config.Status.InfraEnvRef; {
	case ref == nil:
		return nil, ctrl.Result{RequeueAfter: hostRetry}, nil
	case ref.Name == ie.Name:
		return config, ctrl.Result{}, nil
	}
	// The MAC is a Machine's that boots from another InfraEnv: the host
	// escaped its ISO. It is not installed for the Machine.
	r.Recorder.Eventf(agent, nil, corev1.EventTypeWarning, "AgentInfraEnvMismatch", "Bind",
		"Agent %s has the MAC of Machine %s, which boots from InfraEnv %s, not %s; not binding it",
		agent.Name, machineName, config.Status.InfraEnvRef.Name, ie.Name)
	return nil, ctrl.Result{}, nil
}

// mayHold tells whether the Agent holds, or may claim, the config's
// machine, and whether a claim must be written. An Agent that loses to
// another is reported as a duplicate and never approved. A claimed Agent
// that is gone (confirmed uncached) may be taken over.
func (r *Reconciler) mayHold(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig, agent *aiv1beta1.Agent) (holds, needClaim bool, err error) {
	if ref := config.Status.AgentRef; ref != nil {
		if ref.Name == agent.Name {
			return true, false, nil
		}
		other := &metav1.PartialObjectMetadata{}
		other.SetGroupVersionKind(aiv1beta1.GroupVersion.WithKind("Agent"))
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: config.Namespace, Name: ref.Name}, other)
		switch {
		case err == nil && other.DeletionTimestamp.IsZero():
			r.duplicate(ctx, config, agent, ref.Name)
			return false, false, nil
		case err != nil && !apierrors.IsNotFound(err):
			return false, false, err
		}
		return true, true, nil
	}
	// Without a claim (status lost, or never written), an Agent already
	// approved for this config keeps the machine.
	bound := &aiv1beta1.AgentList{}
	if err := r.Client.List(ctx, bound, client.InNamespace(config.Namespace),
		client.MatchingLabels{bootstrapv1.ConfigLabel: infraenv.LabelValue(config.Name)}); err != nil {
		return false, false, err
	}
	for i := range bound.Items {
		if a := &bound.Items[i]; a.Name != agent.Name && a.Spec.Approved && a.DeletionTimestamp.IsZero() {
			r.duplicate(ctx, config, agent, a.Name)
			return false, false, nil
		}
	}
	return true, true, nil
}

// claimConfig records the Agent in the config's status.agentRef under an
// optimistic lock: of two Agents racing for one machine (a host that
// registered twice), exactly one wins, however stale the cache. This status
// field is the Agent controller's; the config controller never writes it, and
// sets AgentApproved itself once it sees the Agent approved. It reports
// whether this Agent won.
func (r *Reconciler) claimConfig(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig, agent *aiv1beta1.Agent) (bool, error) {
	base := config.DeepCopy()
	config.Status.AgentRef = &bootstrapv1.LocalObjectReference{Name: agent.Name}
	// A compare-and-swap, not the patch helper's last-writer-wins merge.
	err := r.Client.Status().Patch(ctx, config, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsConflict(err):
		return false, nil
	case err != nil:
		return false, client.IgnoreNotFound(err)
	}
	r.Freshness.Wrote(config, base.ResourceVersion)
	return true, nil
}

// duplicate deregisters an Agent that lost the machine to another: it is
// marked (so the event is sent once) and deleted, which makes
// assisted-service forget the host registration. Leaving it would block
// the installation for good: assisted-service counts every Agent bound to
// the cluster, approved or not, against the provision requirements
// (docs/bootstrap.md, "Duplicate registrations").
func (r *Reconciler) duplicate(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig, agent *aiv1beta1.Agent, winner string) {
	ctrl.LoggerFrom(ctx).V(1).Info("Another Agent holds the machine; deregistering this one", "agent", agent.Name, "holder", winner)
	if agent.Annotations[duplicateAnnotation] != winner {
		base := agent.DeepCopy()
		if agent.Annotations == nil {
			agent.Annotations = map[string]string{}
		}
		agent.Annotations[duplicateAnnotation] = winner
		// Agents are assisted-service's: a merge patch of our annotation only.
		if err := r.Client.Patch(ctx, agent, client.MergeFrom(base)); err != nil {
			return
		}
		r.Freshness.Wrote(agent, base.ResourceVersion)
		r.Recorder.Eventf(config, agent, corev1.EventTypeWarning, "DuplicateAgent", "Bind",
			"Agent %s registered for the machine of config %s, which Agent %s already holds; it is not approved and is deleted",
			agent.Name, config.Name, winner)
	}
	// Only this Agent, never one approved since the read (the winner keeps
	// the machine): the precondition pins the version that was judged.
	if agent.Spec.Approved || !agent.DeletionTimestamp.IsZero() {
		return
	}
	if err := r.Client.Delete(ctx, agent, client.Preconditions{UID: &agent.UID, ResourceVersion: &agent.ResourceVersion}); err != nil &&
		!apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).Error(err, "Deleting a duplicate Agent", "agent", agent.Name)
	}
}

// duplicateAnnotation marks an Agent that registered for a machine another
// Agent holds, with that Agent's name, so the event is sent once.
const duplicateAnnotation = "bootstrap.cluster.x-k8s.io/duplicate-of"
