package openstackserver

import (
	"context"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

func conditionReason(oss *infrav1alpha1.OpenStackServer, t string) string {
	if c := capiconditions.Get(oss, t); c != nil {
		return c.Reason
	}
	return ""
}

func isTrue(oss *infrav1alpha1.OpenStackServer, t string) bool {
	c := capiconditions.Get(oss, t)
	return c != nil && c.Status == metav1.ConditionTrue
}

// knownFloatingIP is the floating IP this provider put on the server's
// first port: the pool's once associated, or, for a cluster's bastion, the
// one its OpenStackCluster records for this instance ("" if none).
func (r *Reconciler) knownFloatingIP(ctx context.Context, s *serverScope) string {
	oss := s.oss
	if s.floatingIP != "" && associated(oss, s.floatingIP) {
		return s.floatingIP
	}
	owner := metav1.GetControllerOf(oss)
	if owner == nil || owner.Kind != "OpenStackCluster" || !strings.HasPrefix(owner.APIVersion, infrav1.GroupVersion.Group+"/") {
		return ""
	}
	osc := &infrav1.OpenStackCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: oss.Namespace, Name: owner.Name}, osc); err != nil || osc.UID != owner.UID {
		return ""
	}
	b := osc.Status.Bastion
	if b == nil || b.Name != oss.Name || b.ID == "" || b.ID != ptr.Deref(oss.Status.InstanceID, "") {
		return ""
	}
	return b.FloatingIP
}

// withFloatingIP adds ip as an external address when Nova's list lacks it.
// Nova learns of an association only when Neutron notifies it, so its list
// lags, and nothing else would read the server again before the next
// resync, whose status write would then be the only one of a settled
// server (docs/reliability.md, Steady-state audit). Nova lists a floating
// IP right after the fixed IP of its port; the first fixed IP is the first
// port's when the server has one network.
func withFloatingIP(addrs []clusterv1.MachineAddress, ip string) []clusterv1.MachineAddress {
	if ip == "" || len(addrs) == 0 || slices.ContainsFunc(addrs, func(a clusterv1.MachineAddress) bool { return a.Address == ip }) {
		return addrs
	}
	at := slices.IndexFunc(addrs, func(a clusterv1.MachineAddress) bool { return a.Type == clusterv1.MachineInternalIP })
	out := slices.Clone(addrs)
	return slices.Insert(out, at+1, clusterv1.MachineAddress{Type: clusterv1.MachineExternalIP, Address: ip})
}
