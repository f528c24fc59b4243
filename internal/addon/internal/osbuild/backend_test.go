package osbuild

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	buildv1 "github.com/ocp-capi/ocp-capi/internal/consumed/build/v1"
)

var testDigest = "sha256:" + strings.Repeat("a", 64)

func TestNewBackend(t *testing.T) {
	for _, name := range []string{BackendBuild, BackendJob} {
		b, err := NewBackend(name, BackendOptions{})
		if err != nil || b.Name() != name {
			t.Errorf("NewBackend(%q) = %v, %v", name, b, err)
		}
	}
	if _, err := NewBackend("pod", BackendOptions{}); err == nil || !strings.Contains(err.Error(), `"build"`) {
		t.Errorf("unknown backend: %v", err)
	}
}

func testRequest(t *testing.T) *Request {
	t.Helper()
	req, err := NewRequest("mco", testInputs(), testPool(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestBuildManifest(t *testing.T) {
	req := testRequest(t)
	b := (&BuildAPI{Options: BackendOptions{Timeout: 90 * time.Minute}}).Manifest(req).(*buildv1.Build)
	if b.Name != req.Names.Build || b.Namespace != "mco" || b.Labels[RoleLabel] != RoleBuild {
		t.Errorf("metadata %+v", b.ObjectMeta)
	}
	s := b.Spec
	switch {
	case s.ServiceAccount != "builder":
		t.Errorf("service account %q", s.ServiceAccount)
	case s.Source.Type != buildv1.BuildSourceDockerfile || *s.Source.Dockerfile != req.Containerfile:
		t.Errorf("source %+v", s.Source)
	case len(s.Source.ConfigMaps) != 1 || s.Source.ConfigMaps[0].ConfigMap.Name != req.Names.Inputs || s.Source.ConfigMaps[0].DestinationDir != "machineconfig":
		t.Errorf("configMaps %+v", s.Source.ConfigMaps)
	case s.Strategy.Type != buildv1.DockerBuildStrategyType || s.Strategy.DockerStrategy.PullSecret.Name != "pull" ||
		*s.Strategy.DockerStrategy.ImageOptimizationPolicy != buildv1.ImageOptimizationSkipLayers:
		t.Errorf("strategy %+v", s.Strategy)
	case s.Output.To.Kind != "DockerImage" || s.Output.To.Name != req.PushSpec() || s.Output.PushSecret.Name != "push":
		t.Errorf("output %+v", s.Output)
	case *s.CompletionDeadlineSeconds != 5400:
		t.Errorf("completionDeadlineSeconds %d", *s.CompletionDeadlineSeconds)
	}
}

// TestJobManifestRetriesAndCAs: --build-retries is the Job's backoffLimit,
// and the registry CA ConfigMap is mounted where containers/image looks.
func TestJobManifestRetriesAndCAs(t *testing.T) {
	req := testRequest(t)
	req.RegistryCAs = ParseRegistryCAs(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: RegistryCAConfigMapName},
		Data: map[string]string{"registry.example.com..5000": "PEM", "quay.io": "PEM2", "empty": " "}})
	j := (&JobBackend{Options: BackendOptions{Retries: 3, BuilderImage: "b"}}).Manifest(req).(*batchv1.Job)
	if *j.Spec.BackoffLimit != 3 {
		t.Errorf("backoffLimit %d, want 3", *j.Spec.BackoffLimit)
	}
	p := j.Spec.Template.Spec
	v := p.Volumes[len(p.Volumes)-1]
	if v.ConfigMap == nil || v.ConfigMap.Name != RegistryCAConfigMapName || len(v.ConfigMap.Items) != 2 ||
		v.ConfigMap.Items[0].Path != "quay.io/ca.crt" || v.ConfigMap.Items[1].Path != "registry.example.com:5000/ca.crt" {
		t.Errorf("CA volume %+v", v)
	}
	m := p.Containers[0].VolumeMounts[len(p.Containers[0].VolumeMounts)-1]
	if m.Name != v.Name || m.MountPath != "/etc/containers/certs.d" {
		t.Errorf("CA mount %+v", m)
	}
	if p.Containers[0].TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Errorf("termination message policy %s", p.Containers[0].TerminationMessagePolicy)
	}
	// A failed attempt that the Job retries is still in flight, and says so.
	j.UID = "job-uid"
	j.Status.Failed = 1
	failed := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", OwnerReferences: []metav1.OwnerReference{{UID: "job-uid", Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: BuilderContainer,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "unauthorized"}}}}}}
	o := ObserveJob(j, []corev1.Pod{failed})
	if o.Phase != PhasePending || !strings.Contains(o.Message, "attempt 1 of 4 failed") || !strings.Contains(o.Message, "unauthorized") {
		t.Errorf("retrying Job: %+v", o)
	}
}

func TestJobManifest(t *testing.T) {
	req := testRequest(t)
	j := (&JobBackend{Options: BackendOptions{Timeout: time.Hour, BuilderImage: "quay.io/buildah/stable:v1", ServiceAccount: "machine-os-builder"}}).Manifest(req).(*batchv1.Job)
	if j.Name != req.Names.Build || j.Spec.Template.Labels[BuildIDLabel] != req.ID || j.Spec.Template.Annotations[PoolAnnotation] != "worker" {
		t.Errorf("metadata %+v / template %+v", j.ObjectMeta, j.Spec.Template.ObjectMeta)
	}
	if *j.Spec.BackoffLimit != 0 || *j.Spec.ActiveDeadlineSeconds != 3600 {
		t.Errorf("backoffLimit %d, activeDeadlineSeconds %d", *j.Spec.BackoffLimit, *j.Spec.ActiveDeadlineSeconds)
	}
	p := j.Spec.Template.Spec
	if p.ServiceAccountName != "machine-os-builder" || *p.AutomountServiceAccountToken || p.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("pod spec %+v", p)
	}
	c := p.Containers[0]
	if c.Name != BuilderContainer || c.Image != "quay.io/buildah/stable:v1" || !strings.Contains(c.Command[2], "--digestfile") || !strings.Contains(c.Command[2], "/dev/termination-log") {
		t.Errorf("container %+v", c)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["TAG"] != req.PushSpec() {
		t.Errorf("TAG %q", env["TAG"])
	}
	vols := map[string]corev1.VolumeSource{}
	for _, v := range p.Volumes {
		vols[v.Name] = v.VolumeSource
	}
	if vols["context"].ConfigMap.Name != req.Names.Inputs || vols["pull-auth"].Secret.SecretName != "pull" || vols["push-auth"].Secret.SecretName != "push" {
		t.Errorf("volumes %+v", p.Volumes)
	}
	if vols["pull-auth"].Secret.Items[0].Key != corev1.DockerConfigJsonKey {
		t.Errorf("pull auth items %+v", vols["pull-auth"].Secret.Items)
	}
}

func TestObserveBuild(t *testing.T) {
	build := func(phase buildv1.BuildPhase, mutate ...func(*buildv1.Build)) *buildv1.Build {
		b := &buildv1.Build{Status: buildv1.BuildStatus{Phase: phase}}
		for _, m := range mutate {
			m(b)
		}
		return b
	}
	withDigest := func(d string) func(*buildv1.Build) {
		return func(b *buildv1.Build) { b.Status.Output.To = &buildv1.BuildStatusOutputTo{ImageDigest: d} }
	}
	tests := []struct {
		name string
		b    *buildv1.Build
		want Observation
	}{
		{"new (empty phase)", build(""), Observation{Phase: PhasePending}},
		{"new", build(buildv1.BuildPhaseNew), Observation{Phase: PhasePending}},
		{"pending", build(buildv1.BuildPhasePending), Observation{Phase: PhasePending}},
		{"running", build(buildv1.BuildPhaseRunning), Observation{Phase: PhaseRunning}},
		{"complete", build(buildv1.BuildPhaseComplete, withDigest(testDigest)), Observation{Phase: PhaseSucceeded, Digest: testDigest}},
		{"complete without digest", build(buildv1.BuildPhaseComplete), Observation{Phase: PhaseFailed, Reason: ReasonNoDigest,
			Message: `the Build completed but status.output.to.imageDigest is "", not sha256:<digest>`}},
		{"failed", build(buildv1.BuildPhaseFailed, func(b *buildv1.Build) {
			b.Status.Reason, b.Status.Message = "PushImageToRegistryFailed", "Failed to push."
		}), Observation{Phase: PhaseFailed, Reason: ReasonBuildFailed, Message: "PushImageToRegistryFailed: Failed to push."}},
		{"error", build(buildv1.BuildPhaseError), Observation{Phase: PhaseFailed, Reason: ReasonBuildFailed}},
		{"cancelled", build(buildv1.BuildPhaseCancelled), Observation{Phase: PhaseFailed, Reason: ReasonCancelled}},
		{"cancel requested", build(buildv1.BuildPhasePending, func(b *buildv1.Build) { b.Status.Cancelled = true }),
			Observation{Phase: PhaseFailed, Reason: ReasonCancelled}},
		{"stopped by the controller, then completed", build(buildv1.BuildPhaseComplete, withDigest(testDigest), func(b *buildv1.Build) {
			b.Annotations = map[string]string{FailureReasonAnnotation: ReasonTimeout}
		}), Observation{Phase: PhaseFailed, Reason: ReasonTimeout}},
	}
	for _, tt := range tests {
		if got := ObserveBuild(tt.b); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestObserveJob(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "build-x", UID: "job-uid"}}
	withCond := func(typ batchv1.JobConditionType, reason string) *batchv1.Job {
		j := job.DeepCopy()
		j.Status.Conditions = []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: "m"}}
		return j
	}
	pod := func(owner string, phase corev1.PodPhase, code int32, msg string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "build-x-abcde", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "Job", Name: "build-x", UID: "job-uid", Controller: ptr.To(owner == "job")}}},
			Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: BuilderContainer,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg}}}}},
		}
	}
	ready := job.DeepCopy()
	ready.Status.Ready = ptr.To[int32](1)
	stopped := withCond(batchv1.JobComplete, "")
	stopped.Annotations = map[string]string{FailureReasonAnnotation: ReasonTimeout}
	tests := []struct {
		name string
		job  *batchv1.Job
		pods []corev1.Pod
		want Observation
	}{
		{"new", job, nil, Observation{Phase: PhasePending}},
		{"ready", ready, nil, Observation{Phase: PhaseRunning}},
		{"pod running", job, []corev1.Pod{{ObjectMeta: pod("job", "", 0, "").ObjectMeta, Status: corev1.PodStatus{Phase: corev1.PodRunning}}},
			Observation{Phase: PhaseRunning}},
		{"complete", withCond(batchv1.JobComplete, ""), []corev1.Pod{pod("job", corev1.PodSucceeded, 0, testDigest+"\n")},
			Observation{Phase: PhaseSucceeded, Digest: testDigest}},
		{"complete, pod not seen yet", withCond(batchv1.JobComplete, ""), nil,
			Observation{Phase: PhaseRunning, Message: "the Job completed; waiting for its pod's digest"}},
		{"complete, pod not controlled by the Job", withCond(batchv1.JobComplete, ""), []corev1.Pod{pod("other", corev1.PodSucceeded, 0, testDigest)},
			Observation{Phase: PhaseRunning, Message: "the Job completed; waiting for its pod's digest"}},
		{"complete, no digest", withCond(batchv1.JobComplete, ""), []corev1.Pod{pod("job", corev1.PodSucceeded, 0, "done")},
			Observation{Phase: PhaseFailed, Reason: ReasonNoDigest, Message: `pod build-x-abcde succeeded but its termination message "done" is not sha256:<digest>`}},
		{"failed", withCond(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded), []corev1.Pod{pod("job", corev1.PodFailed, 125, "unauthorized")},
			Observation{Phase: PhaseFailed, Reason: ReasonBuildFailed, Message: "BackoffLimitExceeded: m: pod build-x-abcde: container build exited 125: unauthorized"}},
		{"deadline exceeded", withCond(batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded), nil,
			Observation{Phase: PhaseFailed, Reason: ReasonTimeout, Message: "DeadlineExceeded: m"}},
		{"stopped by the controller, then completed", stopped, []corev1.Pod{pod("job", corev1.PodSucceeded, 0, testDigest)},
			Observation{Phase: PhaseFailed, Reason: ReasonTimeout}},
	}
	for _, tt := range tests {
		if got := ObserveJob(tt.job, tt.pods); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestValidDigest(t *testing.T) {
	for d, want := range map[string]bool{
		testDigest:                          true,
		"sha256:" + strings.Repeat("A", 64): false,
		"sha256:abc":                        false,
		"sha512:" + strings.Repeat("a", 64): false,
		"":                                  false,
	} {
		if ValidDigest(d) != want {
			t.Errorf("ValidDigest(%q) != %v", d, want)
		}
	}
}
