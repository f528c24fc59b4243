package openstack

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1beta1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/identity"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackcluster"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackmachine"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackmachinetemplate"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackserver"
)

// Options are the provider's settings: how its OpenStack clients are made
// (transport, user agent, CA, timeouts).
type Options = clients.Options

// AddToScheme registers the types the provider uses. v1beta1 is only
// converted (by the conversion webhook), never reconciled.
var AddToScheme = []func(*runtime.Scheme) error{clusterv1.AddToScheme, infrav1.AddToScheme, infrav1alpha1.AddToScheme, infrav1beta1.AddToScheme}

// Controllers returns the provider's controllers. They share one OpenStack
// client factory, so an identity is authenticated once per process; its
// requests are counted in the manager's metrics (clients.RegisterMetrics).
func Controllers(opts Options) []manager.Controller {
	shared := &sharedScopes{opts: opts}
	return []manager.Controller{
		{
			Name: "openstackcluster",
			Setup: shared.setup(func(ctx context.Context, mgr ctrl.Manager, o manager.ControllerOptions, scopes *identity.Factory) error {
				return (&openstackcluster.Reconciler{
					Client:           mgr.GetClient(),
					Scopes:           scopes,
					Recorder:         mgr.GetEventRecorder("openstackcluster-controller"),
					WatchFilterValue: o.WatchFilterValue,
				}).SetupWithManager(ctx, mgr, o.Options())
			}),
		},
		{
			Name: "openstackserver",
			Setup: shared.setup(func(ctx context.Context, mgr ctrl.Manager, o manager.ControllerOptions, scopes *identity.Factory) error {
				return (&openstackserver.Reconciler{
					Client:           mgr.GetClient(),
					APIReader:        mgr.GetAPIReader(),
					Scopes:           scopes,
					Recorder:         mgr.GetEventRecorder("openstackserver-controller"),
					WatchFilterValue: o.WatchFilterValue,
				}).SetupWithManager(ctx, mgr, o.Options())
			}),
		},
		{
			Name: "openstackmachine",
			Setup: shared.setup(func(ctx context.Context, mgr ctrl.Manager, o manager.ControllerOptions, scopes *identity.Factory) error {
				return (&openstackmachine.Reconciler{
					Client:           mgr.GetClient(),
					Recorder:         mgr.GetEventRecorder("openstackmachine-controller"),
					Defaults:         openstackcluster.MachineDefaults(mgr.GetClient()),
					Members:          &openstackcluster.Members{Client: mgr.GetClient(), Scopes: scopes},
					WatchFilterValue: o.WatchFilterValue,
				}).SetupWithManager(ctx, mgr, o.Options())
			}),
		},
		{
			Name:               "openstackmachinetemplate",
			DefaultConcurrency: 2,
			Setup: shared.setup(func(ctx context.Context, mgr ctrl.Manager, o manager.ControllerOptions, scopes *identity.Factory) error {
				return (&openstackmachinetemplate.Reconciler{
					Client:           mgr.GetClient(),
					Scopes:           scopes,
					WatchFilterValue: o.WatchFilterValue,
				}).SetupWithManager(ctx, mgr, o.Options())
			}),
		},
	}
}

// sharedScopes is the one client factory of the controllers, made when the
// first of them is set up.
type sharedScopes struct {
	opts   Options
	once   sync.Once
	scopes *identity.Factory
	err    error
}

func (s *sharedScopes) get(mgr ctrl.Manager) (*identity.Factory, error) {
	s.once.Do(func() {
		opts := s.opts
		if opts.Transport == nil {
			m, err := clients.RegisterMetrics(metrics.Registry)
			if err != nil {
				s.err = fmt.Errorf("registering the OpenStack request metrics: %w", err)
				return
			}
			opts.Transport = m.Transport
		}
		if opts.UserAgent == "" {
			opts.UserAgent = "ocp-capi-infrastructure-manager/" + manager.Version
		}
		s.scopes = &identity.Factory{Reader: mgr.GetAPIReader(), Clients: clients.NewFactory(opts)}
	})
	return s.scopes, s.err
}

// setup is a controller's Setup, given the shared factory.
func (s *sharedScopes) setup(f func(context.Context, ctrl.Manager, manager.ControllerOptions, *identity.Factory) error) func(context.Context, ctrl.Manager, manager.ControllerOptions) error {
	return func(ctx context.Context, mgr ctrl.Manager, o manager.ControllerOptions) error {
		scopes, err := s.get(mgr)
		if err != nil {
			return err
		}
		return f(ctx, mgr, o, scopes)
	}
}
