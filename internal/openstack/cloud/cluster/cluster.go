// Package cluster creates and deletes a cluster's OpenStack
// infrastructure: network, subnet, router, security groups, API endpoint
// (load balancer or floating IP) and failure domains. Like
// internal/openstack/cloud/server it is plain Go: a scope, a spec and the known
// status in; the updated status, or a *scope.Progress while OpenStack is
// working, out. Names are deterministic and every resource is adopted by
// name before anything is created, so a lost status (clusterctl move, a
// crash) never duplicates or leaks anything.
package cluster

import (
	"fmt"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
)

// Request is one cluster.
type Request struct {
	Namespace string
	Name      string
	Spec      *infrav1.OpenStackClusterSpec
}

// Names of what is created for a cluster. They follow CAPO's so that
// clusters moved from CAPO are adopted.

// ResourceName is the name of the cluster's network, subnet, router and
// (with a suffix) load balancer.
func (r Request) ResourceName() string {
	return fmt.Sprintf("k8s-clusterapi-cluster-%s-%s", r.Namespace, r.Name)
}

// LoadBalancerName is the API load balancer's name.
func (r Request) LoadBalancerName() string { return r.ResourceName() + "-kubeapi" }

// SecurityGroupName is the name of a managed security group.
func (r Request) SecurityGroupName(role infrav1.ManagedSecurityGroupName) string {
	return fmt.Sprintf("k8s-cluster-%s-%s-secgroup-%s", r.Namespace, r.Name, role)
}

// APIFloatingIPDescription identifies the API floating IP (floating IPs
// have no name; Neutron filters on description).
func (r Request) APIFloatingIPDescription() string {
	return fmt.Sprintf("API endpoint of cluster %s/%s (ocp-capi)", r.Namespace, r.Name)
}

// BastionFloatingIPDescription identifies the bastion's floating IP.
func (r Request) BastionFloatingIPDescription() string {
	return fmt.Sprintf("bastion of cluster %s/%s (ocp-capi)", r.Namespace, r.Name)
}

// CAPODescription is the description CAPO v0.14 gives what it makes for
// the cluster, floating IPs included.
func (r Request) CAPODescription() string {
	return fmt.Sprintf("Created by cluster-api-provider-openstack cluster %s-%s", r.Namespace, r.Name)
}

// APIPort is the API server port.
func (r Request) APIPort() int {
	if a := r.Spec.APIServer; a != nil && a.Port != nil && *a.Port != 0 {
		return *a.Port
	}
	return 6443
}

// externalEnabled reports whether the cluster may use an external network.
func (r Request) externalEnabled() bool {
	return r.Spec.EnableExternalNetwork == nil || *r.Spec.EnableExternalNetwork
}

// managed reports whether the provider creates the network.
func (r Request) managed() bool { return len(r.Spec.ManagedSubnets) > 0 }

// Scope is the clients and logger of one identity.
type Scope = scope.Scope

func terminal(reason, format string, args ...any) error {
	return &clients.Error{Class: clients.Terminal, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

func notFound(what string, filter any) error {
	return terminal(clients.ReasonNotFound, "no %s matches %s", what, describe(filter))
}

// ignoreNotFound treats a 404 on delete as done.
func ignoreNotFound(err error, what string) error {
	if err == nil {
		return nil
	}
	if e := clients.Classify(err, what); e.Reason != clients.ReasonNotFound {
		return e
	}
	return nil
}
