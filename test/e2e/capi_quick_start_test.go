//go:build e2e

package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capie2e "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CAPI's QuickStartSpec as CAPI ships it, on the openstack-agent flavor
// (3 control-plane + 2 worker Machines, as our own quick start), adapted
// only through its inputs: our control-plane waiters, the proxy that
// reaches the workload API server from the host, the workload's
// registration once the namespace exists, our checks after the Machines
// are provisioned, and our OpenStack leak check after its cleanup.
var _ = Describe("CAPI QuickStartSpec, openstack-agent flavor", func() {
	var s *capiSpecCluster
	capie2e.QuickStartSpec(capiSpecCtx, func() capie2e.QuickStartSpecInput {
		s = newCAPISpecCluster("capi-qs")
		in := s.quickStartInput("openstack-agent", 3, 2)
		in.PostNamespaceCreated = s.PostNamespaceCreated
		in.PostMachinesProvisioned = func(proxy framework.ClusterProxy, namespace, name string) {
			s.PostMachinesProvisioned(proxy, namespace, name, 5)
		}
		in.ClusterctlVariables = map[string]string{"OPENSTACK_CLOUD_YAML_B64": cloudsYAMLB64()}
		return in
	})
	AfterEach(func() { s.AfterSpec() })
})

// The same on the topology flavor: a Cluster of the ClusterClass
// openstack-agent, which clusterctl adds from clusterclass-openstack-agent.yaml
// (listed beside the templates in the e2e configuration); CAPI's topology
// controller makes the control plane, its machine template and the worker
// MachineDeployment from the class. Once the Machines are provisioned, the
// cluster is upgraded through its topology (capi_topology_upgrade_test.go).
var _ = Describe("CAPI QuickStartSpec, topology flavor", func() {
	var s *capiSpecCluster
	capie2e.QuickStartSpec(capiSpecCtx, func() capie2e.QuickStartSpecInput {
		s = newCAPISpecCluster("capi-cc")
		in := s.quickStartInput("topology", 3, 2)
		in.PostNamespaceCreated = s.PostNamespaceCreated
		in.PostMachinesProvisioned = func(proxy framework.ClusterProxy, namespace, name string) {
			s.PostMachinesProvisioned(proxy, namespace, name, 5)
			s.UpgradeThroughTopology(proxy, namespace, name, 2)
		}
		in.ClusterctlVariables = map[string]string{"OPENSTACK_CLOUD_YAML_B64": cloudsYAMLB64()}
		return in
	})
	AfterEach(func() { s.AfterSpec() })
})

// The same on the metal3-agent flavor (3 + 2 BareMetalHosts booted from the
// discovery ISO, CAPM3 and the Bare Metal Operator played by
// localenv.Metal3), with the live-ISO checks of our own metal3 suite once
// the Machines are provisioned. That the hosts are released on deletion is
// checked by our suite only: the spec deletes the namespace, and the hosts
// with it, right after the Cluster.
var _ = Describe("CAPI QuickStartSpec, metal3-agent flavor", func() {
	const cp, workers = 3, 2
	var s *capiSpecCluster
	capie2e.QuickStartSpec(capiSpecCtx, func() capie2e.QuickStartSpecInput {
		s = newCAPISpecCluster("capi-m3")
		in := s.quickStartInput("metal3-agent", cp, workers)
		in.PostNamespaceCreated = func(proxy framework.ClusterProxy, namespace string) {
			s.PostNamespaceCreatedMetal3(proxy, namespace, cp, workers)
		}
		in.PostMachinesProvisioned = func(proxy framework.ClusterProxy, namespace, name string) {
			s.PostMachinesProvisioned(proxy, namespace, name, cp+workers)
			expectMetal3ProviderIDs(proxy.GetClient(), namespace, name)
			expectLiveISOBoot(suiteCtx, proxy.GetClient(), namespace, cp+workers)
		}
		in.ClusterctlVariables = map[string]string{"OPENSHIFT_API_VIP": "192.0.2.100", "OPENSHIFT_INGRESS_VIP": "192.0.2.101"}
		return in
	})
})

// expectMetal3ProviderIDs: every Machine of the cluster has CAPM3's
// metal3:// providerID.
func expectMetal3ProviderIDs(c client.Client, namespace, name string) {
	machines := &clusterv1.MachineList{}
	Expect(c.List(suiteCtx, machines, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Succeed())
	for _, m := range machines.Items {
		Expect(m.Spec.ProviderID).To(HavePrefix("metal3://"), "Machine %s", m.Name)
	}
}

// quickStartInput is what every QuickStartSpec of ours gives the spec: the
// suite's configuration and proxy, the harness's cluster name, the release's
// infrastructure provider, the flavor and counts, and our control-plane
// waiters. The caller adds its hooks and clusterctl variables.
func (s *capiSpecCluster) quickStartInput(flavor string, cp, workers int64) capie2e.QuickStartSpecInput {
	return capie2e.QuickStartSpecInput{
		E2EConfig:                e2eConfig,
		ClusterctlConfigPath:     clusterctlConfigPath,
		BootstrapClusterProxy:    s.Proxy,
		ArtifactFolder:           *artifactFolder,
		ClusterName:              ptr.To(s.Name),
		InfrastructureProvider:   ptr.To(infraProviderVersion()),
		Flavor:                   ptr.To(flavor),
		ControlPlaneMachineCount: ptr.To(cp),
		WorkerMachineCount:       ptr.To(workers),
		ControlPlaneWaiters:      s.ControlPlaneWaiters(),
	}
}
