package controlplane_test

// This test compares the CRD we generate for OpenshiftAssistedControlPlane
// with the reference provider's (openshift-assisted/cluster-api-provider-
// openshift-assisted, CAPOA) at its storage version v1alpha3, so that CAPOA
// manifests keep applying unchanged: every CAPOA spec field exists here with
// the same type, validation and list semantics (none is silently pruned),
// we invent no spec fields but the documented ones, and the status and name
// differences are the documented ones. CAPOA has no template kind; ours is
// checked to carry the control plane's spec schema unchanged. The
// comparison itself is test/crdcompat's; this file holds the kinds and the
// documented differences with their reasons.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ocp-capi/ocp-capi/test/crdcompat"
)

const (
	ownCRDDir        = "controlplane/config/crd/bases"
	servedVersion    = "v1alpha3"
	controlPlaneKind = "OpenshiftAssistedControlPlane"
	templateKind     = "OpenshiftAssistedControlPlaneTemplate"
)

// The helpers docs_test.go uses too.
var (
	repoRoot      = crdcompat.RepoRoot
	crdsByKind    = crdcompat.ByKind
	versionSchema = crdcompat.ServedSchema
)

type allowed = crdcompat.Allowed

var suite = crdcompat.Suite{
	Upstream:       "CAPOA",
	UpstreamSubdir: "cluster-api-provider-openshift-assisted",
	OwnCRDDir:      ownCRDDir,
	Kinds:          []crdcompat.Kind{{Name: controlPlaneKind, Version: servedVersion}},
	// Checked by TestTemplateCarriesTheSpec instead.
	OwnOnlyKinds: []crdcompat.Kind{{Name: templateKind, Version: servedVersion}},

	SpecAdditions: map[string][]allowed{controlPlaneKind: {
		{Path: "spec.version", Reason: "the Kubernetes version: CAPI's contract field, which a ClusterClass topology sets (without it the " +
			"topology controller cannot manage the control plane), and the override of the built-in OpenShift-to-Kubernetes table the issue asks for " +
			"(CAPOA pulls the release image instead); optional"},
		{Path: "spec.config.releaseImage", Reason: "the release image override the issue asks for (CAPOA has only the repository " +
			"annotation, which is supported too); optional"},
		{Path: "spec.openshiftAssistedConfigSpec.bootMode", Reason: "the bootstrap API's bootMode (api/bootstrap), so control-plane " +
			"machines can choose LiveISO or DiscoveryIgnition; optional, unset follows the infrastructure machine"},
	}},
	StatusAdditions: map[string][]allowed{controlPlaneKind: {
		{Path: "status.clusterDeploymentRef", Reason: "names the hive ClusterDeployment (CAPOA v1alpha2 had it)"},
		{Path: "status.clusterImageSetRef", Reason: "names the cluster-scoped ClusterImageSet, whose name is a hash (collision-free " +
			"across namespaces, unlike CAPOA's)"},
	}},
	// Spec fields whose validation (default, CEL rules, maxLength) is ours
	// and not CAPOA's. Each is stricter or fills in what CAPOA's controller
	// assumed, so CAPOA's valid manifests still apply; docs/controlplane.md
	// lists them.
	ValidationDifferences: map[string][]allowed{controlPlaneKind: {
		{Path: "spec", Reason: "CEL rules (control plane only, not the template): machineTemplate.infrastructureRef is required " +
			"by a rule, not by the required lists, so that a ClusterClass's control-plane template can leave it to the topology (as " +
			"KubeadmControlPlaneTemplate has none), and, as transition rules, baseDomain and clusterName are immutable, " +
			"and replicas cannot move between 1 and more; in the schema so that kubectl scale cannot bypass them"},
		{Path: "spec.machineTemplate", Reason: "infrastructureRef is not in the required list: the rule on spec requires it " +
			"of a control plane, with the same refusal when it is missing"},
		{Path: "spec.replicas", Reason: "default 3 (CAPOA's controller treated unset as 3, but the Desired column, kubectl scale and " +
			"CAPI's desired-replicas count showed nothing) and a CEL rule allowing 1, 3, 4 or 5 (the OpenShift topologies), " +
			"which holds through the scale subresource"},
		{Path: "spec.config.baseDomain", Reason: "maxLength 253, a DNS name's (and a bound for the CEL immutability rule's cost)"},
		{Path: "spec.config.clusterName", Reason: "maxLength 63, a DNS label's (and a bound for the CEL immutability rule's cost)"},
	}},
	NameDifferences: map[string][]allowed{controlPlaneKind: {
		{Path: "categories", Reason: "in the cluster-api category like every CAPI provider's kinds (kubectl get cluster-api)"},
	}},
	// The scale subresource and the printer columns: CAPOA's, plus ours
	// shown with -o wide only.
	ComparePrinting: true,
	// Each CRD also serves v1beta1 (TestV1beta1IsV1alpha3Moved); the
	// contract label lists both.
}

func TestCRDIsCompatibleWithCAPOA(t *testing.T) { suite.CheckCompatible(t) }

// TestTemplateCarriesTheSpec checks that the template's spec.template.spec
// is exactly the control plane's spec schema: a ClusterClass gets every
// field, with the same validation.
func TestTemplateCarriesTheSpec(t *testing.T) {
	crds := suite.OwnCRDs(t)
	cp, tmpl := crds[controlPlaneKind], crds[templateKind]
	if cp == nil || tmpl == nil {
		t.Fatalf("missing CRDs: %s %v, %s %v", controlPlaneKind, cp != nil, templateKind, tmpl != nil)
	}
	cpSchema, tmplSchema := crdcompat.ServedSchema(cp, servedVersion), crdcompat.ServedSchema(tmpl, servedVersion)
	if cpSchema == nil || tmplSchema == nil {
		t.Fatalf("%s not served: %s %v, %s %v", servedVersion, controlPlaneKind, cpSchema != nil, templateKind, tmplSchema != nil)
	}
	cs := cpSchema.Properties["spec"]
	ts := tmplSchema.Properties["spec"].Properties["template"].Properties["spec"]
	want, got := crdcompat.Flatten(&cs, "spec"), crdcompat.Flatten(&ts, "spec")
	// The rules on spec itself are the control plane's: a template stays
	// mutable (the transition rules), and may leave the infrastructure
	// machine template to its ClusterClass.
	for p, n := range want {
		n.Rules = slices.DeleteFunc(n.Rules, func(r string) bool {
			return p == "spec" && (strings.Contains(r, "oldSelf") || strings.Contains(r, "infrastructureRef"))
		})
		if len(n.Rules) == 0 {
			n.Rules = nil
		}
		want[p] = n
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		for _, p := range slices.Sorted(maps.Keys(want)) {
			if fmt.Sprint(want[p]) != fmt.Sprint(got[p]) {
				t.Errorf("%s: control plane %+v, template %+v", p, want[p], got[p])
			}
		}
		for p := range got {
			if _, ok := want[p]; !ok {
				t.Errorf("%s is in the template only", p)
			}
		}
	}
	names := tmpl.Spec.Names
	if !slices.Equal(slices.Sorted(slices.Values(names.ShortNames)), []string{"oacpt", "oacpts"}) {
		t.Errorf("template short names %v, want oacpt, oacpts", names.ShortNames)
	}
}

// TestContractLabels checks the CAPI contract label: cluster.x-k8s.io/v1beta2
// lists exactly the versions each CRD serves, v1alpha3_v1beta1.
func TestContractLabels(t *testing.T) { suite.CheckContractLabels(t) }

func TestAllowListsHaveReasons(t *testing.T) { suite.CheckAllowLists(t) }
