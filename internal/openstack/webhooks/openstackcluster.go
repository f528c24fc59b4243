package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/webhookutil"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta2-openstackcluster,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters,versions=v1beta2,name=validation.openstackcluster.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1
// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta2-openstackclustertemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=openstackclustertemplates,versions=v1beta2,name=validation.openstackclustertemplate.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// openStackClusterWebhook validates OpenStackClusters.
//
// What may change after creation is what the controller acts on again:
//   - controlPlaneEndpoint, set once (from empty, by the controller or the
//     user) and then fixed: machines and kubeconfigs point at it;
//   - identityRef (credential rotation); its region stays fixed (CEL);
//   - bastion: a spec change replaces the bastion, enabled: false deletes
//     it. Removing the whole block while the bastion is enabled is refused
//     (as in CAPO): deleting a jump host someone may be using should be an
//     explicit enabled: false, not a side effect of a trimmed manifest;
//   - the rules of the managed security groups (and
//     allowAllInClusterTraffic), which the controller keeps in sync. Whether
//     groups are managed at all is fixed: dropping managedSecurityGroups
//     would orphan the groups.
//
// Everything else is fixed when the cluster is created: the network choice
// (existing resources are not moved), the API endpoint (it is in every
// kubeconfig and certificate), tags (only put on resources when they are
// created) and the control-plane availability zones (failure domains are
// read once). The one exception, as in CAPO, is replacing the filter of
// spec.network or spec.subnets by the ID it resolved to (in status), which
// changes nothing the controller does.
type openStackClusterWebhook struct {
	webhookutil.AllowDelete[*infrav1.OpenStackCluster]
}

var _ admission.Validator[*infrav1.OpenStackCluster] = &openStackClusterWebhook{}

// openStackClusterTemplateWebhook validates OpenStackClusterTemplates:
// spec.template.spec is immutable (a cluster made from a template keeps
// its network and endpoint for life), except in CAPI topology dry-runs.
type openStackClusterTemplateWebhook struct {
	webhookutil.AllowDelete[*infrav1.OpenStackClusterTemplate]
}

var _ admission.Validator[*infrav1.OpenStackClusterTemplate] = &openStackClusterTemplateWebhook{}

// Details of the OpenStackCluster errors, by the spec field they are
// about.
const (
	controlPlaneEndpointSetOnce = "controlPlaneEndpoint can be set once (from empty) and cannot be changed afterwards: " +
		"machines and kubeconfigs use it"
	clusterNetworkImmutable = "the cluster's network (managedSubnets, managedNetwork, managedRouter, router, network, subnets, " +
		"primarySubnet, externalNetwork, enableExternalNetwork) cannot be changed after creation; create a new cluster instead"
	clusterAPIServerImmutable = "the API endpoint (apiServer: load balancer enablement, port, floating and fixed IP, load balancer settings) " +
		"cannot be changed after creation: it is in every kubeconfig and certificate"
	managedSecurityGroupsSetOnce = "managed security groups cannot be turned on or off after creation; " +
		"their rules (and allowAllInClusterTraffic) may change"
	clusterSpecImmutable = "cannot be changed after creation (mutable: controlPlaneEndpoint once, identityRef, bastion, " +
		"managed security group rules)"
	bastionRemoveEnabled = "cannot be removed while the bastion is enabled: disable the bastion first " +
		"(set spec.bastion.enabled to false), then remove spec.bastion"
	regionImmutable                   = "region is immutable"
	ruleRemoteExclusive               = "only one of remoteGroupID, remoteIPPrefix and remoteManagedGroups may be set"
	openStackClusterTemplateImmutable = "an OpenStackClusterTemplate's spec.template.spec is immutable; create a new template " +
		"and point the ClusterClass at it"
)

// networkFields are the spec fields that choose the cluster's network.
var networkFields = []string{"managedSubnets", "managedNetwork", "managedRouter", "router", "network", "subnets",
	"primarySubnet", "externalNetwork", "enableExternalNetwork"}

// ValidateCreate checks what the schema cannot: the remote of each
// security group rule, and the bastion's ports.
func (*openStackClusterWebhook) ValidateCreate(_ context.Context, c *infrav1.OpenStackCluster) (admission.Warnings, error) {
	warnings, errs := validateClusterSpec(field.NewPath("spec"), &c.Spec)
	return warnings, webhookutil.Invalid(openStackClusterGK, c, errs)
}

// ValidateUpdate refuses changes of what is fixed at creation, naming
// every changed field, and validates the new mutable parts.
func (*openStackClusterWebhook) ValidateUpdate(_ context.Context, oldC, newC *infrav1.OpenStackCluster) (admission.Warnings, error) {
	specPath := field.NewPath("spec")
	warnings, errs := validateClusterSpec(specPath, &newC.Spec)
	errs = append(errs, clusterUpdateErrors(specPath, &oldC.Spec, &newC.Spec, &oldC.Status)...)
	return warnings, webhookutil.Invalid(openStackClusterGK, newC, errs)
}

// ValidateCreate checks the template's cluster spec as a cluster's.
func (*openStackClusterTemplateWebhook) ValidateCreate(_ context.Context, t *infrav1.OpenStackClusterTemplate) (admission.Warnings, error) {
	warnings, errs := validateClusterSpec(field.NewPath("spec", "template", "spec"), &t.Spec.Template.Spec)
	return warnings, webhookutil.Invalid(openStackClusterTemplateGK, t, errs)
}

// ValidateUpdate refuses changes of spec.template.spec, naming every
// changed field, except for CAPI topology dry-runs.
func (*openStackClusterTemplateWebhook) ValidateUpdate(ctx context.Context, oldT, newT *infrav1.OpenStackClusterTemplate) (admission.Warnings, error) {
	return nil, templateImmutable(ctx, openStackClusterTemplateGK, newT, &oldT.Spec.Template.Spec, &newT.Spec.Template.Spec,
		openStackClusterTemplateImmutable)
}

// validateClusterSpec checks a cluster spec on its own (create, and the
// new spec of an update).
func validateClusterSpec(specPath *field.Path, spec *infrav1.OpenStackClusterSpec) (admission.Warnings, field.ErrorList) {
	var (
		warnings admission.Warnings
		errs     field.ErrorList
	)
	if msg := spec.ManagedSecurityGroups; msg != nil {
		p := specPath.Child("managedSecurityGroups")
		errs = append(errs, validateRuleRemotes(p.Child("clusterNodesSecurityGroupRules"), msg.ClusterNodesSecurityGroupRules)...)
		errs = append(errs, validateRuleRemotes(p.Child("controlPlaneNodesSecurityGroupRules"), msg.ControlPlaneNodesSecurityGroupRules)...)
		errs = append(errs, validateRuleRemotes(p.Child("workerNodesSecurityGroupRules"), msg.WorkerNodesSecurityGroupRules)...)
	}
	if b := spec.Bastion; b != nil && b.Spec != nil {
		bp := specPath.Child("bastion", "spec")
		w, e := validatePortSecurity(bp.Child("ports"), b.Spec.Ports, b.Spec.SecurityGroups)
		warnings, errs = append(warnings, w...), append(errs, e...)
		if b.Spec.ProviderID != "" {
			errs = append(errs, field.Forbidden(bp.Child("providerID"), "cannot be set for the bastion: it gets the server's"))
		}
	}
	return warnings, errs
}

// validateRuleRemotes refuses rules with more than one remote: Neutron
// takes a remote group or a prefix, and remoteManagedGroups is a group.
func validateRuleRemotes(p *field.Path, rules []infrav1.SecurityGroupRuleSpec) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		n := 0
		if ptr.Deref(r.RemoteGroupID, "") != "" {
			n++
		}
		if ptr.Deref(r.RemoteIPPrefix, "") != "" {
			n++
		}
		if len(r.RemoteManagedGroups) > 0 {
			n++
		}
		if n > 1 {
			errs = append(errs, field.Forbidden(p.Index(i), ruleRemoteExclusive))
		}
	}
	return errs
}

// clusterUpdateErrors compares the fixed parts of two cluster specs. The
// mutable parts are blanked in copies, then the copies are compared field
// by field, with a detail saying why each field is fixed.
func clusterUpdateErrors(specPath *field.Path, oldSpec, newSpec *infrav1.OpenStackClusterSpec, oldStatus *infrav1.OpenStackClusterStatus) field.ErrorList {
	var errs field.ErrorList
	o, n := oldSpec.DeepCopy(), newSpec.DeepCopy()

	// controlPlaneEndpoint: once.
	if o.ControlPlaneEndpoint == nil || o.ControlPlaneEndpoint.Host == "" {
		o.ControlPlaneEndpoint, n.ControlPlaneEndpoint = nil, nil
	}

	// identityRef: name and cloudName rotate; region is fixed (CEL says so
	// too, this names the field for direct callers).
	if o.IdentityRef.Region != n.IdentityRef.Region {
		errs = append(errs, field.Forbidden(specPath.Child("identityRef", "region"), regionImmutable))
	}
	o.IdentityRef, n.IdentityRef = infrav1.OpenStackIdentityReference{}, infrav1.OpenStackIdentityReference{}

	// bastion: mutable, but not removed while enabled.
	if n.Bastion == nil && o.Bastion != nil && ptr.Deref(o.Bastion.Enabled, true) {
		errs = append(errs, field.Forbidden(specPath.Child("bastion"), bastionRemoveEnabled))
	}
	o.Bastion, n.Bastion = nil, nil

	// managedSecurityGroups: the rules change, being managed does not.
	if (o.ManagedSecurityGroups == nil) != (n.ManagedSecurityGroups == nil) {
		errs = append(errs, field.Forbidden(specPath.Child("managedSecurityGroups"), managedSecurityGroupsSetOnce))
	}
	o.ManagedSecurityGroups, n.ManagedSecurityGroups = nil, nil

	// The API endpoint: compare effective values, so spelling out a default
	// (enabled: true, port: 6443) is not a change.
	normalizeAPIServer(o)
	normalizeAPIServer(n)

	// spec.network and spec.subnets: a filter may be replaced by the ID it
	// resolved to.
	allowResolvedNetworkIDs(o, n, oldStatus)

	oldJSON, err := toJSONValue(o)
	if err != nil {
		return append(errs, field.InternalError(specPath, err))
	}
	newJSON, err := toJSONValue(n)
	if err != nil {
		return append(errs, field.InternalError(specPath, err))
	}
	om, _ := oldJSON.(map[string]any)
	nm, _ := newJSON.(map[string]any)
	group := func(keys ...string) (map[string]any, map[string]any) {
		a, b := map[string]any{}, map[string]any{}
		for _, k := range keys {
			if v, ok := om[k]; ok {
				a[k] = v
			}
			if v, ok := nm[k]; ok {
				b[k] = v
			}
			delete(om, k)
			delete(nm, k)
		}
		return a, b
	}
	for _, g := range []struct {
		keys   []string
		detail string
	}{
		{[]string{"controlPlaneEndpoint"}, controlPlaneEndpointSetOnce},
		{networkFields, clusterNetworkImmutable},
		{[]string{"apiServer"}, clusterAPIServerImmutable},
	} {
		a, b := group(g.keys...)
		errs = append(errs, immutabilityErrors(specPath, a, b, g.detail)...)
	}
	// What is left: tags, availability zones, and anything added later.
	errs = append(errs, immutabilityErrors(specPath, om, nm, clusterSpecImmutable)...)
	return errs
}

// normalizeAPIServer spells out the defaults of the load balancer's
// enablement and of the port, and drops an apiServer left empty.
func normalizeAPIServer(s *infrav1.OpenStackClusterSpec) {
	if s.APIServer == nil {
		s.APIServer = &infrav1.APIServer{}
	}
	a := s.APIServer
	if a.Port == nil || *a.Port == 0 {
		a.Port = ptr.To(6443)
	}
	if a.ManagedLoadBalancer == nil {
		a.ManagedLoadBalancer = &infrav1.ManagedLoadBalancer{}
	}
	if a.ManagedLoadBalancer.Enabled == nil {
		a.ManagedLoadBalancer.Enabled = ptr.To(true)
	}
}

// allowResolvedNetworkIDs blanks spec.network (and each of spec.subnets)
// in both specs when the new one names by ID what the old one's filter
// resolved to, per the old status.
func allowResolvedNetworkIDs(o, n *infrav1.OpenStackClusterSpec, st *infrav1.OpenStackClusterStatus) {
	if st == nil || st.Network == nil || o.Network == nil || n.Network == nil {
		return
	}
	if o.Network.Filter != nil && n.Network.Filter == nil && ptr.Deref(n.Network.ID, "") == st.Network.ID {
		o.Network, n.Network = nil, nil
	}
	// The status lists the subnets in the order of spec.subnets.
	if len(o.Subnets) != len(n.Subnets) || len(st.Network.Subnets) != len(o.Subnets) {
		return
	}
	for i := range n.Subnets {
		oldSub, newSub := o.Subnets[i], n.Subnets[i]
		if oldSub.Filter != nil && newSub.Filter == nil && ptr.Deref(newSub.ID, "") == st.Network.Subnets[i].ID {
			o.Subnets[i], n.Subnets[i] = newSub, newSub
		}
	}
}
