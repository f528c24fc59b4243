package mapi2capi

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// Kinds of the providerSpecs this package converts, and of the templates it
// makes of them.
const (
	OpenStackProviderSpecKind    = "OpenstackProviderSpec"
	BareMetalProviderSpecKind    = "BareMetalMachineProviderSpec"
	OpenStackMachineTemplateKind = "OpenStackMachineTemplate"
	Metal3MachineTemplateKind    = "Metal3MachineTemplate"
	OpenStackMachineKind         = "OpenStackMachine"
	Metal3MachineKind            = "Metal3Machine"
)

// InfrastructureGroup is the API group of both template kinds.
const InfrastructureGroup = "infrastructure.cluster.x-k8s.io"

// Paths into the MAPI MachineSet that errors and warnings name.
var (
	specPath      = field.NewPath("spec")
	templatePath  = specPath.Child("template")
	infraNamePath = field.NewPath("infrastructure", "status", "infrastructureName")
)

// provider is what a providerSpec conversion gives the MachineSet
// conversion.
type provider struct {
	// template is the infrastructure machine template, not yet named.
	template client.Object
	// spec is the template's spec; its hash names the template.
	spec any
	// kind of the template.
	kind string
	// machine is the infrastructure machine of the same spec (for a
	// Machine), not yet named; machineKind its kind.
	machine     client.Object
	machineKind string
	// failureDomain and dataSecretName belong to the CAPI Machine template.
	failureDomain  string
	dataSecretName *string
}

// MachineSet converts the MAPI MachineSet ms into a CAPI MachineSet of the
// same name in infra.Namespace and the infrastructure machine template it
// points at. The template is an *OpenStackMachineTemplate (api/infrastructure
// /v1beta2) or a *Metal3MachineTemplate (consumed metal3/v1beta1). On errors
// both objects are nil; warnings are returned either way. ms is not changed.
func MachineSet(ms *mapiv1beta1.MachineSet, infra Infra) (*clusterv1.MachineSet, client.Object, []string, field.ErrorList) {
	r := &report{spec: templatePath.Child("spec")}
	if ms == nil {
		return nil, nil, nil, field.ErrorList{field.Required(field.NewPath("machineSet"), "no MachineSet to convert")}
	}
	if infra.ClusterName == "" {
		r.fail(field.Required(infraNamePath,
			"the CAPI Cluster name is unknown: the Infrastructure cluster has no status.infrastructureName and no cluster name was given"))
	}
	if infra.Namespace == "" {
		r.fail(field.Required(field.NewPath("namespace"), "the CAPI namespace is not set"))
	}

	prov := convertProvider(&ms.Spec.Template.Spec, ms.Namespace, infra, r)
	capi := convertMachineSet(ms, infra, r)

	if prov != nil {
		name, err := TemplateName(ms.Name, prov.spec)
		if err != nil {
			r.fail(field.InternalError(r.providerSpec(), err))
		}
		prov.template.SetName(name)
		prov.template.SetNamespace(infra.Namespace)
		if infra.ClusterName != "" {
			prov.template.SetLabels(map[string]string{clusterv1.ClusterNameLabel: infra.ClusterName})
		}
		ts := &capi.Spec.Template.Spec
		ts.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: InfrastructureGroup, Kind: prov.kind, Name: name}
		ts.FailureDomain = prov.failureDomain
		ts.Bootstrap.DataSecretName = prov.dataSecretName
	}

	if len(r.errs) > 0 || prov == nil {
		return nil, nil, r.warnings, r.errs
	}
	return capi, prov.template, r.warnings, nil
}

// convertProvider picks the provider by the providerSpec's kind, or by the
// platform when it has none, and converts the providerSpec of spec (a
// machine in mapiNS).
func convertProvider(spec *mapiv1beta1.MachineSpec, mapiNS string, infra Infra, r *report) *provider {
	v := spec.ProviderSpec.Value
	if v == nil || len(v.Raw) == 0 {
		r.fail(field.Required(r.providerSpec(), "no providerSpec is set"))
		return nil
	}
	var tm struct{ Kind any }
	if err := json.Unmarshal(v.Raw, &tm); err != nil {
		r.fail(field.Invalid(r.providerSpec(), shortJSON(string(v.Raw)), "not a JSON object: "+err.Error()))
		return nil
	}
	kind, ok := tm.Kind.(string)
	if !ok && tm.Kind != nil {
		r.fail(field.Invalid(r.providerSpec().Child("kind"), shortJSON(tm.Kind), "must be a string, not "+jsonKind(tm.Kind)))
		return nil
	}
	switch {
	case kind == OpenStackProviderSpecKind || kind == "" && infra.Platform == configv1.OpenStackPlatformType:
		return convertOpenStack(v.Raw, mapiNS, infra, r)
	case kind == BareMetalProviderSpecKind || kind == "" && infra.Platform == configv1.BareMetalPlatformType:
		return convertMetal3(v.Raw, mapiNS, infra, r)
	case kind == "":
		r.fail(field.Required(r.providerSpec().Child("kind"),
			fmt.Sprintf("the providerSpec has no kind and the platform (%q) does not say which provider it is for", infra.Platform)))
	default:
		r.fail(field.NotSupported(r.providerSpec().Child("kind"), kind, []string{OpenStackProviderSpecKind, BareMetalProviderSpecKind}))
	}
	return nil
}
