package openstack

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
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

// AddToScheme registers the types the provider uses.
var AddToScheme = []func(*runtime.Scheme) error{clusterv1.AddToScheme, infrav1.AddToScheme, infrav1alpha1.AddToScheme}

// Controllers returns the provider's controllers. They share one OpenStack
// client factory, so an identity is authenticated once per process.
func Controllers(opts Options) []manager.Controller {
	var once sync.Once
	var scopes *identity.Factory
	scopesFor := func(mgr ctrl.Manager) *identity.Factory {
		once.Do(func() {
			if opts.Transport == nil {
				opts.Transport = clients.MetricsTransport
			}
			if opts.UserAgent == "" {
				opts.UserAgent = "ocp-capi-infrastructure-manager/" + manager.Version
			}
			scopes = &identity.Factory{Reader: mgr.GetAPIReader(), Clients: clients.NewFactory(opts)}
		})
		return scopes
	}
	return []manager.Controller{
		{
			Name: "openstackcluster",
			Setup: func(ctx context.Context, mgr ctrl.Manager, o manager.ControllerOptions) error {
				return (&openstackcluster.Reconciler{
					Client:           mgr.GetClient(),
					Scopes:           scopesFor(mgr),
					Recorder:         mgr.GetEventRecorder("openstackcluster-controller"),
					WatchFilterValue: o.WatchFilterValue,
				}).SetupWithManager(ctx, mgr, o.Options())
			},
		},
		{
			Name: "openstackserver",
			Setup: func(ctx context.Context, mgr ctrl.Manager, o manager.ControllerOptions) error {
				return (&openstackserver.Reconciler{
					Client:           mgr.GetClient(),
					APIReader:        mgr.GetAPIReader(),
					Scopes:           scopesFor(mgr),
					Recorder:         mgr.GetEventRecorder("openstackserver-controller"),
					WatchFilterValue: o.WatchFilterValue,
				}).SetupWithManager(ctx, mgr, o.Options())
			},
		},
		{
			Name: "openstackmachine",
			Setup: func(ctx context.Context, mgr ctrl.Manager, o manager.ControllerOptions) error {
				return (&openstackmachine.Reconciler{
					Client:           mgr.GetClient(),
					Recorder:         mgr.GetEventRecorder("openstackmachine-controller"),
					Defaults:         openstackcluster.MachineDefaults(mgr.GetClient()),
					Members:          &openstackcluster.Members{Client: mgr.GetClient(), Scopes: scopesFor(mgr)},
					WatchFilterValue: o.WatchFilterValue,
				}).SetupWithManager(ctx, mgr, o.Options())
			},
		},
		{
			Name:               "openstackmachinetemplate",
			DefaultConcurrency: 2,
			Setup: func(ctx context.Context, mgr ctrl.Manager, o manager.ControllerOptions) error {
				return (&openstackmachinetemplate.Reconciler{
					Client:           mgr.GetClient(),
					Scopes:           scopesFor(mgr),
					WatchFilterValue: o.WatchFilterValue,
				}).SetupWithManager(ctx, mgr, o.Options())
			},
		},
	}
}
