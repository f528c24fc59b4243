package packaging

import (
	"context"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/core/webhooks/admission"
	"sigs.k8s.io/cluster-api/feature"
)

// TestTemplatesGenerateTopology: `clusterctl generate cluster --flavor
// topology` against the release repository gives the Cluster of the
// ClusterClass and, since no cluster is reachable, the ClusterClass with
// its templates from clusterclass-openstack-agent.yaml; everything in the
// target namespace, the counts and variables as asked. CAPI's own
// ClusterClass and Cluster validation (its admission webhooks' code, run in
// this process) accepts the class and the Cluster's variables, and refuses
// variables that break the class's schemas. TestTemplatesDryRun applies the
// same output to the API server.
func TestTemplatesGenerateTopology(t *testing.T) {
	g := NewWithT(t)
	objs := parseObjects(t, generateCluster(t, "topology", "team-a",
		"--control-plane-machine-count", "3", "--worker-machine-count", "2"))
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.kind())
		g.Expect(o.namespace()).To(Equal("team-a"), o.key())
		if o.kind() == "Secret" {
			g.Expect(o.label("clusterctl.cluster.x-k8s.io/move")).To(Equal("true"), o.key())
		}
	}
	g.Expect(kinds).To(ConsistOf("ClusterClass", "OpenStackClusterTemplate", "OpenshiftAssistedControlPlaneTemplate",
		"OpenStackMachineTemplate", "OpenStackMachineTemplate", "OpenshiftAssistedConfigTemplate", "Cluster", "Secret", "Secret"))

	cc := &clusterv1.ClusterClass{}
	convert(t, findObj(t, objs, "ClusterClass"), cc)
	cluster := &clusterv1.Cluster{}
	convert(t, findObj(t, objs, "Cluster"), cluster)
	g.Expect(cc.Name).To(Equal("openstack-agent"))
	g.Expect(cc.Spec.KubernetesVersions).To(BeEmpty(), "CAPI would walk the control plane through versions openshiftVersion cannot follow")
	g.Expect(cluster.Spec.Topology.ClassRef.Name).To(Equal(cc.Name))
	g.Expect(cluster.Spec.Topology.Version).To(Equal("v1.32.0"))
	g.Expect(cluster.Spec.Topology.ControlPlane.Replicas).To(HaveValue(BeEquivalentTo(3)))
	g.Expect(cluster.Spec.Topology.Workers.MachineDeployments).To(HaveLen(1))
	g.Expect(cluster.Spec.Topology.Workers.MachineDeployments[0].Replicas).To(HaveValue(BeEquivalentTo(2)))
	vars := map[string]string{}
	for _, v := range cluster.Spec.Topology.Variables {
		vars[v.Name] = string(v.Value.Raw)
	}
	g.Expect(vars).To(HaveKeyWithValue("openshiftVersion", `"4.19.0"`))
	g.Expect(vars).To(HaveKeyWithValue("baseDomain", `"example.com"`))
	g.Expect(vars).To(HaveKeyWithValue("dnsNameservers", `["10.0.0.53","10.0.0.54"]`))

	// CAPI's webhooks refuse ClusterClasses and topologies without the
	// feature gate, as its manager does.
	g.Expect(feature.MutableGates.Set("ClusterTopology=true")).To(Succeed())
	ctx := context.Background()
	_, err := (&admission.ClusterClass{}).ValidateCreate(ctx, cc)
	g.Expect(err).NotTo(HaveOccurred(), "CAPI's ClusterClass validation")
	g.Expect(admission.ValidateClusterForClusterClass(cluster, cc)).To(BeEmpty())

	// The Cluster webhook validates variables against the ClusterClass's
	// status.variables, which CAPI's ClusterClass controller copies from
	// spec.variables for inline ones (TestClusterClassFile in
	// controlplane/webhooks has the real controller do it).
	reconciled := cc.DeepCopy()
	for _, v := range cc.Spec.Variables {
		reconciled.Status.Variables = append(reconciled.Status.Variables, clusterv1.ClusterClassStatusVariable{
			Name: v.Name, DefinitionsConflict: ptr.To(false),
			Definitions: []clusterv1.ClusterClassStatusVariableDefinition{{
				From: clusterv1.VariableDefinitionFromInline, Required: v.Required, Schema: v.Schema}},
		})
	}
	validate := func(c *clusterv1.Cluster) string {
		errs := (&admission.Cluster{}).DefaultAndValidateVariables(ctx, c, nil, reconciled)
		return errs.ToAggregate().Error()
	}
	g.Expect((&admission.Cluster{}).DefaultAndValidateVariables(ctx, cluster.DeepCopy(), nil, reconciled)).To(BeEmpty())
	for name, bad := range map[string]string{
		"openshiftVersion": `"4.19"`, "baseDomain": `"Example_com"`, "dnsNameservers": `[]`,
		"sshAuthorizedKey": `"not a key"`, "nodeCIDR": `"10.6.0.0"`,
	} {
		c := cluster.DeepCopy()
		for i := range c.Spec.Topology.Variables {
			if c.Spec.Topology.Variables[i].Name == name {
				c.Spec.Topology.Variables[i].Value.Raw = []byte(bad)
			}
		}
		g.Expect(validate(c)).To(ContainSubstring(name), "%s: %s is accepted", name, bad)
	}
	// Required variables without a value are refused; optional ones get
	// the class's defaults (those of the openstack-agent flavor).
	required := []string{"openshiftVersion", "baseDomain", "sshAuthorizedKey", "dnsNameservers"}
	c := cluster.DeepCopy()
	c.Spec.Topology.Variables = nil
	msg := validate(c)
	for _, name := range required {
		g.Expect(msg).To(ContainSubstring(name), "required variable %s", name)
	}
	c = cluster.DeepCopy()
	c.Spec.Topology.Variables = nil
	for _, v := range cluster.Spec.Topology.Variables {
		if slices.Contains(required, v.Name) {
			c.Spec.Topology.Variables = append(c.Spec.Topology.Variables, v)
		}
	}
	g.Expect((&admission.Cluster{}).DefaultAndValidateVariables(ctx, c, nil, reconciled)).To(BeEmpty())
	defaulted := map[string]string{}
	for _, v := range c.Spec.Topology.Variables {
		defaulted[v.Name] = string(v.Value.Raw)
	}
	g.Expect(defaulted).To(Equal(map[string]string{
		"openshiftVersion": `"4.19.0"`, "baseDomain": `"example.com"`, "dnsNameservers": `["10.0.0.53","10.0.0.54"]`,
		"sshAuthorizedKey": vars["sshAuthorizedKey"], "openstackCloud": `"openstack"`, "nodeCIDR": `"10.6.0.0/24"`,
		"externalNetworkName": `"public"`, "imageName": `"rhcos"`, "controlPlaneFlavor": `"m1.xlarge"`,
		"workerFlavor": `"m1.large"`,
	}))
}
