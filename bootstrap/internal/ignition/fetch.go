// Package ignition fetches an InfraEnv's discovery ignition from
// assisted-service over HTTPS, verifying the server against the system
// roots plus a configurable CA bundle.
package ignition

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

// MaxSize bounds the ignition read: a discovery ignition is tens of KiB; a
// larger answer is not one.
const MaxSize = 8 << 20

// DefaultTimeout bounds one fetch.
const DefaultTimeout = 30 * time.Second

// Options configure the fetcher (the manager's flags).
type Options struct {
	// CABundleFile is a PEM file of CAs trusted, beyond the system roots,
	// for assisted-service's certificate.
	CABundleFile string
	// CABundle is PEM data, used in addition to CABundleFile (tests).
	CABundle []byte
	// InsecureSkipVerify turns certificate verification off. Only for
	// experiments: anyone on the path could then hand machines an ignition.
	InsecureSkipVerify bool
	// Timeout of one fetch; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Fetcher gets discovery ignitions.
type Fetcher struct {
	client *http.Client
}

// New builds a fetcher. It fails when the CA bundle cannot be read or holds
// no certificate, rather than falling back to the system roots silently. An
// empty bundle is no bundle: the manifests always mount one, empty unless
// the user gives a CA (docs/install.md).
func New(o Options) (*Fetcher, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	bundle := o.CABundle
	if o.CABundleFile != "" {
		data, err := os.ReadFile(o.CABundleFile)
		if err != nil {
			return nil, fmt.Errorf("reading the assisted-service CA bundle: %w", err)
		}
		bundle = append(append([]byte{}, bundle...), data...)
	}
	if len(bundle) > 0 && !pool.AppendCertsFromPEM(bundle) {
		return nil, errors.New("the assisted-service CA bundle holds no PEM certificate")
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{
		RootCAs:            pool,
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: o.InsecureSkipVerify, //nolint:gosec // opt-in flag, documented as unsafe
	}
	return &Fetcher{client: &http.Client{Transport: transport, Timeout: timeout}}, nil
}

// Error is a failed fetch. Terminal errors (TLS verification, 4xx other
// than 408/429, an answer that is not an ignition) will not fix themselves
// by retrying soon.
type Error struct {
	Terminal bool
	err      error
}

func (e *Error) Error() string { return e.err.Error() }
func (e *Error) Unwrap() error { return e.err }

// Fetch GETs u and checks that the answer is an Ignition config. Errors
// never contain the URL's query (its api_key).
func (f *Fetcher) Fetch(ctx context.Context, u *url.URL) ([]byte, error) {
	safe := u.Redacted()
	if q := u.Query(); q.Has("api_key") {
		c := *u
		c.RawQuery = ""
		safe = c.String() + "?…"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &Error{Terminal: true, err: fmt.Errorf("GET %s: %w", safe, err)}
	}
	req.Header.Set("Accept", "application/octet-stream")
	resp, err := f.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the wrapped URL carries the api_key
		}
		return nil, &Error{Terminal: isTLSVerification(err), err: fmt.Errorf("GET %s: %w", safe, err)}
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxSize+1))
	if err != nil {
		return nil, &Error{err: fmt.Errorf("GET %s: reading the answer: %w", safe, err)}
	}
	if resp.StatusCode != http.StatusOK {
		terminal := resp.StatusCode >= 400 && resp.StatusCode < 500 &&
			resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests
		return nil, &Error{Terminal: terminal, err: fmt.Errorf("GET %s: HTTP %d: %s", safe, resp.StatusCode, snippet(body))}
	}
	if len(body) > MaxSize {
		return nil, &Error{Terminal: true, err: fmt.Errorf("GET %s: the answer is larger than %d bytes", safe, MaxSize)}
	}
	if err := checkIgnition(body); err != nil {
		return nil, &Error{Terminal: true, err: fmt.Errorf("GET %s: %w", safe, err)}
	}
	return body, nil
}

func checkIgnition(body []byte) error {
	var doc struct {
		Ignition struct {
			Version string `json:"version"`
		} `json:"ignition"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("the answer is not an Ignition config: %w", err)
	}
	if doc.Ignition.Version == "" {
		return errors.New("the answer is not an Ignition config: no ignition.version")
	}
	return nil
}

func isTLSVerification(err error) bool {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify)
}

func snippet(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
