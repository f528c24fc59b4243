package infrastructure_test

// This test compares the CRDs we generate for the OpenStack infrastructure
// API with Cluster API Provider OpenStack's (CAPO), so that CAPO manifests
// keep applying unchanged: every CAPO spec field exists here with the same
// type and validation (none is silently pruned), we invent no spec fields
// but the documented ones, and the status differences are the documented
// ones. The comparison itself is test/crdcompat's; this file holds the
// kinds and the documented differences with their reasons.

import (
	"testing"

	"github.com/ocp-capi/ocp-capi/test/crdcompat"
)

type allowed = crdcompat.Allowed

var suite = crdcompat.Suite{
	Upstream:       "CAPO",
	UpstreamSubdir: "cluster-api-provider-openstack",
	// The CRDs generated from api/infrastructure.
	OwnCRDDir: "internal/openstack/config/crd/bases",
	// The kinds we serve with CAPO's JSON, at CAPO's version.
	Kinds: []crdcompat.Kind{
		{Name: "OpenStackServer", Version: "v1alpha1"},
		{Name: "OpenStackClusterIdentity", Version: "v1alpha1"},
		{Name: "OpenStackFloatingIPPool", Version: "v1alpha1"},
		{Name: "OpenStackMachine", Version: "v1beta2"},
		{Name: "OpenStackMachineTemplate", Version: "v1beta2"},
		{Name: "OpenStackCluster", Version: "v1beta2"},
		{Name: "OpenStackClusterTemplate", Version: "v1beta2"},
	},

	SpecAdditions: map[string][]allowed{
		"OpenStackMachineTemplate": {
			{Path: "spec.template.metadata", Reason: "the CAPI v1beta2 InfraMachineTemplate shape (labels and annotations for the machines " +
				"made from the template, as in CAPI's own templates); optional, so CAPO manifests are unaffected"},
		},
	},
	StatusAdditions: map[string][]allowed{
		"OpenStackServer": {
			{Path: "status.initialization", Reason: "CAPI v1beta2 contract shape (initialization.provisioned), replacing status.ready"},
			{Path: "status.resources.volumes", Reason: "the Cinder volumes created for the server, so that deletion finds them by ID " +
				"rather than by name only"},
			{Path: "status.resources.ports[].macAddress", Reason: "the MAC address of each created port, for hosts that register by MAC"},
		},
		"OpenStackMachine": {
			{Path: "status.apiServerLoadBalancerID", Reason: "the API load balancer a control-plane machine joined, so that it joins " +
				"again when the load balancer is recreated"},
		},
	},
	StatusOmissions: map[string][]allowed{
		"OpenStackServer": {
			{Path: "status.ready", Reason: "v1beta1-era boolean; CAPO keeps it only for its own predicates. Replaced by " +
				"status.initialization.provisioned and the Ready condition"},
		},
		"OpenStackMachine": {
			{Path: "status.resolved", Reason: "lives on the OpenStackServer of the same name, the single source of truth"},
			{Path: "status.resources", Reason: "lives on the OpenStackServer of the same name, the single source of truth"},
		},
		"OpenStackCluster": {
			{Path: "status.bastion.resolved", Reason: "lives on the bastion's OpenStackServer, the single source of truth"},
			{Path: "status.bastion.resources", Reason: "lives on the bastion's OpenStackServer, the single source of truth"},
		},
	},
	// A CAPO field this provider does not implement is refused by a CEL rule
	// rather than ignored, and Neutron tags have a pattern (no commas):
	// stricter than CAPO on purpose, listed field by field in
	// docs/openstack/capo-support.md.
	Unchecked: map[crdcompat.Check]string{
		crdcompat.Rules:   "unimplemented CAPO fields are refused by CEL rules; docs/openstack/capo-support.md lists them",
		crdcompat.Pattern: "Neutron tags must have no comma (^[^,]+$); CAPO leaves them unchecked",
	},
	// v1beta1 is served for CAPO v0.13/v0.14 users; it fulfils the CAPI
	// v1beta1 contract (status.ready, CAPI v1beta1 conditions), as in CAPO.
	Contracts: map[string]string{"v1beta1": "v1beta1"},
}

// v1beta1Suite compares the v1beta1 schemas we serve with CAPO's: no
// difference at all, printer columns included. CAPO's CRDs at hand are
// main's (v0.15 line), whose v1beta1 is v0.14's plus spec.primarySubnet,
// without v0.14's maxItems of 2 on spec.subnets, and with
// OpenStackMachineTemplate status.conditions: a superset, so every v0.14
// manifest applies (docs/openstack/v1beta1.md).
var v1beta1Suite = crdcompat.Suite{
	Upstream:       "CAPO",
	UpstreamSubdir: "cluster-api-provider-openstack",
	OwnCRDDir:      "internal/openstack/config/crd/bases",
	Kinds: []crdcompat.Kind{
		{Name: "OpenStackMachine", Version: "v1beta1"},
		{Name: "OpenStackMachineTemplate", Version: "v1beta1"},
		{Name: "OpenStackCluster", Version: "v1beta1"},
		{Name: "OpenStackClusterTemplate", Version: "v1beta1"},
	},
	ComparePrinting: true,
}

func TestCRDsAreCompatibleWithCAPO(t *testing.T) { suite.CheckCompatible(t) }

// TestV1beta1IsCAPOs checks the v1beta1 schemas against CAPO's v1beta1.
func TestV1beta1IsCAPOs(t *testing.T) { v1beta1Suite.CheckCompatible(t) }

// TestContractLabels checks the CAPI contract label of every CRD we serve
// for the infrastructure provider.
func TestContractLabels(t *testing.T) { suite.CheckContractLabels(t) }

// TestAllowListsHaveReasons keeps every documented difference documented.
func TestAllowListsHaveReasons(t *testing.T) {
	suite.CheckAllowLists(t)
	v1beta1Suite.CheckAllowLists(t)
}
