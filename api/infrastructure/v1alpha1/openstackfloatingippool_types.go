package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

// The finalizers and tag are CAPO's, so that pools, addresses and floating
// IPs CAPO made are handled the same way after a switch.
const (
	// OpenStackFloatingIPPoolFinalizer keeps a pool until no IPAddress of it
	// is left and the floating IPs it created are deleted.
	OpenStackFloatingIPPoolFinalizer = "openstackfloatingippool.infrastructure.cluster.x-k8s.io"
	// DeleteFloatingIPFinalizer is on every IPAddress a pool hands out: the
	// pool deletes or keeps the floating IP (reclaimPolicy) before the
	// IPAddress goes.
	DeleteFloatingIPFinalizer = "openstackfloatingippool.infrastructure.cluster.x-k8s.io/delete-floating-ip"
	// IPClaimFinalizer is on the IPAddressClaim of a server with
	// floatingIPPoolRef until the server and its ports are gone.
	IPClaimFinalizer = "openstackmachine.infrastructure.cluster.x-k8s.io/ip-claim"
	// FloatingIPPoolTagPrefix + pool name tags every floating IP a pool
	// creates, so that one created but not yet recorded is found again.
	FloatingIPPoolTagPrefix = "cluster-api-provider-openstack-fip-pool-"
)

// Conditions of an OpenStackFloatingIPPool beside Ready, Deleting and
// Paused.
const (
	// FloatingIPNetworkReadyCondition: the external network new floating
	// IPs are created on is known.
	FloatingIPNetworkReadyCondition = "FloatingIPNetworkReady"
	// ClaimsFulfilledCondition: every IPAddressClaim of the pool has its
	// IPAddress.
	ClaimsFulfilledCondition = "ClaimsFulfilled"

	// MaxIPsReachedReason (ClaimsFulfilled False): claims wait because
	// maxIPs addresses are handed out (CAPO's reason).
	MaxIPsReachedReason = "MaxIPsReached"
	// WaitingForIPAddressesReason (Deleting): the pool is kept until every
	// IPAddress it handed out is released.
	WaitingForIPAddressesReason = "WaitingForIPAddresses"
)

// ReclaimPolicy says what becomes of a floating IP its machine released.
type ReclaimPolicy string

const (
	// ReclaimDelete deletes the floating IP (never a pre-allocated one).
	ReclaimDelete ReclaimPolicy = "Delete"
	// ReclaimRetain keeps it in the pool for the next claim.
	ReclaimRetain ReclaimPolicy = "Retain"
)

// OpenStackFloatingIPPoolSpec is where a pool's floating IPs come from.
type OpenStackFloatingIPPoolSpec struct {
	// preAllocatedFloatingIPs are addresses of floating IPs that exist in
	// OpenStack; they are handed out before new ones are created and are
	// never deleted by the pool.
	// +optional
	PreAllocatedFloatingIPs []string `json:"preAllocatedFloatingIPs,omitempty"`

	// maxIPs bounds the number of addresses claimed at once; unset: no
	// bound. A claim beyond it waits.
	// +optional
	MaxIPs *int `json:"maxIPs,omitempty"`

	// identityRef holds the credentials.
	// +required
	IdentityRef infrav1.OpenStackIdentityReference `json:"identityRef"`

	// floatingIPNetwork is the external network new floating IPs are
	// created on; unset: the only external network.
	// +optional
	FloatingIPNetwork *infrav1.NetworkParam `json:"floatingIPNetwork,omitempty"`

	// reclaimPolicy: Delete deletes a released floating IP, Retain keeps
	// it for the next claim.
	// +kubebuilder:validation:Enum=Retain;Delete
	// +required
	ReclaimPolicy ReclaimPolicy `json:"reclaimPolicy"`
}

// OpenStackFloatingIPPoolStatus is what the pool holds.
type OpenStackFloatingIPPoolStatus struct {
	// claimedIPs are the addresses handed out (an IPAddress exists).
	// +kubebuilder:default={}
	// +optional
	ClaimedIPs []string `json:"claimedIPs"`

	// availableIPs are the pool's addresses not handed out.
	// +kubebuilder:default={}
	// +optional
	AvailableIPs []string `json:"availableIPs"`

	// failedIPs are addresses that could not be handed out (a
	// pre-allocated one that does not exist).
	// +optional
	FailedIPs []string `json:"failedIPs,omitempty"`

	// floatingIPNetwork is the network new floating IPs are created on.
	// +optional
	FloatingIPNetwork *infrav1.NetworkStatus `json:"floatingIPNetwork,omitempty"`

	// conditions: Ready (summary), FloatingIPNetworkReady, ClaimsFulfilled,
	// Deleting and Paused.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OpenStackFloatingIPPool is an IPAM provider for CAPI's IPAddressClaim:
// it hands out OpenStack floating IPs, from its pre-allocated ones first,
// and deletes or keeps them when released.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=openstackfloatingippools,scope=Namespaced
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
type OpenStackFloatingIPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OpenStackFloatingIPPoolSpec `json:"spec,omitempty"`
	// +optional
	Status OpenStackFloatingIPPoolStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions.
func (p *OpenStackFloatingIPPool) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the conditions.
func (p *OpenStackFloatingIPPool) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// FloatingIPTag is the Neutron tag on the floating IPs the pool created.
func (p *OpenStackFloatingIPPool) FloatingIPTag() string { return FloatingIPPoolTagPrefix + p.Name }

// OpenStackFloatingIPPoolList is a list of OpenStackFloatingIPPools.
//
// +kubebuilder:object:root=true
type OpenStackFloatingIPPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackFloatingIPPool `json:"items"`
}

func init() {
	registerTypes(&OpenStackFloatingIPPool{}, &OpenStackFloatingIPPoolList{})
}
