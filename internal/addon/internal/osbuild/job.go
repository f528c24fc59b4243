package osbuild

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// JobBackend runs buildah in a plain batch/v1 Job, for clusters without the
// Build API. The pod mounts the inputs ConfigMap as the build context and
// the two secrets as auth files; the builder container writes the pushed
// image's digest as its termination message (see assets/buildah-build.sh),
// so the pod needs no API access and the controller reads the digest from
// the Job's succeeded pod.
type JobBackend struct{ Options BackendOptions }

var _ Backend = (*JobBackend)(nil)

// BuilderContainer is the name of the Job's only container.
const BuilderContainer = "build"

// Mount paths in the Job's pod.
const (
	jobContext  = "/context"
	jobPullAuth = "/var/run/secrets/base-image-pull"
	jobPushAuth = "/var/run/secrets/final-image-push"
	jobHome     = "/home/build"
	// jobCertsDir is where containers/image looks for a registry's CA:
	// <host[:port]>/ca.crt.
	jobCertsDir = "/etc/containers/certs.d"
)

// Name implements Backend.
func (*JobBackend) Name() string { return BackendJob }

// Kind implements Backend.
func (*JobBackend) Kind() string { return "Job" }

// NewObject implements Backend.
func (*JobBackend) NewObject() client.Object { return &batchv1.Job{} }

// NewList implements Backend.
func (*JobBackend) NewList() client.ObjectList { return &batchv1.JobList{} }

// Items implements Backend.
func (*JobBackend) Items(list client.ObjectList) []client.Object {
	l := list.(*batchv1.JobList)
	out := make([]client.Object, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}

// Manifest implements Backend.
func (j *JobBackend) Manifest(req *Request) client.Object {
	meta := req.ObjectMeta(req.Names.Build, RoleBuild)
	podLabels := req.Labels(RoleBuild)
	sa := j.Options.ServiceAccount
	if sa == "" {
		sa = "default"
	}
	authVolume := func(name, secret string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secret,
			Items:      []corev1.KeyToPath{{Key: corev1.DockerConfigJsonKey, Path: "config.json"}},
		}}}
	}
	job := &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			// A failed pod is retried by the Job controller, with its
			// exponential backoff (10 s, doubling, capped at 6 min), up
			// to Retries times; then the Job fails and is kept for
			// debugging.
			BackoffLimit:          ptr.To(j.Options.Retries),
			ActiveDeadlineSeconds: timeoutSeconds(j.Options.Timeout),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: maps.Clone(meta.Annotations)},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					ServiceAccountName:           sa,
					AutomountServiceAccountToken: ptr.To(false),
					// UID 1000 is the "build" user of the buildah image (as
					// upstream; on OpenShift the service account needs the
					// anyuid SCC).
					SecurityContext: &corev1.PodSecurityContext{
						RunAsUser:  ptr.To[int64](1000),
						RunAsGroup: ptr.To[int64](1000),
						FSGroup:    ptr.To[int64](1000),
					},
					Containers: []corev1.Container{{
						Name:    BuilderContainer,
						Image:   j.Options.BuilderImage,
						Command: []string{"/bin/bash", "-c", buildahScript},
						Env: []corev1.EnvVar{
							{Name: "TAG", Value: req.PushSpec()},
							{Name: "CONTEXT", Value: jobContext},
							{Name: "PULL_AUTH", Value: jobPullAuth + "/config.json"},
							{Name: "PUSH_AUTH", Value: jobPushAuth + "/config.json"},
							{Name: "HOME", Value: jobHome},
							{Name: "BUILDAH_ISOLATION", Value: "chroot"},
							{Name: "STORAGE_DRIVER", Value: "vfs"},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "context", MountPath: jobContext + "/machineconfig", ReadOnly: true},
							{Name: "pull-auth", MountPath: jobPullAuth, ReadOnly: true},
							{Name: "push-auth", MountPath: jobPushAuth, ReadOnly: true},
							{Name: "storage", MountPath: jobHome + "/.local/share/containers"},
						},
						TerminationMessagePath: corev1.TerminationMessagePathDefault,
						// On success the script writes the digest there; on
						// a failure the log's tail becomes the message, so
						// the pool's condition and events quote it.
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					}},
					Volumes: []corev1.Volume{
						{Name: "context", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: req.Names.Inputs},
						}}},
						authVolume("pull-auth", req.Builder.BaseImagePullSecret),
						authVolume("push-auth", req.Builder.FinalImagePushSecret),
						{Name: "storage", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
	addRegistryCAs(&job.Spec.Template.Spec, req.RegistryCAs)
	return job
}

// addRegistryCAs mounts the registry CA ConfigMap, if any: each key
// (<host> or <host>..<port>, OpenShift's format for additionalTrustedCA)
// becomes <host[:port]>/ca.crt under /etc/containers/certs.d.
func addRegistryCAs(pod *corev1.PodSpec, ca *RegistryCAs) {
	if ca == nil || len(ca.Keys) == 0 {
		return
	}
	items := make([]corev1.KeyToPath, 0, len(ca.Keys))
	for _, k := range ca.Keys {
		items = append(items, corev1.KeyToPath{Key: k, Path: RegistryHostOfCAKey(k) + "/ca.crt"})
	}
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "registry-ca", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: ca.ConfigMap}, Items: items},
	}})
	c := &pod.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "registry-ca", MountPath: jobCertsDir, ReadOnly: true})
}

// Observe implements Backend: it lists the Job's pods (by the build's
// labels, then by controller reference) to find the digest.
func (*JobBackend) Observe(ctx context.Context, r client.Reader, obj client.Object) (Observation, error) {
	job := obj.(*batchv1.Job)
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{
		ManagedByLabel: ManagedByValue,
		BuildIDLabel:   job.Labels[BuildIDLabel],
		RoleLabel:      RoleBuild,
	}); err != nil {
		return Observation{}, fmt.Errorf("listing the pods of Job %s: %w", job.Name, err)
	}
	o := ObserveJob(job, pods.Items)
	for _, p := range ownedPods(job, pods.Items) {
		if p.Status.StartTime != nil {
			o.Started = p.Status.StartTime.Time
			break
		}
	}
	return o, nil
}

// ObserveJob maps a Job and its pods: Failed (DeadlineExceeded is a
// timeout) failed; Complete with a digest in the succeeded pod's
// termination message succeeded; a ready pod is running; anything else is
// pending. Pods not controlled by the Job are ignored.
func ObserveJob(job *batchv1.Job, pods []corev1.Pod) Observation {
	if r := stoppedReason(job); r != "" {
		return Observation{Phase: PhaseFailed, Reason: r}
	}
	var complete bool
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			reason := ReasonBuildFailed
			if c.Reason == batchv1.JobReasonDeadlineExceeded {
				reason = ReasonTimeout
			}
			return Observation{Phase: PhaseFailed, Reason: reason, Message: joinNonEmpty(c.Reason, c.Message, podFailure(job, pods))}
		case batchv1.JobComplete:
			complete = true
		}
	}
	owned := ownedPods(job, pods)
	if complete {
		for _, p := range owned {
			if p.Status.Phase != corev1.PodSucceeded {
				continue
			}
			msg, ok := terminationMessage(&p)
			if !ok {
				continue
			}
			if d := strings.TrimSpace(msg); ValidDigest(d) {
				return Observation{Phase: PhaseSucceeded, Digest: d}
			}
			return Observation{Phase: PhaseFailed, Reason: ReasonNoDigest,
				Message: fmt.Sprintf("pod %s succeeded but its termination message %q is not sha256:<digest>", p.Name, truncate(msg, 100))}
		}
		// The pod's update may reach the cache after the Job's; its event
		// brings the controller back.
		return Observation{Phase: PhaseRunning, Message: "the Job completed; waiting for its pod's digest"}
	}
	var retry string
	if job.Status.Failed > 0 {
		limit := int32(0)
		if job.Spec.BackoffLimit != nil {
			limit = *job.Spec.BackoffLimit
		}
		retry = fmt.Sprintf("attempt %d of %d failed (%s); the Job retries it with backoff",
			job.Status.Failed, limit+1, podFailure(job, pods))
	}
	if job.Status.Ready != nil && *job.Status.Ready > 0 {
		return Observation{Phase: PhaseRunning, Message: retry}
	}
	for _, p := range owned {
		if p.Status.Phase == corev1.PodRunning {
			return Observation{Phase: PhaseRunning, Message: retry}
		}
	}
	return Observation{Phase: PhasePending, Message: retry}
}

// ownedPods returns the pods whose controller is job, oldest first.
func ownedPods(job *batchv1.Job, pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == job.UID {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp) })
	return out
}

// terminationMessage is the builder container's termination message.
func terminationMessage(p *corev1.Pod) (string, bool) {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == BuilderContainer && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0 {
			return cs.State.Terminated.Message, true
		}
	}
	return "", false
}

// podFailure describes why the builder container of a failed pod stopped.
func podFailure(job *batchv1.Job, pods []corev1.Pod) string {
	owned := ownedPods(job, pods)
	slices.Reverse(owned) // the newest failure
	for _, p := range owned {
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; cs.Name == BuilderContainer && t != nil && t.ExitCode != 0 {
				return fmt.Sprintf("pod %s: container %s exited %d: %s", p.Name, cs.Name, t.ExitCode, truncate(joinNonEmpty(t.Reason, t.Message), 300))
			}
		}
	}
	return ""
}

// Stop implements Backend: it suspends the Job (which deletes its running
// pod and keeps the Job for debugging) and records reason.
func (*JobBackend) Stop(ctx context.Context, c client.Client, obj client.Object, reason string) error {
	return stop(ctx, c, obj, reason, "spec", map[string]any{"suspend": true})
}

func joinNonEmpty(parts ...string) string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
