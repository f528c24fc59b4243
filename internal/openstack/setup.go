package openstack

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1beta1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/identity"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackcluster"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackfloatingippool"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackmachine"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackmachinetemplate"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackserver"
)

// Options are the provider's settings: how its OpenStack clients are made
// (transport, user agent, CA, timeouts).
type Options = clients.Options

// AddToScheme registers the types the provider uses. v1beta1 is only
// converted (by the conversion webhook), never reconciled.
var AddToScheme = []func(*runtime.Scheme) error{clusterv1.AddToScheme, ipamv1.AddToScheme, infrav1.AddToScheme, infrav1alpha1.AddToScheme, infrav1beta1.AddToScheme}

// Controllers returns the provider's controllers. They share one OpenStack
// client factory, so an identity is authenticated once per process; its
// requests are counted in the manager's metrics (clients.RegisterMetrics).
func Controllers(opts Options) []manager.Controller {
	shared := manager.NewShared(func(_ context.Context, mgr ctrl.Manager) (*identity.Factory, error) {
		return newScopes(mgr, opts)
	})
	return []manager.Controller{
		{
			Name: "openstackcluster",
			Setup: manager.SetupWith(shared, func(mgr ctrl.Manager, o manager.ControllerOptions, scopes *identity.Factory) manager.Reconciler {
				return &openstackcluster.Reconciler{
					Client:           mgr.GetClient(),
					Scopes:           scopes,
					Recorder:         mgr.GetEventRecorder("openstackcluster-controller"),
					WatchFilterValue: o.WatchFilterValue,
				}
			}),
		},
		{
			Name: "openstackserver",
			Setup: manager.SetupWith(shared, func(mgr ctrl.Manager, o manager.ControllerOptions, scopes *identity.Factory) manager.Reconciler {
				return &openstackserver.Reconciler{
					Client:           mgr.GetClient(),
					APIReader:        mgr.GetAPIReader(),
					Scopes:           scopes,
					Recorder:         mgr.GetEventRecorder("openstackserver-controller"),
					WatchFilterValue: o.WatchFilterValue,
				}
			}),
		},
		{
			Name: "openstackmachine",
			Setup: manager.SetupWith(shared, func(mgr ctrl.Manager, o manager.ControllerOptions, scopes *identity.Factory) manager.Reconciler {
				return &openstackmachine.Reconciler{
					Client:           mgr.GetClient(),
					Recorder:         mgr.GetEventRecorder("openstackmachine-controller"),
					Defaults:         openstackcluster.MachineDefaults(mgr.GetClient()),
					Members:          &openstackcluster.Members{Client: mgr.GetClient(), Scopes: scopes},
					WatchFilterValue: o.WatchFilterValue,
				}
			}),
		},
		{
			Name: "openstackfloatingippool",
			Setup: manager.SetupWith(shared, func(mgr ctrl.Manager, o manager.ControllerOptions, scopes *identity.Factory) manager.Reconciler {
				return &openstackfloatingippool.Reconciler{
					Client:           mgr.GetClient(),
					Scopes:           scopes,
					Recorder:         mgr.GetEventRecorder("openstackfloatingippool-controller"),
					WatchFilterValue: o.WatchFilterValue,
				}
			}),
		},
		{
			Name:               "openstackmachinetemplate",
			DefaultConcurrency: 2,
			Setup: manager.SetupWith(shared, func(mgr ctrl.Manager, o manager.ControllerOptions, scopes *identity.Factory) manager.Reconciler {
				return &openstackmachinetemplate.Reconciler{
					Client:           mgr.GetClient(),
					Scopes:           scopes,
					WatchFilterValue: o.WatchFilterValue,
				}
			}),
		},
	}
}

// newScopes makes the one client factory of the controllers (shared: made
// when the first of them is set up).
func newScopes(mgr ctrl.Manager, opts Options) (*identity.Factory, error) {
	if opts.Transport == nil {
		m, err := clients.RegisterMetrics(metrics.Registry)
		if err != nil {
			return nil, fmt.Errorf("registering the OpenStack request metrics: %w", err)
		}
		opts.Transport = m.Transport
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "ocp-capi-infrastructure-manager/" + manager.Version
	}
	return &identity.Factory{Reader: mgr.GetAPIReader(), Clients: clients.NewFactory(opts)}, nil
}
