package controllers_test

import (
	"net/url"
	"testing"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// TestRequestMetrics: the controllers, wired as the infrastructure-manager
// wires them, count and time their OpenStack requests in
// controller-runtime's registry, which the manager serves on /metrics
// (docs/openstack/performance.md, Metrics).
func TestRequestMetrics(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	oss := e.server("metrics")
	e.createDeletedOnCleanup(oss)
	waitServerReady(g, oss)

	u, err := url.Parse(e.cloud.URL())
	g.Expect(err).NotTo(HaveOccurred())
	families, err := crmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	var posts, timed uint64
	for _, m := range byName[clients.RequestsMetric].GetMetric() {
		if labelOf(m, "host") == u.Host && labelOf(m, "method") == "POST" && labelOf(m, "code") == "202" {
			posts += uint64(m.GetCounter().GetValue())
		}
	}
	for _, m := range byName[clients.LatencyMetric].GetMetric() {
		if labelOf(m, "host") == u.Host {
			timed += m.GetHistogram().GetSampleCount()
		}
	}
	g.Expect(posts).To(BeNumerically(">=", 1), "%s: no POST answered 202 (the server create) counted for %s", clients.RequestsMetric, u.Host)
	g.Expect(timed).To(BeNumerically(">=", posts), "%s: fewer requests timed than counted for %s", clients.LatencyMetric, u.Host)
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
