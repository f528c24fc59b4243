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

// AgentClusterInstall states (status.debugInfo.state), as assisted-service
// names them.
const (
	StateInsufficient             = "insufficient"
	StateReady                    = "ready"
	StatePreparingForInstallation = "preparing-for-installation"
	StateInstalling               = "installing"
	StateFinalizing               = "finalizing"
	StateAddingHosts              = "adding-hosts"
	StateError                    = "error"
)

// nextState is the happy path.
var nextState = map[string]string{
	StateReady:                    StatePreparingForInstallation,
	StatePreparingForInstallation: StateInstalling,
	StateInstalling:               StateFinalizing,
	StateFinalizing:               StateAddingHosts,
}

var progress = map[string]int64{
	StateInsufficient: 0, StateReady: 0, StatePreparingForInstallation: 5,
	StateInstalling: 30, StateFinalizing: 90, StateAddingHosts: 100,
}

type installReconciler struct {
	s *Simulator
	c client.Client
	// reader reads the Agents uncached: the installation moves a state per
	// step, faster than the cache may follow the hosts' own moves, and a
	// host seen a step late would take the wrong path (day 2 for day 1).
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

// Reconcile moves the install one state on, and the hosts with it.
func (r *installReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := r.c.Get(ctx, req.NamespacedName, aci); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !aci.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	cd := &hivev1.ClusterDeployment{}
	if err := r.c.Get(ctx, types.NamespacedName{Namespace: aci.Namespace, Name: aci.Spec.ClusterDeploymentRef.Name}, cd); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	agents, err := r.agents(ctx, cd)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.s.mu.Lock()
	hold, failure := r.s.holds[req.NamespacedName], r.s.failures[req.NamespacedName]
	if f, ok := r.s.failAt[req.NamespacedName]; ok && f.state == aci.Status.DebugInfo.State {
		failure = f.message
		r.s.failures[req.NamespacedName] = failure
		delete(r.s.failAt, req.NamespacedName)
	}
	r.s.mu.Unlock()

	state := aci.Status.DebugInfo.State
	next, info := state, ""
	masters, workers, approved := count(agents)
	want := aci.Spec.ProvisionRequirements
	// A ClusterDeployment that is installed before any installation ran
	// here is an imported cluster (installed elsewhere): assisted-service
	// takes it as a day-2 cluster, installed and open for more hosts.
	imported := cd.Spec.Installed && (state == "" || state == StateInsufficient || state == StateReady)
	switch {
	case failure != "":
		next, info = StateError, failure
	case imported:
		next = StateAddingHosts
	case state != "" && state == hold:
	case state == "" || state == StateInsufficient:
		next = StateInsufficient
		if want.ControlPlaneAgents > 0 && masters >= want.ControlPlaneAgents && workers >= want.WorkerAgents {
			next = StateReady
		}
	case state == StateError:
		next = StateInsufficient // released: the install was reset
	case state == StateAddingHosts:
	case state == StateReady && aci.Spec.HoldInstallation:
	default:
		next = nextState[state]
	}

	requeue := r.s.step()
	// Hosts move with the cluster.
	busy, err := r.moveHosts(ctx, agents, next)
	if err != nil {
		return ctrl.Result{}, err
	}
	if next == StateAddingHosts && state != StateAddingHosts && !imported {
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
	r.setStatus(aci, next, info, masters+workers, approved, want)
	if !equality.Semantic.DeepEqual(base.Status, aci.Status) {
		if err := r.c.Status().Patch(ctx, aci, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, err
		}
	}
	switch {
	case next != state && next != StateAddingHosts && next != StateError && next != hold:
		return ctrl.Result{RequeueAfter: requeue}, nil
	case busy:
		return ctrl.Result{RequeueAfter: requeue}, nil
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

// count returns the approved masters and workers, and all approved.
func count(agents []aiv1beta1.Agent) (masters, workers, approved int) {
	for _, a := range agents {
		if !a.Spec.Approved {
			continue
		}
		approved++
		switch a.Spec.Role {
		case aiv1beta1.HostRoleMaster:
			masters++
		case aiv1beta1.HostRoleWorker:
			workers++
		}
	}
	return masters, workers, approved
}

// moveHosts advances the hosts for the cluster's state: day-1 hosts (those
// approved when the installation started) install with the cluster; once it
// is in adding-hosts, newly approved hosts are added as day-2 hosts, in two
// steps. It reports whether a host is still on its way.
func (r *installReconciler) moveHosts(ctx context.Context, agents []aiv1beta1.Agent, clusterState string) (bool, error) {
	busy := false
	for i := range agents {
		a := &agents[i]
		if !a.Spec.Approved || (a.Spec.Role != aiv1beta1.HostRoleMaster && a.Spec.Role != aiv1beta1.HostRoleWorker) {
			continue
		}
		state, stage := a.Status.DebugInfo.State, a.Status.Progress.CurrentStage
		switch clusterState {
		case StatePreparingForInstallation:
			if state == hostStateKnown {
				state, stage = "preparing-successful", ""
			}
		case StateInstalling:
			if state == "preparing-successful" || state == hostStateKnown {
				state, stage = hostStateInstalling, stageWriting
			}
		case StateFinalizing:
			if state == hostStateInstalling {
				stage = stageRebooting
			}
		case StateAddingHosts:
			switch state {
			case "preparing-successful":
				state, stage = hostStateInstalled, stageDone // a day-1 host
			case hostStateInstalling:
				switch stage {
				case stageJoined:
					state, stage = hostStateAdded, stageDone // a day-2 host
				case stageRebooting, stageWriting:
					state, stage = hostStateInstalled, stageDone // a day-1 host
				default:
					state, stage = hostStateInstalling, stageJoined
					busy = true
				}
			case hostStateKnown:
				state, stage = hostStateInstalling, stageStarting
				busy = true
			}
		}
		if err := r.setHost(ctx, a, state, stage); err != nil {
			return busy, err
		}
	}
	return busy, nil
}

func (r *installReconciler) setHost(ctx context.Context, a *aiv1beta1.Agent, state string, stage aiv1beta1.HostStage) error {
	if a.Status.DebugInfo.State == state && a.Status.Progress.CurrentStage == stage {
		return nil
	}
	base := a.DeepCopy()
	now := metav1.Now()
	a.Status.DebugInfo.State = state
	a.Status.Role = a.Spec.Role
	a.Status.Progress.CurrentStage = stage
	a.Status.Progress.StageUpdateTime = &now
	if a.Status.Progress.StageStartTime == nil || base.Status.Progress.CurrentStage != stage {
		a.Status.Progress.StageStartTime = &now
	}
	switch state {
	case hostStateInstalled, hostStateAdded:
		a.Status.Progress.InstallationPercentage = 100
		setCondition(&a.Status.Conditions, aiv1beta1.Condition{Type: aiv1beta1.InstalledCondition, Status: corev1.ConditionTrue,
			Reason: "InstallationCompleted", Message: "The installation has completed: Done"}, now)
	case hostStateInstalling:
		a.Status.Progress.InstallationPercentage = 50
		setCondition(&a.Status.Conditions, aiv1beta1.Condition{Type: aiv1beta1.InstalledCondition, Status: corev1.ConditionFalse,
			Reason: "InstallationInProgress", Message: "The installation is in progress: " + string(stage)}, now)
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

// setStatus writes the state and the conditions assisted-service shows
// for it.
func (r *installReconciler) setStatus(aci *hiveextv1beta1.AgentClusterInstall, state, info string, registered, approved int, want hiveextv1beta1.ProvisionRequirements) {
	st := &aci.Status
	now := metav1.Now()
	if st.DebugInfo.State != state {
		st.DebugInfo.StateInfo = stateInfo(state, info)
	}
	st.DebugInfo.State = state
	st.DebugInfo.EventsURL = r.s.baseURL + restPrefix + "/events?cluster_id=" + uuid5("cluster/"+string(aci.UID))
	st.DebugInfo.LogsURL = r.s.baseURL + restPrefix + "/clusters/" + uuid5("cluster/"+string(aci.UID)) + "/logs"
	st.Progress.TotalPercentage = progress[state]

	required := want.ControlPlaneAgents + want.WorkerAgents
	var reqMet hivev1.ClusterInstallCondition
	switch state {
	case StateInsufficient:
		switch {
		case registered < required:
			reqMet = cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionFalse, "InsufficientAgents",
				fmt.Sprintf("The cluster currently requires %d agents but only %d have registered", required, registered))
		default:
			reqMet = cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionFalse, "UnapprovedAgents",
				fmt.Sprintf("The installation is pending on the approval of %d agents", required-approved))
		}
	case StateReady:
		reqMet = cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionTrue, "ClusterIsReady", "The cluster is ready to begin the installation")
	case StateAddingHosts, StateError:
		reqMet = cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionTrue, "ClusterInstallationStopped", "The cluster installation stopped")
	default:
		reqMet = cond(hivev1.ClusterInstallRequirementsMet, corev1.ConditionTrue, "ClusterAlreadyInstalling", "The cluster requirements are met")
	}
	var completed, failed, stopped hivev1.ClusterInstallCondition
	switch state {
	case StateInsufficient, StateReady:
		completed = cond(hivev1.ClusterInstallCompleted, corev1.ConditionFalse, "InstallationNotStarted", "The installation has not yet started")
	case StateAddingHosts:
		completed = cond(hivev1.ClusterInstallCompleted, corev1.ConditionTrue, "InstallationCompleted", "The installation has completed: Cluster is installed")
	case StateError:
		completed = cond(hivev1.ClusterInstallCompleted, corev1.ConditionFalse, "InstallationFailed", "The installation has failed: "+info)
	default:
		completed = cond(hivev1.ClusterInstallCompleted, corev1.ConditionFalse, "InstallationInProgress", "The installation is in progress: "+stateInfo(state, ""))
	}
	switch state {
	case StateError:
		failed = cond(hivev1.ClusterInstallFailed, corev1.ConditionTrue, "InstallationFailed", "The installation failed: "+info)
		stopped = cond(hivev1.ClusterInstallStopped, corev1.ConditionTrue, "InstallationFailed", "The installation has stopped due to error")
	case StateAddingHosts:
		failed = cond(hivev1.ClusterInstallFailed, corev1.ConditionFalse, "InstallationNotFailed", "The installation has not failed")
		stopped = cond(hivev1.ClusterInstallStopped, corev1.ConditionTrue, "InstallationCompleted", "The installation has stopped because it completed successfully")
	default:
		failed = cond(hivev1.ClusterInstallFailed, corev1.ConditionFalse, "InstallationNotFailed", "The installation has not failed")
		stopped = cond(hivev1.ClusterInstallStopped, corev1.ConditionFalse, "InstallationNotStopped", "The installation is waiting to start or in progress")
	}
	validated := cond("Validated", corev1.ConditionTrue, "ValidationsPassing", "The cluster's validations are passing")
	synced := cond("SpecSynced", corev1.ConditionTrue, "SyncOK", "The Spec has been successfully applied")
	for _, c := range []hivev1.ClusterInstallCondition{synced, reqMet, validated, completed, failed, stopped} {
		setInstallCondition(&st.Conditions, c, now)
	}
}

func stateInfo(state, info string) string {
	switch state {
	case StateInsufficient:
		return "Cluster is not ready for install"
	case StateReady:
		return "Cluster ready to be installed"
	case StatePreparingForInstallation:
		return "Preparing cluster for installation"
	case StateInstalling:
		return "Installation in progress"
	case StateFinalizing:
		return "Finalizing cluster installation"
	case StateAddingHosts:
		return "Cluster is installed"
	case StateError:
		return info
	}
	return ""
}

func cond(t hivev1.ClusterInstallConditionType, s corev1.ConditionStatus, reason, msg string) hivev1.ClusterInstallCondition {
	return hivev1.ClusterInstallCondition{Type: t, Status: s, Reason: reason, Message: msg}
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
