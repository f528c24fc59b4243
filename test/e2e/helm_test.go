//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
	"github.com/ocp-capi/ocp-capi/test/scheme"
)

// The Helm suite runs the quick start on the second management cluster,
// with our providers installed by `helm install` of the release's umbrella
// chart instead of clusterctl. CAPI core and cert-manager have no chart of
// ours: they are applied from the same release files clusterctl uses
// (`clusterctl generate provider --core`, cert-manager.yaml).
var _ = Describe("Quick start with the providers installed by Helm", func() {
	It("installs the providers with helm install, runs the openstack-agent quick start, and helm uninstall leaves nothing behind", func() {
		ctx := suiteCtx
		Expect(*mgmt2Kubeconfig).NotTo(BeEmpty(), "-e2e.mgmt2-kubeconfig: the Helm suite needs a second management cluster (make test-e2e starts one)")
		Expect(*mgmt2Kubeconfig).To(BeAnExistingFile())
		s := runtime.NewScheme()
		Expect(scheme.AddAll(s)).To(Succeed())
		proxy := framework.NewClusterProxy("mgmt-helm", *mgmt2Kubeconfig, s)
		logFolder := filepath.Join(*artifactFolder, "clusters", "mgmt-helm")
		c := proxy.GetClient()

		By("Applying cert-manager from the release (" + certManagerFile() + ")")
		data, err := os.ReadFile(certManagerFile())
		Expect(err).NotTo(HaveOccurred())
		Expect(proxy.CreateOrUpdate(ctx, data)).To(Succeed())
		waitForDeployments(ctx, c, "cert-manager")

		By("Applying CAPI core: clusterctl generate provider --core cluster-api")
		core := run(*clusterctlBin, "generate", "provider", "--core", "cluster-api", "--config", clusterctlConfigPath)
		// The cert-manager webhook may need a moment before it admits Certificates.
		Eventually(func() error { return proxy.CreateOrUpdate(ctx, core) }, 2*time.Minute, 5*time.Second).Should(Succeed())
		waitForDeployments(ctx, c, "capi-system")

		By("Installing the consumed CRDs and the MCO's and CAPI namespaces, as an OpenShift management cluster has them (the add-on reads the Infrastructure at start and binds its build role in openshift-machine-config-operator, its Secret sync's role in openshift-cluster-api)")
		Expect(localenv.InstallConsumedCRDs(ctx, c)).To(Succeed())
		for _, ns := range []string{"openshift-machine-config-operator", "openshift-cluster-api"} {
			Expect(client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		}

		chart := umbrellaChart()
		By("helm upgrade --install ocp-capi " + chart)
		helm := func(args ...string) []byte {
			return run(filepath.Join(filepath.Dir(*clusterctlBin), "helm"), append([]string{"--kubeconfig", *mgmt2Kubeconfig}, args...)...)
		}
		helm("upgrade", "--install", "ocp-capi", chart, "--namespace", "ocp-capi", "--create-namespace", "--wait", "--timeout", "5m",
			"--set", "addon.enabled=true", "--set", "bootstrap.assistedServiceUrl="+e2eConfig.MustGetVariable("OCP_CAPI_BOOTSTRAP_ASSISTED_SERVICE_URL"),
			"--set", "infrastructure.verbosity=2", "--set", "bootstrap.verbosity=2", "--set", "controlplane.verbosity=2")
		for _, ns := range []string{"ocp-capi-infrastructure-system", "ocp-capi-bootstrap-system", "ocp-capi-controlplane-system", "ocp-capi-addon-system"} {
			waitForDeployments(ctx, c, ns)
		}
		for _, d := range framework.GetControllerDeployments(ctx, framework.GetControllerDeploymentsInput{Lister: c}) {
			framework.WatchDeploymentLogsByName(ctx, framework.WatchDeploymentLogsByNameInput{
				GetLister: c, Cache: proxy.GetCache(ctx), ClientSet: proxy.GetClientSet(), Deployment: d,
				LogPath: filepath.Join(logFolder, "logs", d.Namespace),
			})
		}

		By("Starting a second assisted-service simulator, for this management cluster")
		ip, err := localenv.NodeAddress(ctx, c)
		Expect(err).NotTo(HaveOccurred())
		simCtx, stop := context.WithCancel(ctx)
		sim2, err := localenv.StartSimulator(simCtx, proxy.GetRESTConfig(), s, intVariable("E2E_ASSISTED_PORT_2"), time.Second)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			stop()
			Expect(sim2.Wait()).To(Succeed())
		})
		timeout, err := time.ParseDuration(e2eConfig.GetIntervals("default", "wait-deployment")[0].(string))
		Expect(err).NotTo(HaveOccurred())
		_, err = localenv.FitProviders(ctx, c, sim2.CABundle(), ip, int32(intVariable("E2E_ASSISTED_PORT_2")), int32(intVariable("E2E_WORKLOAD_API_PORT")), timeout)
		Expect(err).NotTo(HaveOccurred())

		quickStart(ctx, quickStartInput{
			Proxy: proxy, Sim: sim2, Prefix: "helm", Flavor: "openstack-agent",
			ControlPlaneCount: 3, WorkerCount: 2,
		})

		By("helm uninstall ocp-capi")
		helm("uninstall", "ocp-capi", "--namespace", "ocp-capi", "--wait", "--timeout", "5m")
		Eventually(func(g Gomega) {
			for _, ns := range []string{"ocp-capi-infrastructure-system", "ocp-capi-bootstrap-system", "ocp-capi-controlplane-system", "ocp-capi-addon-system"} {
				err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s still exists after helm uninstall (%v)", ns, err)
			}
		}, 3*time.Minute, 5*time.Second).Should(Succeed())
	})
})

// run runs a command and returns its standard output; a failure fails the
// spec with the command's output.
func run(name string, args ...string) []byte {
	cmd := exec.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "%s %s:\n%s", name, strings.Join(args, " "), stderr.String())
	return out
}

func certManagerFile() string {
	m, err := filepath.Glob(filepath.Join(*releaseDir, "cert-manager", "*", "cert-manager.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(m).To(HaveLen(1), "cert-manager in the release %s", *releaseDir)
	return m[0]
}

func umbrellaChart() string {
	m, err := filepath.Glob(filepath.Join(*releaseDir, "charts", "ocp-capi-[0-9]*.tgz"))
	Expect(err).NotTo(HaveOccurred())
	Expect(m).To(HaveLen(1), "the umbrella chart in %s/charts (make release)", *releaseDir)
	return m[0]
}

// waitForDeployments waits for every Deployment in namespace to be available.
func waitForDeployments(ctx context.Context, c client.Client, namespace string) {
	Eventually(func(g Gomega) {
		list := &appsv1.DeploymentList{}
		g.Expect(c.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		g.Expect(list.Items).NotTo(BeEmpty(), "no Deployment in %s", namespace)
		for _, d := range list.Items {
			g.Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1), "Deployment %s/%s not available", namespace, d.Name)
		}
	}, e2eConfig.GetIntervals("default", "wait-controllers")...).Should(Succeed())
}
