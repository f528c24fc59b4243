package clients_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// TestFactoryVerifiesTLSByDefault: a Keystone behind a certificate that no
// trusted CA signed is not reached unless the identity Secret says so, by a
// cacert that signs it or by clouds.yaml's explicit `verify: false`.
func TestFactoryVerifiesTLSByDefault(t *testing.T) {
	var reached atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1) // only after a completed TLS handshake
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cloudsYAML := func(extra string) []byte {
		return fmt.Appendf(nil, `clouds:
  openstack:
    auth:
      auth_url: %s/identity/v3
      username: demo
      password: secret
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
%s`, srv.URL, extra)
	}
	for _, tc := range []struct {
		name        string
		clouds, ca  []byte
		wantReached bool
	}{
		{"default", cloudsYAML(""), nil, false},
		{"verify true", cloudsYAML("    verify: true\n"), nil, false},
		{"cacert", cloudsYAML(""), ca, true},
		{"verify false (explicit opt-in)", cloudsYAML("    verify: false\n"), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reached.Store(0)
			id := clients.Identity{Key: "ns/cloud-config", Version: "1", CloudsYAML: tc.clouds, CACert: tc.ca, CloudName: "openstack"}
			_, err := clients.NewFactory(clients.Options{}).For(context.Background(), id)
			if err == nil {
				t.Fatal("the server refuses every token: For must fail")
			}
			if got := reached.Load() > 0; got != tc.wantReached {
				t.Errorf("server reached: %t, want %t (err: %v)", got, tc.wantReached, err)
			}
		})
	}
}
