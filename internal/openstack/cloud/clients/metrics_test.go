package clients_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// RegisterMetrics registers both metrics in the registry it is given (and
// nowhere when it is not called); a second registration in the same
// registry counts in the first one's metrics.
func TestRegisterMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	dead := httptest.NewServer(http.NotFoundHandler())
	d, _ := url.Parse(dead.URL)
	dead.Close()

	reg := prometheus.NewPedanticRegistry()
	first, err := clients.RegisterMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	second, err := clients.RegisterMetrics(reg)
	if err != nil {
		t.Fatalf("registering again: %v", err)
	}
	for _, m := range []*clients.Metrics{first, second} {
		resp, err := (&http.Client{Transport: m.Transport(http.DefaultTransport)}).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	// A refused connection counts with code 0.
	if _, err := (&http.Client{Transport: first.Transport(http.DefaultTransport)}).Get(d.String()); err == nil {
		t.Fatal("a closed server answered")
	}

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += " " + l.GetName() + "=" + l.GetValue()
			}
			got[key] = m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	want := map[string]float64{
		clients.RequestsMetric + " code=418 host=" + u.Host + " method=GET": 2,
		clients.RequestsMetric + " code=0 host=" + d.Host + " method=GET":   1,
		clients.LatencyMetric + " host=" + u.Host + " method=GET":           2,
		clients.LatencyMetric + " host=" + d.Host + " method=GET":           1,
	}
	if len(got) != len(want) {
		t.Errorf("series: got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
