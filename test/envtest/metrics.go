package envtest

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ReconcileCounts sums controller-runtime's reconcile counter per controller
// over every manager of the process. Tests compare it with a baseline to
// know that a fresh manager has been through every object.
func ReconcileCounts() map[string]float64 { return reconcileCounts(crmetrics.Registry) }

// Busy is the number of queued and running reconciles of the named
// controllers; it is back at its baseline once they are idle. The gauges are
// shared by every manager of the process, and a stopped manager leaves its
// queue's count behind: compare with a baseline, not with zero.
func Busy(controllers ...string) float64 { return busy(crmetrics.Registry, controllers) }

func reconcileCounts(g prometheus.Gatherer) map[string]float64 {
	out := map[string]float64{}
	for _, m := range gather(g, "controller_runtime_reconcile_total") {
		out[label(m, "controller")] += m.GetCounter().GetValue()
	}
	return out
}

func busy(g prometheus.Gatherer, controllers []string) float64 {
	n := 0.0
	// The work queue names itself after its controller.
	for _, m := range gather(g, "workqueue_depth") {
		if slices.Contains(controllers, label(m, "name")) {
			n += m.GetGauge().GetValue()
		}
	}
	for _, m := range gather(g, "controller_runtime_active_workers") {
		if slices.Contains(controllers, label(m, "controller")) {
			n += m.GetGauge().GetValue()
		}
	}
	return n
}

func gather(g prometheus.Gatherer, name string) []*dto.Metric {
	families, err := g.Gather()
	if err != nil {
		return nil
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()
		}
	}
	return nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// CountsSince formats, sorted by controller, the reconciles of each
// controller between two ReconcileCounts.
func CountsSince(before, after map[string]float64) string {
	names := make([]string, 0, len(after))
	for n := range after {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, " %s %.0f;", n, after[n]-before[n])
	}
	return b.String()
}
