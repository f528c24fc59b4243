package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// OpenStackClusterFinalizer keeps the cluster until its OpenStack resources
// are gone.
const OpenStackClusterFinalizer = "openstackcluster.infrastructure.cluster.x-k8s.io"

// OpenStackClusterSpec is the cluster's network, API endpoint, security
// groups and bastion.
//
// +kubebuilder:validation:XValidation:rule="has(self.enableExternalNetwork) && !self.enableExternalNetwork ? !has(self.bastion) || !has(self.bastion.floatingIP) : true",message="bastion floating IP cannot be set when enableExternalNetwork is false"
// +kubebuilder:validation:XValidation:rule="has(self.enableExternalNetwork) && !self.enableExternalNetwork ? has(self.apiServer) && has(self.apiServer.enableFloatingIP) && !self.apiServer.enableFloatingIP : true",message="apiServer.enableFloatingIP cannot be true when enableExternalNetwork is false"
type OpenStackClusterSpec struct {
	// managedSubnets makes the provider create a network, this subnet and
	// a router. At most one.
	// +kubebuilder:validation:MaxItems=1
	// +listType=atomic
	// +optional
	ManagedSubnets []SubnetSpec `json:"managedSubnets,omitempty"`

	// managedNetwork tunes the network the provider creates.
	// +optional
	ManagedNetwork *ManagedNetwork `json:"managedNetwork,omitempty"`

	// managedRouter sets the fixed external addresses of the router the
	// provider creates (with managedSubnets).
	// +optional
	ManagedRouter *ManagedRouter `json:"managedRouter,omitempty"`

	// router is an existing router to use.
	// +optional
	Router *RouterParam `json:"router,omitempty"`

	// network is an existing network to use.
	// +optional
	Network *NetworkParam `json:"network,omitempty"`

	// subnets of the existing network to use; all of the network's when
	// unset.
	// +listType=atomic
	// +optional
	Subnets []SubnetParam `json:"subnets,omitempty"`

	// primarySubnet is the subnet of machines' default port when several
	// are used.
	// +optional
	PrimarySubnet *SubnetParam `json:"primarySubnet,omitempty"`

	// externalNetwork gives the router its gateway and floating IPs their
	// network; when unset, the single external network of the cloud.
	// +optional
	ExternalNetwork *NetworkParam `json:"externalNetwork,omitempty"`

	// enableExternalNetwork: false means no external network at all (no
	// router gateway, no floating IPs). Default true.
	// +optional
	EnableExternalNetwork *bool `json:"enableExternalNetwork,omitempty"`

	// apiServer configures the API endpoint: a load balancer, a floating
	// IP or a fixed IP.
	// +optional
	APIServer *APIServer `json:"apiServer,omitempty"`

	// managedSecurityGroups makes the provider create security groups for
	// control-plane nodes, workers and the bastion.
	// +optional
	ManagedSecurityGroups *ManagedSecurityGroups `json:"managedSecurityGroups,omitempty"`

	// tags are put on every resource the provider creates.
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`

	// controlPlaneEndpoint is the API endpoint. Set by the controller
	// unless the user gives it.
	// +optional
	ControlPlaneEndpoint *clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty"`

	// controlPlaneAvailabilityZones limits the zones control-plane
	// machines are placed in; all of the cloud's when unset.
	// +listType=set
	// +optional
	ControlPlaneAvailabilityZones []string `json:"controlPlaneAvailabilityZones,omitempty"`

	// controlPlaneOmitAvailabilityZone: report no failure domains, so
	// control-plane machines get no availability zone.
	// +optional
	ControlPlaneOmitAvailabilityZone *bool `json:"controlPlaneOmitAvailabilityZone,omitempty"`

	// bastion is an optional jump host with a floating IP.
	// +optional
	Bastion *Bastion `json:"bastion,omitempty"`

	// identityRef holds the credentials.
	// +required
	IdentityRef OpenStackIdentityReference `json:"identityRef"`
}

// SubnetSpec is a subnet the provider creates.
type SubnetSpec struct {
	// cidr of the subnet.
	// +kubebuilder:validation:MinLength=1
	// +required
	CIDR string `json:"cidr"`

	// dnsNameservers of the subnet.
	// +listType=atomic
	// +optional
	DNSNameservers []string `json:"dnsNameservers,omitempty"`

	// allocationPools of the subnet.
	// +listType=atomic
	// +optional
	AllocationPools []AllocationPool `json:"allocationPools,omitempty"`
}

// AllocationPool is a range of addresses Neutron allocates from.
type AllocationPool struct {
	// +kubebuilder:validation:MinLength=1
	// +required
	Start string `json:"start"`
	// +kubebuilder:validation:MinLength=1
	// +required
	End string `json:"end"`
}

// ManagedNetwork tunes the network the provider creates.
// +kubebuilder:validation:XValidation:rule="self == null || has(self.mtu) || has(self.enablePortSecurity)",message="managedNetwork must set mtu or enablePortSecurity"
type ManagedNetwork struct {
	// mtu of the network.
	// +optional
	MTU *int32 `json:"mtu,omitempty"`
	// enablePortSecurity of the network.
	// +optional
	EnablePortSecurity *bool `json:"enablePortSecurity,omitempty"`
}

// ManagedRouter is the router the provider creates.
// +kubebuilder:validation:XValidation:rule="has(self.externalIPs)",message="managedRouter must set externalIPs"
type ManagedRouter struct {
	// externalIPs of the router's gateway.
	// +listType=atomic
	// +optional
	ExternalIPs []ExternalRouterIPParam `json:"externalIPs,omitempty"`
}

// ExternalRouterIPParam is an external address of the router.
type ExternalRouterIPParam struct {
	// fixedIP is the address; Neutron picks one of the subnet when unset.
	// +optional
	FixedIP string `json:"fixedIP,omitempty"`
	// subnet of the external network the address is on.
	// +required
	Subnet SubnetParam `json:"subnet"`
}

// RouterParam selects an existing router by ID or filter.
// +kubebuilder:validation:MinProperties:=1
// +kubebuilder:validation:MaxProperties:=1
type RouterParam struct {
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`
	// +optional
	Filter *RouterFilter `json:"filter,omitempty"`
}

// RouterFilter is a query for a router.
// +kubebuilder:validation:MinProperties:=1
type RouterFilter struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	FilterByNeutronTags `json:",inline"`
}

// APIServer configures the API endpoint.
type APIServer struct {
	// enableFloatingIP: reach the API through a floating IP (on the load
	// balancer's VIP, or on the first control-plane machine without one).
	// Default true when there is an external network.
	// +optional
	EnableFloatingIP *bool `json:"enableFloatingIP,omitempty"`

	// floatingIP is a specific floating IP to use.
	// +optional
	FloatingIP *string `json:"floatingIP,omitempty"`

	// fixedIP is the VIP of the load balancer, or the endpoint when there
	// is neither a load balancer nor a floating IP.
	// +optional
	FixedIP *string `json:"fixedIP,omitempty"`

	// port of the API. Default 6443.
	// +kubebuilder:validation:Minimum:=0
	// +kubebuilder:validation:Maximum:=65535
	// +optional
	Port *int `json:"port,omitempty"`

	// managedLoadBalancer: an Octavia load balancer in front of the
	// control plane.
	// +optional
	ManagedLoadBalancer *ManagedLoadBalancer `json:"managedLoadBalancer,omitempty"`
}

// ManagedLoadBalancer is the API load balancer.
type ManagedLoadBalancer struct {
	// enabled: default true. The load balancer is used when Octavia is in
	// the cloud's catalog.
	// +kubebuilder:default:=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// additionalPorts are forwarded to the control plane too.
	// +listType=set
	// +optional
	AdditionalPorts []int32 `json:"additionalPorts,omitempty"`

	// allowedCIDRs may reach the load balancer.
	// +listType=set
	// +optional
	AllowedCIDRs []string `json:"allowedCIDRs,omitempty"`

	// provider is the Octavia provider (amphora by default).
	// +optional
	Provider *string `json:"provider,omitempty"`

	// network the VIP is on; the cluster network when unset.
	// +optional
	Network *NetworkParam `json:"network,omitempty"`

	// subnets of the VIP.
	// +listType=atomic
	// +optional
	Subnets []SubnetParam `json:"subnets,omitempty"`

	// availabilityZone is the Octavia availability zone of the load
	// balancer (`openstack loadbalancer availabilityzone list`).
	// +optional
	AvailabilityZone *string `json:"availabilityZone,omitempty"`

	// flavor is the name of the Octavia flavor of the load balancer
	// (`openstack loadbalancer flavor list`); Octavia's default when unset.
	// +optional
	Flavor *string `json:"flavor,omitempty"`

	// monitor of the pools.
	// +optional
	Monitor *APIServerLoadBalancerMonitor `json:"monitor,omitempty"`
}

// APIServerLoadBalancerMonitor is the health monitor of the API pools.
type APIServerLoadBalancerMonitor struct {
	// +kubebuilder:validation:Minimum=0
	// +optional
	Delay int32 `json:"delay,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Timeout int32 `json:"timeout,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRetries int32 `json:"maxRetries,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxRetriesDown int32 `json:"maxRetriesDown,omitempty"`
}

// ManagedSecurityGroupName names one of the managed security groups.
// +kubebuilder:validation:Enum=bastion;controlplane;worker
type ManagedSecurityGroupName string

// Managed security groups.
const (
	ManagedSecurityGroupBastion      ManagedSecurityGroupName = "bastion"
	ManagedSecurityGroupControlPlane ManagedSecurityGroupName = "controlplane"
	ManagedSecurityGroupWorker       ManagedSecurityGroupName = "worker"
)

// SecurityGroupRuleSpec is one rule of a managed security group.
type SecurityGroupRuleSpec struct {
	// name identifies the rule in the list.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
	// +optional
	Description *string `json:"description,omitempty"`
	// +kubebuilder:validation:Enum=ingress;egress
	// +required
	Direction string `json:"direction"`
	// +kubebuilder:validation:Enum=IPv4;IPv6
	// +optional
	EtherType *string `json:"etherType,omitempty"`
	// +optional
	PortRangeMin *int32 `json:"portRangeMin,omitempty"`
	// +optional
	PortRangeMax *int32 `json:"portRangeMax,omitempty"`
	// +optional
	Protocol *string `json:"protocol,omitempty"`
	// +optional
	RemoteGroupID *string `json:"remoteGroupID,omitempty"`
	// +optional
	RemoteIPPrefix *string `json:"remoteIPPrefix,omitempty"`
	// +listType=set
	// +optional
	RemoteManagedGroups []ManagedSecurityGroupName `json:"remoteManagedGroups,omitempty"`
}

// ManagedSecurityGroups are the security groups the provider creates.
type ManagedSecurityGroups struct {
	// clusterNodesSecurityGroupRules go on both control-plane and worker
	// groups.
	// +listType=map
	// +listMapKey=name
	// +optional
	ClusterNodesSecurityGroupRules []SecurityGroupRuleSpec `json:"clusterNodesSecurityGroupRules,omitempty"`
	// +listType=map
	// +listMapKey=name
	// +optional
	ControlPlaneNodesSecurityGroupRules []SecurityGroupRuleSpec `json:"controlPlaneNodesSecurityGroupRules,omitempty"`
	// +listType=map
	// +listMapKey=name
	// +optional
	WorkerNodesSecurityGroupRules []SecurityGroupRuleSpec `json:"workerNodesSecurityGroupRules,omitempty"`
	// allowAllInClusterTraffic allows all traffic between cluster nodes.
	// +kubebuilder:default:=false
	// +optional
	AllowAllInClusterTraffic bool `json:"allowAllInClusterTraffic"`
}

// Bastion is a jump host of the cluster, built as an OpenStackServer.
// +kubebuilder:validation:XValidation:rule="!self.enabled || has(self.spec)",message="you need to specify the bastion spec if the bastion is enabled"
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.floatingIPPoolRef)",message="the bastion's floating IP is bastion.floatingIP; bastion.spec.floatingIPPoolRef is not supported"
type Bastion struct {
	// enabled: default true. Disabling deletes the bastion.
	// +kubebuilder:default:=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// spec of the bastion server. A change replaces the bastion.
	// +optional
	Spec *OpenStackMachineSpec `json:"spec,omitempty"`

	// availabilityZone of the bastion.
	// +optional
	AvailabilityZone *string `json:"availabilityZone,omitempty"`

	// floatingIP is a specific floating IP for the bastion; it is kept
	// when the bastion goes away.
	// +kubebuilder:validation:Format:=ipv4
	// +optional
	FloatingIP *string `json:"floatingIP,omitempty"`
}

// OpenStackClusterInitializationStatus is the CAPI v1beta2 contract's
// initialization block.
type OpenStackClusterInitializationStatus struct {
	// provisioned is true once the network and endpoint exist; never reset.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// NetworkStatus is a network the cluster uses.
type NetworkStatus struct {
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +required
	ID string `json:"id"`
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// Subnet is a subnet the cluster uses.
type Subnet struct {
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +required
	ID string `json:"id"`
	// +kubebuilder:validation:MinLength=1
	// +required
	CIDR string `json:"cidr"`
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// NetworkStatusWithSubnets is a network and its subnets.
type NetworkStatusWithSubnets struct {
	NetworkStatus `json:",inline"`
	// +listType=atomic
	// +optional
	Subnets []Subnet `json:"subnets,omitempty"`
}

// Router is the cluster's router.
type Router struct {
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +required
	ID string `json:"id"`
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
	// ips of the router's gateway.
	// +listType=set
	// +optional
	IPs []string `json:"ips,omitempty"`
}

// LoadBalancer is the API load balancer.
type LoadBalancer struct {
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +required
	ID string `json:"id"`
	// ip is the address clients use (the floating IP if any, else the
	// VIP).
	// +kubebuilder:validation:MinLength=1
	// +required
	IP string `json:"ip"`
	// internalIP is the VIP.
	// +kubebuilder:validation:MinLength=1
	// +required
	InternalIP string `json:"internalIP"`
	// +listType=set
	// +optional
	AllowedCIDRs []string `json:"allowedCIDRs,omitempty"`
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
	// +optional
	LoadBalancerNetwork *NetworkStatusWithSubnets `json:"loadBalancerNetwork,omitempty"`
}

// SecurityGroupStatus is a managed security group.
type SecurityGroupStatus struct {
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +required
	ID string `json:"id"`
}

// BastionStatus is the bastion as observed.
type BastionStatus struct {
	// id of the Nova server.
	// +optional
	ID string `json:"id,omitempty"`
	// name of the server (and of its OpenStackServer).
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	SSHKeyName string `json:"sshKeyName,omitempty"`
	// state is the Nova server status.
	// +optional
	State InstanceState `json:"state,omitempty"`
	// ip is the bastion's fixed address.
	// +optional
	IP string `json:"ip,omitempty"`
	// floatingIP is the bastion's floating address.
	// +optional
	FloatingIP string `json:"floatingIP,omitempty"`
}

// OpenStackClusterStatus is the observed state of the cluster's
// infrastructure.
type OpenStackClusterStatus struct {
	// initialization per the CAPI v1beta2 contract.
	// +optional
	Initialization *OpenStackClusterInitializationStatus `json:"initialization,omitempty"`

	// network of the cluster.
	// +optional
	Network *NetworkStatusWithSubnets `json:"network,omitempty"`

	// externalNetwork used for the router gateway and floating IPs.
	// +optional
	ExternalNetwork *NetworkStatus `json:"externalNetwork,omitempty"`

	// router of the cluster.
	// +optional
	Router *Router `json:"router,omitempty"`

	// apiServerManagedLoadBalancer is the API load balancer.
	// +optional
	APIServerLoadBalancer *LoadBalancer `json:"apiServerManagedLoadBalancer,omitempty"`

	// failureDomains are the cloud's compute availability zones.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +optional
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`

	// +optional
	ControlPlaneSecurityGroup *SecurityGroupStatus `json:"controlPlaneSecurityGroup,omitempty"`
	// +optional
	WorkerSecurityGroup *SecurityGroupStatus `json:"workerSecurityGroup,omitempty"`
	// +optional
	BastionSecurityGroup *SecurityGroupStatus `json:"bastionSecurityGroup,omitempty"`

	// bastion as observed.
	// +optional
	Bastion *BastionStatus `json:"bastion,omitempty"`

	// conditions: Ready (summary), NetworkReady, RouterReady,
	// SecurityGroupsReady, APIEndpointReady, BastionReady, Deleting, Paused.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OpenStackCluster is the infrastructure of a CAPI Cluster on OpenStack.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openstackclusters,scope=Namespaced,categories=cluster-api,shortName=osc
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Ready condition"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Ready condition reason"
// +kubebuilder:printcolumn:name="Network",type="string",JSONPath=".status.network.id",description="Cluster network"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="API endpoint"
// +kubebuilder:printcolumn:name="Bastion IP",type="string",JSONPath=".status.bastion.floatingIP",description="Bastion floating IP"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenStackCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackClusterSpec `json:"spec"`
	// +optional
	Status OpenStackClusterStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions.
func (c *OpenStackCluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *OpenStackCluster) SetConditions(cs []metav1.Condition) { c.Status.Conditions = cs }

// OpenStackClusterList is a list of OpenStackClusters.
//
// +kubebuilder:object:root=true
type OpenStackClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackCluster `json:"items"`
}

// OpenStackClusterTemplateResource is the template of an OpenStackCluster.
type OpenStackClusterTemplateResource struct {
	// metadata given to clusters made from this template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +required
	Spec OpenStackClusterSpec `json:"spec"`
}

// OpenStackClusterTemplateSpec is the desired state of a template.
type OpenStackClusterTemplateSpec struct {
	// +required
	Template OpenStackClusterTemplateResource `json:"template"`
}

// OpenStackClusterTemplate is a template of OpenStackClusters, for
// ClusterClass.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openstackclustertemplates,scope=Namespaced,categories=cluster-api,shortName=osct
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
type OpenStackClusterTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackClusterTemplateSpec `json:"spec"`
}

// OpenStackClusterTemplateList is a list of OpenStackClusterTemplates.
//
// +kubebuilder:object:root=true
type OpenStackClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackClusterTemplate `json:"items"`
}

func init() {
	registerTypes(&OpenStackCluster{}, &OpenStackClusterList{}, &OpenStackClusterTemplate{}, &OpenStackClusterTemplateList{})
}
