package fakeopenstack

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// Neutron: networks, subnets, security groups, ports, trunks, tags and
// extensions.

// collections maps URL collections to kinds.
var collections = map[string]Kind{
	"networks": Networks, "subnets": Subnets, "security-groups": SecurityGroups, "ports": Ports, "trunks": Trunks,
	"security-group-rules": SecurityGroupRules, "routers": Routers, "floatingips": FloatingIPs,
}

// singular is the key of one object of a kind in Neutron's answers.
func singular(kind Kind) string { return strings.TrimSuffix(string(kind), "s") }

func (c *Cloud) hasExt(alias string) bool { return slices.Contains(c.ext, alias) }

// collection returns the kind of a URL collection, or a 404 if Neutron
// does not serve it (trunks need the trunk extension).
func (c *Cloud) collection(r *http.Request) (Kind, *apiError) {
	kind, ok := collections[r.PathValue("collection")]
	if !ok || kind == Trunks && !c.hasExt("trunk") || (kind == Routers || kind == FloatingIPs) && !c.l3() {
		return "", neutronError(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
	}
	return kind, nil
}

func (c *Cloud) listExtensions(*http.Request) (int, any, *apiError) {
	out := []object{}
	for _, a := range c.ext {
		out = append(out, object{"alias": a, "name": a, "description": "", "links": []any{}, "updated": ""})
	}
	return http.StatusOK, object{"extensions": out}, nil
}

func (c *Cloud) listNeutron(r *http.Request) (int, any, *apiError) {
	kind, err := c.collection(r)
	if err != nil {
		return 0, nil, err
	}
	out := []object{}
	for _, o := range c.objs[kind] {
		if visible(kind, o) && matches(o, r.URL.Query()) {
			out = append(out, c.render(kind, o))
		}
	}
	return http.StatusOK, object{string(kind): out}, nil
}

// matches applies Neutron's list filters: a repeated filter means any of
// its values; tags, tags-any, not-tags and not-tags-any take a comma
// separated list.
func matches(o object, q url.Values) bool {
	tags := strs(o["tags"])
	has := func(t string) bool { return slices.Contains(tags, t) }
	for k, vs := range q {
		var want []string
		for _, v := range vs {
			want = append(want, strings.Split(v, ",")...)
		}
		var ok bool
		switch k {
		case "fields", "limit", "marker", "sort_key", "sort_dir", "page_reverse":
			ok = true
		case "tags":
			ok = every(want, has)
		case "tags-any":
			ok = slices.ContainsFunc(want, has)
		case "not-tags":
			ok = !every(want, has)
		case "not-tags-any":
			ok = !slices.ContainsFunc(want, has)
		default:
			ok = slices.Contains(vs, str(o[k]))
		}
		if !ok {
			return false
		}
	}
	return true
}

func every(s []string, f func(string) bool) bool {
	for _, v := range s {
		if !f(v) {
			return false
		}
	}
	return true
}

func (c *Cloud) getNeutron(r *http.Request) (int, any, *apiError) {
	kind, err := c.collection(r)
	if err != nil {
		return 0, nil, err
	}
	o := c.get(kind, r.PathValue("id"))
	if o == nil || !visible(kind, o) {
		return 0, nil, neutronError(http.StatusNotFound, "NotFound", "%s %s could not be found.", kind, r.PathValue("id"))
	}
	return http.StatusOK, object{singular(kind): c.render(kind, o)}, nil
}

func newSubnet(networkID, name, cidr string) (object, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, err
	}
	version := 4
	if p.Addr().Is6() {
		version = 6
	}
	return object{"name": name, "network_id": networkID, "cidr": p.Masked().String(), "ip_version": version,
		"gateway_ip": p.Masked().Addr().Next().String(), "enable_dhcp": true}, nil
}

// allocateIP returns the first free address of a subnet from .10 on.
func (c *Cloud) allocateIP(subnet object) (string, bool) {
	p := netip.MustParsePrefix(str(subnet["cidr"]))
	a := p.Addr()
	for range 10 {
		a = a.Next()
	}
	for ; p.Contains(a); a = a.Next() {
		if !c.ipUsed(a.String()) {
			return a.String(), true
		}
	}
	return "", false
}

func (c *Cloud) ipUsed(ip string) bool {
	for _, p := range c.objs[Ports] {
		for _, f := range list(p["fixed_ips"]) {
			if str(f.(object)["ip_address"]) == ip {
				return true
			}
		}
	}
	return false
}

// newPort validates a port create request and returns the port, as
// Neutron would store it.
func (c *Cloud) newPort(req object) (object, *apiError) {
	netID := str(req["network_id"])
	net := c.get(Networks, netID)
	if net == nil {
		return nil, neutronError(http.StatusNotFound, "NetworkNotFound", "Network %s could not be found.", netID)
	}
	if _, ok := req["tags"]; ok && !c.hasExt("tag-creation") {
		return nil, neutronError(http.StatusBadRequest, "HTTPBadRequest", "Unrecognized attribute(s) 'tags'")
	}
	if _, ok := req["propagate_uplink_status"]; ok && !c.hasExt("uplink-status-propagation") {
		return nil, neutronError(http.StatusBadRequest, "HTTPBadRequest", "Unrecognized attribute(s) 'propagate_uplink_status'")
	}
	p := object{"admin_state_up": true, "device_id": "", "device_owner": "", "status": "DOWN",
		"binding:host_id": "", "binding:vnic_type": "normal", "binding:profile": object{},
		"allowed_address_pairs": []any{}, "port_security_enabled": true, "description": "", "tags": []string{}}
	for k, v := range req {
		p[k] = v
	}
	p["project_id"], p["tenant_id"] = ProjectID, ProjectID
	p["tags"] = strings0(strs(p["tags"]))
	if str(p["mac_address"]) == "" {
		p["mac_address"] = fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", c.seq>>16&0xff, c.seq>>8&0xff, c.seq&0xff)
	}

	secure := boolean(p["port_security_enabled"], true)
	groups, explicit := req["security_groups"]
	switch {
	case !explicit && secure:
		p["security_groups"] = []string{}
		for _, g := range c.objs[SecurityGroups] {
			if g["name"] == "default" {
				p["security_groups"] = []string{g["id"].(string)}
			}
		}
	case !secure && len(list(groups)) > 0:
		return nil, neutronError(http.StatusConflict, "PortSecurityAndIPRequiredForSecurityGroups",
			"Port security must be enabled and port must have an IP address in order to use security groups.")
	case !secure && len(list(p["allowed_address_pairs"])) > 0:
		return nil, neutronError(http.StatusConflict, "AddressPairAndPortSecurityRequired",
			"Port Security must be enabled in order to have allowed address pairs on a port.")
	default:
		p["security_groups"] = strings0(strs(groups))
	}
	for _, g := range strs(p["security_groups"]) {
		if c.get(SecurityGroups, g) == nil {
			return nil, neutronError(http.StatusNotFound, "SecurityGroupNotFound", "Security group %s does not exist", g)
		}
	}

	ips, err := c.fixedIPs(net, list(req["fixed_ips"]))
	if err != nil {
		return nil, err
	}
	p["fixed_ips"] = ips
	return p, nil
}

// fixedIPs resolves the requested fixed IPs of a port on net; none
// requested means one address from the network's first subnet.
func (c *Cloud) fixedIPs(net object, req []any) ([]any, *apiError) {
	subnets := strs(net["subnets"])
	if len(req) == 0 && len(subnets) > 0 {
		req = []any{object{"subnet_id": subnets[0]}}
	}
	out := []any{}
	for _, f := range req {
		f := f.(object)
		subnetID, ip := str(f["subnet_id"]), str(f["ip_address"])
		addr, bad := netip.ParseAddr(ip)
		if ip != "" && bad != nil {
			return nil, neutronError(http.StatusBadRequest, "InvalidInput", "Invalid input for operation: '%s' is not a valid IP address.", ip)
		}
		inSubnet := func(id string) bool { return netip.MustParsePrefix(str(c.get(Subnets, id)["cidr"])).Contains(addr) }
		if subnetID == "" {
			if i := slices.IndexFunc(subnets, inSubnet); i >= 0 {
				subnetID = subnets[i]
			}
		}
		subnet := c.get(Subnets, subnetID)
		if subnet == nil || !slices.Contains(subnets, subnetID) || ip != "" && !inSubnet(subnetID) {
			return nil, neutronError(http.StatusBadRequest, "InvalidInput",
				"Invalid input for operation: Failed to create port on network %s, because fixed_ips included invalid subnet %s.", net["id"], subnetID)
		}
		switch {
		case ip == "":
			var ok bool
			if ip, ok = c.allocateIP(subnet); !ok {
				return nil, neutronError(http.StatusConflict, "IpAddressGenerationFailure", "No more IP addresses available on network %s.", net["id"])
			}
		case c.ipUsed(ip):
			return nil, neutronError(http.StatusConflict, "IpAddressAlreadyAllocated",
				"IP address %s already allocated in subnet %s", ip, subnetID)
		}
		out = append(out, object{"subnet_id": subnetID, "ip_address": ip})
	}
	return out, nil
}

func (c *Cloud) createPort(r *http.Request) (int, any, *apiError) {
	var req struct{ Port object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	if over, _ := c.overQuota(QuotaPorts, Ports); over {
		return 0, nil, neutronError(http.StatusConflict, "OverQuota", "Quota exceeded for resources: ['port'].")
	}
	p, err := c.newPort(req.Port)
	if err != nil {
		return 0, nil, err
	}
	c.add(Ports, p)
	return http.StatusCreated, object{"port": p}, nil
}

func (c *Cloud) deletePort(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	p := c.get(Ports, id)
	if p == nil || !visible(Ports, p) {
		return 0, nil, neutronError(http.StatusNotFound, "PortNotFound", "Port %s could not be found.", id)
	}
	if o := str(p["device_owner"]); o == ownerRouterInterface || o == ownerRouterGateway || o == ownerFloatingIP {
		return 0, nil, neutronError(http.StatusConflict, "ServicePortInUse",
			"Port %s cannot be deleted directly via the port API: has device owner %s.", id, o)
	}
	for _, t := range c.objs[Trunks] {
		if t["port_id"] == id {
			return 0, nil, neutronError(http.StatusConflict, "PortInUseAsTrunkParent",
				"Port %s is currently a parent port for trunk %s.", id, t["id"])
		}
	}
	// A floating IP on the port stays allocated, detached.
	for _, f := range c.objs[FloatingIPs] {
		if f["port_id"] == id {
			disassociate(f)
		}
	}
	c.remove(Ports, id)
	return http.StatusNoContent, nil, nil
}

// render is an object as the API shows it.
func (c *Cloud) render(kind Kind, o object) object {
	if kind == SecurityGroups {
		return c.renderGroup(o)
	}
	return o
}

func (c *Cloud) createTrunk(r *http.Request) (int, any, *apiError) {
	if !c.hasExt("trunk") {
		return 0, nil, neutronError(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
	}
	var req struct{ Trunk object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	portID := str(req.Trunk["port_id"])
	if c.get(Ports, portID) == nil {
		return 0, nil, neutronError(http.StatusNotFound, "PortNotFound", "Port %s could not be found.", portID)
	}
	for _, t := range c.objs[Trunks] {
		if t["port_id"] == portID {
			return 0, nil, neutronError(http.StatusConflict, "TrunkPortInUse", "Port %s is in use by another trunk.", portID)
		}
	}
	if _, ok := req.Trunk["tags"]; ok && !c.hasExt("tag-creation") {
		return 0, nil, neutronError(http.StatusBadRequest, "HTTPBadRequest", "Unrecognized attribute(s) 'tags'")
	}
	t := neutron(object{"admin_state_up": true, "status": "DOWN", "sub_ports": []any{}}, strs(req.Trunk["tags"]))
	for k, v := range req.Trunk {
		if k != "tags" {
			t[k] = v
		}
	}
	c.add(Trunks, t)
	return http.StatusCreated, object{"trunk": t}, nil
}

func (c *Cloud) deleteTrunk(r *http.Request) (int, any, *apiError) {
	if !c.hasExt("trunk") {
		return 0, nil, neutronError(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
	}
	id := r.PathValue("id")
	t := c.get(Trunks, id)
	if t == nil {
		return 0, nil, neutronError(http.StatusNotFound, "TrunkNotFound", "Trunk %s could not be found.", id)
	}
	// Neutron refuses while the parent port is bound to a server.
	if p := c.get(Ports, str(t["port_id"])); p != nil && str(p["device_id"]) != "" {
		return 0, nil, neutronError(http.StatusConflict, "TrunkInUse", "Trunk %s is currently in use.", id)
	}
	c.remove(Trunks, id)
	return http.StatusNoContent, nil, nil
}

// replaceTags is PUT /v2.0/{collection}/{id}/tags (standard-attr-tag).
func (c *Cloud) replaceTags(r *http.Request) (int, any, *apiError) {
	kind, err := c.collection(r)
	if err != nil {
		return 0, nil, err
	}
	if !c.hasExt("standard-attr-tag") {
		return 0, nil, neutronError(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
	}
	var req struct{ Tags []string }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	o := c.get(kind, r.PathValue("id"))
	if o == nil {
		return 0, nil, neutronError(http.StatusNotFound, "NotFound", "%s %s could not be found.", kind, r.PathValue("id"))
	}
	o["tags"] = strings0(req.Tags)
	return http.StatusOK, object{"tags": o["tags"]}, nil
}
