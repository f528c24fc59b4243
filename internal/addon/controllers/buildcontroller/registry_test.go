package buildcontroller

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
)

// TestHTTPRegistry runs the registry client against an HTTPS server that
// answers as the distribution registry does: basic auth or a bearer token,
// HEAD and DELETE of manifests by digest, 404 once deleted.
func TestHTTPRegistry(t *testing.T) {
	for _, scheme := range []string{"basic", "bearer"} {
		t.Run(scheme, func(t *testing.T) {
			d := "sha256:" + strings.Repeat("a", 64)
			var mu sync.Mutex
			present := map[string]bool{"/v2/mco/os/manifests/" + d: true}
			var srv *httptest.Server
			srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/token" {
					if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "pass" || !strings.Contains(r.URL.Query().Get("scope"), "repository:mco/os:") {
						w.WriteHeader(http.StatusUnauthorized)
						return
					}
					_, _ = w.Write([]byte(`{"token":"t0k"}`))
					return
				}
				authorized := false
				if u, p, ok := r.BasicAuth(); ok && scheme == "basic" {
					authorized = u == "user" && p == "pass"
				}
				if scheme == "bearer" {
					authorized = r.Header.Get("Authorization") == "Bearer t0k"
				}
				if !authorized {
					if scheme == "basic" {
						w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
					} else {
						w.Header().Set("WWW-Authenticate", `Bearer realm="`+srv.URL+`/token",service="registry"`)
					}
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				if !strings.Contains(r.Header.Get("Accept"), "application/vnd.oci.image.manifest.v1+json") {
					w.WriteHeader(http.StatusBadRequest)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case !present[r.URL.Path]:
					w.WriteHeader(http.StatusNotFound)
				case r.Method == http.MethodDelete:
					delete(present, r.URL.Path)
					w.WriteHeader(http.StatusAccepted)
				default:
					w.Header().Set("Docker-Content-Digest", d)
				}
			}))
			defer srv.Close()
			ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
			ref := osbuild.ImageRef{Registry: strings.TrimPrefix(srv.URL, "https://"), Repository: "mco/os", Digest: d}
			auth := RegistryAuth{Credentials: &osbuild.Credentials{Username: "user", Password: "pass"}, CAPEM: ca}
			reg := &HTTPRegistry{}
			ctx := context.Background()

			if ok, err := reg.Exists(ctx, ref, auth); !ok || err != nil {
				t.Fatalf("Exists = %v, %v", ok, err)
			}
			if err := reg.Delete(ctx, ref, auth); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if ok, err := reg.Exists(ctx, ref, auth); ok || err != nil {
				t.Errorf("after Delete: Exists = %v, %v", ok, err)
			}
			if err := reg.Delete(ctx, ref, auth); err != nil {
				t.Errorf("deleting a deleted image: %v", err)
			}
			// Wrong password, and an untrusted server.
			bad := RegistryAuth{Credentials: &osbuild.Credentials{Username: "user", Password: "x"}, CAPEM: ca}
			if _, err := reg.Exists(ctx, ref, bad); err == nil {
				t.Error("wrong credentials accepted")
			}
			if _, err := reg.Exists(ctx, ref, RegistryAuth{Credentials: auth.Credentials}); err == nil {
				t.Error("a server signed by an unknown CA accepted")
			}
		})
	}
}
