package controllers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// TestLiveISOOnMetal3 is the LiveISO flow (docs/bootstrap.md, Boot modes): three control-plane machines made
// from one Metal3MachineTemplate without an image share one InfraEnv, whose
// ISO goes on the template and every machine (format live-iso), one of them
// first pointed at another ISO; a worker from a second template gets its
// own; the bootstrap data is empty; Agents bind by MAC, get their roles and
// the BareMetalHost's UUID label, one approval each, and the installation
// completes.
func TestLiveISOOnMetal3(t *testing.T) {
	tc := newCluster(t, 3, 1, watchValue)
	g := tc.g
	tc.metal3Template("cp", nil)
	tc.metal3Template("workers", nil)
	for _, n := range []string{"cp-0", "cp-1"} {
		tc.metal3Machine(n, "cp", machineOpts{controlPlane: true})
	}
	// cp-2 comes pointed at some other ISO (cloned from a stale template,
	// or edited): it must not boot that.
	tc.metal3Machine("cp-2", "cp", machineOpts{controlPlane: true,
		image: map[string]any{"url": "https://elsewhere.example.com/other.iso", "diskFormat": "live-iso"}})
	tc.metal3Machine("worker-0", "workers", machineOpts{})

	for _, n := range []string{"cp-0", "cp-1", "cp-2", "worker-0"} {
		s := tc.waitDataSecret(n)
		g.Expect(s.Type).To(Equal(clusterv1.ClusterSecretType))
		g.Expect(s.Data["value"]).To(BeEmpty(), "LiveISO bootstrap data is empty")
		g.Expect(metav1.IsControlledBy(s, tc.config(n))).To(BeTrue())
		g.Expect(tc.config(n).Status.BootMode).To(Equal(bootstrapv1.BootModeLiveISO), "the default for a Metal3Machine without an image")
	}
	ies := tc.infraEnvs()
	g.Expect(ies).To(HaveLen(2), "one InfraEnv per template")
	byName := map[string]aiv1beta1.InfraEnv{}
	for _, ie := range ies {
		byName[ie.Name] = ie
		g.Expect(ie.Spec.ClusterRef).To(Equal(&aiv1beta1.ClusterReference{Name: tc.name, Namespace: tc.ns}))
		g.Expect(ie.Spec.PullSecretRef.Name).To(Equal("pull-secret"))
		g.Expect(ie.OwnerReferences).To(HaveLen(1))
		g.Expect(ie.OwnerReferences[0].Kind).To(Equal("Metal3MachineTemplate"))
	}
	cpISO := byName["cp-liveiso"].Status.ISODownloadURL
	g.Expect(cpISO).NotTo(BeEmpty())
	for kind, names := range map[string][]string{"Metal3MachineTemplate": {"cp"}, "Metal3Machine": {"cp-0", "cp-1", "cp-2"}} {
		for _, n := range names {
			image, _, _ := unstructured.NestedMap(tc.metal3(kind, n).Object, "spec", "image")
			if kind == "Metal3MachineTemplate" {
				image, _, _ = unstructured.NestedMap(tc.metal3(kind, n).Object, "spec", "template", "spec", "image")
			}
			g.Expect(image).To(Equal(map[string]any{"url": cpISO, "diskFormat": "live-iso"}), "%s %s", kind, n)
		}
	}
	for _, n := range []string{"cp-0", "cp-1", "cp-2"} {
		g.Expect(tc.config(n).Status.InfraEnvRef.Name).To(Equal("cp-liveiso"))
	}

	tc.waitInstallState(hiveextv1beta1.StateAddingHosts)
	for _, n := range []string{"cp-0", "cp-1", "cp-2", "worker-0"} {
		oac := tc.waitCondition(n, bootstrapv1.AgentApprovedCondition, metav1.ConditionTrue, bootstrapv1.AgentApprovedReason)
		approved := tc.approvedAgentsOf(n)
		g.Expect(approved).To(HaveLen(1), n)
		a := approved[0]
		g.Expect(oac.Status.AgentRef.Name).To(Equal(a.Name))
		wantRole := aiv1beta1.HostRoleMaster
		if n == "worker-0" {
			wantRole = aiv1beta1.HostRoleWorker
		}
		g.Expect(a.Spec.Role).To(Equal(wantRole), n)
		bmh := &bmhv1alpha1.BareMetalHost{}
		g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: "bmh-" + n}, bmh)).To(Succeed())
		g.Expect(a.Spec.NodeLabels).To(HaveKeyWithValue("metal3.io/uuid", string(bmh.UID)), n)
		g.Expect(a.Status.Inventory.Interfaces[0].MacAddress).To(Equal(bmh.Spec.BootMACAddress), "bound by MAC")
		g.Expect(condStatus(oac, bootstrapv1.ReadyCondition)).To(Equal(metav1.ConditionTrue))
	}
	g.Expect(tc.agents()).To(HaveLen(4))
	g.Expect(warningEvents(tc, "LiveISORestored")).To(ConsistOf("cp-2"))

	// The simulator completed the installation as assisted-service does.
	aci := &hiveextv1beta1.AgentClusterInstall{}
	g.Expect(k8s.Get(tc.ctx, tc.aciKey(), aci)).To(Succeed())
	g.Expect(aci.Spec.ClusterMetadata).NotTo(BeNil())
	kubeconfig := &corev1.Secret{}
	g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: aci.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name}, kubeconfig)).To(Succeed())
	g.Expect(kubeconfig.Data).To(HaveKey("kubeconfig"))
	cd := &hivev1.ClusterDeployment{}
	g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: tc.name}, cd)).To(Succeed())
	g.Expect(cd.Spec.Installed).To(BeTrue())
	completed := false
	for _, c := range aci.Status.Conditions {
		if c.Type == hivev1.ClusterInstallCompleted {
			completed = c.Status == corev1.ConditionTrue && c.Reason == "InstallationCompleted"
		}
	}
	g.Expect(completed).To(BeTrue(), "%v", aci.Status.Conditions)
}

// TestDiscoveryIgnitionOnOpenStack: OpenStack machines default to
// DiscoveryIgnition; each config has its own InfraEnv; the bootstrap data is
// the discovery ignition fetched over TLS (the simulator's CA); Agents bind
// by InfraEnv and get the server's provider ID for kubelet. The cluster is
// a single node, so the worker joins on day 2 (assisted-service refuses
// workers in a single-node day-1 installation).
func TestDiscoveryIgnitionOnOpenStack(t *testing.T) {
	tc := newCluster(t, 1, 0, watchValue)
	g := tc.g
	tc.openstackMachine("cp-0", machineOpts{controlPlane: true})
	tc.openstackMachine("worker-0", machineOpts{spec: &bootstrapv1.OpenshiftAssistedConfigSpec{
		NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			Name: "$METADATA_NAME", KubeletExtraLabels: []string{"node.example.com/server=$METADATA_UUID"}},
		PreBootstrapCommands: []string{"echo hello"},
	}})
	for _, n := range []string{"cp-0", "worker-0"} {
		s := tc.waitDataSecret(n)
		g.Expect(string(s.Data["format"])).To(Equal("ignition"))
		g.Expect(json.Valid(s.Data["value"])).To(BeTrue())
		g.Expect(string(s.Data["value"])).To(ContainSubstring(`"version":"3.1.0"`))
		oac := tc.config(n)
		g.Expect(oac.Status.BootMode).To(Equal(bootstrapv1.BootModeDiscoveryIgnition))
		g.Expect(oac.Status.InfraEnvRef.Name).To(Equal(n), "an InfraEnv per config")
		ie := &aiv1beta1.InfraEnv{}
		g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: n}, ie)).To(Succeed())
		g.Expect(metav1.IsControlledBy(ie, oac)).To(BeTrue())
		g.Expect(ie.Spec.ImageType).To(Equal(aiv1beta1.ImageTypeFullISO))
	}
	tc.waitInstallState(hiveextv1beta1.StateAddingHosts)
	for _, n := range []string{"cp-0", "worker-0"} {
		tc.waitCondition(n, bootstrapv1.AgentApprovedCondition, metav1.ConditionTrue, bootstrapv1.AgentApprovedReason)
		a := tc.approvedAgentsOf(n)
		g.Expect(a).To(HaveLen(1))
		g.Expect(a[0].Labels[aiv1beta1.InfraEnvNameLabel]).To(Equal(n), "bound by InfraEnv")
		g.Expect(a[0].Spec.IgnitionConfigOverrides).To(ContainSubstring("kubelet-env"), "the provider ID goes to kubelet")
	}
	w := tc.approvedAgentsOf("worker-0")[0]
	g.Expect(w.Spec.Hostname).To(Equal("worker-0"), "$METADATA_NAME is the server's name")
	g.Expect(w.Spec.NodeLabels).To(HaveKeyWithValue("node.example.com/server", "srv-worker-0"))
	g.Expect(w.Spec.IgnitionConfigOverrides).To(ContainSubstring("capoa-pre-bootstrap.service"))
	g.Expect(w.Spec.Role).To(Equal(aiv1beta1.HostRoleWorker))
}

// TestDiscoveryIgnitionOnMetal3: a Metal3 template with a disk image is
// CAPOA's current raw-image flow: DiscoveryIgnition by default, the image is
// left alone, and the bootstrap data is the ignition (CAPM3 passes it as
// the config drive's user data).
func TestDiscoveryIgnitionOnMetal3(t *testing.T) {
	tc := newCluster(t, 1, 0, watchValue)
	g := tc.g
	rhcos := map[string]any{"url": "https://mirror.example.com/rhcos.qcow2", "diskFormat": "qcow2",
		"checksum": "https://mirror.example.com/rhcos.qcow2.sha256", "checksumType": "sha256"}
	tc.metal3Template("cp", rhcos)
	tc.metal3Machine("cp-0", "cp", machineOpts{controlPlane: true})
	s := tc.waitDataSecret("cp-0")
	g.Expect(string(s.Data["format"])).To(Equal("ignition"))
	g.Expect(s.Data["value"]).NotTo(BeEmpty())
	g.Expect(tc.config("cp-0").Status.BootMode).To(Equal(bootstrapv1.BootModeDiscoveryIgnition))
	image, _, _ := unstructured.NestedMap(tc.metal3("Metal3Machine", "cp-0").Object, "spec", "image")
	g.Expect(image).To(Equal(rhcos), "the disk image is not touched")
	tc.waitInstallState(hiveextv1beta1.StateAddingHosts)
	tc.waitCondition("cp-0", bootstrapv1.AgentApprovedCondition, metav1.ConditionTrue, bootstrapv1.AgentApprovedReason)
	g.Expect(tc.approvedAgentsOf("cp-0")[0].Labels[aiv1beta1.InfraEnvNameLabel]).To(Equal("cp-0"))
}

// TestLiveISOOnOpenStackIsRefused: an OpenStack server cannot boot an ISO
// URL; the config says so and makes nothing.
func TestLiveISOOnOpenStackIsRefused(t *testing.T) {
	tc := newCluster(t, 1, 0, watchValue)
	tc.openstackMachine("cp-0", machineOpts{controlPlane: true, mode: bootstrapv1.BootModeLiveISO})
	oac := tc.waitCondition("cp-0", bootstrapv1.DataSecretAvailableCondition, metav1.ConditionFalse, bootstrapv1.BootModeUnsupportedReason)
	tc.g.Expect(condMessage(oac, bootstrapv1.DataSecretAvailableCondition)).To(ContainSubstring("DiscoveryIgnition"))
	tc.g.Expect(tc.infraEnvs()).To(BeEmpty())
	tc.g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: "cp-0"}, &corev1.Secret{})).To(MatchError(ContainSubstring("not found")))
}

// TestAssistedServiceFailures: an InfraEnv whose image fails and an
// ignition fetch that fails show in DataSecretAvailable with their reasons,
// and the flow resumes once assisted-service recovers.
func TestAssistedServiceFailures(t *testing.T) {
	tc := newCluster(t, 1, 0, watchValue)
	g := tc.g
	sim.FailImage(types.NamespacedName{Namespace: tc.ns, Name: "cp-0"}, "no OS image for version 4.19")
	sim.FailIgnition(http.StatusServiceUnavailable)
	t.Cleanup(func() { sim.FailIgnition(0) })
	tc.openstackMachine("cp-0", machineOpts{controlPlane: true})
	oac := tc.waitCondition("cp-0", bootstrapv1.DataSecretAvailableCondition, metav1.ConditionFalse, bootstrapv1.InfraEnvFailedReason)
	g.Expect(condMessage(oac, bootstrapv1.DataSecretAvailableCondition)).To(ContainSubstring("no OS image"))
	sim.FailImage(types.NamespacedName{Namespace: tc.ns, Name: "cp-0"}, "")
	oac = tc.waitCondition("cp-0", bootstrapv1.DataSecretAvailableCondition, metav1.ConditionFalse, bootstrapv1.IgnitionFetchFailedReason)
	g.Expect(condMessage(oac, bootstrapv1.DataSecretAvailableCondition)).To(ContainSubstring("503"))
	g.Expect(condMessage(oac, bootstrapv1.DataSecretAvailableCondition)).NotTo(ContainSubstring("api_key="), "no secret in messages")
	sim.FailIgnition(0)
	// The retry comes after the fetch backoff; poke the config instead of
	// waiting for it.
	g.Eventually(func() error {
		c := tc.config("cp-0")
		base := c.DeepCopy()
		c.Annotations = map[string]string{"test/poke": "1"}
		return k8s.Patch(tc.ctx, c, client.MergeFrom(base))
	}, wait, tick).Should(Succeed())
	tc.waitDataSecret("cp-0")
}

// warningEvents are the names of the objects a Warning event with reason
// is about.
func warningEvents(tc *testCluster, reason string) []string {
	list := &eventsv1.EventList{}
	tc.g.Expect(k8s.List(tc.ctx, list, client.InNamespace(tc.ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Type == corev1.EventTypeWarning && e.Reason == reason {
			out = append(out, e.Related.Name)
		}
	}
	return out
}

func condStatus(o *bootstrapv1.OpenshiftAssistedConfig, t string) metav1.ConditionStatus {
	for _, c := range o.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func condMessage(o *bootstrapv1.OpenshiftAssistedConfig, t string) string {
	for _, c := range o.Status.Conditions {
		if c.Type == t {
			return c.Message
		}
	}
	return ""
}
