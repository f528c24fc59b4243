package controllers_test

// Error classes at the edges the fake cloud alone does not reach: a
// refusal by the API server (not OpenStack) when the machine creates its
// OpenStackServer, and a terminal OpenStack error while deleting. See
// docs/openstack/conditions.md.

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// TestServerCreateRefusedIsTransient: when the API server refuses the
// machine's OpenStackServer for a reason that passes (here a ResourceQuota
// that allows none, as an exhausted quota or an admission check would),
// InstanceReady says the create is being retried (Unknown), never that the
// spec is invalid, and the machine becomes Ready once the refusal stops.
func TestServerCreateRefusedIsTransient(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	ctx := context.Background()

	const counted = corev1.ResourceName("count/openstackservers.infrastructure.cluster.x-k8s.io")
	none := corev1.ResourceList{counted: resource.MustParse("0")}
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-servers", Namespace: e.ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: none},
	}
	e.create(quota)
	// No quota controller runs here; write the usage it would compute, so
	// the refusal is the quota's "exceeded", as on a real cluster.
	quota.Status = corev1.ResourceQuotaStatus{Hard: none, Used: none}
	g.Expect(env.Client.Status().Update(ctx, quota)).To(Succeed())

	machines := watchHistory(t, e.ns, &infrav1.OpenStackMachineList{})
	_, osm := e.machineObjects("refused", e.machineSpec(), machineOpts{})
	g.Eventually(func(g Gomega) {
		get(g, osm)
		g.Expect(cond(osm, infrav1.InstanceReadyCondition)).To(HavePrefix("Unknown/"+infrav1.InstanceCreatingReason), "InstanceReady")
		g.Expect(cond(osm, infrav1.InstanceReadyCondition)).To(ContainSubstring("exceeded quota"))
		g.Expect(cond(osm, infrav1.ReadyCondition)).To(HavePrefix("Unknown/"))
	}, wait, tick).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, quota)).To(Succeed())
	waitMachineReady(g, osm)
	g.Expect(machines.sawCondition(osm.Name, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.InvalidSpecReason)).To(BeFalse(),
		"a passing refusal was reported as an invalid spec: %v", machines.of(osm.Name))
}

// TestDeletionFailureShowsInReady: a terminal OpenStack error while
// deleting (Nova refuses the server's DELETE with 403) keeps Deleting True
// with reason DeletionFailed and the error, so the server's and the
// machine's Ready are False and say why. Deleting False would read as
// healthy in Ready (negative polarity) and hide the cause. The refused
// DELETE is not repeated by the failure's own status write; a change to
// the object retries at once, and then the deletion completes.
func TestDeletionFailureShowsInReady(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	ctx := context.Background()
	_, osm := e.machineObjects("undeletable", e.machineSpec(), machineOpts{})
	waitMachineReady(g, osm)
	oss := &infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Name: osm.Name, Namespace: e.ns}}

	e.cloud.ResetRequests()
	e.cloud.Inject(fakeopenstack.Fault{Method: "DELETE", PathPrefix: "/compute/v2.1/servers/{id}", Status: 403, Times: 1})
	g.Expect(env.Client.Delete(ctx, osm)).To(Succeed())

	g.Eventually(func(g Gomega) {
		get(g, oss)
		g.Expect(cond(oss, clusterv1.DeletingCondition)).To(HavePrefix("True/DeletionFailed"), "Deleting")
		g.Expect(cond(oss, clusterv1.DeletingCondition)).To(ContainSubstring("403"))
		g.Expect(cond(oss, infrav1.ReadyCondition)).To(HavePrefix("False/"))
		g.Expect(cond(oss, infrav1.ReadyCondition)).To(ContainSubstring("403"), "the server's Ready hides why its deletion is stuck")
	}, wait, tick).Should(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, osm)
		g.Expect(cond(osm, infrav1.InstanceReadyCondition)).To(HavePrefix("False/DeletionFailed"), "InstanceReady")
		g.Expect(cond(osm, infrav1.ReadyCondition)).To(HavePrefix("False/"))
		g.Expect(cond(osm, infrav1.ReadyCondition)).To(ContainSubstring("403"), "the machine's Ready hides why its deletion is stuck")
	}, wait, tick).Should(Succeed())
	// Parked: no second DELETE while nothing changes.
	g.Consistently(func() int { return e.cloud.Hits("DELETE", "/compute/v2.1/servers/{id}") }, 2*time.Second, tick).Should(Equal(1))
	g.Expect(e.cloud.Len(fakeopenstack.Servers)).To(Equal(1))

	// The operator fixed the permission and pokes the object: it retries.
	update(g, oss, func() { oss.Annotations = map[string]string{"retry": "1"} })
	e.deleteAndWait(osm)
	g.Expect(e.cloud.Names(fakeopenstack.Servers)).To(BeEmpty())
	g.Expect(e.cloud.Names(fakeopenstack.Ports)).To(BeEmpty())
}
