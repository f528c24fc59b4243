package mapi2capi

import (
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
)

// Infra is the cluster context of a conversion.
type Infra struct {
	// ClusterName is the CAPI Cluster's name: the OpenShift infrastructure
	// name. Required.
	ClusterName string
	// Namespace is where the CAPI objects live. Required.
	Namespace string
	// Platform picks the provider when the providerSpec has no kind.
	Platform configv1.PlatformType
	// APIVIPs and IngressVIPs are the OpenStack API and ingress VIPs. MAPO
	// allows them as address pairs on the ports it makes from networks.
	APIVIPs, IngressVIPs []string
	// UserManagedLoadBalancer: the cluster's load balancer is the user's,
	// and MAPO sets no allowed address pairs at all.
	UserManagedLoadBalancer bool
}

// InfraFrom reads the cluster context from the Infrastructure object
// "cluster" (which may be nil). clusterName, when set, overrides its
// infrastructure name.
func InfraFrom(infra *configv1.Infrastructure, clusterName, namespace string) Infra {
	out := Infra{ClusterName: clusterName, Namespace: namespace}
	if infra == nil {
		return out
	}
	if out.ClusterName == "" {
		out.ClusterName = infra.Status.InfrastructureName
	}
	out.Platform = infra.Status.Platform
	if ps := infra.Status.PlatformStatus; ps != nil {
		if ps.Type != "" {
			out.Platform = ps.Type
		}
		if os := ps.OpenStack; os != nil {
			out.APIVIPs = append([]string(nil), os.APIServerInternalIPs...)
			out.IngressVIPs = append([]string(nil), os.IngressIPs...)
			out.UserManagedLoadBalancer = os.LoadBalancer != nil && os.LoadBalancer.Type == configv1.LoadBalancerTypeUserManaged
		}
	}
	return out
}
