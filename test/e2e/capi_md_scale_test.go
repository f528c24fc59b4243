//go:build e2e

package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	"k8s.io/utils/ptr"
	capie2e "sigs.k8s.io/cluster-api/test/e2e"
)

// CAPI's MachineDeploymentScaleSpec as CAPI ships it, on the openstack-agent
// flavor. The spec fixes 1 control-plane and 1 worker Machine and names the
// cluster itself, so this is a single-node OpenShift whose MachineDeployment
// is scaled 1 -> 3 -> 1 with workers that join on day 2; the harness learns
// the cluster's name from the spec's namespace (capi_harness_test.go).
var _ = Describe("CAPI MachineDeploymentScaleSpec, openstack-agent flavor", func() {
	var s *capiSpecCluster
	capie2e.MachineDeploymentScaleSpec(capiSpecCtx, func() capie2e.MachineDeploymentScaleSpecInput {
		s = newCAPISpecClusterNamedBySpec()
		// The spec has no ClusterctlVariables input.
		GinkgoT().Setenv("OPENSTACK_CLOUD_YAML_B64", cloudsYAMLB64())
		return capie2e.MachineDeploymentScaleSpecInput{
			E2EConfig:              e2eConfig,
			ClusterctlConfigPath:   clusterctlConfigPath,
			BootstrapClusterProxy:  s.Proxy,
			ArtifactFolder:         *artifactFolder,
			InfrastructureProvider: ptr.To(infraProviderVersion()),
			Flavor:                 "openstack-agent",
			ControlPlaneWaiters:    s.ControlPlaneWaiters(),
			PostNamespaceCreated:   s.PostNamespaceCreated,
		}
	})
	AfterEach(func() { s.AfterSpec() })
})
