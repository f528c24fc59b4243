package envtest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// ManagerOptions are the options of a controller manager in a test: this
// environment's scheme, no metrics or health listener (several managers run
// in one process and would fight over the ports), and controller names may
// repeat (tests start the same controllers again, for instance to restart
// a provider).
func (e *Environment) ManagerOptions() ctrl.Options {
	return ctrl.Options{
		Scheme:                 e.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	}
}

// RunManager starts mgr in the background. The returned function stops it,
// waits until it has stopped and returns the error Start returned; calling
// it again returns that error again, so that a test may stop a manager
// early and also defer the stop.
func RunManager(ctx context.Context, mgr ctrl.Manager) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var (
		once sync.Once
		err  error
	)
	return func() error {
		once.Do(func() {
			cancel()
			err = <-done
			if err != nil && strings.Contains(err.Error(), "grace period") {
				// The runnables that did not end are still running:
				// their stacks say which one hangs.
				err = fmt.Errorf("%w\ngoroutines still running:\n%s", err, allStacks())
			}
		})
		return err
	}
}

// allStacks is every goroutine's stack.
func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// UnthrottledConfig is a copy of Config with a client rate limit too high
// to matter, for the stand-ins a suite runs next to the controllers under
// test (the assisted-service simulator, a fake CAPI core, another
// provider): their requests must not be what a benchmark measures.
func (e *Environment) UnthrottledConfig() *rest.Config {
	cfg := rest.CopyConfig(e.Config)
	cfg.QPS, cfg.Burst = 5000, 10000
	return cfg
}

// RunStandIns runs the controllers that setups register in one manager of
// their own, on UnthrottledConfig. stop stops it, as RunManager's does.
func (e *Environment) RunStandIns(ctx context.Context, setups ...func(context.Context, ctrl.Manager) error) (stop func() error, err error) {
	mgr, err := ctrl.NewManager(e.UnthrottledConfig(), e.ManagerOptions())
	if err != nil {
		return nil, err
	}
	for _, setup := range setups {
		if err := setup(ctx, mgr); err != nil {
			return nil, err
		}
	}
	return RunManager(ctx, mgr), nil
}

// Metal3CRDs are the Metal3 CRDs that LabelMetal3CRDs labels.
var Metal3CRDs = []string{"metal3machines", "metal3machinetemplates", "metal3clusters"}

// LabelMetal3CRDs adds the CAPI contract labels that CAPM3's kustomize adds
// in a real deployment; the upstream CRD files carry none, and CAPI's
// external-object helpers (which clone a Metal3MachineTemplate) refuse a
// CRD without them.
func (e *Environment) LabelMetal3CRDs(ctx context.Context) error {
	for _, name := range Metal3CRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := e.Client.Get(ctx, types.NamespacedName{Name: name + ".infrastructure.cluster.x-k8s.io"}, crd); err != nil {
			return err
		}
		base := crd.DeepCopy()
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		crd.Labels["cluster.x-k8s.io/v1beta1"] = "v1beta1"
		crd.Labels["cluster.x-k8s.io/v1beta2"] = "v1beta2"
		if err := e.Client.Patch(ctx, crd, client.MergeFrom(base)); err != nil {
			return err
		}
	}
	return nil
}
