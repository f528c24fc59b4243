package migration

// The tests run the migration controllers with the syncs (machinesetsync,
// machinesync) against a real kube-apiserver (test/envtest) with the
// upstream MAPI CRDs, which enforce the authority switch's CEL rules.
// The controllers that acknowledge a pause are played (standin_test.go).
// The migration controllers run in a manager of their own, which a test
// may stop and start again (a restart in the middle of a switch). Run with
// KUBEBUILDER_ASSETS=<repo>/bin.

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesetsync"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesync"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

const (
	mapiNS      = "openshift-machine-api"
	capiNS      = "openshift-cluster-api"
	clusterName = "ocp-x7k2p"
)

var (
	env      *envtest.Environment
	rec      = &recorder{}
	standMAO = &mao{}
	suiteCtx context.Context
	// migrationMgr runs the migration controllers; restart replaces it.
	migrationMu   sync.Mutex
	stopMigration func() error
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(envtest.NewLogger())
	var err error
	if env, err = envtest.Start(envtest.Options{}); err != nil {
		fmt.Println("FAIL: starting the API server:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	suiteCtx = ctx
	if err := setupCluster(ctx); err != nil {
		fmt.Println("FAIL: setting up the cluster objects:", err)
		return 1
	}
	stopStandIns, err := env.RunStandIns(ctx, standMAO.setup, (&capiPause{}).setup)
	if err != nil {
		fmt.Println("FAIL: stand-ins:", err)
		return 1
	}
	defer func() { _ = stopStandIns() }()

	// The sync, in a manager whose writes pass the loop guard.
	syncMgr, err := ctrl.NewManager(env.ControllerConfig(), env.ManagerOptions())
	if err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	ms := &machinesetsync.Reconciler{Client: syncMgr.GetClient(), Recorder: rec, MAPINamespace: mapiNS, CAPINamespace: capiNS}
	if err := ms.SetupWithManager(ctx, syncMgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
		fmt.Println("FAIL: setting up the sync:", err)
		return 1
	}
	msync := &machinesync.Reconciler{Client: syncMgr.GetClient(), Recorder: rec, MAPINamespace: mapiNS, CAPINamespace: capiNS}
	if err := msync.SetupWithManager(ctx, syncMgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
		fmt.Println("FAIL: setting up the Machine sync:", err)
		return 1
	}
	stopSync := envtest.RunManager(ctx, syncMgr)
	if err := startMigration(ctx); err != nil {
		fmt.Println("FAIL: starting the migration controllers:", err)
		return 1
	}

	code := m.Run()
	migrationMu.Lock()
	errM := stopMigration()
	migrationMu.Unlock()
	if err := stopSync(); err != nil || errM != nil {
		fmt.Println("FAIL: managers:", err, errM)
		return 1
	}
	return env.Guard.Finish(code)
}

// startMigration starts the migration controllers in a manager of their
// own (stopMigration stops it).
func startMigration(ctx context.Context) error {
	mgr, err := ctrl.NewManager(env.ControllerConfig(), env.ManagerOptions())
	if err != nil {
		return err
	}
	for _, k := range []Kind{MachineSets, Machines} {
		r := &Reconciler{Client: mgr.GetClient(), Recorder: rec, Kind: k, MAPINamespace: mapiNS, CAPINamespace: capiNS}
		if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
			return err
		}
	}
	stopMigration = envtest.RunManager(ctx, mgr)
	return nil
}

// restartMigration stops the migration controllers, runs between (with
// none running), and starts them again: a manager restart.
func restartMigration(t *testing.T, between func()) {
	t.Helper()
	migrationMu.Lock()
	defer migrationMu.Unlock()
	if err := stopMigration(); err != nil {
		t.Fatalf("stopping the migration controllers: %v", err)
	}
	between()
	if err := startMigration(suiteCtx); err != nil {
		t.Fatalf("starting the migration controllers again: %v", err)
	}
}

// setupCluster makes the namespaces and the Infrastructure singleton.
func setupCluster(ctx context.Context) error {
	for _, ns := range []string{mapiNS, capiNS} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	infra := &configv1.Infrastructure{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       configv1.InfrastructureSpec{PlatformSpec: configv1.PlatformSpec{Type: configv1.OpenStackPlatformType}},
	}
	if err := env.Client.Create(ctx, infra); err != nil {
		return err
	}
	infra.Status = configv1.InfrastructureStatus{
		InfrastructureName: clusterName, Platform: configv1.OpenStackPlatformType,
		PlatformStatus: &configv1.PlatformStatus{Type: configv1.OpenStackPlatformType, OpenStack: &configv1.OpenStackPlatformStatus{
			APIServerInternalIPs: []string{"10.0.0.5"}, IngressIPs: []string{"10.0.0.7"},
		}},
		APIServerURL: "https://api.ocp.example.com:6443", APIServerInternalURL: "https://api-int.ocp.example.com:6443",
		ControlPlaneTopology: configv1.HighlyAvailableTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
	}
	return env.Client.Status().Update(ctx, infra)
}

// recorder keeps the events the controllers record.
type recorder struct {
	mu     sync.Mutex
	events []event
}

type event struct {
	// Object is <namespace>/<name> of the regarding object.
	Object, Type, Reason, Note string
}

func (r *recorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	m, err := meta.Accessor(regarding)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{Object: m.GetNamespace() + "/" + m.GetName(), Type: eventtype, Reason: reason, Note: fmt.Sprintf(note, args...)})
}

func (r *recorder) reasonsFor(namespace, name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Object == namespace+"/"+name {
			out = append(out, e.Reason)
		}
	}
	return out
}

func (r *recorder) notesFor(namespace, name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Object == namespace+"/"+name {
			out = append(out, e.Note)
		}
	}
	return out
}
