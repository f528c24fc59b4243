package v1beta1

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

// Conversion between v1beta1 (CAPO's) and v1beta2 (the hub). The mapping
// follows CAPO's own (docs/openstack/v1beta1.md has the table):
//
//   - OpenStackCluster: apiServerFloatingIP, apiServerFixedIP,
//     apiServerPort, disableAPIServerFloatingIP (inverted) and
//     apiServerLoadBalancer become spec.apiServer; disableExternalNetwork
//     becomes enableExternalNetwork (inverted); networkMTU and
//     disablePortSecurity (inverted) become managedNetwork;
//     externalRouterIPs becomes managedRouter.externalIPs;
//     managedSecurityGroups.allNodesSecurityGroupRules becomes
//     clusterNodesSecurityGroupRules; status.apiServerLoadBalancer becomes
//     status.apiServerManagedLoadBalancer; status.failureDomains, a map,
//     becomes a list sorted by name.
//   - Machine specs (OpenStackMachine, OpenStackMachineTemplate, the
//     bastion): flavor and flavorID become flavor.filter.name and flavor.id
//     (flavorID wins); ports[].disablePortSecurity becomes
//     ports[].enablePortSecurity (inverted).
//   - An absent apiServerLoadBalancer is no load balancer in CAPO's
//     v1beta1, and becomes managedLoadBalancer.enabled: false (absent in
//     v1beta2 means one when Octavia is in the catalog).
//   - Conditions are converted in place: v1beta1's severity is dropped and
//     observedGeneration set to the object's generation; an empty reason
//     becomes NoReasonReported. Going back, status.ready is true when the
//     Ready condition is.
//   - v1beta1's failureReason, failureMessage and the machine's and
//     bastion's status.resolved and status.resources have no v1beta2
//     field; v1beta2's template metadata and the machine's
//     status.apiServerLoadBalancerID have no v1beta1 field.
//
// What the other version cannot hold is kept in the annotation
// cluster.x-k8s.io/conversion-data (see stash.go), so that a round trip in
// either direction gives back what was written.

// NoReasonReported is the reason a v1beta1 condition without one gets in
// v1beta2, where a reason is required.
const NoReasonReported = "NoReasonReported"

var (
	_ conversion.Convertible = &OpenStackCluster{}
	_ conversion.Convertible = &OpenStackClusterTemplate{}
	_ conversion.Convertible = &OpenStackMachine{}
	_ conversion.Convertible = &OpenStackMachineTemplate{}
)

// ConvertTo converts this OpenStackCluster to the hub version (v1beta2).
func (src *OpenStackCluster) ConvertTo(dstRaw conversion.Hub) error {
	return convertWithStash(src, dstRaw.(*infrav1.OpenStackCluster), clusterUp, clusterDown)
}

// ConvertFrom converts from the hub version (v1beta2) to this version.
func (dst *OpenStackCluster) ConvertFrom(srcRaw conversion.Hub) error {
	return convertWithStash(srcRaw.(*infrav1.OpenStackCluster), dst, clusterDown, clusterUp)
}

// ConvertTo converts this OpenStackClusterTemplate to the hub version.
func (src *OpenStackClusterTemplate) ConvertTo(dstRaw conversion.Hub) error {
	return convertWithStash(src, dstRaw.(*infrav1.OpenStackClusterTemplate), clusterTemplateUp, clusterTemplateDown)
}

// ConvertFrom converts from the hub version to this version.
func (dst *OpenStackClusterTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	return convertWithStash(srcRaw.(*infrav1.OpenStackClusterTemplate), dst, clusterTemplateDown, clusterTemplateUp)
}

// ConvertTo converts this OpenStackMachine to the hub version.
func (src *OpenStackMachine) ConvertTo(dstRaw conversion.Hub) error {
	return convertWithStash(src, dstRaw.(*infrav1.OpenStackMachine), machineUp, machineDown)
}

// ConvertFrom converts from the hub version to this version.
func (dst *OpenStackMachine) ConvertFrom(srcRaw conversion.Hub) error {
	return convertWithStash(srcRaw.(*infrav1.OpenStackMachine), dst, machineDown, machineUp)
}

// ConvertTo converts this OpenStackMachineTemplate to the hub version.
func (src *OpenStackMachineTemplate) ConvertTo(dstRaw conversion.Hub) error {
	return convertWithStash(src, dstRaw.(*infrav1.OpenStackMachineTemplate), machineTemplateUp, machineTemplateDown)
}

// ConvertFrom converts from the hub version to this version.
func (dst *OpenStackMachineTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	return convertWithStash(srcRaw.(*infrav1.OpenStackMachineTemplate), dst, machineTemplateDown, machineTemplateUp)
}

// --- the four kinds, without the annotation --------------------------------

func clusterUp(src *OpenStackCluster, dst *infrav1.OpenStackCluster) error {
	*dst = infrav1.OpenStackCluster{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	if err := clusterSpecUp(&src.Spec, &dst.Spec); err != nil {
		return err
	}
	return clusterStatusUp(&src.Status, &dst.Status, src.Generation)
}

func clusterDown(src *infrav1.OpenStackCluster, dst *OpenStackCluster) error {
	*dst = OpenStackCluster{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	if err := clusterSpecDown(&src.Spec, &dst.Spec); err != nil {
		return err
	}
	// An absent managedLoadBalancer is one when Octavia is in the catalog,
	// which v1beta1 cannot say; v1beta1 gets what it came to: enabled when
	// there is a load balancer. The annotation keeps the absence.
	if (src.Spec.APIServer == nil || src.Spec.APIServer.ManagedLoadBalancer == nil) && src.Status.APIServerLoadBalancer != nil {
		dst.Spec.APIServerLoadBalancer = &APIServerLoadBalancer{Enabled: ptr.To(true)}
	}
	return clusterStatusDown(&src.Status, &dst.Status)
}

func clusterTemplateUp(src *OpenStackClusterTemplate, dst *infrav1.OpenStackClusterTemplate) error {
	*dst = infrav1.OpenStackClusterTemplate{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	return clusterSpecUp(&src.Spec.Template.Spec, &dst.Spec.Template.Spec)
}

func clusterTemplateDown(src *infrav1.OpenStackClusterTemplate, dst *OpenStackClusterTemplate) error {
	*dst = OpenStackClusterTemplate{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	return clusterSpecDown(&src.Spec.Template.Spec, &dst.Spec.Template.Spec)
}

func machineUp(src *OpenStackMachine, dst *infrav1.OpenStackMachine) error {
	*dst = infrav1.OpenStackMachine{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	if err := machineSpecUp(&src.Spec, &dst.Spec); err != nil {
		return err
	}
	s, d := &src.Status, &dst.Status
	if err := copyByName(d, s, "OpenStackMachineStatus.ready", "OpenStackMachineStatus.resolved",
		"OpenStackMachineStatus.resources", "OpenStackMachineStatus.failureReason",
		"OpenStackMachineStatus.failureMessage", "OpenStackMachineStatus.conditions"); err != nil {
		return err
	}
	d.Conditions = conditionsUp(s.Conditions, src.Generation)
	return nil
}

func machineDown(src *infrav1.OpenStackMachine, dst *OpenStackMachine) error {
	*dst = OpenStackMachine{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	if err := machineSpecDown(&src.Spec, &dst.Spec); err != nil {
		return err
	}
	s, d := &src.Status, &dst.Status
	if err := copyByName(d, s, "OpenStackMachineStatus.apiServerLoadBalancerID", "OpenStackMachineStatus.conditions"); err != nil {
		return err
	}
	d.Conditions = conditionsDown(s.Conditions)
	d.Ready = readyFrom(s.Conditions)
	return nil
}

func machineTemplateUp(src *OpenStackMachineTemplate, dst *infrav1.OpenStackMachineTemplate) error {
	*dst = infrav1.OpenStackMachineTemplate{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	if err := machineSpecUp(&src.Spec.Template.Spec, &dst.Spec.Template.Spec); err != nil {
		return err
	}
	s, d := &src.Status, &dst.Status
	if err := copyByName(d, s, "OpenStackMachineTemplateStatus.conditions"); err != nil {
		return err
	}
	d.Conditions = conditionsUp(s.Conditions, src.Generation)
	return nil
}

func machineTemplateDown(src *infrav1.OpenStackMachineTemplate, dst *OpenStackMachineTemplate) error {
	*dst = OpenStackMachineTemplate{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	if err := machineSpecDown(&src.Spec.Template.Spec, &dst.Spec.Template.Spec); err != nil {
		return err
	}
	s, d := &src.Status, &dst.Status
	if err := copyByName(d, s, "OpenStackMachineTemplateStatus.conditions"); err != nil {
		return err
	}
	d.Conditions = conditionsDown(s.Conditions)
	return nil
}

// --- machine specs ---------------------------------------------------------

func machineSpecUp(src *OpenStackMachineSpec, dst *infrav1.OpenStackMachineSpec) error {
	if err := copyByName(dst, src, "OpenStackMachineSpec.flavor", "OpenStackMachineSpec.flavorID",
		"ResolvedPortSpecFields.disablePortSecurity"); err != nil {
		return err
	}
	switch {
	case src.FlavorID != nil:
		dst.Flavor = infrav1.FlavorParam{ID: ptr.To(*src.FlavorID)}
	case src.Flavor != nil:
		dst.Flavor = infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To(*src.Flavor)}}
	}
	for i := range src.Ports {
		dst.Ports[i].EnablePortSecurity = not(src.Ports[i].DisablePortSecurity)
	}
	return nil
}

func machineSpecDown(src *infrav1.OpenStackMachineSpec, dst *OpenStackMachineSpec) error {
	if err := copyByName(dst, src, "OpenStackMachineSpec.flavor", "ResolvedPortSpecFields.enablePortSecurity"); err != nil {
		return err
	}
	switch {
	case src.Flavor.ID != nil:
		dst.FlavorID = ptr.To(*src.Flavor.ID)
	case src.Flavor.Filter != nil && src.Flavor.Filter.Name != nil:
		dst.Flavor = ptr.To(*src.Flavor.Filter.Name)
	}
	for i := range src.Ports {
		dst.Ports[i].DisablePortSecurity = not(src.Ports[i].EnablePortSecurity)
	}
	return nil
}

// --- cluster spec ----------------------------------------------------------

func clusterSpecUp(src *OpenStackClusterSpec, dst *infrav1.OpenStackClusterSpec) error {
	if err := copyByName(dst, src,
		"OpenStackClusterSpec.networkMTU", "OpenStackClusterSpec.disablePortSecurity",
		"OpenStackClusterSpec.externalRouterIPs", "OpenStackClusterSpec.disableExternalNetwork",
		"OpenStackClusterSpec.apiServerLoadBalancer", "OpenStackClusterSpec.disableAPIServerFloatingIP",
		"OpenStackClusterSpec.apiServerFloatingIP", "OpenStackClusterSpec.apiServerFixedIP",
		"OpenStackClusterSpec.apiServerPort", "OpenStackClusterSpec.managedSecurityGroups",
		"OpenStackClusterSpec.bastion"); err != nil {
		return err
	}
	if src.NetworkMTU != nil || src.DisablePortSecurity != nil {
		dst.ManagedNetwork = &infrav1.ManagedNetwork{EnablePortSecurity: not(src.DisablePortSecurity)}
		if src.NetworkMTU != nil {
			dst.ManagedNetwork.MTU = ptr.To(int32(*src.NetworkMTU)) //nolint:gosec // a wrong MTU is kept in the annotation
		}
	}
	if src.ExternalRouterIPs != nil {
		dst.ManagedRouter = &infrav1.ManagedRouter{}
		if err := copyByName(&dst.ManagedRouter.ExternalIPs, &src.ExternalRouterIPs); err != nil {
			return err
		}
	}
	dst.EnableExternalNetwork = not(src.DisableExternalNetwork)
	dst.APIServer = &infrav1.APIServer{
		EnableFloatingIP: not(src.DisableAPIServerFloatingIP),
		FloatingIP:       copyString(src.APIServerFloatingIP),
		FixedIP:          copyString(src.APIServerFixedIP),
	}
	if src.APIServerPort != nil {
		dst.APIServer.Port = ptr.To(*src.APIServerPort)
	}
	if src.APIServerLoadBalancer != nil {
		dst.APIServer.ManagedLoadBalancer = &infrav1.ManagedLoadBalancer{}
		if err := copyByName(dst.APIServer.ManagedLoadBalancer, src.APIServerLoadBalancer); err != nil {
			return err
		}
	} else {
		// CAPO: no apiServerLoadBalancer, no load balancer. In v1beta2
		// an absent managedLoadBalancer means one whenever Octavia is in
		// the catalog, so say it.
		dst.APIServer.ManagedLoadBalancer = &infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}
	}
	if src.ManagedSecurityGroups != nil {
		dst.ManagedSecurityGroups = &infrav1.ManagedSecurityGroups{}
		if err := copyByName(dst.ManagedSecurityGroups, src.ManagedSecurityGroups, "ManagedSecurityGroups.allNodesSecurityGroupRules"); err != nil {
			return err
		}
		if err := copyByName(&dst.ManagedSecurityGroups.ClusterNodesSecurityGroupRules, &src.ManagedSecurityGroups.AllNodesSecurityGroupRules); err != nil {
			return err
		}
	}
	if src.Bastion != nil {
		dst.Bastion = &infrav1.Bastion{}
		if err := copyByName(dst.Bastion, src.Bastion, "Bastion.spec"); err != nil {
			return err
		}
		if src.Bastion.Spec != nil {
			dst.Bastion.Spec = &infrav1.OpenStackMachineSpec{}
			if err := machineSpecUp(src.Bastion.Spec, dst.Bastion.Spec); err != nil {
				return err
			}
		}
	}
	return nil
}

func clusterSpecDown(src *infrav1.OpenStackClusterSpec, dst *OpenStackClusterSpec) error {
	if err := copyByName(dst, src,
		"OpenStackClusterSpec.managedNetwork", "OpenStackClusterSpec.managedRouter",
		"OpenStackClusterSpec.enableExternalNetwork", "OpenStackClusterSpec.apiServer",
		"OpenStackClusterSpec.managedSecurityGroups", "OpenStackClusterSpec.bastion"); err != nil {
		return err
	}
	if n := src.ManagedNetwork; n != nil {
		if n.MTU != nil {
			dst.NetworkMTU = ptr.To(int(*n.MTU))
		}
		dst.DisablePortSecurity = not(n.EnablePortSecurity)
	}
	if src.ManagedRouter != nil {
		if err := copyByName(&dst.ExternalRouterIPs, &src.ManagedRouter.ExternalIPs); err != nil {
			return err
		}
	}
	dst.DisableExternalNetwork = not(src.EnableExternalNetwork)
	if a := src.APIServer; a != nil {
		dst.DisableAPIServerFloatingIP = not(a.EnableFloatingIP)
		dst.APIServerFloatingIP = copyString(a.FloatingIP)
		dst.APIServerFixedIP = copyString(a.FixedIP)
		if a.Port != nil {
			dst.APIServerPort = ptr.To(*a.Port)
		}
		// enabled: false alone is CAPO's absent apiServerLoadBalancer.
		if m := a.ManagedLoadBalancer; m != nil && !apiequality.Semantic.DeepEqual(*m, infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}) {
			dst.APIServerLoadBalancer = &APIServerLoadBalancer{}
			if err := copyByName(dst.APIServerLoadBalancer, m); err != nil {
				return err
			}
		}
	}
	if src.ManagedSecurityGroups != nil {
		dst.ManagedSecurityGroups = &ManagedSecurityGroups{}
		if err := copyByName(dst.ManagedSecurityGroups, src.ManagedSecurityGroups, "ManagedSecurityGroups.clusterNodesSecurityGroupRules"); err != nil {
			return err
		}
		if err := copyByName(&dst.ManagedSecurityGroups.AllNodesSecurityGroupRules, &src.ManagedSecurityGroups.ClusterNodesSecurityGroupRules); err != nil {
			return err
		}
	}
	if src.Bastion != nil {
		dst.Bastion = &Bastion{}
		if err := copyByName(dst.Bastion, src.Bastion, "Bastion.spec"); err != nil {
			return err
		}
		if src.Bastion.Spec != nil {
			dst.Bastion.Spec = &OpenStackMachineSpec{}
			if err := machineSpecDown(src.Bastion.Spec, dst.Bastion.Spec); err != nil {
				return err
			}
		}
	}
	return nil
}

// --- cluster status --------------------------------------------------------

func clusterStatusUp(src *OpenStackClusterStatus, dst *infrav1.OpenStackClusterStatus, generation int64) error {
	if err := copyByName(dst, src, "OpenStackClusterStatus.ready", "OpenStackClusterStatus.apiServerLoadBalancer",
		"OpenStackClusterStatus.failureDomains", "OpenStackClusterStatus.failureReason",
		"OpenStackClusterStatus.failureMessage", "OpenStackClusterStatus.conditions",
		"BastionStatus.resolved", "BastionStatus.resources"); err != nil {
		return err
	}
	if src.APIServerLoadBalancer != nil {
		dst.APIServerLoadBalancer = &infrav1.LoadBalancer{}
		if err := copyByName(dst.APIServerLoadBalancer, src.APIServerLoadBalancer); err != nil {
			return err
		}
	}
	if src.FailureDomains != nil {
		dst.FailureDomains = make([]clusterv1.FailureDomain, 0, len(src.FailureDomains))
		for _, name := range slices.Sorted(maps.Keys(src.FailureDomains)) {
			fd := src.FailureDomains[name]
			dst.FailureDomains = append(dst.FailureDomains, clusterv1.FailureDomain{
				Name: name, ControlPlane: ptr.To(fd.ControlPlane), Attributes: maps.Clone(fd.Attributes),
			})
		}
	}
	dst.Conditions = conditionsUp(src.Conditions, generation)
	return nil
}

func clusterStatusDown(src *infrav1.OpenStackClusterStatus, dst *OpenStackClusterStatus) error {
	if err := copyByName(dst, src, "OpenStackClusterStatus.apiServerManagedLoadBalancer",
		"OpenStackClusterStatus.failureDomains", "OpenStackClusterStatus.conditions"); err != nil {
		return err
	}
	if src.APIServerLoadBalancer != nil {
		dst.APIServerLoadBalancer = &LoadBalancer{}
		if err := copyByName(dst.APIServerLoadBalancer, src.APIServerLoadBalancer); err != nil {
			return err
		}
	}
	if src.FailureDomains != nil {
		dst.FailureDomains = make(FailureDomains, len(src.FailureDomains))
		for _, fd := range src.FailureDomains {
			dst.FailureDomains[fd.Name] = FailureDomainSpec{
				ControlPlane: ptr.Deref(fd.ControlPlane, false), Attributes: maps.Clone(fd.Attributes),
			}
		}
	}
	dst.Conditions = conditionsDown(src.Conditions)
	dst.Ready = readyFrom(src.Conditions)
	return nil
}

// --- conditions ------------------------------------------------------------

func conditionsUp(in Conditions, generation int64) []metav1.Condition {
	if in == nil {
		return nil
	}
	out := make([]metav1.Condition, 0, len(in))
	for _, c := range in {
		reason := c.Reason
		if reason == "" {
			reason = NoReasonReported
		}
		out = append(out, metav1.Condition{
			Type:               string(c.Type),
			Status:             metav1.ConditionStatus(c.Status),
			ObservedGeneration: generation,
			LastTransitionTime: c.LastTransitionTime,
			Reason:             reason,
			Message:            c.Message,
		})
	}
	return out
}

func conditionsDown(in []metav1.Condition) Conditions {
	if in == nil {
		return nil
	}
	out := make(Conditions, 0, len(in))
	for _, c := range in {
		out = append(out, Condition{
			Type:               ConditionType(c.Type),
			Status:             corev1.ConditionStatus(c.Status),
			LastTransitionTime: c.LastTransitionTime,
			Reason:             c.Reason,
			Message:            c.Message,
		})
	}
	return out
}

// readyFrom is v1beta1's status.ready: the Ready condition is True.
func readyFrom(conditions []metav1.Condition) bool {
	for _, c := range conditions {
		if c.Type == infrav1.ReadyCondition {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// --- helpers ---------------------------------------------------------------

// not inverts an optional boolean (disableX ⇔ enableX); unset stays unset.
func not(b *bool) *bool {
	if b == nil {
		return nil
	}
	return ptr.To(!*b)
}

func copyString(s *string) *string {
	if s == nil {
		return nil
	}
	return ptr.To(*s)
}
