package capi2mapi

import "github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"

// Infra is the cluster context of a conversion.
type Infra struct {
	// MAPINamespace is where the MAPI objects live. Required.
	MAPINamespace string
	// APIVIPs and IngressVIPs are the OpenStack API and ingress VIPs, which
	// MAPO allows as address pairs on the ports it makes from networks; a
	// port that carries exactly them is written as a network.
	APIVIPs, IngressVIPs []string
	// UserManagedLoadBalancer: MAPO sets no address pairs on network ports.
	UserManagedLoadBalancer bool
	// ClusterName is the CAPI Cluster's name; its label is not copied.
	ClusterName string
}

// InfraOf is the context of the reverse conversion for the cluster whose
// forward context is in, with the MAPI objects in mapiNamespace.
func InfraOf(in mapi2capi.Infra, mapiNamespace string) Infra {
	return Infra{MAPINamespace: mapiNamespace, APIVIPs: in.APIVIPs, IngressVIPs: in.IngressVIPs,
		UserManagedLoadBalancer: in.UserManagedLoadBalancer, ClusterName: in.ClusterName}
}
