/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlatformType is the kind of infrastructure a cluster runs on.
// +kubebuilder:validation:Enum="";AWS;Azure;BareMetal;GCP;Libvirt;OpenStack;None;VSphere;oVirt;IBMCloud;KubeVirt;EquinixMetal;PowerVS;AlibabaCloud;Nutanix;External
type PlatformType string

// The platform types this project acts on.
const (
	OpenStackPlatformType PlatformType = "OpenStack"
	BareMetalPlatformType PlatformType = "BareMetal"
	NonePlatformType      PlatformType = "None"
	ExternalPlatformType  PlatformType = "External"
)

// TopologyMode is how many replicas a cluster runs its components with.
type TopologyMode string

// The values of TopologyMode.
const (
	HighlyAvailableTopologyMode TopologyMode = "HighlyAvailable"
	HighlyAvailableArbiterMode  TopologyMode = "HighlyAvailableArbiter"
	SingleReplicaTopologyMode   TopologyMode = "SingleReplica"
	DualReplicaTopologyMode     TopologyMode = "DualReplica"
	ExternalTopologyMode        TopologyMode = "External"
)

// PlatformSpec is the user's platform configuration; only the discriminator
// is modelled. Type has no omitempty upstream.
type PlatformSpec struct {
	// +optional
	Type PlatformType `json:"type"`
}

// InfrastructureSpec is the desired infrastructure configuration.
type InfrastructureSpec struct {
	// +optional
	PlatformSpec PlatformSpec `json:"platformSpec,omitempty"`
}

// PlatformStatus is the observed platform: the discriminator and, of the
// per-platform statuses, only OpenStack's. Type has no omitempty upstream.
type PlatformStatus struct {
	// +optional
	Type PlatformType `json:"type"`

	// OpenStack is set on the OpenStack platform.
	// +optional
	OpenStack *OpenStackPlatformStatus `json:"openstack,omitempty"`
}

// PlatformLoadBalancerType says who runs the API and ingress load balancer.
// +kubebuilder:validation:Enum=OpenShiftManagedDefault;UserManaged
type PlatformLoadBalancerType string

// The values of PlatformLoadBalancerType.
const (
	LoadBalancerTypeOpenShiftManagedDefault PlatformLoadBalancerType = "OpenShiftManagedDefault"
	LoadBalancerTypeUserManaged             PlatformLoadBalancerType = "UserManaged"
)

// OpenStackPlatformLoadBalancer is the load balancer of an OpenStack cluster.
type OpenStackPlatformLoadBalancer struct {
	// +optional
	// +kubebuilder:default=OpenShiftManagedDefault
	Type PlatformLoadBalancerType `json:"type,omitempty"`
}

// OpenStackPlatformStatus is the subset of the OpenStack platform status the
// MachineSet sync reads: the API and ingress VIPs, which MAPO adds as allowed
// address pairs to the ports of a machine's networks, and the load balancer
// type (UserManaged turns that off). Upstream writes both IP lists even when
// empty.
type OpenStackPlatformStatus struct {
	// APIServerInternalIPs are the API VIPs (two in dual stack).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	APIServerInternalIPs []string `json:"apiServerInternalIPs"`

	// IngressIPs are the ingress VIPs (two in dual stack).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	IngressIPs []string `json:"ingressIPs"`

	// +optional
	LoadBalancer *OpenStackPlatformLoadBalancer `json:"loadBalancer,omitempty"`
}

// InfrastructureStatus is the observed infrastructure. Upstream writes
// infrastructureName, apiServerURL, apiServerInternalURI and
// controlPlaneTopology even when empty.
type InfrastructureStatus struct {
	// InfrastructureName is the cluster's unique infrastructure ID, used to
	// name and tag cloud resources.
	// +optional
	InfrastructureName string `json:"infrastructureName"`

	// Platform is deprecated upstream in favour of PlatformStatus.Type.
	// +optional
	Platform PlatformType `json:"platform,omitempty"`

	// +optional
	PlatformStatus *PlatformStatus `json:"platformStatus,omitempty"`

	// +optional
	APIServerURL string `json:"apiServerURL"`

	// APIServerInternalURL is spelled apiServerInternalURI on the wire.
	// +optional
	APIServerInternalURL string `json:"apiServerInternalURI"`

	// +optional
	// +kubebuilder:default=HighlyAvailable
	// +kubebuilder:validation:Enum=HighlyAvailable;HighlyAvailableArbiter;SingleReplica;External
	ControlPlaneTopology TopologyMode `json:"controlPlaneTopology"`

	// +optional
	// +kubebuilder:default=HighlyAvailable
	// +kubebuilder:validation:Enum=HighlyAvailable;SingleReplica
	InfrastructureTopology TopologyMode `json:"infrastructureTopology,omitempty"`
}

// Infrastructure is the cluster-wide infrastructure configuration; a
// cluster has one, named "cluster".
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=infrastructures,scope=Cluster
// +kubebuilder:subresource:status
type Infrastructure struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec InfrastructureSpec `json:"spec"`
	// +optional
	Status InfrastructureStatus `json:"status"`
}

// InfrastructureList is a list of Infrastructures.
// +kubebuilder:object:root=true
type InfrastructureList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Infrastructure `json:"items"`
}
