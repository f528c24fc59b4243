package assisted

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// workloadCluster is a real API server that plays an installed cluster:
// the simulator writes its kubeconfig as the admin kubeconfig, creates its
// ClusterVersion when the installation completes, and plays its
// cluster-version operator.
type workloadCluster struct {
	kubeconfig []byte
	cluster    cluster.Cluster
	// stop ends the cluster's cache; done is closed once it has ended.
	stop context.CancelFunc
	done chan struct{}
}

// close stops the workload cluster's cache and waits for it.
func (w *workloadCluster) close() {
	w.stop()
	<-w.done
}

// ForgetWorkload ends what SetWorkload started for cd: the workload
// cluster's cache stops, so nothing keeps watching an API server that is
// about to go (the manager would otherwise carry one stale cache per
// workload until it stops). Call it before stopping that API server.
func (s *Simulator) ForgetWorkload(cd types.NamespacedName) {
	s.mu.Lock()
	w := s.workloads[cd]
	delete(s.workloads, cd)
	s.mu.Unlock()
	if w != nil {
		w.close()
	}
}

// stopWorkloads is a runnable of the manager: when it stops, so do the
// workload clusters' caches.
func (s *Simulator) stopWorkloads(ctx context.Context) error {
	<-ctx.Done()
	s.mu.Lock()
	ws := s.workloads
	s.workloads = map[types.NamespacedName]*workloadCluster{}
	s.mu.Unlock()
	for _, w := range ws {
		w.close()
	}
	return nil
}

// SetKubeconfig sets the admin kubeconfig of the cluster whose
// ClusterDeployment is cd: written at completion, and, when the admin
// kubeconfig Secret exists already, written into it at once (as a
// rotation of the cluster's credentials would).
func (s *Simulator) SetKubeconfig(ctx context.Context, cd types.NamespacedName, kubeconfig []byte) error {
	s.mu.Lock()
	s.kubeconfigs[cd] = append([]byte(nil), kubeconfig...)
	c := s.client
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	secret := &corev1.Secret{}
	err := c.Get(ctx, types.NamespacedName{Namespace: cd.Namespace, Name: cd.Name + "-admin-kubeconfig"}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	base := secret.DeepCopy()
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	secret.Data["kubeconfig"] = kubeconfig
	return c.Patch(ctx, secret, client.MergeFrom(base))
}

// SetWorkload makes the API server of kubeconfig play the installed cluster
// of the ClusterDeployment cd: its kubeconfig becomes the admin kubeconfig,
// the installation's completion creates ClusterVersion "version" there at
// the installed version, and the simulator applies spec.desiredUpdate as
// the cluster-version operator would (see FailUpgrade). Call it after
// SetupWithManager.
func (s *Simulator) SetWorkload(ctx context.Context, cd types.NamespacedName, kubeconfig []byte) error {
	s.mu.Lock()
	mgr := s.mgr
	s.mu.Unlock()
	if mgr == nil {
		return fmt.Errorf("assisted simulator: SetWorkload before SetupWithManager")
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := configv1.AddToScheme(scheme); err != nil {
		return err
	}
	cl, err := cluster.New(cfg, func(o *cluster.Options) { o.Scheme = scheme })
	if err != nil {
		return err
	}
	// Not added to the manager: runnables cannot be removed from one, and
	// the cache must stop with its API server (ForgetWorkload).
	wctx, stop := context.WithCancel(context.Background())
	w := &workloadCluster{kubeconfig: kubeconfig, cluster: cl, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		_ = cl.Start(wctx)
	}()
	s.ForgetWorkload(cd) // a workload set before for cd
	r := &cvoReconciler{s: s, c: cl.GetClient(), cd: cd}
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("assisted-simulator-cvo-" + cd.Namespace + "-" + cd.Name).
		WatchesRawSource(source.Kind(cl.GetCache(), &configv1.ClusterVersion{}, &handler.TypedEnqueueRequestForObject[*configv1.ClusterVersion]{})).
		WatchesRawSource(source.Channel(r.events(), &handler.EnqueueRequestForObject{})).
		Complete(r); err != nil {
		w.close()
		return err
	}
	s.mu.Lock()
	s.workloads[cd] = w
	s.mu.Unlock()
	if err := s.SetKubeconfig(ctx, cd, kubeconfig); err != nil {
		return err
	}
	// An installation that completed before: its cluster exists already.
	_, version, done, err := s.completedInstall(ctx, cd)
	if err != nil || !done {
		return err
	}
	return s.ensureInstalledCluster(ctx, cd, version)
}

// HoldUpgrade keeps the update that cd's workload cluster applies in
// progress (Progressing=True, a Partial history entry) until released with
// false.
func (s *Simulator) HoldUpgrade(cd types.NamespacedName, hold bool) {
	s.mu.Lock()
	if hold {
		s.upgradeHolds[cd] = true
	} else {
		delete(s.upgradeHolds, cd)
	}
	s.mu.Unlock()
	s.pokeCVO(cd)
}

func (s *Simulator) pokeCVO(cd types.NamespacedName) {
	s.mu.Lock()
	ch := s.cvoEvents[cd]
	s.mu.Unlock()
	if ch == nil {
		return
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetName("version")
	select {
	case ch <- event.GenericEvent{Object: obj}:
	default:
	}
}

// FailUpgrade makes the cluster-version operator of cd's workload cluster
// report the update it applies as failing with message (Failing=True); ""
// lets it go on.
func (s *Simulator) FailUpgrade(cd types.NamespacedName, message string) {
	s.mu.Lock()
	if message == "" {
		delete(s.upgradeFailures, cd)
	} else {
		s.upgradeFailures[cd] = message
	}
	s.mu.Unlock()
	s.pokeCVO(cd)
}

func (s *Simulator) workload(cd types.NamespacedName) *workloadCluster {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.workloads[cd]
}

// completedInstall tells whether cd's installation completed, and at which
// version.
func (s *Simulator) completedInstall(ctx context.Context, cdKey types.NamespacedName) (types.NamespacedName, string, bool, error) {
	cd := &hivev1.ClusterDeployment{}
	if err := s.client.Get(ctx, cdKey, cd); err != nil || cd.Spec.ClusterInstallRef == nil || !cd.Spec.Installed {
		return types.NamespacedName{}, "", false, client.IgnoreNotFound(err)
	}
	key := types.NamespacedName{Namespace: cd.Namespace, Name: cd.Spec.ClusterInstallRef.Name}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := s.client.Get(ctx, key, aci); err != nil {
		return key, "", false, client.IgnoreNotFound(err)
	}
	v, err := s.installVersion(ctx, aci)
	return key, v, err == nil, err
}

// installVersion is the OpenShift version of an installation: the tag of
// its ClusterImageSet's release image, as assisted-service reads the
// version from the release.
func (s *Simulator) installVersion(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall) (string, error) {
	if aci.Spec.ImageSetRef == nil {
		return "", nil
	}
	is := &hivev1.ClusterImageSet{}
	if err := s.client.Get(ctx, types.NamespacedName{Name: aci.Spec.ImageSetRef.Name}, is); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return VersionOfImage(is.Spec.ReleaseImage), nil
}

var archSuffix = regexp.MustCompile(`-(x86_64|aarch64|arm64|ppc64le|s390x|multi)$`)

// VersionOfImage reads the OpenShift version from a release image's tag
// (quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64 is 4.19.0); ""
// for a digest.
func VersionOfImage(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	return archSuffix.ReplaceAllString(image[i+1:], "")
}

// ensureInstalledCluster creates what the installation leaves in the
// workload cluster that the providers read: the ClusterVersion at the
// installed version (cluster ID included) and the Infrastructure with the
// infrastructure ID, both the ones the ClusterDeployment's clusterMetadata
// names (identity).
func (s *Simulator) ensureInstalledCluster(ctx context.Context, cd types.NamespacedName, version string) error {
	w := s.workload(cd)
	if w == nil {
		return nil
	}
	c, err := client.New(w.cluster.GetConfig(), client.Options{Scheme: w.cluster.GetScheme()})
	if err != nil {
		return err
	}
	clusterID, infraID := identity(cd)
	if err := ensureInfrastructure(ctx, c, infraID); err != nil {
		return fmt.Errorf("creating the workload cluster's Infrastructure: %w", err)
	}
	cv := &configv1.ClusterVersion{}
	err = c.Get(ctx, types.NamespacedName{Name: "version"}, cv)
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return err
	}
	image := imageOf(version)
	cv = &configv1.ClusterVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "version"},
		Spec:       configv1.ClusterVersionSpec{ClusterID: configv1.ClusterID(clusterID), Channel: "stable-" + minorOf(version)},
	}
	if err := c.Create(ctx, cv); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	now := metav1.Now()
	cv.Status = configv1.ClusterVersionStatus{
		Desired: configv1.Release{Version: version, Image: image},
		History: []configv1.UpdateHistory{{State: configv1.CompletedUpdate, StartedTime: now, CompletionTime: &now,
			Version: version, Image: image}},
		ObservedGeneration: cv.Generation,
		VersionHash:        "simulated",
		Conditions: []configv1.ClusterOperatorStatusCondition{
			{Type: "Available", Status: configv1.ConditionTrue, LastTransitionTime: now, Message: "Done applying " + version},
			{Type: "Failing", Status: configv1.ConditionFalse, LastTransitionTime: now},
			{Type: "Progressing", Status: configv1.ConditionFalse, LastTransitionTime: now, Message: "Cluster version is " + version},
		},
	}
	return c.Status().Update(ctx, cv)
}

// ensureInfrastructure creates Infrastructure cluster with the
// infrastructure ID, as the installer leaves it (platform None: the agent
// platform's).
func ensureInfrastructure(ctx context.Context, c client.Client, infraID string) error {
	infra := &configv1.Infrastructure{}
	switch err := c.Get(ctx, types.NamespacedName{Name: "cluster"}, infra); {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return err
	}
	infra = &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	if err := c.Create(ctx, infra); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	infra.Status = configv1.InfrastructureStatus{
		InfrastructureName: infraID, Platform: configv1.NonePlatformType,
		PlatformStatus:       &configv1.PlatformStatus{Type: configv1.NonePlatformType},
		ControlPlaneTopology: configv1.HighlyAvailableTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
	}
	return c.Status().Update(ctx, infra)
}

// identity is the cluster ID and infrastructure ID of the cluster that
// ClusterDeployment cd installs: the same in the ClusterDeployment's
// clusterMetadata and in the workload cluster.
func identity(cd types.NamespacedName) (clusterID, infraID string) {
	return uuid5("cluster/" + cd.String()), fmt.Sprintf("%s-%s", cd.Name, uuid5("infra/" + cd.String())[:5])
}

func imageOf(version string) string {
	return "quay.io/openshift-release-dev/ocp-release:" + version + "-x86_64"
}

func minorOf(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + parts[1]
}

// cvoReconciler plays the cluster-version operator of one workload
// cluster: a new spec.desiredUpdate becomes a Partial history entry with
// Progressing=True, which completes on the next step (or reports
// Failing=True, see FailUpgrade).
type cvoReconciler struct {
	s  *Simulator
	c  client.Client
	cd types.NamespacedName
}

func (r *cvoReconciler) events() <-chan event.GenericEvent {
	ch := make(chan event.GenericEvent, 8)
	r.s.mu.Lock()
	r.s.cvoEvents[r.cd] = ch
	r.s.mu.Unlock()
	return ch
}

func (r *cvoReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	if w := r.s.workload(r.cd); w == nil || w.cluster.GetClient() != r.c {
		return ctrl.Result{}, nil // forgotten (ForgetWorkload) or replaced
	}
	cv := &configv1.ClusterVersion{}
	if err := r.c.Get(ctx, types.NamespacedName{Name: "version"}, cv); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	u := cv.Spec.DesiredUpdate
	if u == nil {
		return ctrl.Result{}, nil
	}
	version, image := u.Version, u.Image
	if image != "" {
		if v := VersionOfImage(image); v != "" {
			version = v
		}
	} else {
		image = imageOf(version)
	}
	r.s.mu.Lock()
	failure, hold := r.s.upgradeFailures[r.cd], r.s.upgradeHolds[r.cd]
	r.s.mu.Unlock()
	now := metav1.Now()
	st := &cv.Status
	switch {
	case st.Desired.Image != image:
		// Accept the update: a new Partial entry.
		st.Desired = configv1.Release{Version: version, Image: image}
		st.History = append([]configv1.UpdateHistory{{State: configv1.PartialUpdate, StartedTime: now, Version: version, Image: image}}, st.History...)
		setCVCondition(st, "Progressing", configv1.ConditionTrue, "Working towards "+version, now)
		setCVCondition(st, "Failing", configv1.ConditionFalse, "", now)
	case len(st.History) > 0 && st.History[0].State == configv1.PartialUpdate && failure != "":
		setCVCondition(st, "Failing", configv1.ConditionTrue, failure, now)
		setCVCondition(st, "Progressing", configv1.ConditionTrue, "Unable to apply "+version+": "+failure, now)
	case len(st.History) > 0 && st.History[0].State == configv1.PartialUpdate && hold:
		return ctrl.Result{}, nil
	case len(st.History) > 0 && st.History[0].State == configv1.PartialUpdate:
		st.History[0].State = configv1.CompletedUpdate
		st.History[0].CompletionTime = &now
		setCVCondition(st, "Progressing", configv1.ConditionFalse, "Cluster version is "+version, now)
		setCVCondition(st, "Failing", configv1.ConditionFalse, "", now)
	default:
		return ctrl.Result{}, nil
	}
	st.ObservedGeneration = cv.Generation
	// An update, not a merge patch: a merge patch drops the null
	// completionTime of the Partial entry, which the CRD requires.
	if err := r.c.Status().Update(ctx, cv); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.s.step()}, nil
}

func setCVCondition(st *configv1.ClusterVersionStatus, t string, status configv1.ConditionStatus, msg string, now metav1.Time) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if string(c.Type) != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Message = status, msg
		return
	}
	st.Conditions = append(st.Conditions, configv1.ClusterOperatorStatusCondition{Type: configv1.ClusterStatusConditionType(t),
		Status: status, Message: msg, LastTransitionTime: now})
}
