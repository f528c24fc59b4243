package buildcontroller

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
)

// DefaultNamespace is the default --build-namespace: where the MCO keeps its
// ConfigMaps and where upstream's BuildController ran its builds.
const DefaultNamespace = "openshift-machine-config-operator"

// Options are the controller's flags.
type Options struct {
	// Backend is --build-backend: "build" (OpenShift Build API) or "job".
	Backend string
	// Namespace is --build-namespace: the input ConfigMaps and Secrets are
	// read there and the build objects are created there.
	Namespace string
	// Timeout is --build-timeout: a build still running after it is stopped
	// and reported as BuildFailed with reason Timeout.
	Timeout time.Duration
	// BuilderImage is --builder-image: the Job backend's buildah image.
	BuilderImage string
	// ServiceAccount is --build-service-account: the service account builds
	// run as. Empty: "builder" (Build API) or "default" (Job).
	ServiceAccount string
	// FailedRetention is --build-failed-retention: how many failed builds
	// per pool are kept for debugging besides the one for the pool's
	// current inputs (always kept: it is what stops a rebuild loop).
	FailedRetention int
	// SecretRetry is how soon a pool whose Secret is missing or invalid is
	// looked at again: Secrets are read, not watched (least privilege).
	SecretRetry time.Duration
	// Retries is --build-retries: how often a failed build pod is tried
	// again (the Job's backoffLimit; the Job controller backs off, 10 s
	// doubling up to 6 min) before the build is reported failed.
	Retries int
	// ImageRetention is --build-image-retention: how many images per pool
	// the controller keeps in the registry, the published one included.
	// Older ones are deleted from the registry by digest once no pool
	// refers to them.
	ImageRetention int
	// APITimeout is --build-api-timeout: the deadline of each API call
	// (read, write, or a cache read that waits for the cache's first list),
	// derived from the reconcile's context. A call without an answer by
	// then fails the reconcile, which controller-runtime retries with
	// backoff, instead of holding a worker until the process ends.
	APITimeout time.Duration

	// Registry, when set, replaces the registry client (an HTTPRegistry
	// bounded by APITimeout). It is no flag: the envtest suite plays the
	// registry through it (internal/addon/controllers/build_registry_test.go).
	Registry Registry
}

// DefaultAPITimeout is the default --build-api-timeout: far above what a
// healthy API server takes (milliseconds), and below the minute after which
// an API server gives up on a request itself.
const DefaultAPITimeout = 30 * time.Second

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options {
	return Options{
		Backend:         osbuild.BackendBuild,
		Namespace:       DefaultNamespace,
		Timeout:         time.Hour,
		BuilderImage:    osbuild.DefaultBuilderImage,
		FailedRetention: 3,
		Retries:         3,
		ImageRetention:  3,
		SecretRetry:     time.Minute,
		APITimeout:      DefaultAPITimeout,
	}
}

// AddFlags binds the options to flags; add it to manager.Spec.ExtraFlags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Backend, "build-backend", o.Backend,
		`Builder of layered OS images: "build" creates build.openshift.io/v1 Builds (needs the OpenShift Build API); "job" runs buildah in a batch/v1 Job.`)
	fs.StringVar(&o.Namespace, "build-namespace", o.Namespace,
		"Namespace of the build inputs (ConfigMaps machine-os-builder-config and machine-config-osimageurl, the pull and push Secrets) and of the build objects.")
	fs.DurationVar(&o.Timeout, "build-timeout", o.Timeout,
		"Longest time one image build may take; a longer one is stopped and its pool gets BuildFailed with reason Timeout.")
	fs.StringVar(&o.BuilderImage, "builder-image", o.BuilderImage,
		"Image of the buildah container that the job backend runs.")
	fs.StringVar(&o.ServiceAccount, "build-service-account", o.ServiceAccount,
		`Service account that builds run as. Empty: "builder" for the build backend, "default" for the job backend.`)
	fs.DurationVar(&o.APITimeout, "build-api-timeout", o.APITimeout,
		"Deadline of each API server call the BuildController makes; a call without an answer by then fails the reconcile, which is retried with backoff.")
	fs.IntVar(&o.Retries, "build-retries", o.Retries,
		"How often the job backend tries a failed build again (the Job's backoffLimit, with the Job controller's exponential backoff) before the build is reported failed.")
	fs.IntVar(&o.ImageRetention, "build-image-retention", o.ImageRetention,
		"Images per pool kept in the registry, the published one included; older ones are deleted from the registry by digest once no pool refers to them.")
	fs.IntVar(&o.FailedRetention, "build-failed-retention", o.FailedRetention,
		"Failed build objects kept per pool for debugging, besides the one for the pool's current configuration (always kept until it is retried or superseded).")
}

// Validate checks the values that the flags' types do not.
func (o Options) Validate() error {
	if o.Backend != osbuild.BackendBuild && o.Backend != osbuild.BackendJob {
		return fmt.Errorf("--build-backend must be %q or %q, got %q", osbuild.BackendBuild, osbuild.BackendJob, o.Backend)
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("--build-namespace %q is not a valid namespace name: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--build-timeout must be positive, got %s", o.Timeout)
	}
	if o.Backend == osbuild.BackendJob && strings.TrimSpace(o.BuilderImage) == "" {
		return fmt.Errorf("--builder-image must not be empty with --build-backend=%s", osbuild.BackendJob)
	}
	if o.ServiceAccount != "" {
		if errs := validation.IsDNS1123Subdomain(o.ServiceAccount); len(errs) > 0 {
			return fmt.Errorf("--build-service-account %q is not a valid name: %s", o.ServiceAccount, strings.Join(errs, "; "))
		}
	}
	if o.FailedRetention < 0 {
		return fmt.Errorf("--build-failed-retention must not be negative, got %d", o.FailedRetention)
	}
	if o.Retries < 0 || o.Retries > 10 {
		return fmt.Errorf("--build-retries must be between 0 and 10, got %d", o.Retries)
	}
	if o.ImageRetention < 1 {
		return fmt.Errorf("--build-image-retention must be at least 1 (the published image), got %d", o.ImageRetention)
	}
	if o.APITimeout <= 0 {
		return fmt.Errorf("--build-api-timeout must be positive, got %s", o.APITimeout)
	}
	if o.SecretRetry <= 0 {
		return fmt.Errorf("the secret retry interval must be positive, got %s", o.SecretRetry)
	}
	return nil
}
