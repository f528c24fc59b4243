package buildcontroller

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The controller's metrics, on the manager's metrics endpoint
// (docs/addon/build-controller.md, "Metrics").
var (
	buildDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "ocp_capi_os_build_duration_seconds",
		Help: "Time from a build object's creation to the image pushed (succeeded builds) or the build reported failed.",
		// 10 s to about 2 h.
		Buckets: prometheus.ExponentialBuckets(10, 2, 10),
	})
	buildQueueWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "ocp_capi_os_build_queue_wait_seconds",
		Help: "Time from a build object's creation to its builder starting (the Job's first pod running, or the Build's start).",
		// 0.5 s to about 8.5 min.
		Buckets: prometheus.ExponentialBuckets(0.5, 2, 11),
	})
	buildsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocp_capi_os_builds_total",
		Help: "Builds by outcome: succeeded, failed, timeout, superseded; reused counts images published again without a build (an equivalent earlier build).",
	}, []string{"outcome"})
	imagesPruned = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ocp_capi_os_images_pruned_total",
		Help: "Images the controller deleted from their registry by digest.",
	})
)

// Outcomes of ocp_capi_os_builds_total.
const (
	outcomeSucceeded  = "succeeded"
	outcomeFailed     = "failed"
	outcomeTimeout    = "timeout"
	outcomeSuperseded = "superseded"
	outcomeReused     = "reused"
)

var registerMetrics sync.Once

// RegisterMetrics adds the controller's metrics to the manager's registry,
// once per process.
func RegisterMetrics() {
	registerMetrics.Do(func() {
		crmetrics.Registry.MustRegister(buildDuration, buildQueueWait, buildsTotal, imagesPruned)
		for _, o := range []string{outcomeSucceeded, outcomeFailed, outcomeTimeout, outcomeSuperseded, outcomeReused} {
			buildsTotal.WithLabelValues(o)
		}
	})
}
