package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// benchClusters is how many clusters the benchmark installs at once.
const benchClusters = 20

// BenchmarkTwentyClusters creates 20 clusters (3 control-plane Machines and
// a MachineDeployment of 2 workers each, every one in its own namespace)
// while the control-plane provider is stopped, then starts it with 10
// workers and a client rate of qps (burst 1.5x; 20 is the manager's default)
// and measures, until every control plane is Available:
//   - s-to-all-available, p50-s, p99-s: from the start, for all and per
//     cluster;
//   - reconciles/cluster: the control-plane controller's reconciles;
//   - writes/cluster: its API writes (creates, patches, deletes).
//
// The bootstrap provider, the assisted-service simulator and the CAPI
// stand-in run unthrottled in the same process, so that they do not pace
// the measure; the simulator moves an installation one state per step.
//
// Run: KUBEBUILDER_ASSETS=$PWD/bin go test ./controlplane/controllers/ -run '^$' -bench TwentyClusters -benchtime 1x
func BenchmarkTwentyClusters(b *testing.B) {
	for _, qps := range []int{20, 200} {
		b.Run(fmt.Sprintf("qps=%d", qps), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchOnce(b, qps, i)
			}
		})
	}
}

func benchOnce(b *testing.B, qps, i int) {
	filter := fmt.Sprintf("bench-%d-%d", qps, i)
	g := NewWithT(b)
	clusters := make([]*testCluster, benchClusters)
	for n := range clusters {
		tc := newCluster(b, clusterOpts{filter: filter, failureDomains: []string{"fd-a", "fd-b", "fd-c"}})
		tc.machineDeployment("md", 2)
		tc.worker(workerName(0))
		tc.worker(workerName(1))
		clusters[n] = tc
	}

	writes := &envtest.WriteCounter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = float32(qps), qps*3/2
	cfg.Wrap(writes.Wrap)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := reconciles()[cpController]
	b.ResetTimer()
	start := time.Now()
	stop, err := startControlPlane(ctx, cfg, filter)
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()

	var mu sync.Mutex
	available := map[string]time.Duration{}
	g.Eventually(func() int {
		for _, tc := range clusters {
			mu.Lock()
			_, seen := available[tc.ns]
			mu.Unlock()
			if seen {
				continue
			}
			if o := tc.oacp(); o != nil && capiconditions.IsTrue(o, controlplanev1.AvailableCondition) {
				mu.Lock()
				available[tc.ns] = time.Since(start)
				mu.Unlock()
			}
		}
		return len(available)
	}, 10*time.Minute, 100*time.Millisecond).Should(Equal(benchClusters))
	all := time.Since(start)
	b.StopTimer()
	nWrites := writes.Load()
	nReconciles := reconciles()[cpController] - before

	lat := make([]time.Duration, 0, len(available))
	for _, d := range available {
		lat = append(lat, d)
	}
	slices.Sort(lat)
	b.ReportMetric(all.Seconds(), "s-to-all-available")
	b.ReportMetric(lat[len(lat)/2].Seconds(), "p50-s")
	b.ReportMetric(lat[len(lat)*99/100].Seconds(), "p99-s")
	b.ReportMetric(nReconciles/benchClusters, "reconciles/cluster")
	b.ReportMetric(float64(nWrites)/benchClusters, "writes/cluster")
	b.Logf("qps=%d: writes by method and resource: %v", qps, writes.Breakdown())
	for _, tc := range clusters {
		if errs := reconcileErrorsIn(tc.ns); len(errs) > 0 {
			b.Errorf("reconcile errors in %s: %v", tc.ns, errs[:min(len(errs), 5)])
		}
	}
}
