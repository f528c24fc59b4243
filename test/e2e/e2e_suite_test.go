//go:build e2e

package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
	"github.com/ocp-capi/ocp-capi/test/scheme"
)

// Flags (make test-e2e sets them; see hack/make/e2e.mk).
var (
	configPath         = flag.String("e2e.config", "config/ocp-capi.yaml", "the e2e configuration (clusterctl.E2EConfig)")
	releaseDir         = flag.String("e2e.release-dir", "../../out", "the local release (make release): replaces ${RELEASE_DIR} in the configuration")
	releaseVersion     = flag.String("e2e.release-version", "", "the version of our providers in the release: replaces ${RELEASE_VERSION} in the configuration (empty: the one version the release directory holds)")
	artifactFolder     = flag.String("e2e.artifacts-folder", "../../_artifacts/e2e", "where logs, clusterctl repository and describe output go")
	mgmtKubeconfig     = flag.String("e2e.mgmt-kubeconfig", "../../.mgmt/kubeconfig", "kubeconfig of the management cluster (mgmt up --size node)")
	mgmt2Kubeconfig    = flag.String("e2e.mgmt2-kubeconfig", "", "kubeconfig of the Helm suite's management cluster (empty: the Helm suite fails saying so)")
	mgmt3Kubeconfig    = flag.String("e2e.mgmt3-kubeconfig", "", "kubeconfig of the management cluster that the move suite moves its cluster to (empty: the move suite fails saying so)")
	mgmt4Kubeconfig    = flag.String("e2e.mgmt4-kubeconfig", "", "kubeconfig of the management cluster where the upgrade suite installs the previous release (empty: the upgrade suite fails saying so)")
	previousReleaseDir = flag.String("e2e.previous-release-dir", "../../out/previous", "the previous release (make previous-release), which the upgrade suite installs and upgrades from")
	cloudsYAML         = flag.String("e2e.clouds-yaml", "/etc/openstack/clouds.yaml", "clouds.yaml of the local OpenStack (hack/openstack/up.sh)")
	clusterctlBin      = flag.String("e2e.clusterctl", "../../bin/clusterctl", "the clusterctl binary, for `clusterctl describe cluster` while a suite runs")
	describeInterval   = flag.Duration("e2e.describe-interval", 30*time.Second, "how often a running suite logs `clusterctl describe cluster`")
)

// The providers as clusterctl names them.
const (
	bootstrapProvider    = "openshift-agent"
	controlPlaneProvider = "openshift-agent"
	infraProvider        = "openstack"
	addonProvider        = "openshift"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ocp-capi e2e")
}

// Suite state, set up once by BeforeSuite.
var (
	suiteCtx             context.Context
	e2eConfig            *clusterctl.E2EConfig
	clusterctlConfigPath string
	mgmt                 framework.ClusterProxy
	sim                  *localenv.Simulator
	nodeIP               string
	stopSimulator        context.CancelFunc
)

var _ = BeforeSuite(func() {
	suiteCtx = context.Background()
	for _, p := range []*string{configPath, releaseDir, artifactFolder, mgmtKubeconfig, cloudsYAML, clusterctlBin} {
		abs, err := filepath.Abs(*p)
		Expect(err).NotTo(HaveOccurred())
		*p = abs
	}
	Expect(*mgmtKubeconfig).To(BeAnExistingFile(), "the management cluster's kubeconfig; start it with `make mgmt-up MGMT_SIZE=node` (make test-e2e does)")
	Expect(*cloudsYAML).To(BeAnExistingFile(), "the local OpenStack's clouds.yaml; start it with `make openstack-up` (make test-e2e does)")
	Expect(os.MkdirAll(*artifactFolder, 0o755)).To(Succeed())
	// The controllers in the test process (simulator, kubelet stand-in,
	// workload API server) log to a file, not to the spec's output.
	logFile, err := os.Create(filepath.Join(*artifactFolder, "test-process.log"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(logFile.Close)
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))

	By("Loading the e2e configuration " + *configPath)
	version, err := providerVersion(*releaseDir, *releaseVersion)
	Expect(err).NotTo(HaveOccurred())
	e2eConfig = loadE2EConfig(*configPath, *releaseDir, version)
	useTwinCloudUser(suiteCtx)
	addTestFlavors(e2eConfig, filepath.Join(*artifactFolder, "flavors"))

	By("Creating the clusterctl repository from the local release " + *releaseDir)
	clusterctlConfigPath = clusterctl.CreateRepository(suiteCtx, clusterctl.CreateRepositoryInput{
		RepositoryFolder: filepath.Join(*artifactFolder, "repository"),
		E2EConfig:        e2eConfig,
	})
	fitRepository(filepath.Join(*artifactFolder, "repository"))
	Expect(setCertManager(clusterctlConfigPath, *releaseDir)).To(Succeed())

	s := runtime.NewScheme()
	Expect(scheme.AddAll(s)).To(Succeed())
	mgmt = framework.NewClusterProxy("mgmt", *mgmtKubeconfig, s)

	By("Installing the CRDs of the systems the simulators play (assisted-service, hive, Metal3)")
	Expect(localenv.InstallConsumedCRDs(suiteCtx, mgmt.GetClient())).To(Succeed())

	mgmtLogs := filepath.Join(*artifactFolder, "clusters", "mgmt")
	initProviders(mgmt, mgmtLogs)

	By("Starting the assisted-service simulator and the kubelet stand-in in the test process")
	nodeIP, err = localenv.NodeAddress(suiteCtx, mgmt.GetClient())
	Expect(err).NotTo(HaveOccurred())
	simCtx, stop := context.WithCancel(suiteCtx)
	stopSimulator = stop
	sim, err = localenv.StartSimulator(simCtx, mgmt.GetRESTConfig(), mgmt.GetScheme(), intVariable("E2E_ASSISTED_PORT"), time.Second)
	Expect(err).NotTo(HaveOccurred())

	enforceRestricted(mgmt, mgmtLogs)
	fitProviders(mgmt, mgmtLogs, sim, nodeIP, intVariable("E2E_ASSISTED_PORT"))
})

var _ = AfterSuite(func() {
	if stopSimulator != nil {
		stopSimulator()
		// The simulator is the suite's scaffolding, not a provider: once every
		// spec has passed, a runnable of its manager that outlives the 30 s
		// grace period (seen once in CI, cause not yet found) is reported in
		// the suite's report and log, not turned into a failure of the suite.
		if err := sim.Wait(); err != nil {
			// What still runs, for the cause.
			dump := filepath.Join(*artifactFolder, "simulator-shutdown-goroutines.txt")
			if f, ferr := os.Create(dump); ferr == nil {
				_ = pprof.Lookup("goroutine").WriteTo(f, 2)
				_ = f.Close()
			}
			AddReportEntry("simulator shutdown", err.Error()+"; goroutines in "+dump)
			GinkgoWriter.Printf("WARNING: the simulator's manager did not stop cleanly: %v (goroutines: %s)\n", err, dump)
		}
	}
	if mgmt != nil {
		scanForCredentials(suiteCtx)
	}
})

// intVariable is an integer variable of the configuration (or the
// environment).
func intVariable(name string) int {
	v, err := strconv.Atoi(e2eConfig.MustGetVariable(name))
	Expect(err).NotTo(HaveOccurred(), "variable %s", name)
	return v
}

// loadE2EConfig reads the configuration as clusterctl.LoadE2EConfig does,
// but without its Validate, which insists on kubeadm bootstrap and
// control-plane providers; the same checks that apply to us are made here.
func loadE2EConfig(path, release, version string) *clusterctl.E2EConfig {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	data = []byte(strings.NewReplacer("${RELEASE_DIR}", release, "${RELEASE_VERSION}", version).Replace(string(data)))
	cfg := &clusterctl.E2EConfig{}
	Expect(yaml.UnmarshalStrict(data, cfg)).To(Succeed(), "reading %s", path)
	cfg.Defaults()
	cfg.AbsPaths(filepath.Dir(path))
	types := map[string]int{}
	for _, p := range cfg.Providers {
		types[p.Type]++
		Expect(p.Versions).NotTo(BeEmpty(), "provider %s has no version", p.Name)
		for _, v := range p.Versions {
			Expect(v.Type).To(Equal(clusterctl.URLSource), "provider %s %s: the suite installs release files (type url)", p.Name, v.Name)
			Expect(v.Value).To(BeAnExistingFile(), "provider %s %s: run `make release` first", p.Name, v.Name)
			for _, f := range append(p.Files, v.Files...) {
				Expect(f.SourcePath).To(BeAnExistingFile(), "provider %s %s", p.Name, v.Name)
			}
		}
	}
	for _, t := range []string{"CoreProvider", "BootstrapProvider", "ControlPlaneProvider", "InfrastructureProvider"} {
		Expect(types[t]).To(Equal(1), "%s: the configuration needs exactly one", t)
	}
	return cfg
}

// providerVersion is the version of our providers in the release: want
// when given, else the one version directory of the control-plane provider
// (make release writes one version at a time).
func providerVersion(release, want string) (string, error) {
	if want != "" {
		return want, nil
	}
	dirs, err := filepath.Glob(filepath.Join(release, "control-plane-openshift-agent", "v*"))
	if err != nil {
		return "", err
	}
	if len(dirs) != 1 {
		return "", fmt.Errorf("want one control-plane-openshift-agent/<version> in %s (make release), found %v: "+
			"pass -e2e.release-version", release, dirs)
	}
	return filepath.Base(dirs[0]), nil
}

// fitRepository fits the OpenStack provider's components of every version
// in the clusterctl repository folder to this machine
// (localenv.FitInfrastructureComponents), so that clusterctl installs and
// upgrades a manager with hostNetwork.
func fitRepository(folder string) {
	files, err := filepath.Glob(filepath.Join(folder, "infrastructure-"+infraProvider, "*", "components.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty(), "no infrastructure-%s/<version>/components.yaml in %s", infraProvider, folder)
	for _, f := range files {
		data, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		data, err = localenv.FitInfrastructureComponents(data)
		Expect(err).NotTo(HaveOccurred(), f)
		Expect(os.WriteFile(f, data, 0o600)).To(Succeed())
	}
}

// setCertManager points clusterctl's cert-manager setting at the release's
// local copy, so that `clusterctl init` downloads nothing.
func setCertManager(clusterctlConfig, release string) error {
	matches, err := filepath.Glob(filepath.Join(release, "cert-manager", "*", "cert-manager.yaml"))
	if err != nil {
		return err
	}
	if len(matches) != 1 {
		return fmt.Errorf("want one cert-manager/<version>/cert-manager.yaml in %s (make release), found %v", release, matches)
	}
	version := filepath.Base(filepath.Dir(matches[0]))
	data, err := os.ReadFile(clusterctlConfig)
	if err != nil {
		return err
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return err
	}
	cfg["cert-manager"] = map[string]string{"url": "file://" + matches[0], "version": version}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(clusterctlConfig, out, 0o600)
}

// initProviders runs `clusterctl init` through the framework with every
// provider of the configuration, and waits for their controllers.
func initProviders(proxy framework.ClusterProxy, logFolder string) {
	initRelease(proxy, logFolder, clusterctlConfigPath, *releaseDir, "")
}

// initRelease runs `clusterctl init` with clusterctlConfig, our providers
// at version (empty: the newest the configuration holds), waits for their
// controllers, and applies the add-on's RBAC of the release in release.
func initRelease(proxy framework.ClusterProxy, logFolder, clusterctlConfig, release, version string) {
	at := func(name string) string {
		if version == "" {
			return name
		}
		return name + ":" + version
	}
	By("clusterctl init on " + proxy.GetName())
	clusterctl.InitManagementClusterAndWatchControllerLogs(suiteCtx, clusterctl.InitManagementClusterAndWatchControllerLogsInput{
		ClusterProxy:             proxy,
		ClusterctlConfigPath:     clusterctlConfig,
		BootstrapProviders:       []string{at(bootstrapProvider)},
		ControlPlaneProviders:    []string{at(controlPlaneProvider)},
		InfrastructureProviders:  []string{at(infraProvider)},
		AddonProviders:           []string{at(addonProvider)},
		LogFolder:                logFolder,
		DisableMetricsCollection: true,
	}, e2eConfig.GetIntervals("default", "wait-controllers")...)
	applyBuildRBAC(proxy, release)
}

// applyBuildRBAC applies the add-on's RBAC that the release in release
// ships beside the components.
func applyBuildRBAC(proxy framework.ClusterProxy, release string) {
	// The add-on's BuildController works in the MCO's namespace, through
	// the RoleBinding that the release ships beside the components
	// (docs/install.md); without it the manager's Build cache never syncs.
	// The Secret sync's writes are bound the same way in the CAPI namespace.
	By("Applying the add-on's RBAC (build-rbac.yaml) in openshift-machine-config-operator and openshift-cluster-api")
	c := proxy.GetClient()
	for _, ns := range []string{"openshift-machine-config-operator", "openshift-cluster-api"} {
		Expect(client.IgnoreAlreadyExists(c.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
	}
	rbac, err := filepath.Glob(filepath.Join(release, "addon-openshift", "*", "build-rbac.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(rbac).To(HaveLen(1), "addon-openshift/<version>/build-rbac.yaml in the release %s", release)
	data, err := os.ReadFile(rbac[0])
	Expect(err).NotTo(HaveOccurred())
	Expect(proxy.CreateOrUpdate(suiteCtx, data)).To(Succeed())
}

// fitProviders fits the providers installed on proxy's cluster to this
// machine, for the simulator s listening on assistedPort and that cluster's
// node address (localenv.FitProviders says what and why), and follows the
// new pods' logs (the framework's watch followed the old pods).
func fitProviders(proxy framework.ClusterProxy, logFolder string, s *localenv.Simulator, ip string, assistedPort int) {
	By("Fitting the providers on " + proxy.GetName() + " to the local machine: assisted-service and workload-api Services, the simulator's CA (and hostNetwork for the OpenStack provider, if the install lacks it)")
	timeout, err := time.ParseDuration(e2eConfig.GetIntervals("default", "wait-deployment")[0].(string))
	Expect(err).NotTo(HaveOccurred())
	deps, err := localenv.FitProviders(suiteCtx, proxy.GetClient(), s.CABundle(), ip, int32(assistedPort), int32(intVariable("E2E_WORKLOAD_API_PORT")), timeout)
	Expect(err).NotTo(HaveOccurred())
	for _, d := range deps {
		framework.WatchDeploymentLogsByName(suiteCtx, framework.WatchDeploymentLogsByNameInput{
			GetLister: proxy.GetClient(), Cache: proxy.GetCache(suiteCtx), ClientSet: proxy.GetClientSet(), Deployment: d,
			LogPath: filepath.Join(logFolder, "logs", d.Namespace),
		})
	}
}
