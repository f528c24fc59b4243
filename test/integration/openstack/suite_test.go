// Package openstack runs the infrastructure provider's controllers against
// a real kube-apiserver (test/envtest) and a real OpenStack (the local cloud
// of hack/openstack/up.sh), with the counting, fault-injecting proxy of
// test/openstackproxy in between. After every test the OpenStack API must
// show nothing left of it.
package openstack

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/ocp-capi/ocp-capi/internal/manager"
	osprovider "github.com/ocp-capi/ocp-capi/internal/openstack"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// The cloud the tests use: a member of project demo, as a real user would be.
const testCloud = "local-demo"

var (
	env   *envtest.Environment
	proxy *openstackproxy.Proxy
	cloud *openstackproxy.Cloud
	// direct talks to the cloud without the proxy, for seeding and for
	// counting leftovers; its calls are not part of any budget.
	direct struct {
		compute, network, volume, image *gophercloud.ServiceClient
	}
	fx fixtures
)

// fixtures are created once per run and removed at the end.
type fixtures struct {
	prefix                   string
	networkID, subnetID      string
	networkName              string
	secGroupID, secGroupName string
	imageID, imageName       string
	flavorID, flavorName     string
	identitySecretYAML       []byte
}

// noCloudValue in $OCP_CAPI_OPENSTACK_CLOUDS means "no cloud", even when
// /etc/openstack/clouds.yaml exists (TestSuiteWithoutCloud uses it).
const noCloudValue = "none"

func cloudsPath() string {
	if p := os.Getenv(openstackproxy.CloudsEnv); p == noCloudValue {
		return ""
	} else if p != "" {
		return p
	}
	if _, err := os.Stat("/etc/openstack/clouds.yaml"); err == nil {
		return "/etc/openstack/clouds.yaml"
	}
	return ""
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	path := cloudsPath()
	if path == "" {
		msg := "the real OpenStack suite needs a local cloud: run `make openstack-up` (or set " + openstackproxy.CloudsEnv + ")"
		if os.Getenv("CI") != "" {
			fmt.Println("FAIL:", msg)
			return 1
		}
		// Only the tests that need no cloud run: the others would reach
		// for the clients and fixtures made below. TestCloudFixtures
		// reports the skip with its reason.
		noCloud = msg
		fmt.Println("SKIP:", msg)
		flag.Parse()
		if err := flag.Set("test.run", cloudFreeTests); err != nil {
			fmt.Println("FAIL:", err)
			return 1
		}
		if err := flag.Set("test.bench", ""); err != nil {
			fmt.Println("FAIL:", err)
			return 1
		}
		return m.Run()
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapLevel())))

	var err error
	if cloud, err = openstackproxy.LoadCloud(path, testCloud); err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	if err := connectDirect(); err != nil {
		fmt.Println("FAIL: cannot reach the local OpenStack:", err)
		return 1
	}
	if proxy, err = openstackproxy.New(cloud.Auth.AuthURL); err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	defer proxy.Close()

	envOpts := envtest.Options{}
	if audit, err = envtest.NewAudit("ocp-capi", &envOpts); err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	defer func() { _ = audit.Close() }()
	if env, err = envtest.Start(envOpts); err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()

	if err := setupFixtures(); err != nil {
		fmt.Println("FAIL: fixtures:", err)
		teardownFixtures()
		return 1
	}
	defer teardownFixtures()
	// A reconcile loop anywhere in the run fails it (docs/testing.md).
	return env.Guard.Finish(m.Run())
}

// cloudFreeTests are the tests that run without a cloud.
const cloudFreeTests = "^(TestCloudFixtures|TestSuiteWithoutCloud)$"

// TestCloudFixtures checks what TestMain set up; without a cloud it is the
// one test that reports the suite skipped, with the reason.
func TestCloudFixtures(t *testing.T) {
	needCloud(t)
	if fx.networkID == "" || fx.subnetID == "" || fx.secGroupID == "" || fx.imageID == "" || fx.flavorID == "" {
		t.Fatalf("fixtures incomplete: %+v", fx)
	}
	if env == nil || proxy == nil || direct.compute == nil || direct.network == nil {
		t.Fatal("TestMain did not start the API server, the proxy and the direct clients")
	}
}

// childEnv marks the test binary run by TestSuiteWithoutCloud.
const childEnv = "OCP_CAPI_OPENSTACK_SUITE_CHILD"

// TestSuiteWithoutCloud runs this test binary again with no cloud: outside
// CI it must pass and say why its tests were skipped (it used to panic on a
// nil OpenStack client), and under CI it must fail. It runs with or without
// a cloud, and costs two starts of the binary.
func TestSuiteWithoutCloud(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("the copy run by TestSuiteWithoutCloud")
	}
	msg := "the real OpenStack suite needs a local cloud"
	run := func(ci bool) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.v", "-test.count=1")
		env := []string{childEnv + "=1", openstackproxy.CloudsEnv + "=" + noCloudValue}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, openstackproxy.CloudsEnv+"=") {
				env = append(env, kv)
			}
		}
		if ci {
			env = append(env, "CI=true")
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := run(false)
	if err != nil {
		t.Fatalf("without a cloud and outside CI the suite must pass, skipping: %v\n%s", err, out)
	}
	if !strings.Contains(out, "--- SKIP: TestCloudFixtures") || !strings.Contains(out, msg) {
		t.Errorf("without a cloud the suite must report its skip and the reason %q:\n%s", msg, out)
	}

	out, err = run(true)
	if err == nil {
		t.Fatalf("without a cloud under CI the suite must fail:\n%s", out)
	}
	if !strings.Contains(out, "FAIL: "+msg) {
		t.Errorf("under CI the failure must say why (%q):\n%s", msg, out)
	}
}

func zapLevel() zapcore.Level {
	if os.Getenv("OCP_CAPI_TEST_VERBOSE") != "" {
		return -4
	}
	return 1 // errors only; the conditions tell the story
}

func connectDirect() error {
	ctx := context.Background()
	provider, err := openstack.AuthenticatedClient(ctx, cloud.AuthOptions())
	if err != nil {
		return err
	}
	eo := cloud.EndpointOpts()
	if direct.compute, err = openstack.NewComputeV2(provider, eo); err != nil {
		return err
	}
	direct.compute.Microversion = clients.ComputeMicroversion
	if direct.network, err = openstack.NewNetworkV2(provider, eo); err != nil {
		return err
	}
	if direct.image, err = openstack.NewImageV2(provider, eo); err != nil {
		return err
	}
	direct.volume, _ = openstack.NewBlockStorageV3(provider, eo)
	return nil
}

func setupFixtures() error {
	ctx := context.Background()
	fx.prefix = fmt.Sprintf("it%04d", rand.Intn(10000))
	fx.networkName = fx.prefix + "-net"
	n, err := networks.Create(ctx, direct.network, networks.CreateOpts{Name: fx.networkName}).Extract()
	if err != nil {
		return fmt.Errorf("network: %w", err)
	}
	fx.networkID = n.ID
	sn, err := subnets.Create(ctx, direct.network, subnets.CreateOpts{NetworkID: n.ID, Name: fx.prefix + "-subnet", CIDR: "10.77.0.0/24", IPVersion: gophercloud.IPv4}).Extract()
	if err != nil {
		return fmt.Errorf("subnet: %w", err)
	}
	fx.subnetID = sn.ID
	fx.secGroupName = fx.prefix + "-sg"
	sg, err := groups.Create(ctx, direct.network, groups.CreateOpts{Name: fx.secGroupName}).Extract()
	if err != nil {
		return fmt.Errorf("security group: %w", err)
	}
	fx.secGroupID = sg.ID

	imgs, err := listImages(ctx, "cirros-fake")
	if err != nil || len(imgs) == 0 {
		return fmt.Errorf("image cirros-fake (made by hack/openstack/up.sh) not found: %w", err)
	}
	fx.imageID, fx.imageName = imgs[0].ID, imgs[0].Name
	pages, err := flavors.ListDetail(direct.compute, nil).AllPages(ctx)
	if err != nil {
		return err
	}
	fl, _ := flavors.ExtractFlavors(pages)
	for _, f := range fl {
		if f.Name == "m1.tiny" {
			fx.flavorID, fx.flavorName = f.ID, f.Name
		}
	}
	if fx.flavorID == "" {
		return fmt.Errorf("flavor m1.tiny (made by hack/openstack/up.sh) not found")
	}

	// The identity Secret: clouds.yaml with the proxy's auth URL.
	c := *cloud
	c.Auth.AuthURL = proxy.AuthURL()
	fx.identitySecretYAML, err = yaml.Marshal(map[string]any{"clouds": map[string]any{testCloud: c}})
	return err
}

func teardownFixtures() {
	ctx := context.Background()
	if fx.secGroupID != "" {
		_ = groups.Delete(ctx, direct.network, fx.secGroupID).ExtractErr()
	}
	if fx.networkID != "" {
		// Subnets go with the network.
		_ = networks.Delete(ctx, direct.network, fx.networkID).ExtractErr()
	}
}

func listImages(ctx context.Context, name string) ([]images.Image, error) {
	pages, err := images.List(direct.image, images.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return images.ExtractImages(pages)
}

// noCloud is why the suite cannot run, or "".
var noCloud string

// needCloud skips the test, loudly, when there is no local cloud (outside
// CI only: in CI the suite fails instead).
func needCloud(t *testing.T) {
	t.Helper()
	if noCloud != "" {
		t.Skip(noCloud)
	}
}

// testManager is the provider's controllers in a controller-runtime
// manager of their own, which a test can stop (a "kill") and start again.
type testManager struct {
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

func startManager(t *testing.T) *testManager { return startManagerSyncing(t, 0) }

// startManagerSyncing is startManager with the cache's resync period
// (--sync-period); 0 keeps controller-runtime's default.
func startManagerSyncing(t *testing.T, syncPeriod time.Duration) *testManager {
	t.Helper()
	needCloud(t)
	opts := ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if syncPeriod > 0 {
		opts.Cache.SyncPeriod = &syncPeriod
	}
	// The controllers' writes pass the loop guard.
	mgr, err := ctrl.NewManager(env.ControllerConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// A new factory per manager: a restarted manager starts cold, as a
	// real one would.
	for _, c := range osprovider.Controllers(osprovider.Options{}) {
		if err := c.Setup(ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: 10}); err != nil {
			cancel()
			t.Fatal(err)
		}
	}
	tm := &testManager{cancel: cancel, done: make(chan error, 1)}
	go func() { tm.done <- mgr.Start(ctx) }()
	// Registered first, so it runs after the cleanups that delete the
	// test's objects (they need the controllers).
	t.Cleanup(func() { tm.stop(t) })
	return tm
}

func (m *testManager) stop(t *testing.T) {
	t.Helper()
	if m.stopped {
		return
	}
	m.stopped = true
	m.cancel()
	select {
	case err := <-m.done:
		if err != nil {
			t.Errorf("manager: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("manager did not stop in 30s")
	}
}

// newNamespace makes a namespace with the identity Secret.
func newNamespace(t *testing.T) string {
	t.Helper()
	needCloud(t)
	ctx := context.Background()
	ns, err := env.NewNamespace(ctx, "osit")
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: ns.Name},
		Data:       map[string][]byte{clients.CloudsYAMLKey: fx.identitySecretYAML},
	}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// leftovers lists the OpenStack resources whose name starts with prefix.
func leftovers(t *testing.T, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	pages, err := servers.List(direct.compute, servers.ListOpts{Name: "^" + prefix}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srvs, _ := servers.ExtractServers(pages)
	for _, s := range srvs {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, "server "+s.Name+" ("+s.Status+")")
		}
	}
	pp, err := ports.List(direct.network, ports.ListOpts{}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := ports.ExtractPorts(pp)
	for _, p := range pl {
		if strings.HasPrefix(p.Name, prefix) {
			out = append(out, "port "+p.Name)
		}
	}
	tp, err := trunks.List(direct.network, trunks.ListOpts{}).AllPages(ctx)
	if err == nil {
		tl, _ := trunks.ExtractTrunks(tp)
		for _, tr := range tl {
			if strings.HasPrefix(tr.Name, prefix) {
				out = append(out, "trunk "+tr.Name)
			}
		}
	}
	if direct.volume != nil {
		vp, err := volumes.List(direct.volume, volumes.ListOpts{}).AllPages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		vl, _ := volumes.ExtractVolumes(vp)
		for _, v := range vl {
			if strings.HasPrefix(v.Name, prefix) {
				out = append(out, "volume "+v.Name+" ("+v.Status+")")
			}
		}
	}
	return out
}

// expectNoLeftovers waits (Nova and Cinder delete asynchronously) until
// nothing named prefix is left.
func expectNoLeftovers(t *testing.T, prefix string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		left := leftovers(t, prefix)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("OpenStack resources left after the test: %v", left)
		}
		time.Sleep(time.Second)
	}
}

// adminComputeClient is a Nova client of the cloud's admin (cloud "local").
func adminComputeClient(t *testing.T) *gophercloud.ServiceClient {
	t.Helper()
	admin, err := openstackproxy.LoadCloud(cloudsPath(), "local")
	if err != nil {
		t.Fatal(err)
	}
	provider, err := openstack.AuthenticatedClient(context.Background(), admin.AuthOptions())
	if err != nil {
		t.Fatal(err)
	}
	c, err := openstack.NewComputeV2(provider, admin.EndpointOpts())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// demoProjectID is the project of the test cloud's credentials.
func demoProjectID(t *testing.T) string {
	t.Helper()
	r, ok := direct.compute.GetAuthResult().(tokens.CreateResult)
	if !ok {
		t.Fatal("no Keystone v3 token")
	}
	p, err := r.ExtractProject()
	if err != nil || p == nil {
		t.Fatalf("no project in the token: %v", err)
	}
	return p.ID
}
