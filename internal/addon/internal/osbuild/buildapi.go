package osbuild

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	buildv1 "github.com/ocp-capi/ocp-capi/internal/consumed/build/v1"
)

// BuildAPI is the OpenShift Build API backend: it creates
// build.openshift.io/v1 Builds directly, with no BuildConfig and no
// ImageStream. The Build's Docker strategy reads the Containerfile inline
// and the inputs ConfigMap as a ConfigMap source, pulls with the base image
// pull secret and pushes with the push secret; the pushed digest comes back
// in status.output.to.imageDigest.
type BuildAPI struct{ Options BackendOptions }

var _ Backend = (*BuildAPI)(nil)

// ImageLabelPool is the image label naming the pool (upstream's).
const ImageLabelPool = "io.openshift.machineconfig.pool"

// Name implements Backend.
func (*BuildAPI) Name() string { return BackendBuild }

// Kind implements Backend.
func (*BuildAPI) Kind() string { return "Build" }

// NewObject implements Backend.
func (*BuildAPI) NewObject() client.Object { return &buildv1.Build{} }

// NewList implements Backend.
func (*BuildAPI) NewList() client.ObjectList { return &buildv1.BuildList{} }

// Items implements Backend.
func (*BuildAPI) Items(list client.ObjectList) []client.Object {
	l := list.(*buildv1.BuildList)
	out := make([]client.Object, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}

// Manifest implements Backend.
func (b *BuildAPI) Manifest(req *Request) client.Object {
	dockerfile := req.Containerfile
	sa := b.Options.ServiceAccount
	if sa == "" {
		sa = "builder"
	}
	return &buildv1.Build{
		ObjectMeta: req.ObjectMeta(req.Names.Build, RoleBuild),
		Spec: buildv1.BuildSpec{CommonSpec: buildv1.CommonSpec{
			ServiceAccount: sa,
			Source: buildv1.BuildSource{
				Type:       buildv1.BuildSourceDockerfile,
				Dockerfile: &dockerfile,
				ConfigMaps: []buildv1.ConfigMapBuildSource{{
					ConfigMap:      corev1.LocalObjectReference{Name: req.Names.Inputs},
					DestinationDir: "machineconfig",
				}},
			},
			Strategy: buildv1.BuildStrategy{
				Type: buildv1.DockerBuildStrategyType,
				DockerStrategy: &buildv1.DockerBuildStrategy{
					PullSecret: &corev1.LocalObjectReference{Name: req.Builder.BaseImagePullSecret},
					// One layer on top of the base image, as upstream.
					ImageOptimizationPolicy: ptr.To(buildv1.ImageOptimizationSkipLayers),
				},
			},
			Output: buildv1.BuildOutput{
				To:          &corev1.ObjectReference{Kind: "DockerImage", Name: req.PushSpec()},
				PushSecret:  &corev1.LocalObjectReference{Name: req.Builder.FinalImagePushSecret},
				ImageLabels: []buildv1.ImageLabel{{Name: ImageLabelPool, Value: req.Pool}},
			},
			CompletionDeadlineSeconds: timeoutSeconds(b.Options.Timeout),
		}},
	}
}

// Observe implements Backend.
func (*BuildAPI) Observe(_ context.Context, _ client.Reader, obj client.Object) (Observation, error) {
	b := obj.(*buildv1.Build)
	o := ObserveBuild(b)
	if b.Status.StartTimestamp != nil {
		o.Started = b.Status.StartTimestamp.Time
	}
	return o, nil
}

// ObserveBuild maps a Build's phase: New and Pending are pending, Running is
// running, Complete with a digest succeeded, and Failed, Error and Cancelled
// failed.
func ObserveBuild(b *buildv1.Build) Observation {
	if r := stoppedReason(b); r != "" {
		return Observation{Phase: PhaseFailed, Reason: r}
	}
	msg := buildMessage(b)
	switch b.Status.Phase {
	case buildv1.BuildPhaseRunning:
		return Observation{Phase: PhaseRunning, Message: msg}
	case buildv1.BuildPhaseComplete:
		var d string
		if b.Status.Output.To != nil {
			d = b.Status.Output.To.ImageDigest
		}
		if !ValidDigest(d) {
			return Observation{Phase: PhaseFailed, Reason: ReasonNoDigest,
				Message: fmt.Sprintf("the Build completed but status.output.to.imageDigest is %q, not sha256:<digest>", d)}
		}
		return Observation{Phase: PhaseSucceeded, Digest: d}
	case buildv1.BuildPhaseFailed, buildv1.BuildPhaseError:
		return Observation{Phase: PhaseFailed, Reason: ReasonBuildFailed, Message: msg}
	case buildv1.BuildPhaseCancelled:
		return Observation{Phase: PhaseFailed, Reason: ReasonCancelled, Message: msg}
	}
	if b.Status.Cancelled {
		return Observation{Phase: PhaseFailed, Reason: ReasonCancelled, Message: msg}
	}
	return Observation{Phase: PhasePending, Message: msg}
}

// buildMessage joins the Build's reason and message.
func buildMessage(b *buildv1.Build) string {
	parts := make([]string, 0, 2)
	for _, s := range []string{string(b.Status.Reason), b.Status.Message} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ": ")
}

// Stop implements Backend: it sets status.cancelled, as `oc cancel-build`
// does (the Build API takes it on the main resource), and records reason.
func (*BuildAPI) Stop(ctx context.Context, c client.Client, obj client.Object, reason string) error {
	return stop(ctx, c, obj, reason, "status", map[string]any{"cancelled": true})
}
