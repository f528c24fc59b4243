package envtest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestReconcileCountsAndBusy reads the metrics from a registry of its own
// with controller-runtime's names and labels.
func TestReconcileCountsAndBusy(t *testing.T) {
	reg := prometheus.NewRegistry()
	total := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_total"}, []string{"controller", "result"})
	depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth"}, []string{"name", "controller"})
	workers := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "controller_runtime_active_workers"}, []string{"controller"})
	reg.MustRegister(total, depth, workers)

	if got := reconcileCounts(reg); len(got) != 0 {
		t.Errorf("no reconciles yet: %v", got)
	}
	total.WithLabelValues("a", "success").Add(3)
	total.WithLabelValues("a", "error").Add(1)
	total.WithLabelValues("b", "success").Add(2)
	got := reconcileCounts(reg)
	if got["a"] != 4 || got["b"] != 2 || len(got) != 2 {
		t.Errorf("reconcileCounts = %v, want a:4 (summed over results) and b:2", got)
	}

	depth.WithLabelValues("a", "a").Set(2)
	depth.WithLabelValues("b", "b").Set(5)
	workers.WithLabelValues("a").Set(1)
	workers.WithLabelValues("c").Set(7)
	if n := busy(reg, []string{"a"}); n != 3 {
		t.Errorf("busy(a) = %v, want 3 (2 queued, 1 running)", n)
	}
	if n := busy(reg, []string{"a", "c"}); n != 10 {
		t.Errorf("busy(a, c) = %v, want 10", n)
	}
	if n := busy(reg, nil); n != 0 {
		t.Errorf("busy() = %v, want 0", n)
	}
}
