package assisted

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

type installReconciler struct {
	s *Simulator
	c client.Client
	// reader reads the AgentClusterInstall and its Agents uncached: the
	// installation moves a state per step, faster than the cache may follow
	// its own writes. A host seen a step late would take the wrong path (day
	// 2 for day 1); a cluster seen a step late, with its hosts already moved
	// on, would be stepped from its old state and written back to it (a lost
	// update: the hosts stay in preparing-for-installation under a cluster
	// in ready, and nothing moves any more).
	reader client.Reader
}

func (s *Simulator) setupInstalls(mgr ctrl.Manager) error {
	r := &installReconciler{s: s, c: mgr.GetClient(), reader: mgr.GetAPIReader()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("assisted-simulator-install").
		WithOptions(s.controllerOptions()).
		For(&hiveextv1beta1.AgentClusterInstall{}).
		Watches(&aiv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(r.agentToInstall)).
		Watches(&hivev1.ClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.clusterDeploymentToInstall)).
		WatchesRawSource(source.Channel(s.installEvents, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

func (r *installReconciler) clusterDeploymentToInstall(_ context.Context, o client.Object) []reconcile.Request {
	cd, ok := o.(*hivev1.ClusterDeployment)
	if !ok || cd.Spec.ClusterInstallRef == nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: cd.Namespace, Name: cd.Spec.ClusterInstallRef.Name}}}
}

func (r *installReconciler) agentToInstall(ctx context.Context, o client.Object) []reconcile.Request {
	a, ok := o.(*aiv1beta1.Agent)
	if !ok || a.Spec.ClusterDeploymentName == nil {
		return nil
	}
	cd := &hivev1.ClusterDeployment{}
	if err := r.c.Get(ctx, types.NamespacedName{Namespace: a.Spec.ClusterDeploymentName.Namespace, Name: a.Spec.ClusterDeploymentName.Name}, cd); err != nil {
		return nil
	}
	return r.clusterDeploymentToInstall(ctx, cd)
}

// Reconcile moves the install one state on, and the hosts with it
// (model.go decides; this writes).
func (r *installReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := r.reader.Get(ctx, req.NamespacedName, aci); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !aci.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if wait := r.s.untilStep(req.NamespacedName); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	cd := &hivev1.ClusterDeployment{}
	if err := r.c.Get(ctx, types.NamespacedName{Namespace: aci.Namespace, Name: aci.Spec.ClusterDeploymentRef.Name}, cd); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	agents, err := r.agents(ctx, cd)
	if err != nil {
		return ctrl.Result{}, err
	}
	state := aci.Status.DebugInfo.State
	r.s.mu.Lock()
	hold, failure := r.s.holds[req.NamespacedName], r.s.failures[req.NamespacedName]
	if f, ok := r.s.failAt[req.NamespacedName]; ok && f.state == state {
		failure = f.message
		r.s.failures[req.NamespacedName] = failure
		delete(r.s.failAt, req.NamespacedName)
	}
	r.s.mu.Unlock()

	f := facts{want: aci.Spec.ProvisionRequirements, holdInstallation: aci.Spec.HoldInstallation,
		cdInstalled: cd.Spec.Installed, failure: failure, held: hold != "" && hold == state,
		prepared: preparedBefore(aci.Status.Conditions)}
	for i := range agents {
		f.hosts = append(f.hosts, hostOf(&agents[i]))
	}
	next, rule := nextState(state, f)

	// Hosts move with the cluster.
	moved, err := r.moveHosts(ctx, agents, f, next)
	if err != nil {
		return ctrl.Result{}, err
	}
	if next == hiveextv1beta1.StateInstalled && state != hiveextv1beta1.StateInstalled {
		// The installed cluster, with its ClusterVersion, exists before
		// its admin kubeconfig is published.
		version, err := r.s.installVersion(ctx, aci)
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.s.ensureInstalledCluster(ctx, client.ObjectKeyFromObject(cd), version); err != nil {
			return ctrl.Result{}, fmt.Errorf("creating the workload cluster's ClusterVersion: %w", err)
		}
		if err := r.complete(ctx, aci, cd); err != nil {
			return ctrl.Result{}, err
		}
	}
	base := aci.DeepCopy()
	r.setStatus(aci, next, f)
	if !equality.Semantic.DeepEqual(base.Status, aci.Status) {
		if err := r.c.Status().Patch(ctx, aci, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, err
		}
	}
	// assisted-service polls; the simulator steps while something moves
	// and otherwise waits for an Agent, the ClusterDeployment or a knob.
	if next != state || moved {
		r.s.recordStep(req.NamespacedName)
	}
	if (next != state || moved) && rule != ruleHeld && next != hiveextv1beta1.StateError {
		return ctrl.Result{RequeueAfter: max(r.s.step(), r.s.untilStep(req.NamespacedName))}, nil
	}
	return ctrl.Result{}, nil
}

// agents are the Agents bound to the cluster.
func (r *installReconciler) agents(ctx context.Context, cd *hivev1.ClusterDeployment) ([]aiv1beta1.Agent, error) {
	list := &aiv1beta1.AgentList{}
	if err := r.reader.List(ctx, list, client.InNamespace(cd.Namespace)); err != nil {
		return nil, err
	}
	var out []aiv1beta1.Agent
	for _, a := range list.Items {
		if ref := a.Spec.ClusterDeploymentName; ref != nil && ref.Name == cd.Name && ref.Namespace == cd.Namespace && a.DeletionTimestamp.IsZero() {
			out = append(out, a)
		}
	}
	return out, nil
}

// hostOf is what assisted-service knows of an Agent's host.
func hostOf(a *aiv1beta1.Agent) host {
	h := host{name: a.Name, state: a.Status.DebugInfo.State, stage: a.Status.Progress.CurrentStage, role: a.Spec.Role, approved: a.Spec.Approved}
	for _, c := range a.Status.Conditions {
		if c.Type == aiv1beta1.SpecSyncedCondition && c.Status == corev1.ConditionFalse {
			h.unsynced = true
		}
	}
	return h
}

// moveHosts moves each host one step for the cluster's next state and
// refreshes what assisted-service reports on its Agent (effective role,
// bootstrap host, conditions, which follow approval too). It reports
// whether a host moved.
func (r *installReconciler) moveHosts(ctx context.Context, agents []aiv1beta1.Agent, f facts, clusterState string) (bool, error) {
	roles := effectiveRoles(f.hosts, f.want.ControlPlaneAgents)
	// The bootstrap host: the first control-plane host, chosen when the
	// installation starts.
	bootstrapHost := ""
	for _, a := range agents {
		if a.Status.Bootstrap {
			bootstrapHost = a.Name
		}
	}
	if bootstrapHost == "" && clusterState == hiveextv1beta1.StatePreparingForInstallation {
		for _, h := range f.hosts {
			if roles[h.name] == aiv1beta1.HostRoleMaster && h.approved && h.state == HostKnown && (bootstrapHost == "" || h.name < bootstrapHost) {
				bootstrapHost = h.name
			}
		}
	}
	moved := false
	for i := range agents {
		a := &agents[i]
		state, stage := nextHost(clusterState, hostOf(a))
		moved = moved || state != a.Status.DebugInfo.State || stage != a.Status.Progress.CurrentStage
		if err := r.setHost(ctx, a, state, stage, roles[a.Name], a.Name == bootstrapHost); err != nil {
			return moved, err
		}
	}
	return moved, nil
}

func (r *installReconciler) setHost(ctx context.Context, a *aiv1beta1.Agent, state string, stage aiv1beta1.HostStage, role aiv1beta1.HostRole, bootstrap bool) error {
	base := a.DeepCopy()
	now := metav1.Now()
	st := &a.Status
	st.DebugInfo.State = state
	st.DebugInfo.StateInfo = hostStateInfo(state, stage)
	st.Role = role
	st.Bootstrap = bootstrap
	if st.Progress.CurrentStage != stage {
		st.Progress.CurrentStage = stage
		st.Progress.StageStartTime = &now
		st.Progress.StageUpdateTime = &now
	}
	st.Progress.InstallationPercentage = hostPercentage(state, stage)
	for _, c := range agentConditions(state, a.Spec.Approved, st.DebugInfo.StateInfo) {
		setCondition(&st.Conditions, c, now)
	}
	if equality.Semantic.DeepEqual(base.Status, a.Status) {
		return nil
	}
	// Locked: the host's registration writes the status too.
	return client.IgnoreNotFound(r.c.Status().Patch(ctx, a, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
}

// complete writes what a finished installation leaves: the admin
// kubeconfig and password Secrets, spec.clusterMetadata on the
// AgentClusterInstall and the ClusterDeployment, and installed.
func (r *installReconciler) complete(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall, cd *hivev1.ClusterDeployment) error {
	kubeconfigName, passwordName := cd.Name+"-admin-kubeconfig", cd.Name+"-admin-password"
	owner := metav1.OwnerReference{APIVersion: hivev1.GroupVersion.String(), Kind: "ClusterDeployment", Name: cd.Name, UID: cd.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	r.s.mu.Lock()
	kubeconfig := r.s.kubeconfigs[client.ObjectKeyFromObject(cd)]
	r.s.mu.Unlock()
	if len(kubeconfig) == 0 {
		kubeconfig = r.s.opts.Kubeconfig
	}
	if len(kubeconfig) == 0 {
		kubeconfig = placeholderKubeconfig(cd)
	}
	password := make([]byte, 12)
	_, _ = rand.Read(password)
	for _, secret := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: kubeconfigName, Namespace: cd.Namespace}, Data: map[string][]byte{"kubeconfig": kubeconfig}},
		{ObjectMeta: metav1.ObjectMeta{Name: passwordName, Namespace: cd.Namespace},
			Data: map[string][]byte{"username": []byte("kubeadmin"), "password": []byte(hex.EncodeToString(password))}},
	} {
		secret.Labels = map[string]string{"hive.openshift.io/cluster-deployment-name": cd.Name}
		secret.OwnerReferences = []metav1.OwnerReference{owner}
		if err := r.c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	clusterID, infraID := identity(client.ObjectKeyFromObject(cd))
	meta := &hivev1.ClusterMetadata{
		ClusterID:                clusterID,
		InfraID:                  infraID,
		AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: kubeconfigName},
		AdminPasswordSecretRef:   &corev1.LocalObjectReference{Name: passwordName},
	}
	if aci.Spec.ClusterMetadata == nil {
		base := aci.DeepCopy()
		aci.Spec.ClusterMetadata = meta
		if err := r.c.Patch(ctx, aci, client.MergeFrom(base)); err != nil {
			return err
		}
	}
	if cd.Spec.ClusterMetadata == nil || !cd.Spec.Installed {
		base := cd.DeepCopy()
		cd.Spec.ClusterMetadata = meta
		cd.Spec.Installed = true
		if err := r.c.Patch(ctx, cd, client.MergeFrom(base)); err != nil {
			return err
		}
	}
	return nil
}

func placeholderKubeconfig(cd *hivev1.ClusterDeployment) []byte {
	server := fmt.Sprintf("https://api.%s.%s:6443", cd.Spec.ClusterName, cd.Spec.BaseDomain)
	return []byte(`apiVersion: v1
kind: Config
clusters:
- name: ` + cd.Spec.ClusterName + `
  cluster:
    server: ` + server + `
contexts:
- name: admin
  context:
    cluster: ` + cd.Spec.ClusterName + `
    user: admin
current-context: admin
users:
- name: admin
  user:
    token: simulated
`)
}

// setStatus writes the state, its details and the conditions
// assisted-service shows for it (ClusterDeploymentsReconciler.updateStatus).
func (r *installReconciler) setStatus(aci *hiveextv1beta1.AgentClusterInstall, state string, f facts) {
	st := &aci.Status
	now := metav1.Now()
	st.DebugInfo.State = state
	st.DebugInfo.StateInfo = clusterStateInfo(state, f)
	clusterID := uuid5("cluster/" + string(aci.UID))
	if state != hiveextv1beta1.StateInstalled {
		// Upstream publishes the URLs while the cluster is not installed.
		st.DebugInfo.EventsURL = r.s.baseURL + restPrefix + "/events?cluster_id=" + clusterID
		st.DebugInfo.LogsURL = r.s.baseURL + restPrefix + "/clusters/" + clusterID + "/logs"
	}
	st.Progress.TotalPercentage = clusterProgress(state)
	for _, c := range installConditions(state, f) {
		setInstallCondition(&st.Conditions, c, now)
	}
}

func setInstallCondition(conds *[]hivev1.ClusterInstallCondition, c hivev1.ClusterInstallCondition, now metav1.Time) {
	for i := range *conds {
		old := &(*conds)[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			return
		}
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status {
			c.LastTransitionTime = now
		}
		c.LastProbeTime = now
		*old = c
		return
	}
	c.LastTransitionTime, c.LastProbeTime = now, now
	*conds = append(*conds, c)
}
