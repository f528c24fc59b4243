package cluster

import (
	"context"
	"slices"
	"sort"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// FailureDomains are the cloud's available compute zones, sorted; those
// listed in controlPlaneAvailabilityZones (all, when it is empty) may hold
// control-plane machines. One call; the caller asks once.
func FailureDomains(ctx context.Context, s Scope, req Request) ([]clusterv1.FailureDomain, error) {
	if ptr.Deref(req.Spec.ControlPlaneOmitAvailabilityZone, false) {
		return nil, nil
	}
	zones, err := s.Clients.Compute.ListAvailabilityZones(ctx)
	if err != nil {
		return nil, clients.Classify(err, "listing availability zones")
	}
	var out []clusterv1.FailureDomain
	for _, z := range zones {
		if !z.ZoneState.Available {
			continue
		}
		cp := len(req.Spec.ControlPlaneAvailabilityZones) == 0 || slices.Contains(req.Spec.ControlPlaneAvailabilityZones, z.ZoneName)
		out = append(out, clusterv1.FailureDomain{Name: z.ZoneName, ControlPlane: ptr.To(cp)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
