package controllers_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
)

const benchPools = 100

// BenchmarkBuild100Pools runs the real controller against the real API
// server with 100 layered pools. Each iteration points every pool at a new
// rendered config and plays the builder (running, then succeeded) until all
// 100 images are published. It reports, per build: reconciles, API writes
// by the controller (creates, patches, deletes; not Events), and the time
// from the pool change (the patch returning) to the build object appearing
// in a watch (p50, p99, max).
//
//	KUBEBUILDER_ASSETS=$PWD/bin go test -run '^$' -bench BenchmarkBuild100Pools -benchtime 3x ./internal/addon/controllers/buildcontroller/
func BenchmarkBuild100Pools(b *testing.B) {
	for _, backend := range backends {
		b.Run(backend, func(b *testing.B) { benchmarkPools(b, backend) })
	}
}

func benchmarkPools(b *testing.B, backend string) {
	SetDefaultEventuallyTimeout(5 * time.Minute)
	h := newHarness(b, backend)
	h.opts.FailedRetention = 0
	h.inputs()
	pools := make([]string, benchPools)
	for i := range pools {
		pools[i] = h.pool(fmt.Sprintf("p%03d", i), h.machineConfigFor(i, 0), true).Name
	}

	// A watch of the build objects, to time their creation.
	var mu sync.Mutex
	created := map[string]time.Time{} // pool/config -> first seen
	watch, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{h.ns: {}}})
	h.g.Expect(err).NotTo(HaveOccurred())
	backendImpl, _ := osbuild.NewBackend(backend, osbuild.BackendOptions{})
	inf, err := watch.GetInformer(h.ctx, backendImpl.NewObject())
	h.g.Expect(err).NotTo(HaveOccurred())
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		obj := o.(client.Object)
		key := obj.GetAnnotations()[osbuild.PoolAnnotation] + "/" + obj.GetAnnotations()[osbuild.DesiredConfigAnnotation]
		mu.Lock()
		if _, ok := created[key]; !ok {
			created[key] = time.Now()
		}
		mu.Unlock()
	}})
	h.g.Expect(err).NotTo(HaveOccurred())
	wctx, wcancel := context.WithCancel(context.Background())
	defer wcancel()
	go func() { _ = watch.Start(wctx) }()
	h.g.Expect(watch.WaitForCacheSync(wctx)).To(BeTrue())

	rc := h.start()
	h.completeAll(pools, 0) // the first builds: not measured

	var latencies []time.Duration
	var reconciles, writes int64
	b.ResetTimer()
	for n := 1; n <= b.N; n++ {
		b.StopTimer()
		for i := range pools {
			h.machineConfigFor(i, n)
		}
		h.settle(rc)
		r0, w0 := rc.reconciles(h.t), rc.writes()
		b.StartTimer()

		changed := make(map[string]time.Time, len(pools))
		for i, p := range pools {
			config := h.machineConfigName(i, n)
			h.setPoolConfig(p, config)
			changed[p+"/"+config] = time.Now()
		}
		h.completeAll(pools, n)

		b.StopTimer()
		h.settle(rc)
		reconciles += rc.reconciles(h.t) - r0
		writes += rc.writes() - w0
		mu.Lock()
		for k, t0 := range changed {
			latencies = append(latencies, created[k].Sub(t0))
		}
		mu.Unlock()
		b.StartTimer()
	}
	b.StopTimer()
	builds := float64(b.N * benchPools)
	b.ReportMetric(float64(reconciles)/builds, "reconciles/build")
	b.ReportMetric(float64(writes)/builds, "writes/build")
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "change-to-build-p50-ms")
	b.ReportMetric(pct(0.99), "change-to-build-p99-ms")
	b.ReportMetric(pct(1), "change-to-build-max-ms")
	b.ReportMetric(0, "ns/op") // one op is 100 builds played by hand: not meaningful
	h.g.Expect(rc.failures()).To(BeEmpty())
}

func (h *harness) machineConfigName(pool, gen int) string {
	return fmt.Sprintf("rendered-%s-p%03d-g%d", h.prefix, pool, gen)
}

// machineConfigFor creates the rendered config of generation gen for pool.
func (h *harness) machineConfigFor(pool, gen int) string {
	return h.machineConfig(fmt.Sprintf("p%03d-g%d", pool, gen))
}

// completeAll plays the builder for every pool's build of generation gen
// and waits until every pool publishes its image.
func (h *harness) completeAll(pools []string, gen int) {
	h.t.Helper()
	var g errgroup.Group
	g.SetLimit(8)
	for i, p := range pools {
		g.Go(func() error {
			build := h.waitBuildFor(p, h.machineConfigName(i, gen))
			h.setRunning(build)
			h.setSucceeded(build, digest("0123456789abcdef"[gen%16]))
			return nil
		})
	}
	_ = g.Wait()
	for i, p := range pools {
		h.g.Eventually(func() string {
			return h.getPool(p).Annotations[osbuild.NewestImageEquivalentConfigAnnotation]
		}).Should(Equal(h.machineConfigName(i, gen)))
	}
}
