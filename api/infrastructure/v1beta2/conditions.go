package v1beta2

// Condition types and reasons of the OpenStack provider. Every condition a
// controller owns is set on its first visit (Unknown when nothing is known
// yet) and always carries a reason from this list. Ready is a summary.
// The reasons are documented for users in docs/openstack/conditions.md.

// Condition types.
const (
	// ReadyCondition summarizes the other conditions.
	ReadyCondition = "Ready"

	// ReferencesResolvedCondition: image, flavor, networks, subnets,
	// security groups and server group were resolved to IDs.
	ReferencesResolvedCondition = "ReferencesResolved"

	// PortsReadyCondition: every port (and trunk) of the server exists.
	PortsReadyCondition = "PortsReady"

	// VolumesReadyCondition: volumes that must exist before the server
	// boots exist and are available.
	VolumesReadyCondition = "VolumesReady"

	// InstanceReadyCondition: the Nova server is ACTIVE.
	InstanceReadyCondition = "InstanceReady"

	// CapacityResolvedCondition (OpenStackMachineTemplate): the flavor was
	// read and status.capacity filled.
	CapacityResolvedCondition = "CapacityResolved"

	// NetworkReadyCondition (OpenStackCluster): the network and subnets
	// exist (created or found).
	NetworkReadyCondition = "NetworkReady"
	// RouterReadyCondition (OpenStackCluster): the router and its gateway
	// and interface exist, or no router is needed.
	RouterReadyCondition = "RouterReady"
	// SecurityGroupsReadyCondition (OpenStackCluster): the managed security
	// groups and their rules exist, or none are managed.
	SecurityGroupsReadyCondition = "SecurityGroupsReady"
	// APIEndpointReadyCondition (OpenStackCluster): the API endpoint (load
	// balancer, floating IP, fixed IP or the user's) is set.
	APIEndpointReadyCondition = "APIEndpointReady"
	// BastionReadyCondition (OpenStackCluster): the bastion is ACTIVE with
	// its floating IP, or disabled.
	BastionReadyCondition = "BastionReady"
	// APIServerIngressReadyCondition (OpenStackMachine, control plane): the
	// machine is a member of the API load balancer, or holds the API
	// floating IP.
	APIServerIngressReadyCondition = "APIServerIngressReady"
	// FloatingAddressFromPoolReadyCondition (OpenStackServer): the floating
	// IP of spec.floatingIPPoolRef is on the server's first port, or no
	// pool is named (CAPO's condition).
	FloatingAddressFromPoolReadyCondition = "FloatingAddressFromPoolReady"
)

// Reasons of FloatingAddressFromPoolReady beyond the shared ones.
const (
	// WaitingForIPAddressReason: the server's IPAddressClaim has no
	// IPAddress yet (the pool is exhausted, paused or not there).
	WaitingForIPAddressReason = "WaitingForIPAddress"
)

// Reasons of the OpenStackCluster conditions.
const (
	// NotRequiredReason: the cluster needs no such resource (no router for
	// an existing network without one, no managed security groups, no
	// bastion).
	NotRequiredReason = "NotRequired"
	// LoadBalancerPendingReason: Octavia is still working on the load
	// balancer.
	LoadBalancerPendingReason = "LoadBalancerPending"
	// WaitingForMachinesReason: deletion waits for the cluster's machines.
	WaitingForMachinesReason = "WaitingForMachines"
	// BastionDeletingReason: the bastion is going away (disabled, replaced
	// or the cluster is deleting).
	BastionDeletingReason = "BastionDeleting"
)

// Reasons shared by several conditions.
const (
	// ReadyReason: the condition is True.
	ReadyReason = "Ready"
	// NotReadyReason: a summary is False.
	NotReadyReason = "NotReady"
	// ReadyUnknownReason: a summary is Unknown.
	ReadyUnknownReason = "ReadyUnknown"
	// PendingReason: nothing is known yet; first visit.
	PendingReason = "Pending"
	// WaitingForDependenciesReason: an earlier step has not finished.
	WaitingForDependenciesReason = "WaitingForDependencies"
	// DeletingReason: the resource is being deleted.
	DeletingReason = "Deleting"
	// DeletionFailedReason (on Deleting, which stays True, and on the
	// machine's InstanceReady): a deletion step failed with a terminal
	// error (forbidden, rejected); the message names the step and the
	// error. Retried every five minutes and whenever the object changes.
	DeletionFailedReason = "DeletionFailed"

	// Transient: the controller retries with backoff and never gives up.

	// OpenStackUnavailableReason: a 5xx answer, a timeout or a dropped
	// connection.
	OpenStackUnavailableReason = "OpenStackUnavailable"
	// RateLimitedReason: a 429 answer; the controller waits Retry-After.
	RateLimitedReason = "RateLimited"
	// AuthenticationFailedReason: the credentials were refused or the
	// identity Secret is missing or malformed. Retried, since the Secret or
	// Keystone may be fixed.
	AuthenticationFailedReason = "AuthenticationFailed"

	// Terminal: the spec or the cloud must change; the controller does not
	// hot-loop (it retries slowly, and at once when the object changes).

	// InvalidSpecReason: the spec cannot be acted on (rejected by OpenStack
	// with 400, or inconsistent).
	InvalidSpecReason = "InvalidSpec"
	// NotFoundReason: a filter or ID matched nothing.
	NotFoundReason = "NotFound"
	// AmbiguousReason: a filter matched more than one resource.
	AmbiguousReason = "Ambiguous"
	// QuotaExceededReason: a quota of the project is exhausted.
	QuotaExceededReason = "QuotaExceeded"
	// ForbiddenReason: the credentials lack a permission (403).
	ForbiddenReason = "Forbidden"
	// IdentityAccessDeniedReason: identityRef names an
	// OpenStackClusterIdentity whose namespaceSelector does not select the
	// object's namespace; its Secret was not read. Label the namespace or
	// change the selector (looked at again every five minutes, or when the
	// object changes).
	IdentityAccessDeniedReason = "IdentityAccessDenied"
)

// Reasons of InstanceReady.
const (
	// InstanceBuildingReason: Nova is building the server.
	InstanceBuildingReason = "InstanceBuilding"
	// InstanceErrorReason: the server is in ERROR; the message carries
	// Nova's fault. Not terminal: the server is replaced per policy.
	InstanceErrorReason = "InstanceError"
	// InstanceNotActiveReason: the server is SHUTOFF, STOPPED or similar.
	InstanceNotActiveReason = "InstanceNotActive"
	// InstanceDeletedReason: the server disappeared from OpenStack after it
	// was provisioned.
	InstanceDeletedReason = "InstanceDeleted"
	// InstanceCreatingReason: the create request is on its way.
	InstanceCreatingReason = "InstanceCreating"
)

// Reasons of ReferencesResolved beyond the shared ones.
const (
	// ImageNotReadyReason: image.imageRef names an ORC Image that cannot be
	// used yet (ORC is not installed, the Image does not exist or is not
	// Available); the message says which. Looked at again every 15 s (every
	// minute while ORC is missing).
	ImageNotReadyReason = "ImageNotReady"
	// DependencyFailedReason: the ORC Image named by image.imageRef failed
	// for good (ORC's InvalidConfiguration or UnrecoverableError); the
	// message carries ORC's. Fix the Image.
	DependencyFailedReason = "DependencyFailed"
)

// Reasons of the OpenStackMachine's InstanceReady beyond the server's.
const (
	// WaitingForClusterInfrastructureReason: the Cluster's infrastructure
	// is not provisioned yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	// WaitingForBootstrapDataReason: the Machine has no bootstrap data yet.
	WaitingForBootstrapDataReason = "WaitingForBootstrapData"
	// WaitingForServerReason: the OpenStackServer has not reported yet.
	WaitingForServerReason = "WaitingForServer"
)

// Reasons of APIServerIngressReady.
const (
	// WaitingForAPILoadBalancerReason: the cluster's API load balancer is
	// being built or rebuilt (its APIEndpointReady is not True); the
	// machine joins it once it is ready. A rebuilt load balancer has new
	// pools, so membership is checked again for it.
	WaitingForAPILoadBalancerReason = "WaitingForAPILoadBalancer"
)
