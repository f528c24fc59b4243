package ignition

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

const ign = `{"ignition":{"version":"3.1.0"}}`

func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, []byte) {
	t.Helper()
	s := httptest.NewTLSServer(h)
	t.Cleanup(s.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	return s, ca
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestFetch(t *testing.T) {
	g := NewWithT(t)
	s, ca := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(ign))
		case "/notign":
			_, _ = w.Write([]byte(`{"a":1}`))
		case "/gone":
			http.Error(w, "no such infra env", http.StatusNotFound)
		default:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}
	})
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	g.Expect(os.WriteFile(caFile, ca, 0o600)).To(Succeed())
	f, err := New(Options{CABundleFile: caFile})
	g.Expect(err).NotTo(HaveOccurred())

	body, err := f.Fetch(context.Background(), mustURL(t, s.URL+"/ok?api_key=secret"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(body)).To(Equal(ign))

	for path, terminal := range map[string]bool{"/notign": true, "/gone": true, "/busy": false} {
		_, err := f.Fetch(context.Background(), mustURL(t, s.URL+path+"?api_key=secret"))
		var fe *Error
		g.Expect(errors.As(err, &fe)).To(BeTrue(), path)
		g.Expect(fe.Terminal).To(Equal(terminal), path)
		g.Expect(err.Error()).NotTo(ContainSubstring("secret"), "the api_key never shows")
	}
}

func TestFetchVerifiesTLS(t *testing.T) {
	g := NewWithT(t)
	s, _ := server(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(ign)) })
	f, err := New(Options{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = f.Fetch(context.Background(), mustURL(t, s.URL+"/?api_key=secret"))
	var fe *Error
	g.Expect(errors.As(err, &fe)).To(BeTrue())
	g.Expect(fe.Terminal).To(BeTrue(), "an untrusted certificate is terminal: %v", err)
	g.Expect(err.Error()).NotTo(ContainSubstring("secret"))

	insecure, err := New(Options{InsecureSkipVerify: true})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = insecure.Fetch(context.Background(), mustURL(t, s.URL))
	g.Expect(err).NotTo(HaveOccurred())
}

func TestNewRejectsBadBundles(t *testing.T) {
	g := NewWithT(t)
	_, err := New(Options{CABundle: []byte("not pem")})
	g.Expect(err).To(MatchError(ContainSubstring("no PEM")))
	_, err = New(Options{CABundleFile: "/nonexistent"})
	g.Expect(err).To(MatchError(ContainSubstring("reading")))
}

// The manifests always pass --assisted-ca-bundle, with an empty file
// unless the clusterctl variable gives a CA: that must start, and still
// verify TLS against the system roots.
func TestEmptyBundleFileIsNoBundle(t *testing.T) {
	g := NewWithT(t)
	s, _ := server(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(ign)) })
	empty := filepath.Join(t.TempDir(), "ca.crt")
	g.Expect(os.WriteFile(empty, nil, 0o600)).To(Succeed())
	f, err := New(Options{CABundleFile: empty})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = f.Fetch(context.Background(), mustURL(t, s.URL))
	g.Expect(err).To(MatchError(ContainSubstring("certificate")), "the test server's CA is not trusted")
}

func TestSnippet(t *testing.T) {
	if got := snippet([]byte(strings.Repeat("x", 500))); len(got) > 210 {
		t.Errorf("snippet too long: %d", len(got))
	}
}
