//go:build e2e

package e2e

import (
	"encoding/json"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
)

// UpgradeThroughTopology upgrades a Cluster of the topology flavor as
// docs/templates.md tells a user to: one patch of the Cluster that changes
// spec.topology.version and the variable openshiftVersion together. Then:
//   - the control plane asks the workload's cluster-version operator for the
//     release (ClusterVersion spec.desiredUpdate), which completes it;
//   - the control plane reports the release and, only then, the Kubernetes
//     version, and is Available; its Machines are upgraded in place (none is
//     replaced);
//   - CAPI's topology controller moves the MachineDeployment to the new
//     version and replaces the workers (docs/templates.md says why), which
//     rejoin with a Node each;
//   - the Cluster is Available again.
func (s *capiSpecCluster) UpgradeThroughTopology(proxy framework.ClusterProxy, namespace, name string, workers int) {
	ctx := suiteCtx
	c := proxy.GetClient()
	k8s := e2eConfig.MustGetVariable("KUBERNETES_VERSION_UPGRADE_TO")
	ocp := e2eConfig.MustGetVariable("OPENSHIFT_VERSION_UPGRADE_TO")
	key := types.NamespacedName{Namespace: namespace, Name: name}

	cluster := &clusterv1.Cluster{}
	Expect(c.Get(ctx, key, cluster)).To(Succeed())
	cpMachines := machineNames(c, namespace, name, true)
	Expect(cpMachines).NotTo(BeEmpty())

	By("Upgrading to OpenShift " + ocp + " (Kubernetes " + k8s + ") with one patch of the Cluster's topology")
	base := cluster.DeepCopy()
	cluster.Spec.Topology.Version = k8s
	raw, err := json.Marshal(ocp)
	Expect(err).NotTo(HaveOccurred())
	i := slices.IndexFunc(cluster.Spec.Topology.Variables, func(v clusterv1.ClusterVariable) bool { return v.Name == "openshiftVersion" })
	Expect(i).NotTo(Equal(-1), "the topology flavor sets the variable openshiftVersion")
	cluster.Spec.Topology.Variables[i].Value = apiextensionsv1.JSON{Raw: raw}
	Expect(c.Patch(ctx, cluster, client.MergeFrom(base))).To(Succeed())

	By("Waiting for the control plane to report OpenShift " + ocp + ", completed by the workload's cluster-version operator")
	Eventually(func(g Gomega) {
		oacp := s.controlPlane(g, c, cluster)
		g.Expect(oacp.Spec.DistributionVersion).To(Equal(ocp), "the topology controller's patch of the control plane")
		g.Expect(oacp.Status.DistributionVersion).To(Equal(ocp), "conditions: %s", condSummary(oacp.Status.Conditions))
		g.Expect(oacp.Status.Version).To(Equal(k8s))
		g.Expect(apimeta.IsStatusConditionTrue(oacp.Status.Conditions, controlplanev1.AvailableCondition)).To(BeTrue(),
			"conditions: %s", condSummary(oacp.Status.Conditions))
	}, e2eConfig.GetIntervals("default", "wait-control-plane-upgrade")...).Should(Succeed())
	cv := &configv1.ClusterVersion{}
	Expect(s.Workload.Client.Get(ctx, client.ObjectKey{Name: "version"}, cv)).To(Succeed())
	Expect(cv.Spec.DesiredUpdate).NotTo(BeNil(), "the control plane asked the cluster-version operator for the release")
	Expect(cv.Spec.DesiredUpdate.Version).To(Equal(ocp))
	Expect(cv.Status.History).NotTo(BeEmpty())
	Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
	Expect(cv.Status.History[0].Version).To(Equal(ocp))
	Expect(machineNames(c, namespace, name, true)).To(Equal(cpMachines), "OpenShift upgrades the control plane in place: no control-plane Machine is replaced")

	By("Waiting for the topology to roll the workers to " + k8s)
	mds := framework.GetMachineDeploymentsByCluster(ctx, framework.GetMachineDeploymentsByClusterInput{
		Lister: c, ClusterName: name, Namespace: namespace,
	})
	Expect(mds).To(HaveLen(1))
	framework.WaitForMachineDeploymentMachinesToBeUpgraded(ctx, framework.WaitForMachineDeploymentMachinesToBeUpgradedInput{
		Lister: c, Cluster: cluster, MachineCount: workers, KubernetesUpgradeVersion: k8s, MachineDeployment: *mds[0],
	}, e2eConfig.GetIntervals("default", "wait-machine-upgrade")...)
	Eventually(func(g Gomega) {
		md := &clusterv1.MachineDeployment{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(mds[0]), md)).To(Succeed())
		g.Expect(md.Spec.Template.Spec.Version).To(Equal(k8s))
		g.Expect(md.Status.Replicas).To(HaveValue(BeEquivalentTo(workers)), "the old workers are gone")
		g.Expect(md.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(workers)))
		g.Expect(md.Status.AvailableReplicas).To(HaveValue(BeEquivalentTo(workers)))
	}, e2eConfig.GetIntervals("default", "wait-machine-upgrade")...).Should(Succeed())
	// Every Machine again has its server and its Node, and the recorded
	// OpenStack resources are the upgraded cluster's (one server per Machine:
	// the old workers' servers are deleted).
	s.PostMachinesProvisioned(proxy, namespace, name, len(cpMachines)+workers)

	By("Checking that the Cluster is Available on the new release")
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, key, cluster)).To(Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.AvailableCondition)).To(BeTrue(),
			"Cluster conditions: %s", condSummary(cluster.Status.Conditions))
	}, e2eConfig.GetIntervals("default", "wait-cluster")...).Should(Succeed())
}

// machineNames are the names of the cluster's control-plane Machines
// (controlPlane) or of its other Machines, sorted.
func machineNames(c client.Client, namespace, cluster string, controlPlane bool) []string {
	list := &clusterv1.MachineList{}
	Expect(c.List(suiteCtx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster})).To(Succeed())
	var names []string
	for _, m := range list.Items {
		if _, isCP := m.Labels[clusterv1.MachineControlPlaneLabel]; isCP == controlPlane {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return names
}
