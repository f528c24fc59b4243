package addon

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	addonbuild "github.com/ocp-capi/ocp-capi/internal/addon/controllers/buildcontroller"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesetsync"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesync"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/migration"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/secretsync"
	"github.com/ocp-capi/ocp-capi/internal/consumed"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
	"github.com/ocp-capi/ocp-capi/internal/manager"
)

// AddToScheme registers the types the add-on uses: CAPI core, this
// project's infrastructure API (v1beta2, and v1alpha1 for the migration
// controller's OpenStackServers) and the consumed APIs (MAPI, config,
// Metal3, MCO, build; the BuildController's addonbuild.AddToScheme is a
// subset of them).
var AddToScheme = []func(*runtime.Scheme) error{clusterv1.AddToScheme, infrav1.AddToScheme, infrav1alpha1.AddToScheme, consumed.AddToScheme}

// Defaults of the flags.
const (
	DefaultMAPINamespace = "openshift-machine-api"
	DefaultCAPINamespace = "openshift-cluster-api"
)

// Options are the add-on's own flags. The controllers read them when the
// manager sets them up, after the flags are parsed.
type Options struct {
	// MAPINamespace holds the Machine API MachineSets (--mapi-namespace).
	MAPINamespace string
	// CAPINamespace holds their Cluster API mirrors (--capi-namespace).
	CAPINamespace string
	// ClusterName is the CAPI Cluster name (--cluster-name); empty means
	// the Infrastructure cluster's status.infrastructureName.
	ClusterName string

	// Build are the BuildController's flags (--build-*).
	Build addonbuild.Options
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{MAPINamespace: DefaultMAPINamespace, CAPINamespace: DefaultCAPINamespace, Build: addonbuild.DefaultOptions()}
}

// AddFlags defines the add-on's flags on fs (manager.Spec.ExtraFlags).
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.MAPINamespace, "mapi-namespace", o.MAPINamespace,
		"Namespace of the Machine API (machine.openshift.io) MachineSets to mirror.")
	fs.StringVar(&o.CAPINamespace, "capi-namespace", o.CAPINamespace,
		"Namespace of the Cluster API MachineSets and infrastructure machine templates the MachineSet sync writes.")
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName,
		"Name of the CAPI Cluster the mirrored MachineSets belong to. Empty: status.infrastructureName of the config.openshift.io Infrastructure \"cluster\".")
	o.Build.AddFlags(fs)
}

// Validate checks the MachineSet sync's flag values; errors name the flag.
// (The BuildController checks its own when it is set up.)
func (o *Options) Validate(mgrNamespace string) error {
	for _, f := range []struct{ flag, value string }{{"mapi-namespace", o.MAPINamespace}, {"capi-namespace", o.CAPINamespace}} {
		if errs := validation.IsDNS1123Label(f.value); len(errs) > 0 {
			return &manager.UsageError{Err: fmt.Errorf("--%s %q is not a valid namespace name: %s", f.flag, f.value, strings.Join(errs, "; "))}
		}
	}
	if o.ClusterName != "" {
		if errs := validation.IsDNS1123Subdomain(o.ClusterName); len(errs) > 0 {
			return &manager.UsageError{Err: fmt.Errorf("--cluster-name %q is not a valid name: %s", o.ClusterName, strings.Join(errs, "; "))}
		}
	}
	// The sync reads two namespaces; a cache restricted to one sees
	// only part of them.
	if mgrNamespace != "" && (mgrNamespace != o.MAPINamespace || mgrNamespace != o.CAPINamespace) {
		return &manager.UsageError{Err: fmt.Errorf("--namespace %q hides --mapi-namespace %q or --capi-namespace %q from the MachineSet sync: leave --namespace empty",
			mgrNamespace, o.MAPINamespace, o.CAPINamespace)}
	}
	return nil
}

// Controllers returns the add-on's controllers. The MachineSet and Machine
// syncs and the migration controllers share one stale-cache guard
// (internal/freshness): they write the same MAPI objects, and a write of
// one makes the other's cached copy stale. The Secret sync does not need
// it (docs/addon/machineset-sync.md, "The Synchronized condition").
func Controllers(o *Options) []manager.Controller {
	fresh := freshness.New()
	return []manager.Controller{
		{
			Name: "machinesetsync",
			Setup: func(ctx context.Context, mgr ctrl.Manager, co manager.ControllerOptions) error {
				if err := o.Validate(co.Namespace); err != nil {
					return err
				}
				return (&machinesetsync.Reconciler{
					Client:           fresh.Client(mgr.GetClient()),
					Freshness:        fresh,
					Recorder:         mgr.GetEventRecorder("machineset-sync-controller"),
					MAPINamespace:    o.MAPINamespace,
					CAPINamespace:    o.CAPINamespace,
					ClusterName:      o.ClusterName,
					WatchFilterValue: co.WatchFilterValue,
				}).SetupWithManager(ctx, mgr, co.Options())
			},
		},
		{
			Name: "machinesync",
			Setup: func(ctx context.Context, mgr ctrl.Manager, co manager.ControllerOptions) error {
				if err := o.Validate(co.Namespace); err != nil {
					return err
				}
				return (&machinesync.Reconciler{
					Client:           fresh.Client(mgr.GetClient()),
					Freshness:        fresh,
					Recorder:         mgr.GetEventRecorder("machine-sync-controller"),
					MAPINamespace:    o.MAPINamespace,
					CAPINamespace:    o.CAPINamespace,
					ClusterName:      o.ClusterName,
					WatchFilterValue: co.WatchFilterValue,
				}).SetupWithManager(ctx, mgr, co.Options())
			},
		},
		{
			Name: "secretsync",
			Setup: func(ctx context.Context, mgr ctrl.Manager, co manager.ControllerOptions) error {
				if err := o.Validate(co.Namespace); err != nil {
					return err
				}
				return (&secretsync.Reconciler{
					Client:        mgr.GetClient(),
					Recorder:      mgr.GetEventRecorder("secret-sync-controller"),
					MAPINamespace: o.MAPINamespace,
					CAPINamespace: o.CAPINamespace,
				}).SetupWithManager(ctx, mgr, co.Options())
			},
		},
		migrationController(o, migration.MachineSets, fresh),
		migrationController(o, migration.Machines, fresh),
		// The BuildController (internal/addon/controllers/buildcontroller); its flags
		// are Options.Build.
		addonbuild.Controller(&o.Build),
	}
}

// migrationController switches the authority of MAPI objects of kind k
// (internal/addon/controllers/migration).
// The namespaces are read in Setup, once the flags are parsed: read here,
// they would be the defaults whatever the flags say.
func migrationController(o *Options, k migration.Kind, fresh *freshness.Tracker) manager.Controller {
	return manager.Controller{
		Name: strings.ToLower(string(k)) + "migration",
		Setup: func(ctx context.Context, mgr ctrl.Manager, co manager.ControllerOptions) error {
			if err := o.Validate(co.Namespace); err != nil {
				return err
			}
			r := &migration.Reconciler{
				Kind: k, MAPINamespace: o.MAPINamespace, CAPINamespace: o.CAPINamespace,
				Client: fresh.Client(mgr.GetClient()), Freshness: fresh,
				Recorder: mgr.GetEventRecorder("migration-controller"), WatchFilterValue: co.WatchFilterValue,
			}
			return r.SetupWithManager(ctx, mgr, co.Options())
		},
	}
}
