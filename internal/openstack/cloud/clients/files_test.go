package clients_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// TestIdentityReadsNoFileOfTheManager: a clouds.yaml entry cannot make the
// manager read files of its own file system (a clouds-public.yaml profile,
// a CA file, a client certificate and key), even when those files exist and
// would work: the Secret is refused with a message naming the field, and
// the cloud is not reached. A cacert path beside the Secret's cacert key is
// dropped: the key's CA is used, the path is not opened.
func TestIdentityReadsNoFileOfTheManager(t *testing.T) {
	var reached atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	// Files the manager's file system might hold; each would be read and
	// would work if the parser were let.
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	write := func(path string, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(caFile, ca)
	write(certFile, ca)
	write(keyFile, pemKey(t, srv))
	write(filepath.Join(dir, "clouds-public.yaml"), fmt.Appendf(nil, `public-clouds:
  vendor:
    auth:
      auth_url: %s/identity/v3
    region_name: RegionOne
    cacert: %s
`, srv.URL, caFile))
	t.Chdir(dir) // the parser looks for clouds-public.yaml in the working directory first

	entry := func(authURL, extra string) []byte {
		return fmt.Appendf(nil, `clouds:
  openstack:
    auth:
%s      username: demo
      password: secret
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
%s`, authURL, extra)
	}
	withURL := "      auth_url: " + srv.URL + "/identity/v3\n"
	for _, tc := range []struct {
		name        string
		clouds, ca  []byte
		wantField   string // refused, naming it
		wantReached bool
	}{
		{"profile", entry("", "    profile: vendor\n"), nil, `"profile"`, false},
		{"cloud (old name of profile)", entry("", "    cloud: vendor\n"), nil, `"cloud"`, false},
		{"cacert path without the Secret's cacert", entry(withURL, "    cacert: "+caFile+"\n"), nil, `"cacert"`, false},
		{"client certificate files", entry(withURL, "    cacert: "+caFile+"\n    cert: "+certFile+"\n    key: "+keyFile+"\n"), ca, `"cert"`, false},
		{"client key file alone", entry(withURL, "    key: "+keyFile+"\n"), ca, `"key"`, false},
		// Accepted: the Secret carries the CA; the path (which does not
		// exist here) is not opened.
		{"cacert path beside the Secret's cacert", entry(withURL, "    cacert: /nonexistent/ca.pem\n"), ca, "", true},
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
			var e *clients.Error
			if !errors.As(err, &e) {
				t.Fatalf("%v is not a *clients.Error", err)
			}
			if tc.wantField == "" {
				if strings.Contains(e.Message, "file system") {
					t.Errorf("refused for a file: %s", e.Message)
				}
				return
			}
			if e.Reason != clients.ReasonAuthFailed || !strings.Contains(e.Message, tc.wantField) ||
				!strings.Contains(e.Message, "manager's file system") || !strings.Contains(e.Message, "ns/cloud-config") {
				t.Errorf("reason %q message %q: want %s naming %s, the manager's file system and the Secret", e.Reason, e.Message, clients.ReasonAuthFailed, tc.wantField)
			}
			for _, path := range []string{dir, "/nonexistent"} {
				if strings.Contains(e.Message, path) {
					t.Errorf("the message quotes a path of the file: %s", e.Message)
				}
			}
		})
	}
}

// pemKey is the PEM private key of the test server's certificate: with the
// certificate, a valid client key pair.
func pemKey(t *testing.T, srv *httptest.Server) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(srv.TLS.Certificates[0].PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
