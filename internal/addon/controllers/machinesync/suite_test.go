package machinesync

// The tests run the Machine sync with the MachineSet sync (which makes the
// CAPI MachineSets that own the CAPI Machines) in a manager against a real
// kube-apiserver (test/envtest) with CAPI's CRDs, ours and the upstream
// MAPI, config and Metal3 CRDs. No CAPI, MAPI or OpenStack controller
// runs: where a test needs one, it plays it (and says so). Run with
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
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

const (
	mapiNS      = "openshift-machine-api"
	capiNS      = "openshift-cluster-api"
	clusterName = "ocp-x7k2p"
)

var (
	env *envtest.Environment
	rec = &recorder{}
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
	if err := setupCluster(ctx); err != nil {
		fmt.Println("FAIL: setting up the cluster objects:", err)
		return 1
	}
	mgr, err := ctrl.NewManager(env.ControllerConfig(), env.ManagerOptions())
	if err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	mss := &machinesetsync.Reconciler{Client: mgr.GetClient(), Recorder: rec, MAPINamespace: mapiNS, CAPINamespace: capiNS}
	if err := mss.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
		fmt.Println("FAIL: setting up the MachineSet sync:", err)
		return 1
	}
	r := &Reconciler{Client: mgr.GetClient(), Recorder: rec, MAPINamespace: mapiNS, CAPINamespace: capiNS}
	if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
		fmt.Println("FAIL: setting up the Machine sync:", err)
		return 1
	}
	stop := envtest.RunManager(ctx, mgr)
	code := m.Run()
	cancel()
	if err := stop(); err != nil {
		fmt.Println("FAIL: manager:", err)
		return 1
	}
	return env.Guard.Finish(code)
}

// setupCluster makes the namespaces and the Infrastructure singleton.
func setupCluster(ctx context.Context) error {
	for _, ns := range []string{mapiNS, capiNS} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	infra := &configv1.Infrastructure{
		ObjectMeta: metav1.ObjectMeta{Name: InfrastructureName},
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
	events []string
}

func (r *recorder) Eventf(regarding, _ runtime.Object, _, reason, _, note string, args ...any) {
	m, err := meta.Accessor(regarding)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, m.GetNamespace()+"/"+m.GetName()+" "+reason+": "+fmt.Sprintf(note, args...))
}
