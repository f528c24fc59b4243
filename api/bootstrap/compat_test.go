package bootstrap_test

// This test compares the CRDs we generate for the bootstrap API with the
// reference provider's (openshift-assisted/cluster-api-provider-openshift-
// assisted, CAPOA) at its storage version v1alpha2, so that CAPOA manifests
// keep applying unchanged: every CAPOA spec field exists here with the same
// type, validation and list semantics (none is silently pruned), we invent no
// spec fields but the documented ones, and the status and name differences
// are the documented ones. The comparison itself is test/crdcompat's; this
// file holds the kinds and the documented differences with their reasons.

import (
	"testing"

	"github.com/ocp-capi/ocp-capi/test/crdcompat"
)

type allowed = crdcompat.Allowed

const bootModeReason = "the boot mode (LiveISO or DiscoveryIgnition) the issue adds; optional, and when unset it " +
	"follows the infrastructure machine, so CAPOA manifests are unaffected"

var suite = crdcompat.Suite{
	Upstream:       "CAPOA",
	UpstreamSubdir: "cluster-api-provider-openshift-assisted",
	OwnCRDDir:      "bootstrap/config/crd/bases",
	Kinds: []crdcompat.Kind{
		{Name: "OpenshiftAssistedConfig", Version: "v1alpha2"},
		{Name: "OpenshiftAssistedConfigTemplate", Version: "v1alpha2"},
	},

	SpecAdditions: map[string][]allowed{
		"OpenshiftAssistedConfig":         {{Path: "spec.bootMode", Reason: bootModeReason}},
		"OpenshiftAssistedConfigTemplate": {{Path: "spec.template.spec.bootMode", Reason: bootModeReason}},
	},
	StatusAdditions: map[string][]allowed{
		"OpenshiftAssistedConfig": {
			{Path: "status.bootMode", Reason: "the boot mode in effect, since spec.bootMode may be unset"},
			{Path: "status.infraEnvRef", Reason: "the InfraEnv the machine boots from (CAPOA v1alpha1 had it); also what the " +
				"controllers index configs by"},
			{Path: "status.agentRef", Reason: "the Agent bound to the machine (CAPOA v1alpha1 had it); written with an optimistic " +
				"lock, it is what keeps a machine to one approved Agent"},
		},
	},
	StatusOmissions: map[string][]allowed{
		"OpenshiftAssistedConfig": {
			{Path: "status.v1beta1Conditions", Reason: "not part of the CAPI v1beta2 contract (which keeps legacy conditions under " +
				"status.deprecated.v1beta1); this API has v1beta2 conditions only"},
		},
	},
	NameDifferences: map[string][]allowed{
		"OpenshiftAssistedConfig": {
			{Path: "categories", Reason: "in the cluster-api category like every CAPI provider's kinds (kubectl get cluster-api)"},
		},
		"OpenshiftAssistedConfigTemplate": {
			{Path: "categories", Reason: "in the cluster-api category like every CAPI provider's kinds (kubectl get cluster-api)"},
			{Path: "shortNames", Reason: "oact added; CAPOA's template has no short name"},
		},
	},
}

func TestCRDsAreCompatibleWithCAPOA(t *testing.T) { suite.CheckCompatible(t) }

// TestContractLabels checks the CAPI contract label: cluster.x-k8s.io/v1beta2
// lists exactly the versions each CRD serves.
func TestContractLabels(t *testing.T) { suite.CheckContractLabels(t) }

func TestAllowListsHaveReasons(t *testing.T) { suite.CheckAllowLists(t) }
