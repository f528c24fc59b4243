package cluster

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
)

// Endpoint is where the API is reached and how.
type Endpoint struct {
	Host string
	Port int
	// LoadBalancer is set when an Octavia load balancer fronts the API.
	LoadBalancer *infrav1.LoadBalancer
	// FloatingIP is the API floating IP that control-plane machines must
	// hold when there is no load balancer ("" otherwise).
	FloatingIP string
}

// UsesFloatingIPs reports, from the spec and the status, whether the
// cluster may hold floating IPs: an external network is enabled and was
// found (ext), or the status cannot say (never completed, or lost). A
// cluster without floating IPs makes no floating-IP call, so a cloud
// without Neutron's layer-3 extension serves it.
func (r Request) UsesFloatingIPs(ext *infrav1.NetworkStatus, statusComplete bool) bool {
	if !r.externalEnabled() {
		return false
	}
	return ext != nil || !statusComplete
}

// APIFloatingIPPossible reports whether the API endpoint may have a
// floating IP (see UsesFloatingIPs).
func (r Request) APIFloatingIPPossible(ext *infrav1.NetworkStatus, statusComplete bool) bool {
	if a := r.Spec.APIServer; a != nil && a.EnableFloatingIP != nil && !*a.EnableFloatingIP {
		return false
	}
	return r.UsesFloatingIPs(ext, statusComplete)
}

// floatingIPWanted reports whether the API gets a floating IP.
func (r Request) floatingIPWanted(ext *infrav1.NetworkStatus) bool {
	if ext == nil {
		return false
	}
	if a := r.Spec.APIServer; a != nil && a.EnableFloatingIP != nil {
		return *a.EnableFloatingIP
	}
	return true
}

// EnsureAPIEndpoint makes the API reachable, in CAPO's order of
// preference: a load balancer (with a floating IP on its VIP when there is
// an external network); else the user's controlPlaneEndpoint; else a
// floating IP; else apiServer.fixedIP.
func EnsureAPIEndpoint(ctx context.Context, s Scope, req Request, net *infrav1.NetworkStatusWithSubnets, ext *infrav1.NetworkStatus, known *infrav1.LoadBalancer) (*Endpoint, error) {
	port := req.APIPort()
	useLB, err := req.UseLoadBalancer(s)
	if err != nil {
		return nil, err
	}
	if useLB {
		lb, err := ensureLoadBalancer(ctx, s, req, net, ext, known)
		if err != nil {
			return &Endpoint{LoadBalancer: lb}, err
		}
		if lb == nil {
			return nil, scope.Wait(infrav1.LoadBalancerPendingReason, lbPoll, "waiting for the load balancer's VIP")
		}
		return &Endpoint{Host: lb.IP, Port: port, LoadBalancer: lb}, nil
	}
	if ep := req.Spec.ControlPlaneEndpoint; ep != nil && ep.Host != "" {
		return &Endpoint{Host: ep.Host, Port: int(ep.Port)}, nil
	}
	if req.floatingIPWanted(ext) {
		var want string
		if a := req.Spec.APIServer; a != nil {
			want = ptr.Deref(a.FloatingIP, "")
		}
		fip, err := EnsureFloatingIP(ctx, s, req, ext.ID, want, req.APIFloatingIPDescription(), "")
		if err != nil {
			return nil, err
		}
		return &Endpoint{Host: fip.FloatingIP, Port: port, FloatingIP: fip.FloatingIP}, nil
	}
	if a := req.Spec.APIServer; a != nil && ptr.Deref(a.FixedIP, "") != "" {
		return &Endpoint{Host: *a.FixedIP, Port: port}, nil
	}
	return nil, terminal(clients.ReasonInvalidSpec, "the API cannot be reached: there is no load balancer, no controlPlaneEndpoint, no external network for a floating IP and no apiServer.fixedIP")
}

// ControlPlaneEndpoint is the endpoint in CAPI's form.
func (e *Endpoint) ControlPlaneEndpoint() clusterv1.APIEndpoint {
	return clusterv1.APIEndpoint{Host: e.Host, Port: int32(e.Port)}
}

// EnsureFloatingIP finds the floating IP with the given address, or the
// one with the description, or creates it; and points it at portID when
// one is given. One list, and a create or an update when needed.
func EnsureFloatingIP(ctx context.Context, s Scope, req Request, extNetID, address, description, portID string) (*floatingips.FloatingIP, error) {
	q := floatingips.ListOpts{FloatingNetworkID: extNetID}
	if address != "" {
		q.FloatingIP = address
	} else {
		q.Description = description
		q.ProjectID = s.Clients.ProjectID
	}
	list, err := s.Clients.NetworkInfra.ListFloatingIPs(ctx, q)
	if err != nil {
		return nil, clients.Classify(err, "looking up a floating IP")
	}
	if len(list) == 0 && address == "" && portID != "" {
		// A floating IP already on the port (CAPO's, on the load
		// balancer's VIP) is taken over rather than a second one refused.
		if list, err = adoptPortFloatingIP(ctx, s, extNetID, portID, description); err != nil {
			return nil, err
		}
	}
	var fip *floatingips.FloatingIP
	switch {
	case len(list) == 1:
		fip = &list[0]
	case len(list) > 1:
		return nil, terminal(clients.ReasonAmbiguous, "%d floating IPs match %q; delete the extra ones", len(list), description)
	case address != "":
		// A user-given address not allocated yet: allocate exactly it.
		fallthrough
	default:
		created, err := s.Clients.NetworkInfra.CreateFloatingIP(ctx, floatingips.CreateOpts{
			FloatingNetworkID: extNetID, FloatingIP: address, Description: description, PortID: portID})
		if err != nil {
			return nil, clients.Classify(err, "allocating a floating IP")
		}
		s.Log.Info("Allocated floating IP", "address", created.FloatingIP, "description", description)
		return created, nil
	}
	if portID != "" && fip.PortID != portID {
		updated, err := s.Clients.NetworkInfra.AssociateFloatingIP(ctx, fip.ID, portID)
		if err != nil {
			return nil, clients.Classify(err, "attaching floating IP "+fip.FloatingIP)
		}
		fip = updated
	}
	return fip, nil
}

// adoptPortFloatingIP returns the floating IP on the port, given the
// description that identifies it from now on (deletion finds it by that);
// none if the port has none.
func adoptPortFloatingIP(ctx context.Context, s Scope, extNetID, portID, description string) ([]floatingips.FloatingIP, error) {
	list, err := s.Clients.NetworkInfra.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingNetworkID: extNetID, PortID: portID})
	if err != nil {
		return nil, clients.Classify(err, "looking up the floating IP of port "+portID)
	}
	if len(list) != 1 {
		return nil, nil
	}
	fip, err := s.Clients.NetworkInfra.SetFloatingIPDescription(ctx, list[0].ID, description)
	if err != nil {
		return nil, clients.Classify(err, "taking over floating IP "+list[0].FloatingIP)
	}
	s.Log.Info("Took over floating IP", "address", fip.FloatingIP, "port", portID)
	return []floatingips.FloatingIP{*fip}, nil
}
