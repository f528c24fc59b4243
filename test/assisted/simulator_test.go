package assisted

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestIgnitionRoundTrip(t *testing.T) {
	data := discoveryIgnition("id-1", "ns", "ie")
	if got := infraEnvIDFromIgnition(data); got != "id-1" {
		t.Errorf("ID %q, want id-1", got)
	}
	for _, other := range []string{"", "{}", `{"ignition":{"version":"3.1.0"}}`, "not json"} {
		if got := infraEnvIDFromIgnition([]byte(other)); got != "" {
			t.Errorf("%q: ID %q, want none", other, got)
		}
	}
}

func TestUUID5(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := uuid5("x"), uuid5("y")
	if !re.MatchString(a) || a == b || a != uuid5("x") {
		t.Errorf("uuid5: %q %q", a, b)
	}
}

// TestServer checks the HTTPS server against its own CA: the ignition
// needs the right api_key, and failures can be injected.
func TestServer(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx) }()
	defer func() { cancel(); <-done }()
	s.infraEnvs["id-1"] = types.NamespacedName{Namespace: "ns", Name: "ie"}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CABundle())
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	get := func(url string) (int, string) {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	base := s.URL() + restPrefix + "/infra-envs/id-1/downloads/files?file_name=discovery.ign&api_key="
	if code, _ := get(base + "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong key: %d", code)
	}
	code, body := get(base + s.apiKey("id-1"))
	if code != http.StatusOK || infraEnvIDFromIgnition([]byte(body)) != "id-1" {
		t.Errorf("ignition: %d %s", code, body)
	}
	s.FailIgnition(http.StatusServiceUnavailable)
	if code, _ := get(base + s.apiKey("id-1")); code != http.StatusServiceUnavailable {
		t.Errorf("injected failure: %d", code)
	}
	if s.IgnitionFetches() != 1 {
		t.Errorf("fetches %d, want 1", s.IgnitionFetches())
	}
}

// TestServerRestart: once a manager stopped the server, the next one serves
// on the same address, with the same CA and the same api_keys, as a
// restarted assisted-service does.
func TestServerRestart(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.infraEnvs["id-1"] = types.NamespacedName{Namespace: "ns", Name: "ie"}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CABundle())
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, DisableKeepAlives: true}}
	url := s.URL() + restPrefix + "/infra-envs/id-1/downloads/files?file_name=discovery.ign&api_key=" + s.apiKey("id-1")
	get := func() (int, error) {
		resp, err := c.Get(url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.ReadAll(resp.Body)
		return resp.StatusCode, nil
	}
	for i := range 3 {
		if err := s.takeServer(); err != nil {
			t.Fatalf("manager %d: %v", i, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.serve(ctx) }()
		if code, err := get(); err != nil || code != http.StatusOK {
			t.Errorf("manager %d: %d %v, want 200", i, code, err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager %d stopped with %v", i, err)
		}
		if code, err := get(); err == nil {
			t.Errorf("manager %d stopped, and the server still answers %d", i, code)
		}
	}
	if n := s.IgnitionFetches(); n != 3 {
		t.Errorf("%d fetches counted, want 3", n)
	}
}

// TestMinStepInterval: an installation that took a step waits
// MinStepInterval before the next; without the option, and for another
// installation, nothing waits.
func TestMinStepInterval(t *testing.T) {
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	s := &Simulator{opts: Options{MinStepInterval: time.Hour}, stepped: map[types.NamespacedName]time.Time{}}
	if w := s.untilStep(a); w != 0 {
		t.Errorf("before any step: wait %s, want 0", w)
	}
	s.recordStep(a)
	if w := s.untilStep(a); w <= 59*time.Minute || w > time.Hour {
		t.Errorf("after a step: wait %s, want just under 1h", w)
	}
	if w := s.untilStep(b); w != 0 {
		t.Errorf("another installation: wait %s, want 0", w)
	}
	s.stepped[a] = time.Now().Add(-2 * time.Hour)
	if w := s.untilStep(a); w != 0 {
		t.Errorf("a step long ago: wait %s, want 0", w)
	}
	off := &Simulator{stepped: map[types.NamespacedName]time.Time{}}
	off.recordStep(a)
	if w := off.untilStep(a); w != 0 {
		t.Errorf("without MinStepInterval: wait %s, want 0", w)
	}
}
