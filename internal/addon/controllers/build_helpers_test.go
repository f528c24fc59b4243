package controllers_test

// The BuildController's tests. Each test runs its own BuildController, as
// addon.Controllers gives it to the addon-manager, with its own flags
// (backend, build namespace, timeouts), in a manager of its own: a watch
// filter keeps it to the test's pools, and the suite's add-on manager
// watches none of them (suite_test.go). The OpenShift build controller and
// the Job controller are played by the stand-ins of build_standin_test.go,
// the image registry by build_registry_test.go's.

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ocp-capi/ocp-capi/internal/addon"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/buildcontroller"
	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	buildv1 "github.com/ocp-capi/ocp-capi/internal/consumed/build/v1"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// backends are the two backends every scenario runs against.
var backends = []string{osbuild.BackendBuild, osbuild.BackendJob}

// forEachBackend runs f as a subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, h *harness)) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) { f(t, newHarness(t, b)) })
	}
}

var seq atomic.Int64

// harness is one test's world: a build namespace, a watch-filter value that
// keeps other tests' controllers off its pools, and the build system played
// by hand.
type harness struct {
	t       testing.TB
	g       Gomega
	ctx     context.Context
	backend string
	ns      string
	filter  string
	prefix  string
	opts    buildcontroller.Options
	// config is the controller's connection to the API server (a test may
	// wrap its transport).
	config *rest.Config
	ctrl   *runningController
	// registry plays the image registry.
	registry *fakeRegistry
	// agent, when auditing (envtest.AuditEnv), makes the controller's
	// manager an audited one with this user agent.
	agent string
	// syncPeriod, when set, is the manager's --sync-period.
	syncPeriod time.Duration
}

func newHarness(t testing.TB, backend string) *harness {
	ctx := context.Background()
	ns, err := env.NewNamespace(ctx, "build")
	if err != nil {
		t.Fatal(err)
	}
	n := seq.Add(1)
	h := &harness{
		t: t, g: NewWithT(t), ctx: ctx, backend: backend, ns: ns.Name,
		filter: fmt.Sprintf("bt%d", n),
		prefix: fmt.Sprintf("t%d-%s", n, backend),
	}
	// The waits' bound, reached only on failure, and a quick poll.
	h.g.SetDefaultEventuallyTimeout(timeout)
	h.g.SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	h.opts = buildcontroller.DefaultOptions()
	h.opts.Backend = backend
	h.opts.Namespace = ns.Name
	h.opts.FailedRetention = 1
	h.config = env.Config
	h.registry = newFakeRegistry()
	// The build and Job controllers' part (build_standin_test.go), for both
	// backends: a test may switch backends, and each stand-in only acts on
	// its own kind.
	stop, err := startStandIns(ctx, ns.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stand-ins: %v", err)
		}
	})
	return h
}

// buildControllerName is the name SetupWithManager gives the controller:
// the label of its controller-runtime metrics.
const buildControllerName = "machineconfigpool-build"

// runningController is a manager running the controller. What the tests
// read of it is what anyone outside can see: its API writes (on the wire),
// the reconcile errors it logs, and controller-runtime's reconcile metrics.
type runningController struct {
	writeCounter *envtest.WriteCounter
	errors       *envtest.ReconcileErrors
	// doneBefore is the metric's count of finished reconciles when the
	// manager started (the metrics are the process's).
	doneBefore int64
	stopFn     func() error
	stopped    bool
}

// start runs the controller with h.opts until the test ends or stop: the
// BuildController of addon.Controllers, set up as the addon-manager does.
func (h *harness) start() *runningController {
	h.t.Helper()
	rc := &runningController{writeCounter: &envtest.WriteCounter{}, errors: &envtest.ReconcileErrors{}}
	mo := env.ManagerOptions()
	cfg := h.config
	if h.agent != "" {
		cfg = audit.Manager(cfg, h.agent, &mo)
	}
	if h.syncPeriod > 0 {
		mo.Cache.SyncPeriod = &h.syncPeriod
	}
	// The controller's writes pass the loop guard, and are counted.
	cfg = env.Guard.WrapConfig(cfg)
	cfg.Wrap(rc.writeCounter.Wrap)
	mo.Logger = logr.New(rc.errors.Sink(envtest.NewLogger().GetSink()))
	mgr, err := ctrl.NewManager(cfg, mo)
	h.g.Expect(err).NotTo(HaveOccurred())
	opts := addon.NewOptions()
	opts.Build = h.opts
	opts.Build.Registry = h.registry
	var setup bool
	for _, c := range addon.Controllers(opts) {
		if c.Name == buildcontroller.ControllerName {
			h.g.Expect(c.Setup(h.ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: 5, WatchFilterValue: h.filter})).To(Succeed())
			setup = true
		}
	}
	h.g.Expect(setup).To(BeTrue(), "addon.Controllers has the BuildController")
	rc.doneBefore, _ = buildReconcileMetrics(h.t)
	rc.stopFn = envtest.RunManager(context.Background(), mgr)
	h.ctrl = rc
	h.t.Cleanup(func() { rc.stop(h.t) })
	return rc
}

// stop stops the manager and waits for it to return.
func (rc *runningController) stop(t testing.TB) {
	t.Helper()
	if rc.stopped {
		return
	}
	rc.stopped = true
	if err := rc.stopFn(); err != nil {
		t.Errorf("manager: %v", err)
	}
}

// reconciles is the number of reconciles finished since the start.
func (rc *runningController) reconciles(t testing.TB) int64 {
	done, _ := buildReconcileMetrics(t)
	return done - rc.doneBefore
}

// idle reports whether no reconcile is in progress.
func (rc *runningController) idle(t testing.TB) bool {
	_, active := buildReconcileMetrics(t)
	return active == 0
}

// failures are the errors its reconciles returned (logged by
// controller-runtime as "Reconciler error"; pools are cluster-scoped).
func (rc *runningController) failures() []string { return rc.errors.In("") }

// lastFailure is the last of them, or "".
func (rc *runningController) lastFailure() string {
	f := rc.failures()
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// writes counts the controller's API writes: creates, updates, patches and
// deletes, not the Events it records.
func (rc *runningController) writes() int64 {
	var n int64
	for k, v := range rc.writeCounter.Breakdown() {
		if !strings.HasPrefix(k, "409 ") && !isEventWrite(k) {
			n += int64(v)
		}
	}
	return n
}

// made counts the objects it created (Events aside): the creates it sent
// less those answered 409. With deterministic names, a 409 is AlreadyExists
// for an object it made a moment before and its cache had not seen yet; it
// adopts that object, and nothing is made twice.
func (rc *runningController) made() int64 {
	var n int64
	for k, v := range rc.writeCounter.Breakdown() {
		switch {
		case isEventWrite(k):
			continue
		case strings.HasPrefix(k, "POST "):
			n += int64(v)
		case strings.HasPrefix(k, "409 POST "):
			n -= int64(v)
		}
	}
	return n
}

// creates counts the creates it sent (Events aside), whatever the answer.
func (rc *runningController) creates() int64 {
	var n int64
	for k, v := range rc.writeCounter.Breakdown() {
		if strings.HasPrefix(k, "POST ") && !isEventWrite(k) {
			n += int64(v)
		}
	}
	return n
}

// isEventWrite reports whether a WriteCounter kind ("POST events") is an
// Event's.
func isEventWrite(kind string) bool { return strings.HasSuffix(kind, " events") }

func isBuildController(m *dto.Metric) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == "controller" && l.GetValue() == buildControllerName {
			return true
		}
	}
	return false
}

// buildReconcileMetrics reads controller-runtime's metrics of the
// BuildController: the reconciles finished (every result) and the workers
// in a reconcile now. Only one BuildController runs at a time.
func buildReconcileMetrics(t testing.TB) (done, active int64) {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("reading the metrics: %v", err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if !isBuildController(m) {
				continue
			}
			switch f.GetName() {
			case "controller_runtime_reconcile_total":
				done += int64(m.GetCounter().GetValue())
			case "controller_runtime_active_workers":
				active += int64(m.GetGauge().GetValue())
			}
		}
	}
	return done, active
}

const (
	pullSecret = "base-pull"
	pushSecret = "final-push"
	repo       = "registry.example.com:5000/mco/os-image"
	baseImage  = "quay.example.com/openshift/rhcos@sha256:1111111111111111111111111111111111111111111111111111111111111111"
)

func digest(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }

var dockerConfigJSON = []byte(`{"auths":{"registry.example.com:5000":{"auth":"dXNlcjpwYXNz"}}}`)

// create creates obj, failing the test on error.
func (h *harness) create(obj client.Object) {
	h.t.Helper()
	h.g.Expect(env.Client.Create(h.ctx, obj)).To(Succeed())
}

// inputs creates valid ConfigMaps and Secrets in the build namespace.
func (h *harness) inputs() {
	h.t.Helper()
	h.builderConfigMap(osbuild.BuilderConfigMapName, map[string]string{
		osbuild.BaseImagePullSecretNameKey:  pullSecret,
		osbuild.FinalImagePushSecretNameKey: pushSecret,
		osbuild.FinalImagePullspecKey:       repo + ":latest",
	})
	h.create(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: osbuild.OSImageURLConfigMapName, Namespace: h.ns},
		Data:       map[string]string{osbuild.BaseOSContainerImageKey: baseImage, osbuild.ReleaseVersionKey: "4.15.0"},
	})
	h.secret(pullSecret, map[string][]byte{corev1.DockerConfigJsonKey: dockerConfigJSON})
	h.secret(pushSecret, map[string][]byte{corev1.DockerConfigJsonKey: dockerConfigJSON})
}

func (h *harness) builderConfigMap(name string, data map[string]string) {
	h.t.Helper()
	h.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns}, Data: data})
}

func (h *harness) secret(name string, data map[string][]byte) {
	h.t.Helper()
	h.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns}, Data: data})
}

// machineConfig creates a rendered MachineConfig and returns its name. Its
// kernel arguments name suffix, so two of them need different images.
func (h *harness) machineConfig(suffix string) string {
	h.t.Helper()
	return h.machineConfigWith(suffix, []string{"test=" + suffix})
}

// machineConfigWith creates a rendered MachineConfig with the given kernel
// arguments and a file that names suffix.
func (h *harness) machineConfigWith(suffix string, kargs []string) string {
	h.t.Helper()
	name := fmt.Sprintf("rendered-%s-%s", h.prefix, suffix)
	mc := &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mcfgv1.MachineConfigSpec{
			OSImageURL:      baseImage,
			KernelArguments: kargs,
			Config:          runtime.RawExtension{Raw: []byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello%20` + suffix + `"}}]}}`)},
		},
	}
	h.create(mc)
	h.t.Cleanup(func() { _ = env.Client.Delete(context.Background(), mc) })
	return name
}

// pool creates a layered pool that renders to config.
func (h *harness) pool(name, config string, layered bool) *mcfgv1.MachineConfigPool {
	h.t.Helper()
	p := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: h.prefix + "-" + name, Labels: map[string]string{clusterv1.WatchLabel: h.filter}},
	}
	if layered {
		p.Labels[osbuild.LayeringEnabledLabel] = ""
	}
	p.Spec.Configuration.Name = config
	h.create(p)
	h.t.Cleanup(func() { _ = env.Client.Delete(context.Background(), p) })
	return p
}

// setPoolConfig points the pool at another rendered config.
func (h *harness) setPoolConfig(pool, config string) {
	h.t.Helper()
	h.patchPool(pool, func(p *mcfgv1.MachineConfigPool) { p.Spec.Configuration.Name = config })
}

func (h *harness) patchPool(pool string, mutate func(*mcfgv1.MachineConfigPool)) {
	h.t.Helper()
	h.g.Eventually(func() error {
		p := h.getPool(pool)
		base := p.DeepCopy()
		mutate(p)
		return env.Client.Patch(h.ctx, p, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	}).Should(Succeed())
}

func (h *harness) getPool(name string) *mcfgv1.MachineConfigPool {
	h.t.Helper()
	p := &mcfgv1.MachineConfigPool{}
	h.g.Expect(env.Client.Get(h.ctx, client.ObjectKey{Name: name}, p)).To(Succeed())
	return p
}

// condition returns the pool's condition of type t, or nil.
func condition(p *mcfgv1.MachineConfigPool, t string) *mcfgv1.MachineConfigPoolCondition {
	for i := range p.Status.Conditions {
		if string(p.Status.Conditions[i].Type) == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// trueCondition is "<type>/<reason>" of the pool's True build condition, or
// "" when none is True.
func (h *harness) trueCondition(pool string) string {
	p := h.getPool(pool)
	for _, t := range osbuild.Conditions {
		if c := condition(p, t); c != nil && c.Status == corev1.ConditionTrue {
			return t + "/" + c.Reason
		}
	}
	return ""
}

// waitCondition waits until the pool's True build condition is
// "<type>/<reason>" and returns its message.
func (h *harness) waitCondition(pool, typ, reason string) string {
	h.t.Helper()
	h.g.Eventually(func() string { return h.trueCondition(pool) }).Should(Equal(typ + "/" + reason))
	c := condition(h.getPool(pool), typ)
	// Exactly one is True; the others are False with the same reason.
	for _, t := range osbuild.Conditions {
		o := condition(h.getPool(pool), t)
		h.g.Expect(o).NotTo(BeNil(), "condition %s", t)
		if t != typ {
			h.g.Expect(o.Status).To(Equal(corev1.ConditionFalse), "condition %s", t)
			h.g.Expect(o.Reason).To(Equal(reason), "condition %s", t)
		}
	}
	return c.Message
}

// buildObjects lists the backend's objects for pool.
func (h *harness) buildObjects(pool string) []client.Object {
	h.t.Helper()
	b, err := osbuild.NewBackend(h.backend, osbuild.BackendOptions{})
	h.g.Expect(err).NotTo(HaveOccurred())
	list := b.NewList()
	h.g.Expect(env.Client.List(h.ctx, list, client.InNamespace(h.ns), client.MatchingLabels(osbuild.SelectorForPool(pool)))).To(Succeed())
	var out []client.Object
	for _, o := range b.Items(list) {
		if o.GetDeletionTimestamp().IsZero() {
			out = append(out, o)
		}
	}
	return out
}

// buildNames are the names of the backend's objects for pool.
func (h *harness) buildNames(pool string) []string {
	var out []string
	for _, o := range h.buildObjects(pool) {
		out = append(out, o.GetName())
	}
	return out
}

// configMapNames are the names of the inputs ConfigMaps for pool.
func (h *harness) configMapNames(pool string) []string {
	h.t.Helper()
	list := &corev1.ConfigMapList{}
	h.g.Expect(env.Client.List(h.ctx, list, client.InNamespace(h.ns), client.MatchingLabels(osbuild.SelectorForPool(pool)))).To(Succeed())
	var out []string
	for _, cm := range list.Items {
		if cm.DeletionTimestamp.IsZero() {
			out = append(out, cm.Name)
		}
	}
	return out
}

// waitBuildFor waits for the build object of pool that builds config and
// returns it.
func (h *harness) waitBuildFor(pool, config string) client.Object {
	h.t.Helper()
	var found client.Object
	h.g.Eventually(func() bool {
		for _, o := range h.buildObjects(pool) {
			if o.GetAnnotations()[osbuild.DesiredConfigAnnotation] == config {
				found = o
				return true
			}
		}
		return false
	}).Should(BeTrue(), "a %s for %s", h.backend, config)
	return found
}

// setRunning plays the builder starting the build.
func (h *harness) setRunning(obj client.Object) {
	h.t.Helper()
	switch o := obj.(type) {
	case *buildv1.Build:
		h.patchBuildStatus(o, func(b *buildv1.Build) { b.Status.Phase = buildv1.BuildPhaseRunning })
	case *batchv1.Job:
		h.patchJobStatus(o, func(j *batchv1.Job) {
			j.Status.StartTime = ptr.To(metav1.Now())
			j.Status.Active = 1
			j.Status.Ready = ptr.To[int32](1)
		})
	}
}

// setSucceeded plays the builder pushing the image with digest d.
func (h *harness) setSucceeded(obj client.Object, d string) {
	h.t.Helper()
	switch o := obj.(type) {
	case *buildv1.Build:
		h.patchBuildStatus(o, func(b *buildv1.Build) {
			b.Status.Phase = buildv1.BuildPhaseComplete
			b.Status.OutputDockerImageReference = repo + ":" + o.Annotations[osbuild.DesiredConfigAnnotation]
			b.Status.Output.To = &buildv1.BuildStatusOutputTo{ImageDigest: d}
		})
	case *batchv1.Job:
		h.jobPod(o, corev1.PodSucceeded, 0, d)
		h.patchJobStatus(o, func(j *batchv1.Job) {
			now := metav1.Now()
			if j.Status.StartTime == nil {
				j.Status.StartTime = &now
			}
			j.Status.Active, j.Status.Ready, j.Status.Succeeded = 0, ptr.To[int32](0), 1
			j.Status.CompletionTime = &now
			j.Status.Conditions = append(j.Status.Conditions,
				batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
				batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now})
		})
	}
}

// setFailed plays the builder failing.
func (h *harness) setFailed(obj client.Object) {
	h.t.Helper()
	switch o := obj.(type) {
	case *buildv1.Build:
		h.patchBuildStatus(o, func(b *buildv1.Build) {
			b.Status.Phase = buildv1.BuildPhaseFailed
			b.Status.Reason = "PushImageToRegistryFailed"
			b.Status.Message = "Failed to push the output image to the registry."
		})
	case *batchv1.Job:
		h.jobPod(o, corev1.PodFailed, 125, "Error: pushing: unauthorized")
		h.patchJobStatus(o, func(j *batchv1.Job) {
			now := metav1.Now()
			if j.Status.StartTime == nil {
				j.Status.StartTime = &now
			}
			j.Status.Active, j.Status.Ready, j.Status.Failed = 0, ptr.To[int32](0), 1
			j.Status.Conditions = append(j.Status.Conditions,
				batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded, Message: "Job has reached the specified backoff limit", LastTransitionTime: now, LastProbeTime: now},
				batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded, Message: "Job has reached the specified backoff limit", LastTransitionTime: now, LastProbeTime: now})
		})
	}
}

// workerPool makes the inputs and the layered pool "worker" on the
// MachineConfig "a", which most tests start from, and returns their names.
func (h *harness) workerPool() (pool, config string) {
	h.inputs()
	config = h.machineConfig("a")
	return h.pool("worker", config, true).Name, config
}

// createJobPod plays the Job controller: it creates a pod of job, from
// its template, owned by it.
func (h *harness) createJobPod(job *batchv1.Job) *corev1.Pod {
	h.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: job.Name + "-", Namespace: job.Namespace,
			Labels:          job.Spec.Template.Labels,
			Annotations:     job.Spec.Template.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	h.create(pod)
	return pod
}

// jobPod plays the Job controller and kubelet: a pod of the Job whose
// builder container ended with exit code and termination message msg.
func (h *harness) jobPod(job *batchv1.Job, phase corev1.PodPhase, code int32, msg string) {
	h.t.Helper()
	pod := h.createJobPod(job)
	now := metav1.Now()
	pod.Status = corev1.PodStatus{
		Phase: phase,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: osbuild.BuilderContainer, Image: job.Spec.Template.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Message: msg, StartedAt: now, FinishedAt: now,
			}},
		}},
	}
	h.g.Expect(env.Client.Status().Update(h.ctx, pod)).To(Succeed())
}

func (h *harness) patchBuildStatus(b *buildv1.Build, mutate func(*buildv1.Build)) {
	h.t.Helper()
	h.g.Expect(h.tryPatchBuild(b, mutate)).To(Succeed())
}

// tryPatchBuild patches the current version of b through the main resource,
// as the builder and OpenShift's build controller do (the Build API has no
// status subresource), retrying on conflicts only.
func (h *harness) tryPatchBuild(b *buildv1.Build, mutate func(*buildv1.Build)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &buildv1.Build{}
		if err := env.Client.Get(h.ctx, client.ObjectKeyFromObject(b), cur); err != nil {
			return err
		}
		base := cur.DeepCopy()
		mutate(cur)
		return env.Client.Patch(h.ctx, cur, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
}

func (h *harness) patchJobStatus(j *batchv1.Job, mutate func(*batchv1.Job)) {
	h.t.Helper()
	h.g.Expect(h.tryPatchStatus(&batchv1.Job{}, j, func(o client.Object) { mutate(o.(*batchv1.Job)) })).To(Succeed())
}

// tryPatchStatus patches the status of obj's current version (read into
// cur), retrying on conflicts only.
func (h *harness) tryPatchStatus(cur, obj client.Object, mutate func(client.Object)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(h.ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
			return err
		}
		base := cur.DeepCopyObject().(client.Object)
		mutate(cur)
		return env.Client.Status().Patch(h.ctx, cur, client.MergeFrom(base))
	})
}

// image is the pool's desired-os-image annotation.
func (h *harness) image(pool string) string {
	return h.getPool(pool).Annotations[osbuild.DesiredOSImageAnnotation]
}

// isGone reports whether obj no longer exists (or is being deleted).
func isGone(obj client.Object) bool {
	cur := obj.DeepCopyObject().(client.Object)
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), cur)
	return apierrors.IsNotFound(err) || (err == nil && !cur.GetDeletionTimestamp().IsZero())
}

// finish plays the builder finishing obj with digest d, tolerating an
// object the controller has deleted meanwhile.
func (h *harness) finish(obj client.Object, d string) error {
	switch o := obj.(type) {
	case *buildv1.Build:
		return h.tryPatchBuild(o, func(b *buildv1.Build) {
			b.Status.Phase = buildv1.BuildPhaseComplete
			b.Status.Output.To = &buildv1.BuildStatusOutputTo{ImageDigest: d}
		})
	case *batchv1.Job:
		h.jobPod(o, corev1.PodSucceeded, 0, d)
		return h.tryPatchStatus(&batchv1.Job{}, o, func(c client.Object) {
			j := c.(*batchv1.Job)
			now := metav1.Now()
			j.Status.StartTime, j.Status.CompletionTime = &now, &now
			j.Status.Active, j.Status.Succeeded = 0, 1
			j.Status.Conditions = append(j.Status.Conditions,
				batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
				batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now})
		})
	}
	return fmt.Errorf("unknown build object %T", obj)
}
