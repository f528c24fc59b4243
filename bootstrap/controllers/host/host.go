// Package host reads the host behind a machine's infrastructure machine (a
// BareMetalHost for Metal3, the server for OpenStack): the variables that
// nodeRegistration values name, the node labels and provider ID the node
// needs, and, the other way, which Machine a MAC address belongs to.
package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/index"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/agentspec"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infra"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	"github.com/ocp-capi/ocp-capi/internal/validation/assisted"
)

// ErrHostUnknown means the host is not known yet: the Metal3Machine has
// not claimed a BareMetalHost, or the OpenStack server has no ID yet.
var ErrHostUnknown = errors.New("the machine's host is not known yet")

// Host is what this provider needs to know of a machine's host.
type Host struct {
	// Vars are the host variables (assisted.Var*).
	Vars assisted.Vars
	// Labels are node labels the host needs.
	Labels map[string]string
	// ProviderID is the default kubelet provider ID, or "".
	ProviderID string
}

// Of reads the host of the infrastructure machine obj.
func Of(ctx context.Context, c client.Reader, obj *unstructured.Unstructured) (*Host, error) {
	gk := obj.GroupVersionKind().GroupKind()
	h := &Host{Vars: assisted.Vars{
		assisted.VarHostname:      obj.GetName(),
		assisted.VarLocalHostname: obj.GetName(),
	}}
	switch {
	case infra.IsMetal3Machine(gk):
		ns, name, ok := strings.Cut(obj.GetAnnotations()[infra.Metal3HostAnnotation], "/")
		if !ok || name == "" {
			return nil, fmt.Errorf("%w: the Metal3Machine has not claimed a BareMetalHost", ErrHostUnknown)
		}
		bmh := &bmhv1alpha1.BareMetalHost{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, bmh); err != nil {
			return nil, fmt.Errorf("getting BareMetalHost %s/%s: %w", ns, name, err)
		}
		uid := string(bmh.UID)
		h.Vars[assisted.VarUUID] = uid
		h.Vars[assisted.VarName] = bmh.Name
		h.Vars[assisted.VarMetal3Name] = bmh.Name
		h.Vars[assisted.VarMetal3Namespace] = bmh.Namespace
		h.Labels = map[string]string{agentspec.Metal3UUIDLabel: uid}
	case infra.IsOpenStackMachine(gk):
		// Read from obj itself, at the version it was read (CAPO's v1beta1
		// and v1beta2 name both fields alike): a typed read would make the
		// manager cache every OpenStackMachine a second time.
		h.Vars[assisted.VarName] = obj.GetName()
		id, _, _ := unstructured.NestedString(obj.Object, "status", "instanceID")
		if id == "" {
			return nil, fmt.Errorf("%w: the OpenStackMachine has no instanceID", ErrHostUnknown)
		}
		h.Vars[assisted.VarUUID] = id
		h.ProviderID, _, _ = unstructured.NestedString(obj.Object, "spec", "providerID")
		if h.ProviderID == "" {
			h.ProviderID = "openstack:///" + id
		}
	}
	return h, nil
}

// MachineByMAC returns the name of the Machine (in namespace) whose host
// has one of macs: a BareMetalHost's bootMACAddress, or an OpenStack
// server's port. It returns "" when none does, and an error when the MACs
// point at different Machines.
func MachineByMAC(ctx context.Context, c client.Reader, kinds index.Kinds, namespace string, macs []string) (string, error) {
	found := ""
	for _, mac := range macs {
		mac = index.NormalizeMAC(mac)
		if mac == "" {
			continue
		}
		names, err := machinesForMAC(ctx, c, kinds, namespace, mac)
		if err != nil {
			return "", err
		}
		for _, n := range names {
			if found != "" && found != n {
				return "", fmt.Errorf("the Agent's MAC addresses belong to the hosts of two Machines, %s and %s", found, n)
			}
			found = n
		}
	}
	return found, nil
}

func machinesForMAC(ctx context.Context, c client.Reader, kinds index.Kinds, namespace, mac string) ([]string, error) {
	var out []string
	if kinds.Metal3 {
		hosts := &bmhv1alpha1.BareMetalHostList{}
		if err := c.List(ctx, hosts, client.InNamespace(namespace), client.MatchingFields{index.HostMAC: mac}); err != nil {
			return nil, fmt.Errorf("listing BareMetalHosts by MAC: %w", err)
		}
		for i := range hosts.Items {
			ref := hosts.Items[i].Spec.ConsumerRef
			if ref == nil || ref.Kind != infra.Metal3MachineKind {
				continue
			}
			ns := ref.Namespace
			if ns == "" {
				ns = hosts.Items[i].Namespace
			}
			m3m := &metav1.PartialObjectMetadata{}
			m3m.SetGroupVersionKind(kinds.Metal3MachineGVK)
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, m3m); err != nil {
				if client.IgnoreNotFound(err) == nil {
					continue
				}
				return nil, fmt.Errorf("getting Metal3Machine %s: %w", ref.Name, err)
			}
			if ns == namespace {
				if m := ownerMachine(m3m.OwnerReferences); m != "" {
					out = append(out, m)
				}
			}
		}
	}
	if kinds.OpenStack {
		servers := &infrav1alpha1.OpenStackServerList{}
		if err := c.List(ctx, servers, client.InNamespace(namespace), client.MatchingFields{index.HostMAC: mac}); err != nil {
			return nil, fmt.Errorf("listing OpenStackServers by MAC: %w", err)
		}
		for i := range servers.Items {
			s := &servers.Items[i]
			osmName := s.Name // an OpenStackMachine's server has its name
			for _, r := range s.OwnerReferences {
				if r.Kind == infra.OpenStackMachineKind && ptr.Deref(r.Controller, false) {
					osmName = r.Name
				}
			}
			// At the version the OpenshiftAssistedConfig controller reads it
			// (the CRD's contract label): the same cache, not a second one.
			osm, err := external.GetObjectFromContractVersionedRef(ctx, c, clusterv1.ContractVersionedObjectReference{
				APIGroup: infra.Group, Kind: infra.OpenStackMachineKind, Name: osmName}, namespace)
			if err != nil {
				if client.IgnoreNotFound(err) == nil {
					continue
				}
				return nil, fmt.Errorf("getting OpenStackMachine %s: %w", osmName, err)
			}
			if m := ownerMachine(osm.GetOwnerReferences()); m != "" {
				out = append(out, m)
			}
		}
	}
	return out, nil
}

func ownerMachine(refs []metav1.OwnerReference) string {
	for _, r := range refs {
		if r.Kind == "Machine" && strings.HasPrefix(r.APIVersion, clusterv1.GroupVersion.Group+"/") {
			return r.Name
		}
	}
	return ""
}
