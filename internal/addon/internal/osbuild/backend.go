package osbuild

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Phase is where a build is, in the controller's terms.
type Phase string

// The phases. Pending and Running are in flight; Succeeded and Failed are
// final.
const (
	PhasePending   Phase = "Pending"
	PhaseRunning   Phase = "Running"
	PhaseSucceeded Phase = "Succeeded"
	PhaseFailed    Phase = "Failed"
)

// InFlight reports whether the build may still change.
func (p Phase) InFlight() bool { return p == PhasePending || p == PhaseRunning }

// Observation is what a backend makes of its build object.
type Observation struct {
	Phase Phase
	// Reason is a condition reason for PhaseFailed (ReasonBuildFailed,
	// ReasonTimeout, ReasonCancelled, ReasonNoDigest).
	Reason string
	// Message is the builder's own words, if any.
	Message string
	// Digest is sha256:<hex> for PhaseSucceeded.
	Digest string
	// Started is when the builder started (the Job's first pod, the
	// Build's start); zero when unknown. For the queue-wait metric.
	Started time.Time
}

// Backend runs builds. Its build object is named Request.Names.Build and
// carries Request.ObjectMeta, so the controller finds it by label.
type Backend interface {
	// Name is the --build-backend value: "build" or "job".
	Name() string
	// Kind is the build object's kind, for messages.
	Kind() string
	// NewObject and NewList return empty build objects, for watches and
	// lists.
	NewObject() client.Object
	NewList() client.ObjectList
	// Items returns the objects of a list from NewList.
	Items(list client.ObjectList) []client.Object
	// Manifest returns the build object that runs req.
	Manifest(req *Request) client.Object
	// Observe classifies a build object; r reads related objects (the
	// Job's pods) from the same namespace.
	Observe(ctx context.Context, r client.Reader, obj client.Object) (Observation, error)
	// Stop asks the builder to stop obj and records reason on it
	// (FailureReasonAnnotation), in one write.
	Stop(ctx context.Context, c client.Client, obj client.Object, reason string) error
}

// BackendOptions configure both backends.
type BackendOptions struct {
	// Timeout bounds one build; also given to the builder (Build
	// completionDeadlineSeconds, Job activeDeadlineSeconds).
	Timeout time.Duration
	// ServiceAccount runs the build. Empty: "builder" for the Build API
	// (OpenShift's build service account), "default" for Jobs.
	ServiceAccount string
	// BuilderImage is the Job backend's image (buildah).
	BuilderImage string
	// Retries is how often the Job backend retries a failed build pod (the
	// Job's backoffLimit); the Job controller backs off between attempts.
	Retries int32
}

// Backend names (--build-backend).
const (
	BackendBuild = "build"
	BackendJob   = "job"
)

// DefaultBuilderImage is the default --builder-image (upstream's).
const DefaultBuilderImage = "quay.io/buildah/stable:latest"

// NewBackend returns the backend named name.
func NewBackend(name string, opts BackendOptions) (Backend, error) {
	switch name {
	case BackendBuild:
		return &BuildAPI{Options: opts}, nil
	case BackendJob:
		if opts.BuilderImage == "" {
			opts.BuilderImage = DefaultBuilderImage
		}
		return &JobBackend{Options: opts}, nil
	}
	return nil, fmt.Errorf("unknown build backend %q: use %q (OpenShift Build API) or %q (Kubernetes Job)", name, BackendBuild, BackendJob)
}

// stop records reason (FailureReasonAnnotation) on obj and sets fields in
// its section (spec or status), in one merge patch.
//
// A fixed merge patch, not CAPI's patch helper: a Build has no status subresource, so status.cancelled goes with the metadata to the main resource.
func stop(ctx context.Context, c client.Client, obj client.Object, reason, section string, fields map[string]any) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{FailureReasonAnnotation: reason}},
		section:    fields,
	})
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}

// stoppedReason returns the reason the controller recorded when it stopped
// obj, or "".
func stoppedReason(obj client.Object) string { return obj.GetAnnotations()[FailureReasonAnnotation] }

// timeoutSeconds is Timeout in whole seconds, at least 1, or nil.
func timeoutSeconds(d time.Duration) *int64 {
	if d <= 0 {
		return nil
	}
	s := int64((d + time.Second - 1) / time.Second)
	return &s
}
