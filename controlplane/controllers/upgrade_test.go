package controllers_test

import (
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
)

// suiteCleanups run after every test and every manager has stopped.
var suiteCleanups struct {
	mu  sync.Mutex
	fns []func()
}

func atSuiteEnd(f func()) {
	suiteCleanups.mu.Lock()
	suiteCleanups.fns = append(suiteCleanups.fns, f)
	suiteCleanups.mu.Unlock()
}

func runSuiteCleanups() {
	suiteCleanups.mu.Lock()
	defer suiteCleanups.mu.Unlock()
	for _, f := range suiteCleanups.fns {
		f()
	}
}

// startWorkloadCluster starts a second real API server, with only the
// ClusterVersion and Infrastructure CRDs, to play an installed OpenShift cluster, and returns
// an admin kubeconfig and a client of it. It stops when the suite ends
// (the simulator watches it until then).
func startWorkloadCluster(t *testing.T) ([]byte, client.Client) {
	t.Helper()
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, c := range env.CRDs() {
		if c.Object.Name == "clusterversions.config.openshift.io" || c.Object.Name == "infrastructures.config.openshift.io" {
			crds = append(crds, c.Object.DeepCopy())
		}
	}
	if len(crds) != 2 {
		t.Fatal("the ClusterVersion and Infrastructure CRDs are not among the installed CRDs")
	}
	scheme := runtime.NewScheme()
	if err := configv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	w := &crenvtest.Environment{BinaryAssetsDirectory: env.Paths.BinDir, Scheme: scheme,
		CRDs: crds}
	if _, err := w.Start(); err != nil {
		_ = w.Stop()
		t.Fatalf("starting the workload cluster's API server: %v", err)
	}
	atSuiteEnd(func() { _ = w.Stop() })
	user, err := w.AddUser(crenvtest.User{Name: "kubeadmin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	// Read it as the controller will: through the kubeconfig.
	restCfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig, c
}

// setVersion changes the control plane's spec.distributionVersion.
func (tc *testCluster) setVersion(v string) {
	tc.t.Helper()
	o := tc.oacp()
	base := o.DeepCopy()
	o.Spec.DistributionVersion = v
	tc.g.Expect(k8s.Patch(tc.ctx, o, client.MergeFrom(base))).To(Succeed())
}

// TestUpgrade installs a cluster whose workload API server is real (a
// second envtest API server, with the ClusterVersion the installation
// leaves and a simulated cluster-version operator), then changes
// spec.distributionVersion: the controller sets desiredUpdate through
// <cluster>-kubeconfig and reports the progress in UpgradeCompleted and
// status.distributionVersion. A failing update is reported as such and
// completes once the operator recovers.
func TestUpgrade(t *testing.T) {
	kubeconfig, workload := startWorkloadCluster(t)
	tc := newCluster(t, clusterOpts{replicas: 1})
	g := tc.g
	cdKey := tc.key(controlPlane)
	g.Expect(sim.SetWorkload(tc.ctx, cdKey, kubeconfig)).To(Succeed())
	tc.waitAvailable()
	oacp := tc.waitCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionTrue, controlplanev1.UpgradeCompletedReason)
	g.Expect(oacp.Status.DistributionVersion).To(Equal(version))
	clusterVersion := func() *configv1.ClusterVersion {
		cv := &configv1.ClusterVersion{}
		g.Expect(workload.Get(tc.ctx, types.NamespacedName{Name: "version"}, cv)).To(Succeed())
		return cv
	}
	g.Expect(clusterVersion().Spec.DesiredUpdate).To(BeNil(), "nothing asked at install")

	// The update runs (held by the simulated operator).
	sim.HoldUpgrade(cdKey, true)
	tc.setVersion("4.19.5")
	oacp = tc.waitCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeInProgressReason)
	g.Expect(oacp.Status.DistributionVersion).To(Equal(version), "not yet")
	cv := clusterVersion()
	g.Expect(cv.Spec.DesiredUpdate).NotTo(BeNil())
	g.Expect(cv.Spec.DesiredUpdate.Version).To(Equal("4.19.5"))
	g.Expect(cv.Spec.DesiredUpdate.Image).To(BeEmpty(), "a GA release from the default repository goes by version")
	// The operator takes it on, and holds it there.
	g.Eventually(func() configv1.UpdateHistory { return clusterVersion().Status.History[0] }, wait, tick).
		Should(And(HaveField("State", configv1.PartialUpdate), HaveField("Version", "4.19.5")))
	tc.waitAvailable()

	sim.HoldUpgrade(cdKey, false)
	tc.waitCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionTrue, controlplanev1.UpgradeCompletedReason)
	// CAPI's patch helper writes the conditions, then the rest of the status:
	// the version the pass set with UpgradeCompleted lands one write after it.
	g.Eventually(func() string { return tc.oacp().Status.DistributionVersion }, wait, tick).Should(Equal("4.19.5"))
	g.Expect(clusterVersion().Status.History[0]).To(And(HaveField("State", configv1.CompletedUpdate), HaveField("Version", "4.19.5")))

	// A failing update, to the next minor, with spec.version, as a
	// ClusterClass topology writes them (docs/templates.md).
	sim.FailUpgrade(cdKey, "ClusterOperator kube-apiserver is degraded")
	o := tc.oacp()
	base := o.DeepCopy()
	o.Spec.DistributionVersion, o.Spec.KubernetesVersion = "4.20.0", "v1.33.0"
	g.Expect(k8s.Patch(tc.ctx, o, client.MergeFrom(base))).To(Succeed())
	oacp = tc.waitCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeFailedReason)
	g.Expect(capiconditions.Get(oacp, controlplanev1.UpgradeCompletedCondition).Message).To(ContainSubstring("kube-apiserver is degraded"))
	g.Expect(oacp.Status.DistributionVersion).To(Equal("4.19.5"))
	// The whole status of that pass (observedGeneration comes with the
	// rest of the status): status.version is still the installed
	// release's, so CAPI sees the control plane upgrading and holds the
	// workers back.
	g.Eventually(func() int64 { oacp = tc.oacp(); return oacp.Status.ObservedGeneration }, wait, tick).Should(Equal(oacp.Generation))
	g.Expect(oacp.Status.Version).To(HavePrefix("v1.32."), "spec.version reported before the upgrade ended")
	sim.FailUpgrade(cdKey, "")
	tc.waitCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionTrue, controlplanev1.UpgradeCompletedReason)
	// As above: the version lands one write after the condition.
	g.Eventually(func() string { return tc.oacp().Status.DistributionVersion }, wait, tick).Should(Equal("4.20.0"))
	g.Eventually(func() string { return tc.oacp().Status.Version }, wait, tick).Should(Equal("v1.33.0"),
		"the Kubernetes version follows the installed OpenShift version, as spec.version says once it is installed")

	// A downgrade is refused, and nothing is asked of the cluster.
	o = tc.oacp()
	base = o.DeepCopy()
	o.Spec.DistributionVersion, o.Spec.KubernetesVersion = "4.19.5", ""
	g.Expect(k8s.Patch(tc.ctx, o, client.MergeFrom(base))).To(Succeed())
	oacp = tc.waitCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeFailedReason)
	g.Expect(capiconditions.Get(oacp, controlplanev1.UpgradeCompletedCondition).Message).To(ContainSubstring("downgrade"))
	g.Expect(clusterVersion().Spec.DesiredUpdate.Version).To(Equal("4.20.0"))
}
