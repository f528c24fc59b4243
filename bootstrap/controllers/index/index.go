// Package index holds the cache field indexes the bootstrap controllers
// share, and the kinds they may watch in this cluster. Indexes are
// registered once per manager, by Setup.
package index

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
)

// Field names of the indexes.
const (
	// ConfigInfraEnv indexes OpenshiftAssistedConfigs by
	// status.infraEnvRef.name: the configs whose machines boot from an
	// InfraEnv.
	ConfigInfraEnv = "status.infraEnvRef.name"
	// HostMAC indexes BareMetalHosts by spec.bootMACAddress and
	// OpenStackServers by their ports' MAC addresses, lower case.
	HostMAC = "host.macAddress"
)

// Kinds are the optional infrastructure kinds whose CRDs this cluster has.
// The bootstrap manager must run without Metal3 or without the OpenStack
// provider installed; a kind whose CRD is missing is neither watched nor
// indexed, and machines of that kind wait with a condition.
type Kinds struct {
	// Metal3 is true when Metal3Machine and BareMetalHost exist.
	Metal3 bool
	// Metal3MachineGVK is the served Metal3Machine version to watch.
	Metal3MachineGVK schema.GroupVersionKind
	// OpenStack is true when OpenStackMachine and OpenStackServer exist.
	OpenStack bool
}

// Discover finds which optional kinds the API server serves.
func Discover(mapper meta.RESTMapper) Kinds {
	var k Kinds
	m3m, err := mapper.RESTMapping(schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3Machine"})
	_, bmhErr := mapper.RESTMapping(bmhv1alpha1.GroupVersion.WithKind("BareMetalHost").GroupKind())
	if err == nil && bmhErr == nil {
		k.Metal3, k.Metal3MachineGVK = true, m3m.GroupVersionKind
	}
	_, osmErr := mapper.RESTMapping(schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackMachine"})
	_, ossErr := mapper.RESTMapping(infrav1alpha1.GroupVersion.WithKind("OpenStackServer").GroupKind())
	k.OpenStack = osmErr == nil && ossErr == nil
	return k
}

// NormalizeMAC is how MACs are compared: lower case, colon separated.
func NormalizeMAC(mac string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(mac)), "-", ":")
}

// Setup registers the indexes on the manager's cache and returns the kinds
// found. Call it once per manager.
func Setup(ctx context.Context, mgr ctrl.Manager, log logr.Logger) (Kinds, error) {
	kinds := Discover(mgr.GetRESTMapper())
	log.Info("Optional infrastructure kinds", "metal3", kinds.Metal3, "openstack", kinds.OpenStack)
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(ctx, &bootstrapv1.OpenshiftAssistedConfig{}, ConfigInfraEnv, func(o client.Object) []string {
		c, ok := o.(*bootstrapv1.OpenshiftAssistedConfig)
		if !ok || c.Status.InfraEnvRef == nil || c.Status.InfraEnvRef.Name == "" {
			return nil
		}
		return []string{c.Status.InfraEnvRef.Name}
	}); err != nil {
		return kinds, fmt.Errorf("indexing OpenshiftAssistedConfigs: %w", err)
	}
	if kinds.Metal3 {
		if err := indexer.IndexField(ctx, &bmhv1alpha1.BareMetalHost{}, HostMAC, HostBootMAC); err != nil {
			return kinds, fmt.Errorf("indexing BareMetalHosts: %w", err)
		}
	}
	if kinds.OpenStack {
		if err := indexer.IndexField(ctx, &infrav1alpha1.OpenStackServer{}, HostMAC, ServerMACs); err != nil {
			return kinds, fmt.Errorf("indexing OpenStackServers: %w", err)
		}
	}
	return kinds, nil
}

// HostBootMAC is the HostMAC index of a BareMetalHost: its boot MAC.
func HostBootMAC(o client.Object) []string {
	h, ok := o.(*bmhv1alpha1.BareMetalHost)
	if !ok || h.Spec.BootMACAddress == "" {
		return nil
	}
	return []string{NormalizeMAC(h.Spec.BootMACAddress)}
}

// ServerMACs is the HostMAC index of an OpenStackServer: its ports' MACs.
func ServerMACs(o client.Object) []string {
	s, ok := o.(*infrav1alpha1.OpenStackServer)
	if !ok || s.Status.Resources == nil {
		return nil
	}
	var out []string
	for _, p := range s.Status.Resources.Ports {
		if p.MACAddress != "" {
			out = append(out, NormalizeMAC(p.MACAddress))
		}
	}
	return out
}
