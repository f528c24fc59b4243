package clients

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocp_capi_openstack_api_requests_total",
		Help: "OpenStack API requests made by this manager, by endpoint host, method and status code (0 for transport errors).",
	}, []string{"host", "method", "code"})
	latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ocp_capi_openstack_api_request_duration_seconds",
		Help:    "Latency of OpenStack API requests, by endpoint host and method.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
	}, []string{"host", "method"})
)

func init() {
	metrics.Registry.MustRegister(requests, latency)
}

// MetricsTransport counts and times every OpenStack request.
func MetricsTransport(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := next.RoundTrip(req)
		code := "0"
		if resp != nil {
			code = strconv.Itoa(resp.StatusCode)
		}
		requests.WithLabelValues(req.URL.Host, req.Method, code).Inc()
		latency.WithLabelValues(req.URL.Host, req.Method).Observe(time.Since(start).Seconds())
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
