package fakeopenstack

import (
	"maps"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Nova: servers, flavors, availability zones, server groups.

// microversion is the compute microversion a request asks for (2.1 when
// it asks for none), as minor number of 2.x.
func microversion(r *http.Request) int {
	v := r.Header.Get("X-OpenStack-Nova-API-Version")
	if v == "" {
		v = strings.TrimPrefix(r.Header.Get("OpenStack-API-Version"), "compute ")
	}
	minor, err := strconv.Atoi(strings.TrimPrefix(v, "2."))
	if err != nil {
		return 1
	}
	return minor
}

func (c *Cloud) createServer(r *http.Request) (int, any, *apiError) {
	var req struct {
		Server object `json:"server"`
		Hints  object `json:"os:scheduler_hints"`
	}
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	s := req.Server
	name := str(s["name"])
	if name == "" {
		return 0, nil, badRequest("Invalid input for field/attribute name.")
	}
	if _, ok := s["tags"]; ok && microversion(r) < 52 {
		return 0, nil, badRequest("Invalid input for field/attribute server. Value: tags. Additional properties are not allowed ('tags' was unexpected)")
	}
	if over, max := c.overQuota(QuotaServers, Servers); over {
		return 0, nil, novaError(http.StatusForbidden, "forbidden",
			"Quota exceeded for instances: Requested 1, but already used %d of %d instances", len(c.objs[Servers]), max)
	}
	flavor := c.get(Flavors, str(s["flavorRef"]))
	if flavor == nil {
		return 0, nil, badRequest("Flavor %s could not be found.", str(s["flavorRef"]))
	}
	image := str(s["imageRef"])
	if image != "" && c.get(Images, image) == nil {
		return 0, nil, badRequest("Image %s could not be found.", image)
	}
	az := str(s["availability_zone"])
	if az == "" {
		az = c.azs[0]
	} else if !slices.Contains(c.azs, az) {
		return 0, nil, badRequest("The requested availability zone is not available")
	}
	group := c.get(ServerGroups, str(req.Hints["group"]))
	if req.Hints["group"] != nil && group == nil {
		return 0, nil, badRequest("Invalid server group %s", str(req.Hints["group"]))
	}
	var ports []string
	for _, n := range list(s["networks"]) {
		id := str(n.(object)["port"])
		port := c.get(Ports, id)
		switch {
		case id == "":
			return 0, nil, badRequest("fakeopenstack: networks must be given by port")
		case port == nil:
			return 0, nil, badRequest("Port id %s could not be found.", id)
		case str(port["device_id"]) != "":
			return 0, nil, novaError(http.StatusConflict, "conflictingRequest", "Port %s is still in use.", id)
		}
		ports = append(ports, id)
	}
	bdms := list(s["block_device_mapping_v2"])
	boots := image != ""
	for _, b := range bdms {
		bdm := b.(object)
		src, uuid := str(bdm["source_type"]), str(bdm["uuid"])
		switch {
		case src == "image" && c.get(Images, uuid) == nil:
			return 0, nil, badRequest("Block Device Mapping is Invalid: image %s could not be found.", uuid)
		case src == "volume" && (c.get(Volumes, uuid) == nil || c.get(Volumes, uuid)["status"] != "available"):
			return 0, nil, badRequest("Block Device Mapping is Invalid: volume %s is not available.", uuid)
		}
		if num(bdm["boot_index"]) == 0 && bdm["boot_index"] != nil {
			boots = true
		}
	}
	if !boots {
		return 0, nil, badRequest("Block Device Mapping is Invalid: Boot sequence for the instance and image/block device mapping combination is not valid.")
	}

	id := c.newID()
	st := &serverState{buildReads: c.buildReads, ports: ports}
	for _, b := range bdms {
		if vol := c.mapVolume(b.(object), id, az, len(st.volumes)); vol != "" {
			st.volumes = append(st.volumes, attached{vol, boolean(b.(object)["delete_on_termination"], false)})
		}
	}
	for _, p := range ports {
		port := c.get(Ports, p)
		port["device_id"], port["device_owner"], port["binding:host_id"], port["status"] = id, "compute:"+az, "fake-host", "ACTIVE"
	}
	if group != nil {
		group["members"] = append(group["members"].([]string), id)
	}
	o := object{
		"id": id, "name": name, "status": "BUILD", "tenant_id": ProjectID, "user_id": UserID,
		"OS-EXT-STS:vm_state": "building", "OS-EXT-STS:task_state": "spawning", "OS-EXT-STS:power_state": 0,
		"OS-EXT-AZ:availability_zone": az, "key_name": s["key_name"], "OS-EXT-SRV-ATTR:user_data": s["user_data"],
		"metadata": object{}, "tags": strings0(strs(s["tags"])), "config_drive": "", "image": "", // "": booted from a volume
	}
	o["flavor"] = object{"id": flavor["id"], "original_name": flavor["name"], "vcpus": flavor["vcpus"], "ram": flavor["ram"], "disk": flavor["disk"]}
	if image != "" {
		o["image"] = object{"id": image}
	}
	if m, ok := s["metadata"].(object); ok {
		o["metadata"] = maps.Clone(m)
	}
	if boolean(s["config_drive"], false) {
		o["config_drive"] = "True"
	}
	c.add(Servers, o)
	c.servers[id] = st
	// Like Nova, the answer holds little more than the ID.
	return http.StatusAccepted, object{"server": object{"id": id, "OS-DCF:diskConfig": "MANUAL", "adminPass": "fake-password",
		"security_groups": []object{{"name": "default"}}, "links": []object{}}}, nil
}

// mapVolume makes or attaches the Cinder volume of a block device mapping
// and returns its ID, or "" for a local disk.
func (c *Cloud) mapVolume(bdm object, serverID, az string, index int) string {
	if str(bdm["destination_type"]) != "volume" {
		return ""
	}
	attachment := []any{object{"server_id": serverID, "attachment_id": c.newID(), "device": "/dev/vd" + string(rune('a'+index))}}
	if str(bdm["source_type"]) == "volume" {
		vol := c.get(Volumes, str(bdm["uuid"]))
		vol["status"], vol["attachments"] = "in-use", attachment
		return vol["id"].(string)
	}
	vol := object{"name": "", "size": num(bdm["volume_size"]), "status": "in-use", "availability_zone": az,
		"volume_type": "__DEFAULT__", "bootable": "false", "attachments": attachment, "metadata": object{},
		"os-vol-tenant-attr:tenant_id": ProjectID, "user_id": UserID}
	if t := str(bdm["volume_type"]); t != "" {
		vol["volume_type"] = t
	}
	if str(bdm["source_type"]) == "image" {
		vol["bootable"] = "true"
		vol["volume_image_metadata"] = object{"image_id": str(bdm["uuid"])}
	}
	return c.add(Volumes, vol)
}

// readServer applies what one more read of a server shows: the end of its
// build or of its deletion. It reports false when the server is gone.
func (c *Cloud) readServer(o object) bool {
	id := o["id"].(string)
	st := c.servers[id]
	if st.deleting {
		if st.deleteReads == 0 {
			c.finishDelete(id)
			return false
		}
		st.deleteReads--
		return true
	}
	if o["status"] != "BUILD" {
		return true
	}
	if st.buildReads > 0 {
		st.buildReads--
		return true
	}
	o["OS-EXT-STS:task_state"] = nil
	if f, ok := c.failing[str(o["name"])]; ok {
		o["status"], o["OS-EXT-STS:vm_state"], o["fault"] = "ERROR", "error", maps.Clone(f)
		return true
	}
	o["status"], o["OS-EXT-STS:vm_state"], o["OS-EXT-STS:power_state"] = "ACTIVE", "active", 1
	return true
}

// renderServer adds what Nova computes: addresses from the server's ports
// and the attached volumes.
func (c *Cloud) renderServer(o object) object {
	out := maps.Clone(o)
	st := c.servers[o["id"].(string)]
	addrs := object{}
	for _, pid := range st.ports {
		port := c.get(Ports, pid)
		if port == nil {
			continue
		}
		netName := str(c.get(Networks, str(port["network_id"]))["name"])
		for _, f := range list(port["fixed_ips"]) {
			ip := str(f.(object)["ip_address"])
			version := 4
			if a, err := netip.ParseAddr(ip); err == nil && a.Is6() {
				version = 6
			}
			addrs[netName] = append(list(addrs[netName]), object{"addr": ip, "version": version,
				"OS-EXT-IPS:type": "fixed", "OS-EXT-IPS-MAC:mac_addr": port["mac_address"]})
		}
	}
	out["addresses"] = addrs
	vols := []object{}
	for _, v := range st.volumes {
		vols = append(vols, object{"id": v.id, "delete_on_termination": v.deleteOnTermination})
	}
	out["os-extended-volumes:volumes_attached"] = vols
	if st.deleting {
		out["OS-EXT-STS:task_state"] = "deleting"
	}
	return out
}

func (c *Cloud) getServer(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	o := c.get(Servers, id)
	if o == nil || !c.readServer(o) {
		return 0, nil, notFound("Instance %s could not be found.", id)
	}
	return http.StatusOK, object{"server": c.renderServer(o)}, nil
}

// listServers filters by name like Nova: a regular expression searched
// in the name, so "^name$" is an exact match.
func (c *Cloud) listServers(r *http.Request) (int, any, *apiError) {
	var re *regexp.Regexp
	if n := r.URL.Query().Get("name"); n != "" {
		var err error
		if re, err = regexp.Compile(n); err != nil {
			return 0, nil, badRequest("Invalid regular expression %q", n)
		}
	}
	out := []object{}
	for _, o := range slices.Clone(c.objs[Servers]) {
		if re != nil && !re.MatchString(str(o["name"])) {
			continue
		}
		if !c.readServer(o) { // it finished deleting
			continue
		}
		if strings.HasSuffix(r.URL.Path, "/detail") {
			out = append(out, c.renderServer(o))
		} else {
			out = append(out, object{"id": o["id"], "name": o["name"], "links": []object{}})
		}
	}
	return http.StatusOK, object{"servers": out}, nil
}

func (c *Cloud) deleteServer(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	if c.get(Servers, id) == nil {
		return 0, nil, notFound("Instance %s could not be found.", id)
	}
	if st := c.servers[id]; !st.deleting {
		st.deleting, st.deleteReads = true, c.deleteReads
		if st.deleteReads == 0 {
			c.finishDelete(id)
		}
	}
	return http.StatusNoContent, nil, nil
}

// finishDelete removes a server: its ports are unbound, its volumes
// deleted (delete_on_termination) or detached.
func (c *Cloud) finishDelete(id string) {
	for _, p := range c.objs[Ports] {
		if p["device_id"] == id {
			p["device_id"], p["device_owner"], p["binding:host_id"], p["status"] = "", "", "", "DOWN"
		}
	}
	for _, v := range c.servers[id].volumes {
		if v.deleteOnTermination {
			c.remove(Volumes, v.id)
		} else if vol := c.get(Volumes, v.id); vol != nil {
			vol["status"], vol["attachments"] = "available", []any{}
		}
	}
	for _, g := range c.objs[ServerGroups] {
		g["members"] = slices.DeleteFunc(g["members"].([]string), func(m string) bool { return m == id })
	}
	c.remove(Servers, id)
	delete(c.servers, id)
}

func (c *Cloud) listFlavors(*http.Request) (int, any, *apiError) {
	return http.StatusOK, object{"flavors": c.all(Flavors)}, nil
}

func (c *Cloud) getFlavor(r *http.Request) (int, any, *apiError) {
	f := c.get(Flavors, r.PathValue("id"))
	if f == nil {
		return 0, nil, notFound("Flavor %s could not be found.", r.PathValue("id"))
	}
	return http.StatusOK, object{"flavor": f}, nil
}

func (c *Cloud) listAvailabilityZones(*http.Request) (int, any, *apiError) {
	out := []object{}
	for _, az := range c.azs {
		out = append(out, object{"zoneName": az, "zoneState": object{"available": true}, "hosts": nil})
	}
	return http.StatusOK, object{"availabilityZoneInfo": out}, nil
}

func (c *Cloud) listServerGroups(*http.Request) (int, any, *apiError) {
	return http.StatusOK, object{"server_groups": c.all(ServerGroups)}, nil
}
