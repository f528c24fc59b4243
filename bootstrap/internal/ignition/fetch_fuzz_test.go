package ignition

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
)

type answer func(*http.Request) (*http.Response, error)

func (a answer) RoundTrip(r *http.Request) (*http.Response, error) { return a(r) }

// FuzzFetch hands the fetcher arbitrary answers (status, body, or a failed
// connection) for arbitrary ignition paths and api_keys: no panic, the same
// verdict twice, success exactly for a 200 with an Ignition config no
// larger than MaxSize (returned unchanged), and no error message that
// depends on the api_key.
//
//	go test ./bootstrap/internal/ignition -run '^$' -fuzz '^FuzzFetch$' -fuzztime 60s
func FuzzFetch(f *testing.F) {
	f.Add("/api/assisted-install/v2/infra-envs/x/downloads/files", "k3y-abcdef", uint16(200), []byte(`{"ignition":{"version":"3.2.0"}}`), false)
	f.Add("/ignition", "k3y-abcdef", uint16(200), []byte(`{"ignition":{}}`), false)
	f.Add("/ignition", "k3y-abcdef", uint16(404), []byte(`not found`), false)
	f.Add("/ignition", "k3y-abcdef", uint16(429), []byte{}, false)
	f.Add("/ignition", "k3y-abcdef", uint16(503), bytes.Repeat([]byte("é"), 150), false)
	f.Add("/ignition", "k3y-abcdef", uint16(0), []byte{}, true)
	f.Fuzz(func(t *testing.T, path, key string, status uint16, body []byte, connFails bool) {
		u, err := url.Parse("https://assisted.example" + path)
		if err != nil || u.Host != "assisted.example" {
			return
		}
		q := u.Query()
		q.Set("api_key", key)
		u.RawQuery = q.Encode()
		code := 100 + int(status)%500
		fetcher := &Fetcher{client: &http.Client{Transport: answer(func(r *http.Request) (*http.Response, error) {
			if connFails {
				return nil, errors.New("connection reset by peer")
			}
			return &http.Response{StatusCode: code, Body: io.NopCloser(bytes.NewReader(body)), Header: http.Header{}, Request: r}, nil
		})}}
		got, err := fetcher.Fetch(context.Background(), u)
		got2, err2 := fetcher.Fetch(context.Background(), u)
		if !bytes.Equal(got, got2) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("two fetches differ: %v / %v", err, err2)
		}
		wantOK := !connFails && code == http.StatusOK && len(body) <= MaxSize && checkIgnition(body) == nil
		if (err == nil) != wantOK {
			t.Fatalf("status %d, %d bytes, conn fails %t: error %v, want success %t", code, len(body), connFails, err, wantOK)
		}
		if err == nil {
			if !bytes.Equal(got, body) {
				t.Fatalf("the config changed on the way")
			}
			return
		}
		var fe *Error
		if !errors.As(err, &fe) {
			t.Fatalf("error %T is not an *Error", err)
		}
		// The same answer for another api_key gives the same message: it
		// does not quote the key.
		other := *u
		q.Set("api_key", key+"-other")
		other.RawQuery = q.Encode()
		if _, err3 := fetcher.Fetch(context.Background(), &other); err3 == nil || err3.Error() != err.Error() {
			t.Fatalf("the message depends on the api_key: %v / %v", err, err3)
		}
	})
}
