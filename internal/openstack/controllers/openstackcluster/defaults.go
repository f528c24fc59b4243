package openstackcluster

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/internal/serverspec"
)

// Defaults are what machines (and the bastion) of the cluster inherit.
func Defaults(osc *infrav1.OpenStackCluster) *serverspec.Defaults {
	d := &serverspec.Defaults{IdentityRef: osc.Spec.IdentityRef.DeepCopy(), Tags: osc.Spec.Tags}
	if n := osc.Status.Network; n != nil {
		d.Network = &infrav1.NetworkParam{ID: ptr.To(n.ID)}
		subnets := n.Subnets
		if p := osc.Spec.PrimarySubnet; p != nil && p.ID != nil {
			d.Subnets = []infrav1.SubnetParam{{ID: ptr.To(*p.ID)}}
		} else {
			for _, sn := range subnets {
				d.Subnets = append(d.Subnets, infrav1.SubnetParam{ID: ptr.To(sn.ID)})
			}
		}
	}
	sg := func(s *infrav1.SecurityGroupStatus) []infrav1.SecurityGroupParam {
		if s == nil {
			return nil
		}
		return []infrav1.SecurityGroupParam{{ID: ptr.To(s.ID)}}
	}
	d.ControlPlaneSecurityGroups = sg(osc.Status.ControlPlaneSecurityGroup)
	d.WorkerSecurityGroups = sg(osc.Status.WorkerSecurityGroup)
	d.BastionSecurityGroups = sg(osc.Status.BastionSecurityGroup)
	return d
}

// infraCluster returns the cluster's OpenStackCluster, or nil when its
// infrastructure is something else.
func infraCluster(ctx context.Context, c client.Client, cl *clusterv1.Cluster) (*infrav1.OpenStackCluster, error) {
	ref := cl.Spec.InfrastructureRef
	if ref.Kind != "OpenStackCluster" || ref.APIGroup != infrav1.GroupVersion.Group || ref.Name == "" {
		return nil, nil
	}
	osc := &infrav1.OpenStackCluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cl.Namespace, Name: ref.Name}, osc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return osc, nil
}

// MachineDefaults is the OpenStackMachine controller's ClusterDefaults:
// what a machine inherits from its OpenStackCluster.
func MachineDefaults(c client.Client) func(context.Context, *clusterv1.Cluster) (*serverspec.Defaults, error) {
	return func(ctx context.Context, cl *clusterv1.Cluster) (*serverspec.Defaults, error) {
		osc, err := infraCluster(ctx, c, cl)
		if err != nil || osc == nil {
			return nil, err
		}
		return Defaults(osc), nil
	}
}
