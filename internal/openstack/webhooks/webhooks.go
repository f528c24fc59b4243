// Package webhooks holds the validating admission webhooks of the
// OpenStack infrastructure provider: OpenStackServer, OpenStackMachine,
// OpenStackMachineTemplate, OpenStackCluster and OpenStackClusterTemplate.
//
// The CRD schemas (CEL rules included) do most of the validation. These
// webhooks add what CEL cannot express well:
//
//   - immutability, reported field by field: every changed path under spec
//     gets its own Forbidden error, so the user sees exactly what to revert;
//   - a port with port security disabled cannot carry security groups;
//   - an OpenStackCluster's update rules: what may change after creation
//     (controlPlaneEndpoint once, identityRef, bastion, security group
//     rules) and what may not, with the reason at each field.
//
// The webhook configurations are generated from the markers in this package
// into internal/openstack/config/webhook/manifests.yaml.
package webhooks

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/topology"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/webhookutil"
)

// SetupWebhooks registers the validating webhooks of OpenStackServer,
// OpenStackMachine, OpenStackMachineTemplate, OpenStackCluster and
// OpenStackClusterTemplate with the manager's webhook server. The manager's scheme must know both infrastructure API versions.
func SetupWebhooks(mgr ctrl.Manager) error {
	return webhookutil.Register(mgr,
		webhookutil.Validator(&infrav1alpha1.OpenStackServer{}, &openStackServerWebhook{}),
		webhookutil.Validator(&infrav1.OpenStackMachine{}, &openStackMachineWebhook{}),
		webhookutil.Validator(&infrav1.OpenStackMachineTemplate{}, &openStackMachineTemplateWebhook{}),
		webhookutil.Validator(&infrav1.OpenStackCluster{}, &openStackClusterWebhook{}),
		webhookutil.Validator(&infrav1.OpenStackClusterTemplate{}, &openStackClusterTemplateWebhook{}))
}

// Group kinds for the errors. They do not depend on the decoded object's
// TypeMeta, which may be empty.
var (
	openStackServerGK          = infrav1alpha1.GroupVersion.WithKind("OpenStackServer").GroupKind()
	openStackMachineGK         = infrav1.GroupVersion.WithKind("OpenStackMachine").GroupKind()
	openStackMachineTemplateGK = infrav1.GroupVersion.WithKind("OpenStackMachineTemplate").GroupKind()
	openStackClusterGK         = infrav1.GroupVersion.WithKind("OpenStackCluster").GroupKind()
	openStackClusterTemplateGK = infrav1.GroupVersion.WithKind("OpenStackClusterTemplate").GroupKind()
)

// isTopologyDryRun tells whether the request in ctx is a dry-run made by
// CAPI's topology controller (dry-run and the object carries
// topology.cluster.x-k8s.io/dry-run). The topology controller dry-runs
// server-side applies of templates to compute its diffs; the CAPI contract
// for InfraMachineTemplates says immutability checks must let them through.
// A context without an admission request (a direct call) is not a dry-run.
func isTopologyDryRun(ctx context.Context, obj metav1.Object) bool {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return false
	}
	return topology.IsDryRunRequest(req, obj)
}

// validatePortSecurity checks each port that disables port security
// (enablePortSecurity: false). Neutron refuses security groups on such a
// port, so security groups on the port itself are an error at the port's
// path. Security groups the port would inherit from the server
// (serverSecurityGroups) are not applied to it, as in CAPO; that only
// deserves a warning, since a server with one normal and one
// port-security-disabled port (SR-IOV, for example) is a valid and common
// shape.
func validatePortSecurity(portsPath *field.Path, ports []infrav1.PortOpts, serverSecurityGroups []infrav1.SecurityGroupParam) (admission.Warnings, field.ErrorList) {
	var (
		warnings admission.Warnings
		errs     field.ErrorList
	)
	for i := range ports {
		port := &ports[i]
		if ptr.Deref(port.EnablePortSecurity, true) {
			continue
		}
		portPath := portsPath.Index(i)
		switch {
		case len(port.SecurityGroups) > 0:
			errs = append(errs, field.Forbidden(portPath.Child("securityGroups"),
				"must be empty when enablePortSecurity is false: Neutron does not allow security groups on a port without port security"))
		case len(serverSecurityGroups) > 0:
			warnings = append(warnings, fmt.Sprintf(
				"%s: enablePortSecurity is false, so the server's securityGroups are not applied to this port", portPath))
		}
	}
	return warnings, errs
}
