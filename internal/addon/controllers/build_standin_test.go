package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	buildv1 "github.com/ocp-capi/ocp-capi/internal/consumed/build/v1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// The stand-ins play, for one test namespace, the controllers that a real
// cluster runs and envtest does not, as far as the BuildController depends
// on what they do. The builder itself (a build that runs, pushes, succeeds
// or fails) stays with the tests (setRunning, setSucceeded, setFailed).
// docs/addon/build-controller.md (Tests) lists the behaviour and where it
// comes from.
//
// OpenShift's build controller (openshift-controller-manager):
//   - a Build in phase New (the API server sets New when a Build is created
//     without a phase; the test CRD cannot, so an empty phase counts as
//     New) gets its build pod, named <build>-build, and phase Pending;
//   - a Build that is not finished and has status.cancelled true loses its
//     build pod and goes to phase Cancelled, reason CancelledBuild, with a
//     completion time. That is all a cancel does: `oc cancel-build` sets
//     status.cancelled through the main resource and waits for the phase.
//     A finished Build is left alone.
//
// The Job controller, for a suspended Job (spec.suspend true) that has not
// finished: its active pods are deleted, status.active and status.ready
// drop to 0 and the condition Suspended is True (reason JobSuspended).
//
// Every write is made with the object's resourceVersion, so a stand-in never
// undoes what a test wrote meanwhile (a conflict is looked at again).

// Reasons and messages of the real controllers.
const (
	buildPodSuffix          = "-build"
	buildReasonCancelled    = "CancelledBuild"
	buildMessageCancelled   = "The build was cancelled by the user."
	buildPodNameAnnotation  = "openshift.io/build.pod-name"
	buildNameLabel          = "openshift.io/build.name"
	jobReasonSuspended      = "JobSuspended"
	jobMessageSuspended     = "Job suspended"
	standInConflictRetry    = 50 * time.Millisecond
	standInBuilderImageName = "quay.io/openshift/origin-docker-builder:latest"
)

// startStandIns runs both stand-ins on namespace ns until the returned stop
// is called.
func startStandIns(ctx context.Context, ns string) (stop func() error, err error) {
	opts := env.ManagerOptions()
	opts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
	mgr, err := ctrl.NewManager(env.UnthrottledConfig(), opts)
	if err != nil {
		return nil, err
	}
	c := mgr.GetClient()
	if err := ctrl.NewControllerManagedBy(mgr).Named("standin-openshift-build-controller").
		For(&buildv1.Build{}).Complete(buildStandIn{c}); err != nil {
		return nil, err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("standin-job-controller").
		For(&batchv1.Job{}).Complete(jobStandIn{c}); err != nil {
		return nil, err
	}
	return envtest.RunManager(ctx, mgr), nil
}

// buildPodName is the name OpenShift gives a Build's pod.
func buildPodName(b client.Object) string { return b.GetName() + buildPodSuffix }

func buildFinished(p buildv1.BuildPhase) bool {
	switch p {
	case buildv1.BuildPhaseComplete, buildv1.BuildPhaseFailed, buildv1.BuildPhaseError, buildv1.BuildPhaseCancelled:
		return true
	}
	return false
}

type buildStandIn struct{ c client.Client }

func (s buildStandIn) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := &buildv1.Build{}
	if err := s.c.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.DeletionTimestamp.IsZero() || buildFinished(b.Status.Phase) {
		return ctrl.Result{}, nil
	}
	base := b.DeepCopy()
	switch {
	case b.Status.Cancelled:
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: buildPodName(b)}}
		if err := s.c.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting the build pod to cancel build %s: %w", b.Name, err)
		}
		b.Status.Phase = buildv1.BuildPhaseCancelled
		b.Status.Reason = buildReasonCancelled
		b.Status.Message = buildMessageCancelled
		b.Status.CompletionTimestamp = ptr.To(metav1.Now())
	case b.Status.Phase == "" || b.Status.Phase == buildv1.BuildPhaseNew:
		if err := s.c.Create(ctx, buildPod(b)); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("creating the pod of build %s: %w", b.Name, err)
		}
		if b.Annotations == nil {
			b.Annotations = map[string]string{}
		}
		b.Annotations[buildPodNameAnnotation] = buildPodName(b)
		b.Status.Phase = buildv1.BuildPhasePending
	default:
		return ctrl.Result{}, nil // the builder's part: the tests play it
	}
	// The main resource: the Build API has no status subresource.
	err := s.c.Patch(ctx, b, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: standInConflictRetry}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// buildPod is the Build's pod as far as the tests look at it: its name, its
// owner, and that it runs. No node is set, so deleting it is immediate.
func buildPod(b *buildv1.Build) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: b.Namespace, Name: buildPodName(b),
			Labels:          map[string]string{buildNameLabel: b.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(b, buildv1.GroupVersion.WithKind("Build"))},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "docker-build", Image: standInBuilderImageName}},
		},
	}
}

type jobStandIn struct{ c client.Client }

func (s jobStandIn) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	j := &batchv1.Job{}
	if err := s.c.Get(ctx, req.NamespacedName, j); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !j.DeletionTimestamp.IsZero() || !ptr.Deref(j.Spec.Suspend, false) || jobFinished(j) {
		return ctrl.Result{}, nil
	}
	pods := &corev1.PodList{}
	if err := s.c.List(ctx, pods, client.InNamespace(j.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != j.UID || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if err := s.c.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting pod %s of suspended Job %s: %w", p.Name, j.Name, err)
		}
	}
	if jobCondition(j, batchv1.JobSuspended) {
		return ctrl.Result{}, nil
	}
	base := j.DeepCopy()
	now := metav1.Now()
	j.Status.Active, j.Status.Ready = 0, ptr.To[int32](0)
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{
		Type: batchv1.JobSuspended, Status: corev1.ConditionTrue,
		Reason: jobReasonSuspended, Message: jobMessageSuspended,
		LastProbeTime: now, LastTransitionTime: now,
	})
	err := s.c.Status().Patch(ctx, j, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: standInConflictRetry}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func jobFinished(j *batchv1.Job) bool {
	return jobCondition(j, batchv1.JobComplete) || jobCondition(j, batchv1.JobFailed)
}

// TestBuildAPIStandIn: the tests' Build API is as strict as OpenShift's
// where the BuildController depends on it. A new Build gets a pod and phase
// Pending. A cancel written to a status subresource has no effect, because
// there is none (the real API serves no builds/status). A cancel through
// the main resource, as `oc cancel-build` writes it, deletes the pod and
// ends in phase Cancelled. A finished phase cannot change.
func TestBuildAPIStandIn(t *testing.T) {
	h := newHarness(t, osbuild.BackendBuild)
	b := &buildv1.Build{ObjectMeta: metav1.ObjectMeta{Name: "standin", Namespace: h.ns}}
	b.Spec.Strategy.Type = buildv1.DockerBuildStrategyType
	h.create(b)
	pod := h.builderPod(b)
	// The pod comes first, then the Build's phase (OpenShift's order too).
	h.g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		g.Expect(b.Status.Phase).To(Equal(buildv1.BuildPhasePending))
		g.Expect(b.Annotations).To(HaveKeyWithValue(buildPodNameAnnotation, pod.Name))
	}).WithTimeout(timeout).Should(Succeed())

	cancel := client.RawPatch(types.MergePatchType, []byte(`{"status":{"cancelled":true}}`))
	err := env.Client.Status().Patch(h.ctx, b, cancel)
	h.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Build API has no status subresource: %v", err)
	h.g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
	h.g.Expect(b.Status.Cancelled).To(BeFalse())
	h.g.Expect(b.Status.Phase).To(Equal(buildv1.BuildPhasePending))
	h.g.Expect(isGone(pod)).To(BeFalse())

	h.g.Expect(env.Client.Patch(h.ctx, b, cancel)).To(Succeed())
	h.g.Eventually(func() buildv1.BuildPhase {
		h.g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		return b.Status.Phase
	}).Should(Equal(buildv1.BuildPhaseCancelled))
	h.g.Expect(string(b.Status.Reason)).To(Equal(buildReasonCancelled))
	h.g.Expect(b.Status.Message).To(Equal(buildMessageCancelled))
	h.g.Expect(b.Status.CompletionTimestamp).NotTo(BeNil())
	h.g.Expect(isGone(pod)).To(BeTrue(), "cancelling deletes the build pod")

	err = h.tryPatchBuild(b, func(b *buildv1.Build) { b.Status.Phase = buildv1.BuildPhaseRunning })
	h.g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a finished Build stays finished: %v", err)
	h.g.Expect(err.Error()).To(ContainSubstring("phase cannot be updated from a terminal state"))
}
