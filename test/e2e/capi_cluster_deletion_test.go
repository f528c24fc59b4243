//go:build e2e

package e2e

import (
	"slices"

	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	capie2e "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
)

// CAPI's ClusterDeletionSpec as CAPI ships it, on the openstack-agent flavor
// (3 control-plane + 2 worker Machines), with our deletion phases: the
// order in which the control plane's reconcileDelete and CAPI core take a
// cluster down. In each phase the spec holds the blocking objects with a
// finalizer of its own and checks that the phase's objects are being
// deleted, that the later phases' objects are not, and that a blocking
// object in deletion has no finalizer but the spec's (so our controllers
// finished with it). The harness is the quick start's (capi_harness_test.go).
var _ = Describe("CAPI ClusterDeletionSpec, openstack-agent flavor", func() {
	var s *capiSpecCluster
	capie2e.ClusterDeletionSpec(capiSpecCtx, func() capie2e.ClusterDeletionSpecInput {
		s = newCAPISpecCluster("capi-del")
		// CAPI's ClusterDeletionSpec reads OPENSTACK_CLOUD_YAML_B64 only from
		// the environment: it has no ClusterctlVariables input.
		GinkgoT().Setenv("OPENSTACK_CLOUD_YAML_B64", cloudsYAMLB64())
		return capie2e.ClusterDeletionSpecInput{
			E2EConfig:                e2eConfig,
			ClusterctlConfigPath:     clusterctlConfigPath,
			BootstrapClusterProxy:    s.Proxy,
			ArtifactFolder:           *artifactFolder,
			ClusterName:              ptr.To(s.Name),
			InfrastructureProvider:   ptr.To(infraProviderVersion()),
			Flavor:                   ptr.To("openstack-agent"),
			ControlPlaneMachineCount: ptr.To[int64](3),
			WorkerMachineCount:       ptr.To[int64](2),
			ControlPlaneWaiters:      s.ControlPlaneWaiters(),
			PostNamespaceCreated:     s.PostNamespaceCreated,
			PostMachinesProvisioned: func(proxy framework.ClusterProxy, namespace, name string) {
				s.PostMachinesProvisioned(proxy, namespace, name, 5)
			},
			ClusterDeletionPhases: []capie2e.ClusterDeletionPhase{
				{
					// CAPI core deletes the workers first; the control plane
					// waits for them (reconcileDelete, step 1).
					ObjectFilter: func(ref corev1.ObjectReference, owners []metav1.OwnerReference) bool {
						if ref.Kind == "Machine" && ownedBy(owners, "MachineDeployment", "MachineSet") {
							return true
						}
						return ref.Kind == "MachineDeployment" || ref.Kind == "MachineSet"
					},
					BlockingObjectFilter: isKind("Machine"),
				},
				{
					// Then the control plane and its Machines (step 2).
					ObjectFilter: func(ref corev1.ObjectReference, owners []metav1.OwnerReference) bool {
						if ref.Kind == "Machine" && ownedBy(owners, "OpenshiftAssistedControlPlane") {
							return true
						}
						return ref.Kind == "OpenshiftAssistedControlPlane"
					},
					BlockingObjectFilter: isKind("Machine"),
				},
				{
					// Last the infrastructure: CAPI core deletes the
					// OpenStackCluster once the control plane is gone, and its
					// finalizer goes once the network, router, security groups,
					// load balancer and floating IP are deleted.
					ObjectFilter:         isKind("OpenStackCluster"),
					BlockingObjectFilter: isKind("OpenStackCluster"),
				},
			},
		}
	})
	AfterEach(func() { s.AfterSpec() })
})

func ownedBy(owners []metav1.OwnerReference, kinds ...string) bool {
	return slices.ContainsFunc(owners, func(o metav1.OwnerReference) bool { return slices.Contains(kinds, o.Kind) })
}

func isKind(kind string) func(corev1.ObjectReference, []metav1.OwnerReference) bool {
	return func(ref corev1.ObjectReference, _ []metav1.OwnerReference) bool { return ref.Kind == kind }
}
