package agent

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
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
)

// Reconcile binds one Agent to its Machine and writes what the machine
// asks of it. It writes nothing when the Agent already says it all.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	agent := &aiv1beta1.Agent{}
	if err := r.Client.Get(ctx, req.NamespacedName, agent); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !agent.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if r.Agents.Stale(req.NamespacedName, agent.ResourceVersion) {
		return ctrl.Result{RequeueAfter: staleRetry}, nil
	}
	ieName := agent.Labels[aiv1beta1.InfraEnvNameLabel]
	if ieName == "" {
		return ctrl.Result{}, nil
	}
	// assisted-service creates an Agent, then writes its status (inventory,
	// state): wait for that write's event rather than race it.
	if agent.Status.DebugInfo.State == "" && len(agent.Status.Inventory.Interfaces) == 0 {
		return ctrl.Result{}, nil
	}
	ie := &aiv1beta1.InfraEnv{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: agent.Namespace, Name: ieName}, ie); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	perConfig, shared := ie.Labels[bootstrapv1.ConfigLabel], ie.Labels[bootstrapv1.TemplateInfraEnvLabel]
	if perConfig == "" && shared == "" {
		return ctrl.Result{}, nil // not ours: someone else's discovery environment
	}
	if r.WatchFilterValue != "" && ie.Labels[clusterv1.WatchLabel] != r.WatchFilterValue {
		return ctrl.Result{}, nil
	}

	config, res, err := r.configFor(ctx, agent, ie)
	if config == nil || err != nil {
		return res, err
	}
	log = log.WithValues("OpenshiftAssistedConfig", config.Name)
	if r.Configs.Stale(client.ObjectKeyFromObject(config), config.ResourceVersion) {
		return ctrl.Result{RequeueAfter: staleRetry}, nil
	}
	if !config.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the config's deletion unbinds its Agents
	}
	machine, err := util.GetOwnerMachine(ctx, r.Client, config.ObjectMeta)
	if apierrors.IsNotFound(err) || (err == nil && (machine == nil || !machine.DeletionTimestamp.IsZero())) {
		return ctrl.Result{}, nil // no machine to install for
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: machine.Namespace, Name: machine.Spec.ClusterName}, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if annotations.IsPaused(cluster, config) {
		return ctrl.Result{}, nil
	}

	holds, needClaim, err := r.mayHold(ctx, config, agent)
	if !holds || err != nil {
		return ctrl.Result{}, err
	}

	infraObj, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, machine.Spec.InfrastructureRef, machine.Namespace)
	if err != nil {
		return ctrl.Result{RequeueAfter: hostRetry}, client.IgnoreNotFound(err)
	}
	h, err := host.Of(ctx, r.Client, infraObj)
	if errors.Is(err, host.ErrHostUnknown) || apierrors.IsNotFound(err) {
		log.V(2).Info("The machine's host is not known yet", "reason", err.Error())
		return ctrl.Result{RequeueAfter: hostRetry}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	approve := true
	if !util.IsControlPlaneMachine(machine) {
		_, aci, _ := install.Find(ctx, r.Client, machine.Namespace, machine.Spec.ClusterName)
		if aci == nil {
			approve = false
		} else {
			approve, _ = gate.WorkerMayJoin(aci)
		}
	}
	desired, specErr := agentspec.Build(agentspec.Input{
		Spec: config.Spec, ControlPlane: util.IsControlPlaneMachine(machine), Vars: h.Vars,
		HostLabels: h.Labels, DefaultProviderID: h.ProviderID, Approve: approve,
	})
	base := agent.DeepCopy()
	wasApproved := agent.Spec.Approved
	changed := false
	if specErr == nil {
		changed = agentspec.Apply(agent, infraenv.LabelValue(config.Name), desired)
	}
	if needClaim {
		var cond *metav1.Condition
		if agent.Spec.Approved {
			c := agentspec.ApprovedCondition(agent)
			cond = &c
		}
		won, err := r.claim(ctx, config, agent, cond)
		if !won || err != nil {
			return ctrl.Result{RequeueAfter: claimRetry}, err
		}
	}
	if specErr != nil {
		// The spec is immutable: a new config fixes it. Say it where the
		// user looks; do not approve a host that would come up wrong.
		r.Recorder.Eventf(config, agent, corev1.EventTypeWarning, "AgentSpecInvalid", "Bind",
			"Agent %s is not approved: %v", agent.Name, specErr)
		return ctrl.Result{}, nil
	}
	if !changed {
		return ctrl.Result{}, nil
	}
	// Under an optimistic lock: a copy older than the cache's latest (the
	// simulator, or assisted-service, wrote the status meanwhile) must not
	// approve twice or undo another writer.
	err = r.Client.Patch(ctx, agent, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: claimRetry}, nil
	case err != nil:
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.Agents.Wrote(req.NamespacedName, base.ResourceVersion, agent.ResourceVersion)
	switch {
	case agent.Spec.Approved && !wasApproved:
		r.Recorder.Eventf(config, agent, corev1.EventTypeNormal, "AgentApproved", "Bind",
			"Approved Agent %s (%s) as %s for Machine %s", agent.Name, agent.Status.Inventory.Hostname, agent.Spec.Role, machine.Name)
	case needClaim:
		r.Recorder.Eventf(config, agent, corev1.EventTypeNormal, "AgentBound", "Bind",
			"Bound Agent %s (%s) to Machine %s; it is approved once the cluster accepts it", agent.Name, agent.Status.Inventory.Hostname, machine.Name)
	}
	return ctrl.Result{}, nil
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

// claim records the Agent in the config's status.agentRef (with the
// AgentApproved condition when it is about to be approved, saving the
// config controller a write), under an optimistic lock: of two Agents
// racing for one machine (a host that registered twice), exactly one wins,
// however stale the cache. It reports whether this Agent won.
func (r *Reconciler) claim(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig, agent *aiv1beta1.Agent, cond *metav1.Condition) (bool, error) {
	base := config.DeepCopy()
	config.Status.AgentRef = &bootstrapv1.LocalObjectReference{Name: agent.Name}
	if cond != nil {
		capiconditions.Set(config, *cond)
	}
	err := r.Client.Status().Patch(ctx, config, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsConflict(err):
		return false, nil
	case err != nil:
		return false, client.IgnoreNotFound(err)
	}
	r.Configs.Wrote(client.ObjectKeyFromObject(config), base.ResourceVersion, config.ResourceVersion)
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
		if err := r.Client.Patch(ctx, agent, client.MergeFrom(base)); err != nil {
			return
		}
		r.Agents.Wrote(client.ObjectKeyFromObject(agent), base.ResourceVersion, agent.ResourceVersion)
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
