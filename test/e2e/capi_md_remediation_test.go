//go:build e2e

package e2e

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capie2e "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CAPI's MachineDeploymentRemediationSpec as CAPI ships it, on the test
// flavor openstack-agent-md-remediation (the openstack-agent template and a
// MachineHealthCheck on the workers, addTestFlavors). 1 + 1 Machines, as in
// the scale spec. The spec marks the worker's Node through the workload
// cluster's proxy and waits until no Machine of the MachineHealthCheck has a
// Node with that condition.
var _ = Describe("CAPI MachineDeploymentRemediationSpec, openstack-agent flavor", func() {
	var s *capiSpecCluster
	capie2e.MachineDeploymentRemediationSpec(capiSpecCtx, func() capie2e.MachineDeploymentRemediationSpecInput {
		s = newCAPISpecClusterNamedBySpec()
		GinkgoT().Setenv("OPENSTACK_CLOUD_YAML_B64", cloudsYAMLB64())
		return capie2e.MachineDeploymentRemediationSpecInput{
			E2EConfig:              e2eConfig,
			ClusterctlConfigPath:   clusterctlConfigPath,
			BootstrapClusterProxy:  s.Proxy,
			ArtifactFolder:         *artifactFolder,
			InfrastructureProvider: ptr.To(infraProviderVersion()),
			Flavor:                 ptr.To(mdRemediationFlavor),
			ControlPlaneWaiters:    s.ControlPlaneWaiters(),
			PostNamespaceCreated:   s.PostNamespaceCreated,
		}
	})
	// The spec would also pass if the condition went away without a
	// remediation; our kubelet stand-in never removes a condition it did not
	// post, so here the marked Node must be gone (CAPI core deletes a
	// remediated Machine's Node) and the worker Machine must have another
	// Node. Before the spec's AfterEach deletes the cluster.
	JustAfterEach(func() {
		if CurrentSpecReport().Failed() {
			return
		}
		By("Checking that the marked worker was replaced, not healed")
		nodes := &corev1.NodeList{}
		Expect(s.Workload.Client.List(suiteCtx, nodes)).To(Succeed())
		workers := 0
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				Expect(string(c.Type)).NotTo(Equal("e2e.remediation.condition"), "Node %s still carries the spec's condition", n.Name)
			}
			if _, ok := n.Labels["node-role.kubernetes.io/worker"]; ok {
				workers++
			}
		}
		Expect(workers).To(Equal(1), "worker Nodes")
		machines := &clusterv1.MachineList{}
		Expect(mgmt.GetClient().List(suiteCtx, machines, client.InNamespace(s.Namespace),
			client.MatchingLabels{clusterv1.ClusterNameLabel: s.name(), clusterv1.MachineDeploymentNameLabel: s.name() + "-worker"})).To(Succeed())
		Expect(machines.Items).To(HaveLen(1))
		Expect(machines.Items[0].Status.NodeRef.IsDefined()).To(BeTrue())
	})
	AfterEach(func() { s.AfterSpec() })
})

// mdRemediationFlavor is the test flavor of CAPI's
// MachineDeploymentRemediationSpec: the openstack-agent template with
// data/md-remediation-mhc.yaml added.
const mdRemediationFlavor = "openstack-agent-md-remediation"

// addTestFlavors writes the test flavors into dir and adds them to the
// infrastructure provider's files, before the clusterctl repository is
// made: a test flavor is a shipped template plus what a spec needs, built
// here so that it follows every change of the template.
func addTestFlavors(cfg *clusterctl.E2EConfig, dir string) {
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	template, err := os.ReadFile("../../templates/cluster-template-openstack-agent.yaml")
	Expect(err).NotTo(HaveOccurred())
	mhc, err := os.ReadFile("data/md-remediation-mhc.yaml")
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(dir, "cluster-template-"+mdRemediationFlavor+".yaml")
	Expect(os.WriteFile(path, append(append(template, "---\n"...), mhc...), 0o600)).To(Succeed())
	for i := range cfg.Providers {
		if cfg.Providers[i].Type != "InfrastructureProvider" {
			continue
		}
		for j := range cfg.Providers[i].Versions {
			cfg.Providers[i].Versions[j].Files = append(cfg.Providers[i].Versions[j].Files, clusterctl.Files{SourcePath: path, TargetName: filepath.Base(path)})
		}
	}
}
