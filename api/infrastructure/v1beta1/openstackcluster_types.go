package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OpenStackClusterSpec is the cluster's network, API endpoint, security
// groups and bastion, in CAPO's v1beta1 shape.
//
// +kubebuilder:validation:XValidation:rule="has(self.disableExternalNetwork) && self.disableExternalNetwork ? !has(self.bastion) || !has(self.bastion.floatingIP) : true",message="bastion floating IP cannot be set when disableExternalNetwork is true"
// +kubebuilder:validation:XValidation:rule="has(self.disableExternalNetwork) && self.disableExternalNetwork ? has(self.disableAPIServerFloatingIP) && self.disableAPIServerFloatingIP : true",message="disableAPIServerFloatingIP cannot be false when disableExternalNetwork is true"
type OpenStackClusterSpec struct {
	// +kubebuilder:validation:MaxItems=1
	// +listType=atomic
	// +optional
	ManagedSubnets []SubnetSpec `json:"managedSubnets,omitempty"`

	// +optional
	Router *RouterParam `json:"router,omitempty"`

	// +optional
	Network *NetworkParam `json:"network,omitempty"`

	// +listType=atomic
	// +optional
	Subnets []SubnetParam `json:"subnets,omitempty"`

	// +optional
	PrimarySubnet *SubnetParam `json:"primarySubnet,omitempty"`

	// networkMTU (v1beta2: managedNetwork.mtu).
	// +optional
	NetworkMTU *int `json:"networkMTU,omitempty"`

	// externalRouterIPs (v1beta2: managedRouter.externalIPs).
	// +listType=atomic
	// +optional
	ExternalRouterIPs []ExternalRouterIPParam `json:"externalRouterIPs,omitempty"`

	// +optional
	ExternalNetwork *NetworkParam `json:"externalNetwork,omitempty"`

	// disableExternalNetwork (v1beta2: enableExternalNetwork, inverted).
	// +optional
	DisableExternalNetwork *bool `json:"disableExternalNetwork,omitempty"`

	// apiServerLoadBalancer (v1beta2: apiServer.managedLoadBalancer).
	// +optional
	APIServerLoadBalancer *APIServerLoadBalancer `json:"apiServerLoadBalancer,omitempty"`

	// disableAPIServerFloatingIP (v1beta2: apiServer.enableFloatingIP,
	// inverted).
	// +optional
	DisableAPIServerFloatingIP *bool `json:"disableAPIServerFloatingIP,omitempty"`

	// apiServerFloatingIP (v1beta2: apiServer.floatingIP).
	// +optional
	APIServerFloatingIP *string `json:"apiServerFloatingIP,omitempty"`

	// apiServerFixedIP (v1beta2: apiServer.fixedIP).
	// +optional
	APIServerFixedIP *string `json:"apiServerFixedIP,omitempty"`

	// apiServerPort (v1beta2: apiServer.port).
	// +kubebuilder:validation:Minimum:=0
	// +kubebuilder:validation:Maximum:=65535
	// +optional
	APIServerPort *int `json:"apiServerPort,omitempty"`

	// +optional
	ManagedSecurityGroups *ManagedSecurityGroups `json:"managedSecurityGroups,omitempty"`

	// disablePortSecurity (v1beta2: managedNetwork.enablePortSecurity,
	// inverted).
	// +optional
	DisablePortSecurity *bool `json:"disablePortSecurity,omitempty"`

	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`

	// +optional
	ControlPlaneEndpoint *APIEndpoint `json:"controlPlaneEndpoint,omitempty"`

	// +listType=set
	// +optional
	ControlPlaneAvailabilityZones []string `json:"controlPlaneAvailabilityZones,omitempty"`

	// +optional
	ControlPlaneOmitAvailabilityZone *bool `json:"controlPlaneOmitAvailabilityZone,omitempty"`

	// +optional
	Bastion *Bastion `json:"bastion,omitempty"`

	// +required
	IdentityRef OpenStackIdentityReference `json:"identityRef"`
}

// APIServerLoadBalancer is the API load balancer.
type APIServerLoadBalancer struct {
	// +kubebuilder:default:=true
	// +required
	Enabled *bool `json:"enabled"`

	// +listType=set
	// +optional
	AdditionalPorts []int `json:"additionalPorts,omitempty"`

	// +listType=set
	// +optional
	AllowedCIDRs []string `json:"allowedCIDRs,omitempty"`

	// +optional
	Provider *string `json:"provider,omitempty"`

	// +optional
	Network *NetworkParam `json:"network,omitempty"`

	// +listType=atomic
	// +optional
	Subnets []SubnetParam `json:"subnets,omitempty"`

	// +optional
	AvailabilityZone *string `json:"availabilityZone,omitempty"`

	// +optional
	Flavor *string `json:"flavor,omitempty"`

	// +optional
	Monitor *APIServerLoadBalancerMonitor `json:"monitor,omitempty"`
}

// APIServerLoadBalancerMonitor is the health monitor of the API pools.
type APIServerLoadBalancerMonitor struct {
	// +kubebuilder:validation:Minimum=0
	// +optional
	Delay int `json:"delay,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Timeout int `json:"timeout,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +optional
	MaxRetries int `json:"maxRetries,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	MaxRetriesDown int `json:"maxRetriesDown,omitempty"`
}

// ManagedSecurityGroupName names one of the managed security groups.
// +kubebuilder:validation:Enum=bastion;controlplane;worker
type ManagedSecurityGroupName string

// SecurityGroupRuleSpec is one rule of a managed security group.
type SecurityGroupRuleSpec struct {
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
	PortRangeMin *int `json:"portRangeMin,omitempty"`
	// +optional
	PortRangeMax *int `json:"portRangeMax,omitempty"`
	// +optional
	Protocol *string `json:"protocol,omitempty"`
	// +optional
	RemoteGroupID *string `json:"remoteGroupID,omitempty"`
	// +optional
	RemoteIPPrefix *string `json:"remoteIPPrefix,omitempty"`
	// +optional
	RemoteManagedGroups []ManagedSecurityGroupName `json:"remoteManagedGroups,omitempty"`
}

// ManagedSecurityGroups are the security groups the provider creates.
type ManagedSecurityGroups struct {
	// allNodesSecurityGroupRules (v1beta2:
	// clusterNodesSecurityGroupRules).
	// +listType=map
	// +listMapKey=name
	// +optional
	AllNodesSecurityGroupRules []SecurityGroupRuleSpec `json:"allNodesSecurityGroupRules,omitempty"`
	// +listType=map
	// +listMapKey=name
	// +optional
	ControlPlaneNodesSecurityGroupRules []SecurityGroupRuleSpec `json:"controlPlaneNodesSecurityGroupRules,omitempty"`
	// +listType=map
	// +listMapKey=name
	// +optional
	WorkerNodesSecurityGroupRules []SecurityGroupRuleSpec `json:"workerNodesSecurityGroupRules,omitempty"`
	// +kubebuilder:default:=false
	// +required
	AllowAllInClusterTraffic bool `json:"allowAllInClusterTraffic"`
}

// Bastion is a jump host of the cluster.
// +kubebuilder:validation:XValidation:rule="!self.enabled || has(self.spec)",message="you need to specify the bastion spec if the bastion is enabled"
type Bastion struct {
	// +kubebuilder:default:=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// +optional
	Spec *OpenStackMachineSpec `json:"spec,omitempty"`

	// +optional
	AvailabilityZone *string `json:"availabilityZone,omitempty"`

	// +kubebuilder:validation:Format:=ipv4
	// +optional
	FloatingIP *string `json:"floatingIP,omitempty"`
}

// ClusterInitialization is the CAPI v1beta2 contract's initialization block.
type ClusterInitialization struct {
	// +optional
	Provisioned bool `json:"provisioned,omitempty"`
}

// NetworkStatus is a network the cluster uses.
type NetworkStatus struct {
	// +required
	Name string `json:"name"`
	// +required
	ID string `json:"id"`
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// Subnet is a subnet the cluster uses.
type Subnet struct {
	// +required
	Name string `json:"name"`
	// +required
	ID string `json:"id"`
	// +required
	CIDR string `json:"cidr"`
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// NetworkStatusWithSubnets is a network and its subnets.
type NetworkStatusWithSubnets struct {
	NetworkStatus `json:",inline"`
	// +optional
	Subnets []Subnet `json:"subnets,omitempty"`
}

// Router is the cluster's router.
type Router struct {
	// +required
	Name string `json:"name"`
	// +required
	ID string `json:"id"`
	// +optional
	Tags []string `json:"tags,omitempty"`
	// +optional
	IPs []string `json:"ips,omitempty"`
}

// LoadBalancer is the API load balancer.
type LoadBalancer struct {
	// +required
	Name string `json:"name"`
	// +required
	ID string `json:"id"`
	// +required
	IP string `json:"ip"`
	// +required
	InternalIP string `json:"internalIP"`
	// +optional
	AllowedCIDRs []string `json:"allowedCIDRs,omitempty"`
	// +optional
	Tags []string `json:"tags,omitempty"`
	// +optional
	LoadBalancerNetwork *NetworkStatusWithSubnets `json:"loadBalancerNetwork,omitempty"`
}

// SecurityGroupStatus is a managed security group.
type SecurityGroupStatus struct {
	// +required
	Name string `json:"name"`
	// +required
	ID string `json:"id"`
}

// BastionStatus is the bastion as observed.
type BastionStatus struct {
	// +optional
	ID string `json:"id,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	SSHKeyName string `json:"sshKeyName,omitempty"`
	// +optional
	State InstanceState `json:"state,omitempty"`
	// +optional
	IP string `json:"ip,omitempty"`
	// +optional
	FloatingIP string `json:"floatingIP,omitempty"`
	// resolved has no v1beta2 counterpart (this provider keeps it on the
	// bastion's OpenStackServer); kept in the conversion annotation.
	// +optional
	Resolved *ResolvedMachineSpec `json:"resolved,omitempty"`
	// resources has no v1beta2 counterpart either.
	// +optional
	Resources *MachineResources `json:"resources,omitempty"`
}

// OpenStackClusterStatus is the observed state of the cluster's
// infrastructure.
type OpenStackClusterStatus struct {
	// ready is true when the Ready condition is (computed on conversion).
	// +kubebuilder:default:=false
	// +required
	Ready bool `json:"ready"`

	// +optional
	Initialization *ClusterInitialization `json:"initialization,omitempty"`

	// +optional
	Network *NetworkStatusWithSubnets `json:"network,omitempty"`

	// +optional
	ExternalNetwork *NetworkStatus `json:"externalNetwork,omitempty"`

	// +optional
	Router *Router `json:"router,omitempty"`

	// apiServerLoadBalancer (v1beta2: apiServerManagedLoadBalancer).
	// +optional
	APIServerLoadBalancer *LoadBalancer `json:"apiServerLoadBalancer,omitempty"`

	// failureDomains is a map here, a list sorted by name in v1beta2.
	// +optional
	FailureDomains FailureDomains `json:"failureDomains,omitempty"`

	// +optional
	ControlPlaneSecurityGroup *SecurityGroupStatus `json:"controlPlaneSecurityGroup,omitempty"`
	// +optional
	WorkerSecurityGroup *SecurityGroupStatus `json:"workerSecurityGroup,omitempty"`
	// +optional
	BastionSecurityGroup *SecurityGroupStatus `json:"bastionSecurityGroup,omitempty"`

	// +optional
	Bastion *BastionStatus `json:"bastion,omitempty"`

	// +optional
	FailureReason *string `json:"failureReason,omitempty"`

	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`

	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
}

// OpenStackCluster is the infrastructure of a CAPI Cluster on OpenStack,
// at CAPO's v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:resource:path=openstackclusters,scope=Namespaced,categories=cluster-api,shortName=osc
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.ready",description="Ready condition is True"
// +kubebuilder:printcolumn:name="Network",type="string",JSONPath=".status.network.id",description="Cluster network"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="API endpoint",priority=1
// +kubebuilder:printcolumn:name="Bastion IP",type="string",JSONPath=".status.bastion.floatingIP",description="Bastion floating IP"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenStackCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OpenStackClusterSpec `json:"spec,omitempty"`
	// +optional
	Status OpenStackClusterStatus `json:"status,omitempty"`
}

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
	// +required
	Spec OpenStackClusterSpec `json:"spec"`
}

// OpenStackClusterTemplateSpec is the desired state of a template.
type OpenStackClusterTemplateSpec struct {
	// +required
	Template OpenStackClusterTemplateResource `json:"template"`
}

// OpenStackClusterTemplate is a template of OpenStackClusters, at CAPO's
// v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:resource:path=openstackclustertemplates,scope=Namespaced,categories=cluster-api,shortName=osct
type OpenStackClusterTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OpenStackClusterTemplateSpec `json:"spec,omitempty"`
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
