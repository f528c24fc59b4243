package buildcontroller

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
	"strings"
	"time"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
)

// Registry talks to image registries through the distribution (OCI) API:
// it asks whether a manifest exists and deletes one by digest. It speaks
// HTTPS only, with basic auth or the bearer-token exchange a registry asks
// for in its WWW-Authenticate challenge.
type Registry interface {
	// Exists reports whether ref's manifest is in its registry.
	Exists(ctx context.Context, ref osbuild.ImageRef, auth RegistryAuth) (bool, error)
	// Delete deletes ref's manifest by digest; one already gone is not an
	// error.
	Delete(ctx context.Context, ref osbuild.ImageRef, auth RegistryAuth) error
}

// RegistryAuth is how to reach one registry: credentials (none for
// anonymous) and its CA bundle (PEM, "" for the system roots).
type RegistryAuth struct {
	Credentials *osbuild.Credentials
	CAPEM       string
}

// HTTPRegistry is Registry over net/http.
type HTTPRegistry struct {
	// Transport, when set, replaces the TLS transport (tests point it at
	// their server); its TLS configuration is then the caller's.
	Transport http.RoundTripper
	// Timeout bounds each request.
	Timeout time.Duration
}

// manifestTypes are the manifest media types asked for: OCI and Docker,
// single images and indexes.
var manifestTypes = strings.Join([]string{
	"application/vnd.oci.image.manifest.v1+json",
	"application/vnd.oci.image.index.v1+json",
	"application/vnd.docker.distribution.manifest.v2+json",
	"application/vnd.docker.distribution.manifest.list.v2+json",
}, ", ")

// Exists implements Registry.
func (r *HTTPRegistry) Exists(ctx context.Context, ref osbuild.ImageRef, auth RegistryAuth) (bool, error) {
	resp, err := r.do(ctx, http.MethodHead, ref, auth)
	if err != nil {
		return false, err
	}
	defer func() { _ = resp.Body.Close() }()
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusNotFound:
		return false, nil
	}
	return false, fmt.Errorf("looking up %s: registry answered %s", ref, resp.Status)
}

// Delete implements Registry.
func (r *HTTPRegistry) Delete(ctx context.Context, ref osbuild.ImageRef, auth RegistryAuth) error {
	resp, err := r.do(ctx, http.MethodDelete, ref, auth)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	switch resp.StatusCode {
	case http.StatusAccepted, http.StatusOK, http.StatusNotFound:
		return nil
	case http.StatusMethodNotAllowed:
		return fmt.Errorf("deleting %s: the registry does not allow deletion (%s); enable it (distribution: storage.delete.enabled)", ref, resp.Status)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("deleting %s: registry answered %s: %s", ref, resp.Status, strings.TrimSpace(string(body)))
}

func (r *HTTPRegistry) client(auth RegistryAuth) (*http.Client, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if r.Transport != nil {
		return &http.Client{Transport: r.Transport, Timeout: timeout}, nil
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if auth.CAPEM != "" {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM([]byte(auth.CAPEM)) {
			return nil, errors.New("the registry's CA bundle holds no PEM certificate")
		}
		tlsCfg.RootCAs = pool
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

// do sends method for ref's manifest, answering one auth challenge: basic
// auth, or a bearer token fetched from the realm the registry names.
func (r *HTTPRegistry) do(ctx context.Context, method string, ref osbuild.ImageRef, auth RegistryAuth) (*http.Response, error) {
	c, err := r.client(auth)
	if err != nil {
		return nil, err
	}
	u := fmt.Sprintf("https://%s/v2/%s/manifests/%s", ref.Registry, ref.Repository, ref.Digest)
	send := func(authz string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, method, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", manifestTypes)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		return c.Do(req)
	}
	resp, err := send("")
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		return resp, nil
	}
	challenge := resp.Header.Get("WWW-Authenticate")
	_ = resp.Body.Close()
	var authz string
	switch scheme, params := parseChallenge(challenge); scheme {
	case "basic":
		if auth.Credentials == nil {
			return nil, fmt.Errorf("%s %s: the registry wants credentials and the secret has none for %s", method, u, ref.Registry)
		}
		authz = basicAuth(*auth.Credentials)
	case "bearer":
		scope := fmt.Sprintf("repository:%s:pull", ref.Repository)
		if method == http.MethodDelete {
			scope = fmt.Sprintf("repository:%s:pull,push,delete", ref.Repository)
		}
		tok, err := r.token(ctx, c, params, scope, auth.Credentials)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, u, err)
		}
		authz = "Bearer " + tok
	default:
		return nil, fmt.Errorf("%s %s: unsupported auth challenge %q", method, u, challenge)
	}
	resp, err = send(authz)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%s %s: the registry refused the secret's credentials (%s)", method, u, resp.Status)
	}
	return resp, nil
}

// token fetches a bearer token from the challenge's realm.
func (r *HTTPRegistry) token(ctx context.Context, c *http.Client, params map[string]string, scope string, cred *osbuild.Credentials) (string, error) {
	realm, err := url.Parse(params["realm"])
	if err != nil || realm.Scheme != "https" {
		return "", fmt.Errorf("the registry's token realm %q is not an https URL", params["realm"])
	}
	q := realm.Query()
	if s := params["service"]; s != "" {
		q.Set("service", s)
	}
	q.Set("scope", scope)
	realm.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, realm.String(), nil)
	if err != nil {
		return "", err
	}
	if cred != nil {
		req.Header.Set("Authorization", basicAuth(*cred))
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetching a token: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("fetching a token: %s", resp.Status)
	}
	var body struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return "", fmt.Errorf("reading the token: %w", err)
	}
	if body.Token != "" {
		return body.Token, nil
	}
	if body.AccessToken != "" {
		return body.AccessToken, nil
	}
	return "", errors.New("the token endpoint returned no token")
}

func basicAuth(c osbuild.Credentials) string {
	req := &http.Request{Header: http.Header{}}
	req.SetBasicAuth(c.Username, c.Password)
	return req.Header.Get("Authorization")
}

// parseChallenge splits `Bearer realm="…",service="…"` into its lower-case
// scheme and parameters.
func parseChallenge(h string) (string, map[string]string) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	params := map[string]string{}
	for rest != "" {
		var kv string
		rest = strings.TrimLeft(rest, " ,")
		k, after, ok := strings.Cut(rest, "=")
		if !ok {
			break
		}
		if strings.HasPrefix(after, `"`) {
			end := strings.Index(after[1:], `"`)
			if end < 0 {
				kv, rest = after[1:], ""
			} else {
				kv, rest = after[1:1+end], after[2+end:]
			}
		} else {
			kv, rest, _ = strings.Cut(after, ",")
		}
		params[strings.ToLower(strings.TrimSpace(k))] = kv
	}
	return strings.ToLower(scheme), params
}
