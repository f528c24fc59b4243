package openstackproxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const (
	fakeProjectID = "0123456789abcdef0123456789abcdef"
	fakeFlavor1   = "11111111-1111-4111-8111-111111111111"
	fakeFlavor2   = "22222222-2222-4222-8222-222222222222"
	fakeServerID  = "33333333-3333-4333-8333-333333333333"
)

// fakeCloud is a set of httptest servers answering like Keystone, Nova, Neutron, Glance,
// Cinder and Octavia just enough for gophercloud. Each counts the requests it got, so a test
// can check that nothing bypassed the proxy.
type fakeCloud struct {
	keystone, compute, network, image, volume, lb *httptest.Server

	mu   sync.Mutex
	hits map[string]int // "compute GET /v2.1/flavors/detail" -> n
}

func (f *fakeCloud) hit(service string, r *http.Request) {
	f.mu.Lock()
	f.hits[service+" "+r.Method+" "+Template(r.URL.Path)]++
	f.mu.Unlock()
}

// Hits is the number of requests of service that reached the fake upstream.
func (f *fakeCloud) Hits(service string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for k, v := range f.hits {
		if strings.HasPrefix(k, service+" ") {
			n += v
		}
	}
	return n
}

func (f *fakeCloud) HitsOf(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[key]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func link(rel, href string) []map[string]string {
	return []map[string]string{{"rel": rel, "href": href}}
}

func newFakeCloud(t *testing.T) *fakeCloud {
	t.Helper()
	f := &fakeCloud{hits: map[string]int{}}
	srv := func(service string, h func(base string, w http.ResponseWriter, r *http.Request)) *httptest.Server {
		var s *httptest.Server
		s = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f.hit(service, r)
			h(s.URL, w, r)
		}))
		t.Cleanup(s.Close)
		return s
	}
	f.compute = srv("compute", f.serveCompute)
	f.network = srv("network", f.serveNetwork)
	f.image = srv("image", f.serveImage)
	f.volume = srv("volume", f.serveVolume)
	f.lb = srv("load-balancer", f.serveLB)
	f.keystone = srv("identity", f.serveKeystone)
	return f
}

func (f *fakeCloud) catalog() []any {
	ep := func(typ, url string) map[string]any {
		var eps []any
		for _, itf := range []string{"public", "internal", "admin"} {
			eps = append(eps, map[string]any{"id": itf + typ, "interface": itf, "region": "RegionOne", "region_id": "RegionOne", "url": url})
		}
		return map[string]any{"type": typ, "name": typ, "id": typ, "endpoints": eps}
	}
	return []any{
		ep("identity", f.keystone.URL+"/v3/"),
		ep("compute", f.compute.URL+"/v2.1"),
		ep("network", f.network.URL),
		ep("image", f.image.URL),
		ep("volumev3", f.volume.URL+"/v3/"+fakeProjectID),
		ep("block-storage", f.volume.URL+"/v3/"+fakeProjectID),
		ep("load-balancer", f.lb.URL),
	}
}

func (f *fakeCloud) serveKeystone(base string, w http.ResponseWriter, r *http.Request) {
	v3 := map[string]any{"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
		"links": link("self", base+"/v3/")}
	switch {
	case r.Method == "GET" && r.URL.Path == "/":
		writeJSON(w, http.StatusMultipleChoices, map[string]any{"versions": map[string]any{"values": []any{v3}}})
	case r.Method == "GET" && (r.URL.Path == "/v3" || r.URL.Path == "/v3/"):
		writeJSON(w, 200, map[string]any{"version": v3})
	case r.Method == "POST" && r.URL.Path == "/v3/auth/tokens":
		w.Header().Set("X-Subject-Token", "fake-token")
		writeJSON(w, http.StatusCreated, map[string]any{"token": map[string]any{
			"methods":    []string{"password"},
			"expires_at": "2999-01-01T00:00:00.000000Z",
			"issued_at":  "2020-01-01T00:00:00.000000Z",
			"user":       map[string]any{"id": "u", "name": "demo", "domain": map[string]any{"id": "default", "name": "Default"}},
			"project":    map[string]any{"id": fakeProjectID, "name": "demo", "domain": map[string]any{"id": "default", "name": "Default"}},
			"roles":      []any{map[string]any{"id": "r", "name": "member"}},
			"catalog":    f.catalog(),
		}})
	case r.Method == "GET" && r.URL.Path == "/v3/auth/catalog":
		writeJSON(w, 200, map[string]any{"catalog": f.catalog(), "links": map[string]any{"self": base + "/v3/auth/catalog"}})
	default:
		writeJSON(w, 404, map[string]any{"error": map[string]any{"code": 404}})
	}
}

func (f *fakeCloud) serveCompute(base string, w http.ResponseWriter, r *http.Request) {
	flavor := func(id, name string) map[string]any {
		return map[string]any{"id": id, "name": name, "vcpus": 1, "ram": 512, "disk": 1,
			"links": link("self", base+"/v2.1/flavors/"+id)}
	}
	switch {
	case r.Method == "GET" && r.URL.Path == "/":
		writeJSON(w, 200, map[string]any{"versions": []any{map[string]any{
			"id": "v2.1", "status": "CURRENT", "version": "2.93", "min_version": "2.1",
			"links": link("self", base+"/v2.1/")}}})
	case r.Method == "GET" && r.URL.Path == "/v2.1/":
		writeJSON(w, 200, map[string]any{"version": map[string]any{
			"id": "v2.1", "status": "CURRENT", "version": "2.93", "min_version": "2.1",
			"links": link("self", base+"/v2.1/")}})
	case r.Method == "GET" && r.URL.Path == "/v2.1/flavors/detail":
		// two pages: the first has an absolute "next" href that must be rewritten
		if r.URL.Query().Get("marker") == "" {
			writeJSON(w, 200, map[string]any{
				"flavors":       []any{flavor(fakeFlavor1, "m1.tiny")},
				"flavors_links": link("next", base+"/v2.1/flavors/detail?marker="+fakeFlavor1),
			})
		} else {
			writeJSON(w, 200, map[string]any{"flavors": []any{flavor(fakeFlavor2, "m1.small")}})
		}
	case r.Method == "POST" && r.URL.Path == "/v2.1/servers":
		w.Header().Set("Location", base+"/v2.1/servers/"+fakeServerID)
		writeJSON(w, http.StatusAccepted, map[string]any{"server": map[string]any{"id": fakeServerID,
			"links": link("self", base+"/v2.1/servers/"+fakeServerID)}})
	case (r.Method == "GET" || r.Method == "HEAD") && strings.HasPrefix(r.URL.Path, "/v2.1/servers/"):
		writeJSON(w, 200, map[string]any{"server": map[string]any{"id": fakeServerID, "status": "ACTIVE"}})
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/action"):
		w.WriteHeader(http.StatusAccepted)
	case r.Method == "DELETE":
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, 404, map[string]any{"itemNotFound": map[string]any{"code": 404}})
	}
}

func (f *fakeCloud) serveNetwork(base string, w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && r.URL.Path == "/":
		writeJSON(w, 200, map[string]any{"versions": []any{map[string]any{
			"id": "v2.0", "status": "CURRENT", "links": link("self", base+"/v2.0/")}}})
	case r.Method == "GET" && r.URL.Path == "/v2.0/networks":
		writeJSON(w, 200, map[string]any{"networks": []any{map[string]any{
			"id": "44444444-4444-4444-8444-444444444444", "name": "public", "router:external": true}}})
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/v2.0/ports"):
		writeJSON(w, 200, map[string]any{"ports": []any{}})
	default:
		writeJSON(w, 404, map[string]any{"NeutronError": map[string]any{"type": "HTTPNotFound"}})
	}
}

func (f *fakeCloud) serveImage(base string, w http.ResponseWriter, r *http.Request) {
	img := func(id, name string) map[string]any {
		return map[string]any{"id": id, "name": name, "status": "active", "visibility": "public",
			"self": "/v2/images/" + id, "file": "/v2/images/" + id + "/file"}
	}
	switch {
	case r.Method == "GET" && r.URL.Path == "/":
		writeJSON(w, http.StatusMultipleChoices, map[string]any{"versions": []any{
			map[string]any{"id": "v2.16", "status": "CURRENT", "links": link("self", base+"/v2/")},
			map[string]any{"id": "v2.15", "status": "SUPPORTED", "links": link("self", base+"/v2/")},
		}})
	case r.Method == "GET" && r.URL.Path == "/v2/images":
		// Glance's "next" is a relative path: it must still resolve to the proxy
		if r.URL.Query().Get("marker") == "" {
			writeJSON(w, 200, map[string]any{"images": []any{img("55555555-5555-4555-8555-555555555555", "cirros-fake")},
				"first": "/v2/images", "schema": "/v2/schemas/images",
				"next": "/v2/images?marker=55555555-5555-4555-8555-555555555555"})
		} else {
			writeJSON(w, 200, map[string]any{"images": []any{img("66666666-6666-4666-8666-666666666666", "other")},
				"first": "/v2/images", "schema": "/v2/schemas/images"})
		}
	default:
		writeJSON(w, 404, map[string]any{"error": "not found"})
	}
}

func (f *fakeCloud) serveVolume(base string, w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && r.URL.Path == "/":
		writeJSON(w, http.StatusMultipleChoices, map[string]any{"versions": []any{map[string]any{
			"id": "v3.0", "status": "CURRENT", "version": "3.70", "min_version": "3.0",
			"links": link("self", base+"/v3/")}}})
	case r.Method == "GET" && r.URL.Path == fmt.Sprintf("/v3/%s/volumes/detail", fakeProjectID):
		writeJSON(w, 200, map[string]any{"volumes": []any{}})
	default:
		writeJSON(w, 404, map[string]any{"itemNotFound": map[string]any{"code": 404}})
	}
}

func (f *fakeCloud) serveLB(base string, w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && r.URL.Path == "/":
		writeJSON(w, 200, map[string]any{"versions": []any{
			map[string]any{"id": "v2.0", "status": "SUPPORTED", "links": link("self", base+"/v2.0")},
			map[string]any{"id": "v2.26", "status": "CURRENT", "links": link("self", base+"/v2")},
		}})
	case r.Method == "GET" && r.URL.Path == "/v2.0/lbaas/loadbalancers":
		writeJSON(w, 200, map[string]any{"loadbalancers": []any{}, "loadbalancers_links": []any{}})
	default:
		writeJSON(w, 404, map[string]any{"faultcode": "Client"})
	}
}
