package fakeopenstack

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
)

// Neutron for a cluster's infrastructure: networks, subnets and security
// groups created and deleted through the API, security group rules,
// routers with their gateway and interfaces (the "router" extension, also
// called layer 3) and floating IPs. docs/openstack/fake-cloud.md lists
// each behaviour with the Neutron API reference section it mirrors.

// Device owners Neutron gives the ports it makes for itself.
const (
	ownerDHCP            = "network:dhcp"
	ownerRouterInterface = "network:router_interface"
	ownerRouterGateway   = "network:router_gateway"
	ownerFloatingIP      = "network:floatingip"
)

// l3 reports whether routers and floating IPs are served.
func (c *Cloud) l3() bool { return c.hasExt("router") }

func l3NotFound() *apiError {
	return neutronError(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
}

// AddExternalNetwork adds an external network (router:external) of
// another project with one subnet, as an admin would have created it.
// Router gateways and floating IPs take their addresses from it.
func (c *Cloud) AddExternalNetwork(name, cidr string) (networkID, subnetID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	net := neutron(object{"name": name, "status": "ACTIVE", "admin_state_up": true, "subnets": []string{},
		"shared": false, "router:external": true, "mtu": 1500, "port_security_enabled": true}, nil)
	net["project_id"], net["tenant_id"] = adminProjectID, adminProjectID
	networkID = c.add(Networks, net)
	s, err := newSubnet(networkID, name, cidr)
	if err != nil {
		panic("fakeopenstack: AddExternalNetwork: " + err.Error())
	}
	s = neutron(s, nil)
	s["project_id"], s["tenant_id"] = adminProjectID, adminProjectID
	subnetID = c.add(Subnets, s)
	net["subnets"] = append(net["subnets"].([]string), subnetID)
	return networkID, subnetID
}

// adminProjectID owns the external networks and the ports Neutron makes
// for router gateways and floating IPs; the user does not see its ports.
const adminProjectID = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// visible reports whether the user (a member of ProjectID) sees o in a
// list or a GET: another project's ports are hidden, as Neutron's policy
// hides them from non-admins.
func visible(kind Kind, o object) bool {
	return kind != Ports || str(o["project_id"]) == ProjectID
}

// Networks and subnets.

func (c *Cloud) createNetwork(r *http.Request) (int, any, *apiError) {
	var req struct{ Network object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Network
	if _, ok := in["tags"]; ok && !c.hasExt("tag-creation") {
		return 0, nil, neutronError(http.StatusBadRequest, "HTTPBadRequest", "Unrecognized attribute(s) 'tags'")
	}
	n := neutron(object{"name": "", "status": "ACTIVE", "admin_state_up": true, "subnets": []string{},
		"shared": false, "router:external": false, "mtu": 1442, "port_security_enabled": true}, strs(in["tags"]))
	for _, k := range []string{"name", "description", "admin_state_up", "mtu", "port_security_enabled"} {
		if v, ok := in[k]; ok {
			n[k] = v
		}
	}
	if _, ok := in["mtu"]; ok {
		n["mtu"] = num(in["mtu"])
	}
	c.add(Networks, n)
	return http.StatusCreated, object{"network": n}, nil
}

func (c *Cloud) deleteNetwork(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	if c.get(Networks, id) == nil {
		return 0, nil, neutronError(http.StatusNotFound, "NetworkNotFound", "Network %s could not be found.", id)
	}
	for _, p := range c.objs[Ports] {
		if p["network_id"] == id && p["device_owner"] != ownerDHCP {
			return 0, nil, neutronError(http.StatusConflict, "NetworkInUse",
				"Unable to complete operation on network %s. There are one or more ports still in use on the network.", id)
		}
	}
	c.objs[Subnets] = slices.DeleteFunc(c.objs[Subnets], func(s object) bool { return s["network_id"] == id })
	c.objs[Ports] = slices.DeleteFunc(c.objs[Ports], func(p object) bool { return p["network_id"] == id })
	c.remove(Networks, id)
	return http.StatusNoContent, nil, nil
}

func (c *Cloud) createSubnet(r *http.Request) (int, any, *apiError) {
	var req struct{ Subnet object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Subnet
	netID := str(in["network_id"])
	net := c.get(Networks, netID)
	if net == nil {
		return 0, nil, neutronError(http.StatusNotFound, "NetworkNotFound", "Network %s could not be found.", netID)
	}
	if _, ok := in["tags"]; ok && !c.hasExt("tag-creation") {
		return 0, nil, neutronError(http.StatusBadRequest, "HTTPBadRequest", "Unrecognized attribute(s) 'tags'")
	}
	s, err := newSubnet(netID, str(in["name"]), str(in["cidr"]))
	if err != nil {
		return 0, nil, neutronError(http.StatusBadRequest, "InvalidInput", "Invalid input for cidr. Reason: '%s' is not a valid IP subnet.", str(in["cidr"]))
	}
	if v := num(in["ip_version"]); v != 0 && v != s["ip_version"] {
		return 0, nil, neutronError(http.StatusBadRequest, "InvalidInput",
			"Invalid input for operation: Cidr %s does not match ip_version %d.", s["cidr"], v)
	}
	mine := netip.MustParsePrefix(str(s["cidr"]))
	for _, id := range strs(net["subnets"]) {
		if other := netip.MustParsePrefix(str(c.get(Subnets, id)["cidr"])); other.Overlaps(mine) {
			return 0, nil, neutronError(http.StatusBadRequest, "InvalidInput",
				"Invalid input for operation: Requested subnet with cidr: %s for network: %s overlaps with another subnet.", mine, netID)
		}
	}
	for _, k := range []string{"description", "dns_nameservers", "allocation_pools", "gateway_ip", "enable_dhcp"} {
		if v, ok := in[k]; ok {
			s[k] = v
		}
	}
	s = neutron(s, strs(in["tags"]))
	id := c.add(Subnets, s)
	net["subnets"] = append(strs(net["subnets"]), id)
	return http.StatusCreated, object{"subnet": s}, nil
}

func (c *Cloud) deleteSubnet(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	s := c.get(Subnets, id)
	if s == nil {
		return 0, nil, neutronError(http.StatusNotFound, "SubnetNotFound", "Subnet %s could not be found.", id)
	}
	for _, p := range c.objs[Ports] {
		if p["device_owner"] != ownerDHCP && portOnSubnet(p, id) {
			return 0, nil, neutronError(http.StatusConflict, "SubnetInUse",
				"Unable to complete operation on subnet %s: One or more ports have an IP allocation from this subnet.", id)
		}
	}
	if net := c.get(Networks, str(s["network_id"])); net != nil {
		net["subnets"] = slices.DeleteFunc(strs(net["subnets"]), func(x string) bool { return x == id })
	}
	c.remove(Subnets, id)
	return http.StatusNoContent, nil, nil
}

func portOnSubnet(p object, subnetID string) bool {
	for _, f := range list(p["fixed_ips"]) {
		if str(f.(object)["subnet_id"]) == subnetID {
			return true
		}
	}
	return false
}

// Security groups and their rules. A group's rules are stored apart and
// shown inside the group, as Neutron does.

func (c *Cloud) createSecurityGroup(r *http.Request) (int, any, *apiError) {
	var req struct {
		SecurityGroup object `json:"security_group"`
	}
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.SecurityGroup
	if _, ok := in["tags"]; ok && !c.hasExt("tag-creation") {
		return 0, nil, neutronError(http.StatusBadRequest, "HTTPBadRequest", "Unrecognized attribute(s) 'tags'")
	}
	g := neutron(object{"name": str(in["name"]), "description": str(in["description"]), "stateful": true}, strs(in["tags"]))
	id := c.add(SecurityGroups, g)
	// Neutron opens egress in every new group.
	for _, ether := range []string{"IPv4", "IPv6"} {
		c.add(SecurityGroupRules, newRule(object{"security_group_id": id, "direction": "egress", "ethertype": ether}))
	}
	return http.StatusCreated, object{"security_group": c.renderGroup(g)}, nil
}

func newRule(in object) object {
	r := neutron(object{"description": "", "protocol": nil, "port_range_min": nil, "port_range_max": nil,
		"remote_ip_prefix": nil, "remote_group_id": nil, "ethertype": "IPv4"}, nil)
	for k, v := range in {
		if v != nil && v != "" {
			r[k] = v
		}
	}
	for _, k := range []string{"port_range_min", "port_range_max"} {
		if r[k] != nil {
			r[k] = num(r[k])
		}
	}
	return r
}

// renderGroup is a group with its rules.
func (c *Cloud) renderGroup(g object) object {
	out := object{}
	for k, v := range g {
		out[k] = v
	}
	rules := []object{}
	for _, r := range c.objs[SecurityGroupRules] {
		if r["security_group_id"] == g["id"] {
			rules = append(rules, r)
		}
	}
	out["security_group_rules"] = rules
	return out
}

func (c *Cloud) deleteSecurityGroup(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	if c.get(SecurityGroups, id) == nil {
		return 0, nil, neutronError(http.StatusNotFound, "SecurityGroupNotFound", "Security group %s does not exist", id)
	}
	for _, p := range c.objs[Ports] {
		if slices.Contains(strs(p["security_groups"]), id) {
			return 0, nil, neutronError(http.StatusConflict, "SecurityGroupInUse", "Security Group %s in use.", id)
		}
	}
	// The group's rules go with it, and so do other groups' rules that
	// name it as their remote group.
	c.objs[SecurityGroupRules] = slices.DeleteFunc(c.objs[SecurityGroupRules], func(r object) bool {
		return r["security_group_id"] == id || r["remote_group_id"] == id
	})
	c.remove(SecurityGroups, id)
	return http.StatusNoContent, nil, nil
}

// createRules is POST security-group-rules, with one rule
// ("security_group_rule") or several at once ("security_group_rules");
// a bulk request creates all or nothing.
func (c *Cloud) createRules(r *http.Request) (int, any, *apiError) {
	var req struct {
		One  object   `json:"security_group_rule"`
		Bulk []object `json:"security_group_rules"`
	}
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Bulk
	if req.One != nil {
		in = []object{req.One}
	}
	var made []object
	for _, o := range in {
		rule, err := c.validRule(o, made)
		if err != nil {
			return 0, nil, err
		}
		made = append(made, rule)
	}
	for _, rule := range made {
		c.add(SecurityGroupRules, rule)
	}
	if req.One != nil {
		return http.StatusCreated, object{"security_group_rule": made[0]}, nil
	}
	return http.StatusCreated, object{"security_group_rules": made}, nil
}

func (c *Cloud) validRule(in object, pending []object) (object, *apiError) {
	rule := newRule(in)
	g := str(rule["security_group_id"])
	if c.get(SecurityGroups, g) == nil {
		return nil, neutronError(http.StatusNotFound, "SecurityGroupNotFound", "Security group %s does not exist", g)
	}
	if d := str(rule["direction"]); d != "ingress" && d != "egress" {
		return nil, neutronError(http.StatusBadRequest, "InvalidInput", "Invalid input for direction. Reason: '%s' is not in ['ingress', 'egress'].", d)
	}
	if e := str(rule["ethertype"]); e != "IPv4" && e != "IPv6" {
		return nil, neutronError(http.StatusBadRequest, "InvalidInput", "Invalid input for ethertype. Reason: '%s' is not in ['IPv4', 'IPv6'].", e)
	}
	if (rule["port_range_min"] != nil || rule["port_range_max"] != nil) && rule["protocol"] == nil {
		return nil, neutronError(http.StatusBadRequest, "SecurityGroupProtocolRequiredWithPorts",
			"Must also specify protocol if port range is given.")
	}
	if lo, hi := rule["port_range_min"], rule["port_range_max"]; lo != nil && hi != nil && num(lo) > num(hi) {
		return nil, neutronError(http.StatusBadRequest, "SecurityGroupInvalidPortRange",
			"For TCP/UDP protocols, port_range_min must be <= port_range_max")
	}
	if rule["remote_group_id"] != nil && rule["remote_ip_prefix"] != nil {
		return nil, neutronError(http.StatusBadRequest, "SecurityGroupRemoteGroupAndRemoteIpPrefix",
			"Only remote_ip_prefix or remote_group_id may be provided.")
	}
	if rg := rule["remote_group_id"]; rg != nil && c.get(SecurityGroups, str(rg)) == nil {
		return nil, neutronError(http.StatusNotFound, "SecurityGroupNotFound", "Security group %s does not exist", str(rg))
	}
	key := ruleKey(rule)
	for _, other := range append(slices.Clone(c.objs[SecurityGroupRules]), pending...) {
		if ruleKey(other) == key {
			return nil, neutronError(http.StatusConflict, "SecurityGroupRuleExists",
				"Security group rule already exists. Rule id is %s.", str(other["id"]))
		}
	}
	return rule, nil
}

func ruleKey(r object) string {
	return fmt.Sprint(r["security_group_id"], "|", r["direction"], "|", r["ethertype"], "|", r["protocol"], "|",
		r["port_range_min"], "|", r["port_range_max"], "|", r["remote_ip_prefix"], "|", r["remote_group_id"])
}

func (c *Cloud) deleteRule(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	if c.get(SecurityGroupRules, id) == nil {
		return 0, nil, neutronError(http.StatusNotFound, "SecurityGroupRuleNotFound", "Security group rule %s does not exist", id)
	}
	c.remove(SecurityGroupRules, id)
	return http.StatusNoContent, nil, nil
}

// Routers.

// AllowGatewayFixedIPs lets the user choose the fixed addresses of a router
// gateway (external_fixed_ips), as an admin may; by default Neutron's policy
// refuses them with 403.
func (c *Cloud) AllowGatewayFixedIPs() { c.locked(func() { c.adminGateway = true }) }

func (c *Cloud) createRouter(r *http.Request) (int, any, *apiError) {
	if !c.l3() {
		return 0, nil, l3NotFound()
	}
	var req struct{ Router object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Router
	if _, ok := in["tags"]; ok && !c.hasExt("tag-creation") {
		return 0, nil, neutronError(http.StatusBadRequest, "HTTPBadRequest", "Unrecognized attribute(s) 'tags'")
	}
	rt := neutron(object{"name": str(in["name"]), "description": str(in["description"]), "status": "ACTIVE",
		"admin_state_up": true, "external_gateway_info": nil, "routes": []any{}}, strs(in["tags"]))
	id := c.newID()
	rt["id"] = id
	if gw, ok := in["external_gateway_info"].(object); ok && gw != nil {
		info, err := c.gateway(id, gw)
		if err != nil {
			return 0, nil, err
		}
		rt["external_gateway_info"] = info
	}
	c.add(Routers, rt)
	return http.StatusCreated, object{"router": rt}, nil
}

// gateway plugs a router into an external network: a port of Neutron's
// with an address from the network's first subnet, or at the
// external_fixed_ips asked for (allowed with AllowGatewayFixedIPs only).
func (c *Cloud) gateway(routerID string, gw object) (object, *apiError) {
	netID := str(gw["network_id"])
	net := c.get(Networks, netID)
	if net == nil {
		return nil, neutronError(http.StatusNotFound, "NetworkNotFound", "Network %s could not be found.", netID)
	}
	if !boolean(net["router:external"], false) {
		return nil, neutronError(http.StatusBadRequest, "BadRequest", "Bad router request: Network %s is not an external network.", netID)
	}
	req := object{"network_id": netID, "device_owner": ownerRouterGateway, "device_id": routerID}
	if fixed := list(gw["external_fixed_ips"]); len(fixed) > 0 {
		// Neutron's default policy lets only an admin choose the
		// gateway's addresses.
		if !c.adminGateway {
			return nil, neutronError(http.StatusForbidden, "PolicyNotAuthorized",
				"(rule:create_router and (rule:create_router:external_gateway_info and (rule:create_router:external_gateway_info:network_id and rule:create_router:external_gateway_info:external_fixed_ips))) is disallowed by policy")
		}
		req["fixed_ips"] = fixed
	}
	p, err := c.newPort(req)
	if err != nil {
		return nil, err
	}
	p["project_id"], p["tenant_id"], p["security_groups"] = "", "", []string{}
	c.add(Ports, p)
	return object{"network_id": netID, "enable_snat": true, "external_fixed_ips": p["fixed_ips"]}, nil
}

func (c *Cloud) routerInterfaces(routerID string) []object {
	var out []object
	for _, p := range c.objs[Ports] {
		if p["device_id"] == routerID && p["device_owner"] == ownerRouterInterface {
			out = append(out, p)
		}
	}
	return out
}

// routerInterface is PUT routers/{id}/add_router_interface and
// remove_router_interface, by subnet.
func (c *Cloud) routerInterface(add bool) func(*http.Request) (int, any, *apiError) {
	return func(r *http.Request) (int, any, *apiError) { return c.routerInterfaceOp(r, add) }
}

func (c *Cloud) routerInterfaceOp(r *http.Request, add bool) (int, any, *apiError) {
	if !c.l3() {
		return 0, nil, l3NotFound()
	}
	id := r.PathValue("id")
	rt := c.get(Routers, id)
	if rt == nil {
		return 0, nil, neutronError(http.StatusNotFound, "RouterNotFound", "Router %s could not be found", id)
	}
	var req object
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	subnetID := str(req["subnet_id"])
	if subnetID == "" {
		return 0, nil, neutronError(http.StatusBadRequest, "BadRequest", "Bad router request: Either subnet_id or port_id must be specified.")
	}
	subnet := c.get(Subnets, subnetID)
	answer := func(p object) object {
		return object{"id": id, "subnet_id": subnetID, "subnet_ids": []string{subnetID}, "port_id": p["id"],
			"network_id": p["network_id"], "project_id": ProjectID, "tenant_id": ProjectID, "tags": []string{}}
	}
	if add {
		if subnet == nil {
			return 0, nil, neutronError(http.StatusNotFound, "SubnetNotFound", "Subnet %s could not be found.", subnetID)
		}
		if str(subnet["gateway_ip"]) == "" {
			return 0, nil, neutronError(http.StatusBadRequest, "BadRequest", "Bad router request: Subnet for router interface must have a gateway IP.")
		}
		for _, p := range c.routerInterfaces(id) {
			if portOnSubnet(p, subnetID) {
				return 0, nil, neutronError(http.StatusBadRequest, "BadRequest", "Bad router request: Router already has a port on subnet %s.", subnetID)
			}
		}
		p, err := c.newPort(object{"network_id": subnet["network_id"], "device_owner": ownerRouterInterface, "device_id": id,
			"fixed_ips": []any{object{"subnet_id": subnetID, "ip_address": str(subnet["gateway_ip"])}}})
		if err != nil {
			return 0, nil, err
		}
		p["security_groups"] = []string{}
		c.add(Ports, p)
		return http.StatusOK, answer(p), nil
	}
	for _, p := range c.routerInterfaces(id) {
		if !portOnSubnet(p, subnetID) {
			continue
		}
		for _, f := range c.objs[FloatingIPs] {
			if f["router_id"] == id && c.portOnSubnetByID(str(f["port_id"]), subnetID) {
				return 0, nil, neutronError(http.StatusConflict, "RouterInterfaceInUseByFloatingIP",
					"Router interface for subnet %s on router %s cannot be deleted, as it is required by one or more floating IPs.", subnetID, id)
			}
		}
		c.remove(Ports, str(p["id"]))
		return http.StatusOK, answer(p), nil
	}
	return 0, nil, neutronError(http.StatusNotFound, "RouterInterfaceNotFoundForSubnet",
		"Router %s has no interface on subnet %s", id, subnetID)
}

func (c *Cloud) portOnSubnetByID(portID, subnetID string) bool {
	p := c.get(Ports, portID)
	return p != nil && portOnSubnet(p, subnetID)
}

func (c *Cloud) deleteRouter(r *http.Request) (int, any, *apiError) {
	if !c.l3() {
		return 0, nil, l3NotFound()
	}
	id := r.PathValue("id")
	if c.get(Routers, id) == nil {
		return 0, nil, neutronError(http.StatusNotFound, "RouterNotFound", "Router %s could not be found", id)
	}
	if len(c.routerInterfaces(id)) > 0 {
		return 0, nil, neutronError(http.StatusConflict, "RouterInUse", "Router %s still has ports", id)
	}
	c.objs[Ports] = slices.DeleteFunc(c.objs[Ports], func(p object) bool {
		return p["device_id"] == id && p["device_owner"] == ownerRouterGateway
	})
	c.remove(Routers, id)
	return http.StatusNoContent, nil, nil
}

// Floating IPs.

func (c *Cloud) createFloatingIP(r *http.Request) (int, any, *apiError) {
	if !c.l3() {
		return 0, nil, l3NotFound()
	}
	var req struct{ Floatingip object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Floatingip
	netID := str(in["floating_network_id"])
	net := c.get(Networks, netID)
	if net == nil {
		return 0, nil, neutronError(http.StatusNotFound, "NetworkNotFound", "Network %s could not be found.", netID)
	}
	if !boolean(net["router:external"], false) {
		return 0, nil, neutronError(http.StatusBadRequest, "BadRequest", "Bad floatingip request: Network %s is not a valid external network.", netID)
	}
	want := object{"network_id": netID, "device_owner": ownerFloatingIP}
	if a := str(in["floating_ip_address"]); a != "" {
		want["fixed_ips"] = []any{object{"ip_address": a}}
	}
	p, err := c.newPort(want)
	if err != nil {
		return 0, nil, err
	}
	p["project_id"], p["tenant_id"], p["security_groups"] = "", "", []string{}
	fip := neutron(object{"floating_network_id": netID, "floating_ip_address": list(p["fixed_ips"])[0].(object)["ip_address"],
		"description": str(in["description"]), "status": "DOWN", "port_id": nil, "fixed_ip_address": nil, "router_id": nil}, nil)
	fip["id"] = c.newID()
	p["device_id"] = fip["id"]
	if port := str(in["port_id"]); port != "" {
		if err := c.associate(fip, port); err != nil {
			return 0, nil, err
		}
	}
	c.add(Ports, p)
	c.add(FloatingIPs, fip)
	return http.StatusCreated, object{"floatingip": fip}, nil
}

// associate points fip at a port: the port's subnet must reach the
// floating IP's network through a router, and the port must not hold
// another floating IP.
func (c *Cloud) associate(fip object, portID string) *apiError {
	p := c.get(Ports, portID)
	if p == nil || !visible(Ports, p) {
		return neutronError(http.StatusNotFound, "PortNotFound", "Port %s could not be found.", portID)
	}
	ips := list(p["fixed_ips"])
	if len(ips) == 0 {
		return neutronError(http.StatusBadRequest, "BadRequest", "Bad floatingip request: Port %s does not have any IP addresses.", portID)
	}
	for _, other := range c.objs[FloatingIPs] {
		if other["port_id"] == portID && other["id"] != fip["id"] {
			return neutronError(http.StatusConflict, "FloatingIPPortAlreadyAssociated",
				"Cannot associate floating IP %s (%s) with port %s, as that fixed IP already has a floating IP on external network %s.",
				fip["floating_ip_address"], fip["id"], portID, other["floating_network_id"])
		}
	}
	fixed := ips[0].(object)
	subnetID := str(fixed["subnet_id"])
	extNet := str(fip["floating_network_id"])
	for _, rt := range c.objs[Routers] {
		gw, _ := rt["external_gateway_info"].(object)
		if gw == nil || gw["network_id"] != extNet {
			continue
		}
		for _, ifc := range c.routerInterfaces(str(rt["id"])) {
			if portOnSubnet(ifc, subnetID) {
				fip["port_id"], fip["fixed_ip_address"], fip["router_id"], fip["status"] = portID, fixed["ip_address"], rt["id"], "ACTIVE"
				return nil
			}
		}
	}
	return neutronError(http.StatusNotFound, "ExternalGatewayForFloatingIPNotFound",
		"External network %s is not reachable from subnet %s. Therefore, cannot associate Port %s with a Floating IP.", extNet, subnetID, portID)
}

func disassociate(fip object) {
	fip["port_id"], fip["fixed_ip_address"], fip["router_id"], fip["status"] = nil, nil, nil, "DOWN"
}

// updateFloatingIP is PUT floatingips/{id}: port_id associates, null
// disassociates; description may change.
func (c *Cloud) updateFloatingIP(r *http.Request) (int, any, *apiError) {
	if !c.l3() {
		return 0, nil, l3NotFound()
	}
	id := r.PathValue("id")
	fip := c.get(FloatingIPs, id)
	if fip == nil {
		return 0, nil, neutronError(http.StatusNotFound, "FloatingIPNotFound", "Floating IP %s could not be found", id)
	}
	var req struct{ Floatingip object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	if v, ok := req.Floatingip["port_id"]; ok {
		if port := str(v); port == "" {
			disassociate(fip)
		} else if err := c.associate(fip, port); err != nil {
			return 0, nil, err
		}
	}
	if v, ok := req.Floatingip["description"]; ok {
		fip["description"] = str(v)
	}
	return http.StatusOK, object{"floatingip": fip}, nil
}

func (c *Cloud) deleteFloatingIP(r *http.Request) (int, any, *apiError) {
	if !c.l3() {
		return 0, nil, l3NotFound()
	}
	id := r.PathValue("id")
	if c.get(FloatingIPs, id) == nil {
		return 0, nil, neutronError(http.StatusNotFound, "FloatingIPNotFound", "Floating IP %s could not be found", id)
	}
	c.objs[Ports] = slices.DeleteFunc(c.objs[Ports], func(p object) bool {
		return p["device_id"] == id && p["device_owner"] == ownerFloatingIP
	})
	c.remove(FloatingIPs, id)
	return http.StatusNoContent, nil, nil
}
