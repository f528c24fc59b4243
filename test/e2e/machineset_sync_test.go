//go:build e2e

package e2e

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
)

// MachineSet sync: the add-on, installed by clusterctl on the management
// cluster, mirrors a Machine API MachineSet of an OpenShift-on-OpenStack
// cluster (as the installer writes it) as a paused CAPI MachineSet with an
// OpenStackMachineTemplate; a providerSpec change makes a new template and
// drops the old one; deleting the MAPI MachineSet removes both. The
// management cluster plays the OpenShift cluster: it has the MAPI and
// config.openshift.io CRDs, the Infrastructure "cluster" and the two
// namespaces; nothing here needs OpenStack (no Machine is created: the
// mirror is paused, MAPI owns the machines).
var _ = Describe("MachineSet sync (add-on)", func() {
	It("mirrors a MAPI OpenStack MachineSet, rolls the template on a change, and cleans up on deletion", func() {
		ctx := suiteCtx
		c := mgmt.GetClient()
		const mapiNS, capiNS = "openshift-machine-api", "openshift-cluster-api"
		infra := "ocp-" + util.RandomString(5)
		msName := infra + "-worker-0"

		By("Playing the OpenShift cluster: namespaces and the Infrastructure \"cluster\" (OpenStack, infrastructure name " + infra + ")")
		for _, ns := range []string{mapiNS, capiNS} {
			Expect(client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		}
		inf := &configv1.Infrastructure{}
		err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, inf)
		if apierrors.IsNotFound(err) {
			inf = &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
			Expect(c.Create(ctx, inf)).To(Succeed())
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(setInfrastructure(ctx, c, inf, infra)).To(Succeed())

		By("Creating the MAPI MachineSet " + mapiNS + "/" + msName + " as the OpenShift installer writes it")
		Expect(mgmt.CreateOrUpdate(ctx, []byte(mapiMachineSet(infra, msName, "m1.large")))).To(Succeed())

		var firstTemplate string
		By("Waiting for the paused CAPI mirror and its OpenStackMachineTemplate, and Synchronized=True on the MAPI MachineSet")
		Eventually(func(g Gomega) {
			g.Expect(mapiSynchronized(ctx, c, mapiNS, msName)).To(Equal("True"))
			mirror := &clusterv1.MachineSet{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: capiNS, Name: msName}, mirror)).To(Succeed())
			g.Expect(mirror.Annotations).To(HaveKey(clusterv1.PausedAnnotation), "the mirror must stay paused while MAPI is authoritative")
			g.Expect(mirror.Spec.ClusterName).To(Equal(infra))
			g.Expect(*mirror.Spec.Replicas).To(BeEquivalentTo(2))
			ref := mirror.Spec.Template.Spec.InfrastructureRef
			g.Expect(ref.Kind).To(Equal("OpenStackMachineTemplate"))
			g.Expect(ref.Name).To(HavePrefix(msName + "-"))
			tmpl := &infrav1.OpenStackMachineTemplate{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: capiNS, Name: ref.Name}, tmpl)).To(Succeed())
			spec, err := json.Marshal(tmpl.Spec)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(spec)).To(ContainSubstring(`"m1.large"`), "the template carries the providerSpec's flavor")
			g.Expect(string(spec)).To(ContainSubstring(infra+"-rhcos"), "the template carries the providerSpec's image")
			firstTemplate = ref.Name
		}, time.Minute, time.Second).Should(Succeed())

		By("Changing the flavor: a new template, the mirror points at it, the old template goes")
		Expect(mgmt.CreateOrUpdate(ctx, []byte(mapiMachineSet(infra, msName, "m1.xlarge")))).To(Succeed())
		Eventually(func(g Gomega) {
			mirror := &clusterv1.MachineSet{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: capiNS, Name: msName}, mirror)).To(Succeed())
			ref := mirror.Spec.Template.Spec.InfrastructureRef
			g.Expect(ref.Name).NotTo(Equal(firstTemplate))
			tmpl := &infrav1.OpenStackMachineTemplate{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: capiNS, Name: ref.Name}, tmpl)).To(Succeed())
			spec, err := json.Marshal(tmpl.Spec)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(spec)).To(ContainSubstring(`"m1.xlarge"`))
			err = c.Get(ctx, client.ObjectKey{Namespace: capiNS, Name: firstTemplate}, &infrav1.OpenStackMachineTemplate{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the old template %s is still there (%v)", firstTemplate, err)
			g.Expect(mapiSynchronized(ctx, c, mapiNS, msName)).To(Equal("True"))
		}, time.Minute, time.Second).Should(Succeed())

		By("Deleting the MAPI MachineSet: the mirror and its templates go, and the finalizer is released")
		ms := &unstructured.Unstructured{}
		ms.SetAPIVersion("machine.openshift.io/v1beta1")
		ms.SetKind("MachineSet")
		ms.SetNamespace(mapiNS)
		ms.SetName(msName)
		Expect(c.Delete(ctx, ms)).To(Succeed())
		Eventually(func(g Gomega) {
			err := c.Get(ctx, client.ObjectKeyFromObject(ms), ms.DeepCopy())
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "MAPI MachineSet still there (%v)", err)
			err = c.Get(ctx, client.ObjectKey{Namespace: capiNS, Name: msName}, &clusterv1.MachineSet{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "CAPI mirror still there (%v)", err)
			tmpls := &infrav1.OpenStackMachineTemplateList{}
			g.Expect(c.List(ctx, tmpls, client.InNamespace(capiNS))).To(Succeed())
			for _, t := range tmpls.Items {
				g.Expect(strings.HasPrefix(t.Name, msName+"-")).To(BeFalse(), "template %s left", t.Name)
			}
		}, time.Minute, time.Second).Should(Succeed())
	})
})

// setInfrastructure writes the Infrastructure status an OpenShift-on-
// OpenStack cluster has.
func setInfrastructure(ctx context.Context, c client.Client, inf *configv1.Infrastructure, infraName string) error {
	base := inf.DeepCopy()
	inf.Status.InfrastructureName = infraName
	inf.Status.Platform = "OpenStack"
	inf.Status.PlatformStatus = &configv1.PlatformStatus{Type: "OpenStack"}
	inf.Status.APIServerURL = "https://api." + infraName + ".example.com:6443"
	inf.Status.APIServerInternalURL = "https://api-int." + infraName + ".example.com:6443"
	inf.Status.ControlPlaneTopology = "HighlyAvailable"
	inf.Status.InfrastructureTopology = "HighlyAvailable"
	return c.Status().Patch(ctx, inf, client.MergeFrom(base))
}

// mapiSynchronized is the status of the MAPI MachineSet's Synchronized condition.
func mapiSynchronized(ctx context.Context, c client.Client, ns, name string) string {
	ms := &unstructured.Unstructured{}
	ms.SetAPIVersion("machine.openshift.io/v1beta1")
	ms.SetKind("MachineSet")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ms); err != nil {
		return "error: " + err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(ms.Object, "status", "conditions")
	for _, cond := range conds {
		m, _ := cond.(map[string]any)
		if m["type"] == "Synchronized" {
			s, _ := m["status"].(string)
			msg, _ := m["message"].(string)
			if s != "True" {
				return s + ": " + msg
			}
			return s
		}
	}
	return "no Synchronized condition"
}

// mapiMachineSet is a worker MachineSet as the OpenShift installer writes it
// for OpenStack (IPI), with the given flavor.
func mapiMachineSet(infra, name, flavor string) string {
	return strings.NewReplacer("INFRA", infra, "NAME", name, "FLAVOR", flavor).Replace(`apiVersion: machine.openshift.io/v1beta1
kind: MachineSet
metadata:
  name: NAME
  namespace: openshift-machine-api
  labels:
    machine.openshift.io/cluster-api-cluster: INFRA
    machine.openshift.io/cluster-api-machine-role: worker
    machine.openshift.io/cluster-api-machine-type: worker
spec:
  replicas: 2
  selector:
    matchLabels:
      machine.openshift.io/cluster-api-cluster: INFRA
      machine.openshift.io/cluster-api-machineset: NAME
  template:
    metadata:
      labels:
        machine.openshift.io/cluster-api-cluster: INFRA
        machine.openshift.io/cluster-api-machine-role: worker
        machine.openshift.io/cluster-api-machine-type: worker
        machine.openshift.io/cluster-api-machineset: NAME
    spec:
      metadata: {}
      providerSpec:
        value:
          apiVersion: machine.openshift.io/v1alpha1
          kind: OpenstackProviderSpec
          cloudName: openstack
          cloudsSecret:
            name: openstack-cloud-credentials
            namespace: openshift-machine-api
          flavor: FLAVOR
          image: INFRA-rhcos
          metadata:
            creationTimestamp: null
          networks:
          - filter: {}
            subnets:
            - filter:
                name: INFRA-nodes
                tags: openshiftClusterID=INFRA
          securityGroups:
          - filter: {}
            name: INFRA-worker
          serverGroupName: INFRA-worker
          serverMetadata:
            Name: INFRA-worker
            openshiftClusterID: INFRA
          tags:
          - openshiftClusterID=INFRA
          trunk: true
          userDataSecret:
            name: worker-user-data
`)
}
