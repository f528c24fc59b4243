// Package clients authenticates to OpenStack from a CAPO-style identity
// Secret (clouds.yaml, optional cacert) and hands out narrow, per-service
// clients. Authenticated clients are cached per identity, so a controller
// pays for Keystone once per credential set, not once per reconcile.
package clients

import (
	"bytes"
	"container/list"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"gopkg.in/yaml.v2"
)

var jsonUnmarshal = json.Unmarshal

// Secret keys of an identity Secret, as CAPO defines them.
const (
	CloudsYAMLKey = "clouds.yaml"
	CACertKey     = "cacert"
)

// Identity is what a client is built from: the contents of an identity
// Secret plus the cloud and region to use. Version must change whenever the
// Secret's content does (use the Secret's resourceVersion), so that a
// rotated credential gets a new client.
type Identity struct {
	// Key identifies the Secret (namespace/name).
	Key        string
	Version    string
	CloudsYAML []byte
	CACert     []byte
	CloudName  string
	Region     string
}

func (i Identity) cacheKey() string {
	return i.slot() + "|" + i.Version
}

// slot identifies a credential regardless of its version: a new version of
// the Secret replaces the old one in the same slot.
func (i Identity) slot() string {
	return i.Key + "|" + i.CloudName + "|" + i.Region
}

// Clients are the per-service clients of one identity.
type Clients struct {
	Compute Compute
	Network Network
	// NetworkInfra is the same Neutron client, for cluster infrastructure.
	NetworkInfra NetworkInfra
	Volume       Volume
	Image        Image
	// LoadBalancer is nil when the cloud has no Octavia.
	LoadBalancer LoadBalancer
	// Region is the region the clients use ("" if the cloud has none).
	Region string
	// ProjectID of the authenticated scope.
	ProjectID string
}

// ComputeMicroversion is the Nova API microversion used for every call:
// 2.67 (Stein) allows tags at create (2.52) and volume types in block
// device mappings (2.67).
const ComputeMicroversion = "2.67"

// Options tune the factory.
type Options struct {
	// Transport wraps the HTTP transport (metrics, tests). Optional.
	Transport func(http.RoundTripper) http.RoundTripper
	// Timeout bounds one HTTP request. Default 60s.
	Timeout time.Duration
	// CacheSize bounds the number of cached identities. Default 64.
	CacheSize int
	// UserAgent is appended to gophercloud's.
	UserAgent string
}

// Factory builds and caches Clients.
type Factory struct {
	opts Options

	mu    sync.Mutex
	lru   *list.List // of *entry, most recent first
	index map[string]*list.Element
	// bySlot finds the entry of a credential regardless of version, so a
	// new version of the Secret evicts the old one at once.
	bySlot map[string]*list.Element
	// inflight dedups concurrent authentications of one identity.
	inflight map[string]*call
	// holds are the endpoints' Retry-After times, for every identity.
	holds *retryHolds
}

type entry struct {
	cacheKey string
	slot     string
	secret   string
	clients  *Clients
}

type call struct {
	done    chan struct{}
	clients *Clients
	err     error
}

// NewFactory returns a Factory.
func NewFactory(opts Options) *Factory {
	if opts.Timeout == 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.CacheSize == 0 {
		opts.CacheSize = 64
	}
	return &Factory{
		opts:     opts,
		lru:      list.New(),
		index:    map[string]*list.Element{},
		bySlot:   map[string]*list.Element{},
		inflight: map[string]*call{},
		holds:    newRetryHolds(),
	}
}

// For returns the clients of an identity, authenticating only when this
// identity (at this Secret version) has not been seen before.
func (f *Factory) For(ctx context.Context, id Identity) (*Clients, error) {
	k := id.cacheKey()
	f.mu.Lock()
	if el, ok := f.index[k]; ok {
		f.lru.MoveToFront(el)
		c := el.Value.(*entry).clients
		f.mu.Unlock()
		return c, nil
	}
	if c, ok := f.inflight[k]; ok {
		f.mu.Unlock()
		select {
		case <-c.done:
			return c.clients, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &call{done: make(chan struct{})}
	f.inflight[k] = c
	f.mu.Unlock()

	c.clients, c.err = f.build(ctx, id)

	f.mu.Lock()
	delete(f.inflight, k)
	if c.err == nil {
		f.store(k, id, c.clients)
	}
	f.mu.Unlock()
	close(c.done)
	return c.clients, c.err
}

// Forget drops the cached clients of a Secret (every cloud and region of
// it), e.g. after the Secret was deleted.
func (f *Factory) Forget(secretKey string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for el := f.lru.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*entry).secret == secretKey {
			f.remove(el)
		}
		el = next
	}
}

func (f *Factory) store(k string, id Identity, c *Clients) {
	if el, ok := f.bySlot[id.slot()]; ok {
		f.remove(el)
	}
	el := f.lru.PushFront(&entry{cacheKey: k, slot: id.slot(), secret: id.Key, clients: c})
	f.index[k] = el
	f.bySlot[id.slot()] = el
	for f.lru.Len() > f.opts.CacheSize {
		f.remove(f.lru.Back())
	}
}

func (f *Factory) remove(el *list.Element) {
	e := el.Value.(*entry)
	delete(f.index, e.cacheKey)
	if f.bySlot[e.slot] == el {
		delete(f.bySlot, e.slot)
	}
	f.lru.Remove(el)
}

// ErrNoEndpoint means the cloud's catalog lacks a service.
var ErrNoEndpoint = errors.New("no endpoint in the service catalog")

// build authenticates an identity and builds its clients: parse the
// Secret, authenticate through the factory's transport, then take the
// services from the token's catalog.
func (f *Factory) build(ctx context.Context, id Identity) (*Clients, error) {
	authOpts, endpointOpts, tlsConfig, err := parseIdentity(id)
	if err != nil {
		return nil, err
	}
	provider, err := f.authenticate(ctx, id, authOpts, tlsConfig)
	if err != nil {
		return nil, err
	}
	catalogOnly(provider)
	sc, err := NewServiceClients(provider, endpointOpts)
	if err != nil {
		return nil, err
	}
	if lb, err := openstack.NewLoadBalancerV2(provider, endpointOpts); err == nil {
		sc.LoadBalancer = lb
	}
	c := FromServiceClients(sc)
	c.Region = endpointOpts.Region
	return c, nil
}

// parseIdentity reads the clouds.yaml and CA bundle of an identity Secret.
func parseIdentity(id Identity) (gophercloud.AuthOptions, gophercloud.EndpointOpts, *tls.Config, error) {
	if len(id.CloudsYAML) == 0 {
		return gophercloud.AuthOptions{}, gophercloud.EndpointOpts{}, nil, &Error{Class: Transient, Reason: ReasonAuthFailed,
			Message: fmt.Sprintf("identity Secret %s has no %q key", id.Key, CloudsYAMLKey)}
	}
	// gophercloud's parser dereferences the cloud's auth section without
	// checking that there is one; read the file as it does and refuse an
	// entry without it.
	cloudsYAML := id.CloudsYAML
	var file clouds.Clouds
	if err := yaml.Unmarshal(id.CloudsYAML, &file); err == nil {
		if c, ok := file.Clouds[id.CloudName]; ok {
			if c.AuthInfo == nil {
				return gophercloud.AuthOptions{}, gophercloud.EndpointOpts{}, nil, &Error{Class: Transient, Reason: ReasonAuthFailed,
					Message: fmt.Sprintf("identity Secret %s, cloud %q: the cloud has no auth section", id.Key, id.CloudName)}
			}
			if msg := filesystemFields(c, len(bytes.TrimSpace(id.CACert)) > 0); msg != "" {
				return gophercloud.AuthOptions{}, gophercloud.EndpointOpts{}, nil, &Error{Class: Transient, Reason: ReasonAuthFailed,
					Message: fmt.Sprintf("identity Secret %s, cloud %q: %s", id.Key, id.CloudName, msg)}
			}
			if c.CACertFile != "" {
				// The Secret's cacert key holds the CA; the parser would
				// still open the path, so it gets the entry without it.
				c.CACertFile = ""
				out, err := yaml.Marshal(clouds.Clouds{Clouds: map[string]clouds.Cloud{id.CloudName: c}})
				if err != nil {
					return gophercloud.AuthOptions{}, gophercloud.EndpointOpts{}, nil, &Error{Class: Transient, Reason: ReasonAuthFailed,
						Message: fmt.Sprintf("identity Secret %s, cloud %q: cannot drop the cacert path", id.Key, id.CloudName)}
				}
				cloudsYAML = out
			}
		}
	}
	// Always set region and interface, so that OS_REGION_NAME and
	// OS_INTERFACE in the manager's environment do not override the Secret.
	opts := []clouds.ParseOption{clouds.WithCloudsYAML(bytes.NewReader(cloudsYAML)), clouds.WithCloudName(id.CloudName),
		clouds.WithRegion(id.Region), clouds.WithEndpointType("")}
	authOpts, endpointOpts, tlsConfig, err := clouds.Parse(opts...)
	if err != nil {
		// Not wrapped: the YAML decoder's error quotes the file.
		return authOpts, endpointOpts, nil, &Error{Class: Transient, Reason: ReasonAuthFailed,
			Message: fmt.Sprintf("identity Secret %s, cloud %q: %s", id.Key, id.CloudName, hideYAMLValues(err.Error()))}
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{}
	}
	tlsConfig.MinVersion = tls.VersionTLS12
	// A blank cacert means none: templates cannot leave a Secret key empty
	// through clusterctl, so they default it to a newline.
	if len(bytes.TrimSpace(id.CACert)) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(id.CACert) {
			return authOpts, endpointOpts, nil, &Error{Class: Transient, Reason: ReasonAuthFailed,
				Message: fmt.Sprintf("identity Secret %s: %q is not a PEM certificate bundle", id.Key, CACertKey)}
		}
		tlsConfig.RootCAs = pool
	}
	// A token is renewed on expiry; without this, gophercloud would fail
	// every request after the first token expires.
	authOpts.AllowReauth = true
	return authOpts, endpointOpts, tlsConfig, nil
}

// filesystemFields says which field of a clouds.yaml entry would make the
// parser read a file of the manager's own file system (whatever the Secret's
// author names, such as the manager's service account token or serving key),
// or "" when none would. A cacert path is harmless when the Secret carries
// the CA in its cacert key: the path is then dropped, as clouds.yaml files
// copied from a workstation name their CA file.
func filesystemFields(c clouds.Cloud, secretHasCA bool) string {
	switch {
	case c.Profile != "":
		return `"profile" is not supported: the vendor profile would be read from a clouds-public.yaml on the manager's file system; ` +
			`write the profile's settings (auth_url, region_name, interface) into the entry`
	case c.Cloud != "":
		return `"cloud" (a vendor profile of clouds-public.yaml) is not supported: the profile would be read from the manager's file system; ` +
			`write the profile's settings (auth_url, region_name, interface) into the entry`
	case c.ClientCertFile != "" || c.ClientKeyFile != "":
		return `"cert" and "key" (client certificate files) are not supported: they name files on the manager's file system`
	case c.CACertFile != "" && !secretHasCA:
		return `"cacert" names a file on the manager's file system, which is not read; put the CA bundle (PEM) in the Secret's "cacert" key`
	}
	return ""
}

// authenticate gets a token with a provider client whose requests go
// through the factory's transport and the rate gate (shared by every
// identity of the factory).
func (f *Factory) authenticate(ctx context.Context, id Identity, authOpts gophercloud.AuthOptions, tlsConfig *tls.Config) (*gophercloud.ProviderClient, error) {
	provider, err := openstack.NewClient(authOpts.IdentityEndpoint)
	if err != nil {
		return nil, &Error{Class: Terminal, Reason: ReasonInvalidSpec,
			Message: fmt.Sprintf("identity Secret %s, cloud %q: auth URL: %v", id.Key, id.CloudName, err), Err: err}
	}
	var rt http.RoundTripper = &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	if f.opts.Transport != nil {
		rt = f.opts.Transport(rt)
	}
	rt = newRateGate(rt, f.holds)
	provider.HTTPClient = http.Client{Transport: rt, Timeout: f.opts.Timeout}
	if f.opts.UserAgent != "" {
		provider.UserAgent.Prepend(f.opts.UserAgent)
	}
	// No RetryBackoffFunc: a 429 comes back to the controller, which
	// requeues after Retry-After instead of sleeping inside a reconcile.
	if err := openstack.Authenticate(ctx, provider, authOpts); err != nil {
		return nil, withReason(Classify(err, fmt.Sprintf("authenticating with cloud %q of Secret %s", id.CloudName, id.Key)), ReasonAuthFailed)
	}
	return provider, nil
}

// catalogOnly makes the provider find endpoints in its token's catalog
// only. gophercloud's default locator asks every endpoint without a
// version in its URL for its versions (one GET each, per identity); the
// paths are fixed anyway.
func catalogOnly(provider *gophercloud.ProviderClient) {
	if r, ok := provider.GetAuthResult().(tokens.CreateResult); ok {
		if catalog, err := r.ExtractServiceCatalog(); err == nil {
			provider.EndpointLocator = func(eo gophercloud.EndpointOpts) (string, error) { return locate(catalog, eo) }
		}
	}
}

func withReason(e *Error, reason string) *Error {
	// 5xx and connection errors during authentication stay
	// OpenStackUnavailable; a refusal is an authentication failure.
	if e.Reason == ReasonInvalidSpec || e.Reason == ReasonNotFound || e.Reason == ReasonForbidden {
		e.Reason = reason
		e.Class = Transient
	}
	return e
}

func noEndpoint(service string, err error) error {
	return &Error{Class: Terminal, Reason: ReasonInvalidSpec,
		Message: fmt.Sprintf("the cloud's catalog has no %s endpoint: %v", service, err), Err: errors.Join(ErrNoEndpoint, err)}
}

// locate finds the endpoint of a service in a catalog, without version
// discovery.
func locate(catalog *tokens.ServiceCatalog, eo gophercloud.EndpointOpts) (string, error) {
	for _, e := range catalog.Entries {
		if !slices.Contains(eo.Types(), e.Type) || (eo.Name != "" && e.Name != eo.Name) {
			continue
		}
		for _, ep := range e.Endpoints {
			if gophercloud.Availability(ep.Interface) != eo.Availability {
				continue
			}
			if eo.Region != "" && ep.Region != eo.Region && ep.RegionID != eo.Region {
				continue
			}
			return gophercloud.NormalizeURL(ep.URL), nil
		}
	}
	return "", &gophercloud.ErrEndpointNotFound{}
}

// projectID reads the project of the token gophercloud obtained.
func projectID(provider *gophercloud.ProviderClient) (string, error) {
	if provider == nil {
		return "", errors.New("no provider client")
	}
	r, ok := provider.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return "", errors.New("not a Keystone v3 token")
	}
	p, err := r.ExtractProject()
	if err != nil || p == nil {
		return "", errors.New("token has no project scope")
	}
	return p.ID, nil
}

// The YAML decoder's messages that quote a value of the document, which may
// be a credential: "line N: cannot unmarshal !!str `value` into T", and the
// map keys it prints whole.
var (
	yamlUnmarshalRE = regexp.MustCompile(`^(\s*(?:line \d+: )?cannot unmarshal \S+) .* (into \S+)$`)
	yamlLineRE      = regexp.MustCompile(`^(\s*(?:yaml: )?(?:line \d+: )?)`)
)

// hideYAMLValues drops from a clouds.yaml parse error every value of the
// document it quotes, keeping the line numbers and what was wrong.
func hideYAMLValues(msg string) string {
	if !strings.Contains(msg, "yaml: ") {
		return msg // the parser's own messages quote only the cloud's name
	}
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		switch {
		case yamlUnmarshalRE.MatchString(l):
			l = yamlUnmarshalRE.ReplaceAllString(l, "$1 (value hidden) $2")
		case strings.Contains(l, "invalid map key") || strings.Contains(l, "already set in map"):
			l = yamlLineRE.FindString(l) + "a map key is invalid or repeated (value hidden)"
		}
		// Anything else quoted is cut off.
		if j := strings.IndexAny(l, "`\"'"); j >= 0 {
			l = l[:j] + "(value hidden)"
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
