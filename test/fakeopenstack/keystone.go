package fakeopenstack

import (
	"fmt"
	"net/http"
)

// routes registers every endpoint of the fake.
func (c *Cloud) routes() {
	m := http.NewServeMux()
	c.mux = m

	m.HandleFunc("POST /identity/v3/auth/tokens", c.issueToken)
	for _, v := range []struct{ prefix, id string }{{"network", "v2.0"}, {"image", "v2.16"}, {"load-balancer", "v2.0"}} {
		m.HandleFunc("GET /"+v.prefix+"/{$}", c.versions(v.prefix, v.id))
	}

	m.HandleFunc("GET /compute/v2.1/servers", handle(c.listServers))
	m.HandleFunc("GET /compute/v2.1/servers/detail", handle(c.listServers))
	m.HandleFunc("POST /compute/v2.1/servers", handle(c.createServer))
	m.HandleFunc("GET /compute/v2.1/servers/{id}", handle(c.getServer))
	m.HandleFunc("DELETE /compute/v2.1/servers/{id}", handle(c.deleteServer))
	m.HandleFunc("GET /compute/v2.1/flavors", handle(c.listFlavors))
	m.HandleFunc("GET /compute/v2.1/flavors/detail", handle(c.listFlavors))
	m.HandleFunc("GET /compute/v2.1/flavors/{id}", handle(c.getFlavor))
	m.HandleFunc("GET /compute/v2.1/os-availability-zone", handle(c.listAvailabilityZones))
	m.HandleFunc("GET /compute/v2.1/os-server-groups", handle(c.listServerGroups))

	m.HandleFunc("GET /network/v2.0/extensions", handle(c.listExtensions))
	m.HandleFunc("GET /network/v2.0/{collection}", handle(c.listNeutron))
	m.HandleFunc("GET /network/v2.0/{collection}/{id}", handle(c.getNeutron))
	m.HandleFunc("POST /network/v2.0/ports", handle(c.createPort))
	m.HandleFunc("DELETE /network/v2.0/ports/{id}", handle(c.deletePort))
	m.HandleFunc("POST /network/v2.0/trunks", handle(c.createTrunk))
	m.HandleFunc("DELETE /network/v2.0/trunks/{id}", handle(c.deleteTrunk))
	m.HandleFunc("PUT /network/v2.0/{collection}/{id}/tags", handle(c.replaceTags))
	m.HandleFunc("POST /network/v2.0/networks", handle(c.createNetwork))
	m.HandleFunc("DELETE /network/v2.0/networks/{id}", handle(c.deleteNetwork))
	m.HandleFunc("POST /network/v2.0/subnets", handle(c.createSubnet))
	m.HandleFunc("DELETE /network/v2.0/subnets/{id}", handle(c.deleteSubnet))
	m.HandleFunc("POST /network/v2.0/security-groups", handle(c.createSecurityGroup))
	m.HandleFunc("DELETE /network/v2.0/security-groups/{id}", handle(c.deleteSecurityGroup))
	m.HandleFunc("POST /network/v2.0/security-group-rules", handle(c.createRules))
	m.HandleFunc("DELETE /network/v2.0/security-group-rules/{id}", handle(c.deleteRule))
	m.HandleFunc("POST /network/v2.0/routers", handle(c.createRouter))
	m.HandleFunc("DELETE /network/v2.0/routers/{id}", handle(c.deleteRouter))
	m.HandleFunc("PUT /network/v2.0/routers/{id}/add_router_interface", handle(c.routerInterface(true)))
	m.HandleFunc("PUT /network/v2.0/routers/{id}/remove_router_interface", handle(c.routerInterface(false)))
	m.HandleFunc("POST /network/v2.0/floatingips", handle(c.createFloatingIP))
	m.HandleFunc("PUT /network/v2.0/floatingips/{id}", handle(c.updateFloatingIP))
	m.HandleFunc("DELETE /network/v2.0/floatingips/{id}", handle(c.deleteFloatingIP))
	c.octaviaRoutes(m)

	m.HandleFunc("GET /image/v2/images", handle(c.listImages))
	m.HandleFunc("GET /image/v2/images/{id}", handle(c.getImage))

	m.HandleFunc("GET /volume/v3/{project}/volumes", handle(c.listVolumes))
	m.HandleFunc("GET /volume/v3/{project}/volumes/detail", handle(c.listVolumes))
	m.HandleFunc("GET /volume/v3/{project}/volumes/{id}", handle(c.getVolume))
	m.HandleFunc("POST /volume/v3/{project}/volumes", handle(c.createVolume))
	m.HandleFunc("DELETE /volume/v3/{project}/volumes/{id}", handle(c.deleteVolume))
}

// handle adapts a handler that answers with (status, body) or an error.
func handle(h func(*http.Request) (int, any, *apiError)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		status, v, err := h(r)
		if err != nil {
			err.write(w)
			return
		}
		reply(w, status, v)
	}
}

// versions answers an unversioned endpoint's discovery document, which
// gophercloud reads when it builds a client for it.
func (c *Cloud) versions(prefix, id string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, object{"versions": []object{{"id": id, "status": "CURRENT",
			"links": []object{{"rel": "self", "href": fmt.Sprintf("%s/%s/%s/", c.srv.URL, prefix, id[:2])}}}}})
	}
}

// issueToken is Keystone v3 password authentication, scoped to the
// project.
func (c *Cloud) issueToken(w http.ResponseWriter, r *http.Request) {
	type named struct{ ID, Name string }
	var req struct {
		Auth struct {
			Identity struct {
				Methods  []string
				Password struct {
					User struct {
						ID, Name, Password string
						Domain             named
					}
				}
			}
			Scope struct{ Project named }
		}
	}
	if err := decode(r, &req); err != nil {
		err.write(w)
		return
	}
	u, p := req.Auth.Identity.Password.User, req.Auth.Scope.Project
	if (u.Name != Username && u.ID != UserID) || u.Password != c.password || (p.Name != ProjectName && p.ID != ProjectID) {
		reply(w, http.StatusUnauthorized, object{"error": object{"code": 401, "title": "Unauthorized",
			"message": "The request you have made requires authentication."}})
		return
	}
	c.tokenSeq++
	token := fmt.Sprintf("fake-token-%d", c.tokenSeq)
	c.tokens[token] = true
	w.Header().Set("X-Subject-Token", token)
	reply(w, http.StatusCreated, object{"token": object{
		"methods":    []string{"password"},
		"expires_at": "2099-01-01T00:00:00.000000Z",
		"issued_at":  "2025-01-01T00:00:00.000000Z",
		"user":       object{"id": UserID, "name": Username, "domain": object{"id": "default", "name": DomainName}},
		"project":    object{"id": ProjectID, "name": ProjectName, "domain": object{"id": "default", "name": DomainName}},
		"roles":      []object{{"id": "member", "name": "member"}},
		"catalog":    c.catalog(),
	}})
}

func (c *Cloud) catalog() []object {
	services := []struct{ typ, name, path string }{
		{"identity", "keystone", "/identity/v3"},
		{"compute", "nova", "/compute/v2.1"},
		{"network", "neutron", "/network"},
		{"image", "glance", "/image"},
		{"block-storage", "cinder", "/volume/v3/" + ProjectID},
		{"load-balancer", "octavia", "/load-balancer"},
	}
	var out []object
	for _, s := range services {
		if c.hidden[s.typ] {
			continue
		}
		out = append(out, object{"id": s.name, "name": s.name, "type": s.typ, "endpoints": []object{{
			"id": s.name + "-public", "interface": "public", "region": Region, "region_id": Region, "url": c.srv.URL + s.path,
		}}})
	}
	return out
}
