package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// benchMachines is the size of the benchmark's cluster.
const benchMachines = 200

// BenchmarkMachines200 creates a cluster of 200 machines (3 control-plane,
// 197 workers) while the provider is stopped, then starts it with a client
// rate of 20 QPS (burst 30: the bootstrap-manager's default) or 200 QPS, and
// 10 workers per controller, and measures:
//   - s-to-all-dataSecretCreated: until every config has its bootstrap data;
//   - p50-s/p99-s: per machine, from the start to its dataSecretCreated;
//   - writes/machine-dataSecret: the provider's API writes per machine until then;
//   - s-to-all-approved, writes/machine-approved: the same until every
//     machine's Agent is bound and approved (the simulator registers the
//     hosts as they boot; the installation is held at ready).
//
// Run: KUBEBUILDER_ASSETS=$PWD/bin go test ./bootstrap/controllers/ -run '^$' -bench Machines200 -benchtime 1x
func BenchmarkMachines200(b *testing.B) {
	for _, qps := range []int{20, 200} {
		for _, kind := range []string{"OpenStack-DiscoveryIgnition", "Metal3-LiveISO"} {
			b.Run(fmt.Sprintf("%s/qps=%d", kind, qps), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					benchOnce(b, kind, qps, i)
				}
			})
		}
	}
}

func benchOnce(b *testing.B, kind string, qps, i int) {
	filter := fmt.Sprintf("bench-%s-%d-%d", kind, qps, i)
	t := &testing.T{}
	tc := newCluster(t, 3, benchMachines-3, filter)
	g := NewWithT(b)
	tc.t, tc.g = t, g
	sim.HoldAt(tc.aciKey(), hiveextv1beta1.StateReady)
	defer sim.Release(tc.aciKey())
	names := make([]string, benchMachines)
	if kind == "Metal3-LiveISO" {
		tc.metal3Template("cp", nil)
		tc.metal3Template("workers", nil)
	}
	for n := range benchMachines {
		cp := n < 3
		names[n] = fmt.Sprintf("m-%03d", n)
		switch kind {
		case "Metal3-LiveISO":
			template := "workers"
			if cp {
				template = "cp"
			}
			tc.metal3Machine(names[n], template, machineOpts{controlPlane: cp})
		default:
			tc.openstackMachine(names[n], machineOpts{controlPlane: cp})
		}
	}

	writes := &envtest.WriteCounter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = float32(qps), qps*3/2
	cfg.Wrap(writes.Wrap)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ResetTimer()
	start := time.Now()
	stop, err := startBootstrap(ctx, cfg, filter)
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()

	ready := map[string]time.Duration{}
	var allData time.Duration
	var writesAtData int64
	g.Eventually(func() int {
		list := &bootstrapv1.OpenshiftAssistedConfigList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(tc.ns))).To(Succeed())
		now := time.Since(start)
		for _, c := range list.Items {
			if _, seen := ready[c.Name]; !seen && ptr.Deref(c.Status.Initialization.DataSecretCreated, false) {
				ready[c.Name] = now
			}
		}
		if len(ready) == benchMachines && allData == 0 {
			allData, writesAtData = now, writes.Load()
		}
		return len(ready)
	}, 10*time.Minute, 100*time.Millisecond).Should(Equal(benchMachines))

	g.Eventually(func() int {
		approved := 0
		for _, a := range tc.agents() {
			if a.Spec.Approved {
				approved++
			}
		}
		return approved
	}, 10*time.Minute, 100*time.Millisecond).Should(Equal(benchMachines))
	allApproved := time.Since(start)
	b.StopTimer()

	lat := make([]time.Duration, 0, len(ready))
	for _, d := range ready {
		lat = append(lat, d)
	}
	slices.Sort(lat)
	b.ReportMetric(allData.Seconds(), "s-to-all-dataSecretCreated")
	b.ReportMetric(lat[len(lat)/2].Seconds(), "p50-s")
	b.ReportMetric(lat[len(lat)*99/100].Seconds(), "p99-s")
	b.ReportMetric(float64(writesAtData)/benchMachines, "writes/machine-dataSecret")
	b.ReportMetric(allApproved.Seconds(), "s-to-all-approved")
	b.ReportMetric(float64(writes.Load())/benchMachines, "writes/machine-approved")
	b.Logf("%s: writes by method and resource: %v", kind, writes.Breakdown())
	if errs := reconcileErrorsIn(tc.ns); len(errs) > 0 {
		b.Errorf("reconcile errors: %v", errs[:min(len(errs), 5)])
	}
}
