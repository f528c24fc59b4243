package clients

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count and time the OpenStack requests of a manager. Nothing is
// registered when the package loads: the infrastructure-manager registers
// them in its metrics registry (internal/openstack/setup.go), and code that
// only builds clients (pkg/openstack/instance) pulls in no registry.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// Metric names, as the infrastructure-manager serves them on /metrics
// (docs/openstack/performance.md).
const (
	RequestsMetric = "ocp_capi_openstack_api_requests_total"
	LatencyMetric  = "ocp_capi_openstack_api_request_duration_seconds"
)

// RegisterMetrics returns the request metrics, registered in r. Registering
// twice in one registry (several managers in one test process) returns the
// metrics registered first, so that they keep counting in one place.
func RegisterMetrics(r prometheus.Registerer) (*Metrics, error) {
	requests, err := register(r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: RequestsMetric,
		Help: "OpenStack API requests made by this manager, by endpoint host, method and status code (0 for transport errors).",
	}, []string{"host", "method", "code"}))
	if err != nil {
		return nil, err
	}
	latency, err := register(r, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    LatencyMetric,
		Help:    "Latency of OpenStack API requests, by endpoint host and method.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
	}, []string{"host", "method"}))
	if err != nil {
		return nil, err
	}
	return &Metrics{requests: requests, latency: latency}, nil
}

func register[C prometheus.Collector](r prometheus.Registerer, c C) (C, error) {
	err := r.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// Transport counts and times every request that goes through next. It is
// an Options.Transport.
func (m *Metrics) Transport(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := next.RoundTrip(req)
		code := "0"
		if resp != nil {
			code = strconv.Itoa(resp.StatusCode)
		}
		m.requests.WithLabelValues(req.URL.Host, req.Method, code).Inc()
		m.latency.WithLabelValues(req.URL.Host, req.Method).Observe(time.Since(start).Seconds())
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
