// Package openstack is the Cluster API infrastructure provider for
// OpenStack (the infrastructure-manager), meant as a drop-in for CAPO's
// users with fewer cloud calls.
//
// CAPO's v1beta1 of the cluster and machine kinds is served too
// (api/infrastructure/v1beta1): the conversion webhook, registered with the
// validating ones, converts it to v1beta2, the storage version and the one
// every controller uses.
//
// An OpenStackCluster (api/infrastructure/v1beta2) gets its network,
// subnets, router, security groups, API load balancer (or fixed IP) and
// bastion; an OpenStackMachine gets an OpenStackServer
// (api/infrastructure/v1alpha1), which owns the ports, trunks, volumes and
// the Nova server. Every OpenStack resource has a deterministic name and is
// adopted by name before anything is created; a resource that vanishes out
// of band is recreated (if ours) or reported.
//
// Layout: controllers/<kind> are the four reconcilers (glue) and
// controllers/identity turns an identityRef into clients; cloud/ is plain
// Go over the OpenStack APIs, with no Kubernetes client (clients: one
// narrow interface per service, error classes, rate gate, metrics;
// cluster and server: the creation and deletion steps; scope: what a step
// takes and returns), and is also what pkg/openstack/instance exposes to
// other modules; internal/serverspec is the pure machine-spec to
// server-spec conversion (a reconcile pass is a list of named phases over a
// scope, run by internal/skeleton, and writes the status once through
// skeleton.Status, both shared with the other providers);
// webhooks/ validates the API; config/ is the
// kustomize tree. setup.go wires it for cmd/infrastructure-manager and
// registers the OpenStack request metrics.
// docs/openstack/ is the user documentation.
package openstack
