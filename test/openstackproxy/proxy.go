// Package openstackproxy is a counting and fault-injecting reverse proxy that sits in front of
// a real OpenStack cloud, for tests of code written on gophercloud.
//
// The test points its client at the proxy's Keystone URL ([Proxy.AuthURL]). The proxy forwards
// to the real Keystone and rewrites every endpoint URL of the service catalog it returns, so that
// every later request of the client (compute, network, volume, image, load-balancer, ...) also
// goes through the proxy.
//
// Design: one listener per upstream origin. Each scheme://host:port found in the catalog (and the
// Keystone one given to [New]) gets its own listener on 127.0.0.1:0, and the proxy only swaps
// the origin, never the path. Paths stay exactly as the services expect them, so relative links
// ("next": "/v2/images?marker=..." of Glance) and absolute links (version documents, "self"
// links, pagination "next" hrefs of Nova and Neutron, Location headers) keep working with any
// client. Absolute URLs of known upstream origins are rewritten in every JSON response body and
// in Location headers.
//
// Every request is recorded as a [Call]: service, method, path template (UUIDs and 32-hex ids
// replaced by {id}), status. [Proxy.AddFault] injects 429 (with Retry-After), 503, 500, any
// status, dropped connections (before or after the request reached the service) and delays,
// matched by service, method and path, optionally only the Nth matching request, the next N, or
// with a seeded probability.
//
// What gophercloud v2 (v2.15.0) makes of the faults:
//
//   - An injected status (429, 503, 500, any other) comes back from the call, through
//     pagination too, as a gophercloud.ErrUnexpectedResponseCode VALUE (not a pointer):
//     `var e gophercloud.ErrUnexpectedResponseCode; errors.As(err, &e)`, or
//     gophercloud.ResponseCodeIs(err, 429). It carries Actual (the status), Body and
//     ResponseHeader, so e.ResponseHeader.Get("Retry-After") is the header the proxy sent.
//   - gophercloud does not retry a 429 by itself: only when ProviderClient.RetryBackoffFunc is
//     set, which is then called with the *ErrUnexpectedResponseCode (at most MaxBackoffRetries
//     times, default 60). 500 and 503 are retried only by a ProviderClient.RetryFunc.
//   - A dropped connection is a *url.Error ("connection reset by peer"), not an
//     ErrUnexpectedResponseCode. Go's http.Transport retries idempotent requests (GET, HEAD,
//     ...) that failed that way on a reused connection, silently: see [FaultDrop].
//   - Building a service client (openstack.NewNetworkV2, NewImageV2, NewLoadBalancerV2, ...)
//     already sends a version-discovery GET to the service root; a fault on "/" hits that.
package openstackproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Canonical service names used in [Call.Service] and [Match.Service].
const (
	ServiceIdentity     = "identity"
	ServiceCompute      = "compute"
	ServiceNetwork      = "network"
	ServiceVolume       = "volume"
	ServiceImage        = "image"
	ServiceLoadBalancer = "load-balancer"
	ServicePlacement    = "placement"
	// ServiceUnknown is recorded for a request to a listener whose path matches no catalog entry.
	ServiceUnknown = "unknown"
)

// canonicalService maps a catalog service type to the name recorded in calls: every block
// storage alias (volume, volumev2, volumev3, block-storage, block-store) becomes "volume".
func canonicalService(serviceType string) string {
	switch t := strings.ToLower(serviceType); t {
	case "volume", "volumev2", "volumev3", "block-storage", "block-store":
		return ServiceVolume
	case "load-balancer", "load_balancer", "loadbalancer":
		return ServiceLoadBalancer
	default:
		return t
	}
}

// maxRewriteBody bounds the JSON bodies the proxy reads into memory to rewrite URLs in them.
const maxRewriteBody = 64 << 20

// maxBufferedBody bounds the request bodies read ahead of a delay.
const maxBufferedBody = 8 << 20

// Proxy is a counting, fault-injecting reverse proxy for one OpenStack cloud. It is safe for
// concurrent use.
type Proxy struct {
	keystone  *url.URL // upstream Keystone URL as given to New
	transport *http.Transport
	done      chan struct{}

	mu     sync.RWMutex
	fronts map[string]*front // upstream origin -> listener
	order  []*front
	closed bool

	// listen chooses a listener's address (NewListening); nil: 127.0.0.1:0.
	listen func(upstreamOrigin string) string

	callsMu sync.Mutex
	calls   []Call

	faultsMu sync.Mutex
	faults   []*ActiveFault
}

// front is the listener standing in for one upstream origin.
type front struct {
	upstream *url.URL // scheme and host only
	origin   string   // "http://127.0.0.1:PORT" of the listener
	ln       net.Listener
	srv      *http.Server
	rp       *httputil.ReverseProxy
	roots    []serviceRoot // guarded by Proxy.mu
}

// serviceRoot says which service owns the paths under prefix on one origin.
type serviceRoot struct {
	prefix  string // "" or "/compute": the endpoint path before its version segment
	service string
}

// New starts a proxy for the cloud whose Keystone is at upstreamKeystoneURL (the auth_url of a
// clouds.yaml, with or without its /v3). The proxy listens on 127.0.0.1; give [Proxy.AuthURL]
// to the client instead of the real auth URL.
func New(upstreamKeystoneURL string) (*Proxy, error) {
	return NewListening(upstreamKeystoneURL, nil)
}

// NewListening is New with the address of each listener chosen by listen, given the upstream
// origin it stands in for ("http://127.0.0.1:9696"): for clients that reach the proxy only
// through fixed ports (the pods of a local management cluster, through its port forwards). A
// nil listen, or "", is 127.0.0.1:0.
func NewListening(upstreamKeystoneURL string, listen func(upstreamOrigin string) string) (*Proxy, error) {
	u, err := url.Parse(upstreamKeystoneURL)
	if err != nil {
		return nil, fmt.Errorf("openstackproxy: keystone URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("openstackproxy: keystone URL %q: want http(s)://host[:port][/path]", upstreamKeystoneURL)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // always straight to the cloud, whatever HTTP_PROXY says
	tr.MaxIdleConnsPerHost = 32
	tr.IdleConnTimeout = 30 * time.Second
	p := &Proxy{
		keystone:  u,
		transport: tr,
		done:      make(chan struct{}),
		fronts:    map[string]*front{},
		listen:    listen,
	}
	if err := p.register(upstreamKeystoneURL, ServiceIdentity); err != nil {
		return nil, err
	}
	return p, nil
}

// URL is the base URL (http://127.0.0.1:PORT) of the listener standing in for Keystone.
func (p *Proxy) URL() string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.fronts[originOf(p.keystone)].origin
}

// AuthURL is the upstream Keystone URL given to [New] with its origin replaced by the proxy's:
// the auth URL a client should use.
func (p *Proxy) AuthURL() string {
	return p.Rewrite(p.keystone.String())
}

// Rewrite returns rawURL with its origin replaced by the proxy listener for it; a URL of an
// origin the proxy does not know is returned unchanged.
func (p *Proxy) Rewrite(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	f, ok := p.fronts[originOf(u)]
	if !ok || u.Host == "" {
		return rawURL
	}
	i := strings.Index(rawURL, u.Host) // rawURL is scheme://[userinfo@]host...
	if i < 0 {
		return rawURL
	}
	return f.origin + rawURL[i+len(u.Host):]
}

// Endpoints maps every upstream origin the proxy knows (Keystone's and the catalog's) to the
// origin of its listener.
func (p *Proxy) Endpoints() map[string]string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	m := make(map[string]string, len(p.fronts))
	for o, f := range p.fronts {
		m[o] = f.origin
	}
	return m
}

// Close stops every listener, aborts delayed requests and closes idle upstream connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	fronts := append([]*front(nil), p.order...)
	p.mu.Unlock()
	var first error
	for _, f := range fronts {
		if err := f.srv.Close(); err != nil && first == nil {
			first = err
		}
	}
	p.transport.CloseIdleConnections()
	return first
}

func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

var versionSegment = regexp.MustCompile(`^v\d+(\.\d+)?$`)

// rootOf cuts an endpoint path at its first version segment: "/v2.1" -> "",
// "/v3/<project>" -> "", "/compute/v2.1" -> "/compute", "/identity" -> "/identity".
func rootOf(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var keep []string
	for _, s := range segs {
		if s == "" || versionSegment.MatchString(s) || strings.Contains(s, "%(") {
			break
		}
		keep = append(keep, s)
	}
	if len(keep) == 0 {
		return ""
	}
	return "/" + strings.Join(keep, "/")
}

// register makes sure a listener exists for the origin of endpointURL and that the endpoint's
// path root is attributed to serviceType. It reports whether a new listener was started.
func (p *Proxy) register(endpointURL, serviceType string) error {
	u, err := url.Parse(endpointURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("openstackproxy: bad endpoint URL %q", endpointURL)
	}
	origin := originOf(u)
	root := serviceRoot{prefix: rootOf(u.Path), service: canonicalService(serviceType)}

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("openstackproxy: closed")
	}
	f, ok := p.fronts[origin]
	if !ok {
		f, err = p.startFront(&url.URL{Scheme: strings.ToLower(u.Scheme), Host: u.Host})
		if err != nil {
			return err
		}
		p.fronts[origin] = f
		p.order = append(p.order, f)
	}
	for _, r := range f.roots {
		if r.prefix == root.prefix {
			return nil // first registration of a path root wins
		}
	}
	f.roots = append(f.roots, root)
	sort.SliceStable(f.roots, func(i, j int) bool { return len(f.roots[i].prefix) > len(f.roots[j].prefix) })
	return nil
}

func (p *Proxy) startFront(upstream *url.URL) (*front, error) {
	addr := "127.0.0.1:0"
	if p.listen != nil {
		if a := p.listen(originOf(upstream)); a != "" {
			addr = a
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("openstackproxy: listen: %w", err)
	}
	f := &front{upstream: upstream, origin: "http://" + ln.Addr().String(), ln: ln}
	f.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(upstream)
			// Let the transport negotiate (and transparently undo) compression, so that
			// the JSON bodies the proxy rewrites are plain.
			r.Out.Header.Del("Accept-Encoding")
		},
		Transport:      p.transport,
		ModifyResponse: p.rewriteResponse,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, http.StatusBadGateway, "openstackproxy: upstream "+upstream.Host+": "+err.Error(), 0)
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	f.srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(f, w, r) }),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

// serviceFor attributes a request path on a listener to a service: the longest registered
// path root that prefixes it (on segment boundaries).
func (p *Proxy) serviceFor(f *front, path string) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, r := range f.roots {
		if r.prefix == "" || path == r.prefix || strings.HasPrefix(path, r.prefix+"/") {
			return r.service
		}
	}
	return ServiceUnknown
}

// statusWriter reports the final status a handler sends, before any of the response goes out,
// so that a call is recorded before the client can have seen its answer.
type statusWriter struct {
	http.ResponseWriter
	onStatus func(int)
	status   int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
		w.onStatus(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// discardWriter swallows a response (drop-after-forward).
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (p *Proxy) serve(f *front, w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	c := Call{
		Time:    start,
		Service: p.serviceFor(f, r.URL.Path),
		Method:  r.Method,
		Path:    Template(r.URL.Path),
		RawPath: r.URL.Path,
		Query:   r.URL.RawQuery,
	}
	// A call is recorded once, before the client can see the outcome (the status line, the
	// injected error, the reset), so that a test may count right after its request returned.
	recorded := false
	record := func(status, upstream int) {
		if recorded {
			return
		}
		recorded = true
		c.Status, c.UpstreamStatus, c.Duration = status, upstream, time.Since(start)
		p.record(c)
	}
	defer record(0, 0) // nothing was answered (client gone, proxy closed, aborted copy)

	fault := p.pickFault(c)
	if fault != nil {
		c.Fault = fault.Kind
	}
	switch {
	case fault == nil:
	case fault.Kind == FaultDelay:
		// Read a small body first: the server notices a client that hangs up (and cancels
		// r.Context()) only once the request body has been consumed.
		if r.Body != nil && r.ContentLength >= 0 && r.ContentLength <= maxBufferedBody {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		if !p.sleepCtx(r.Context(), fault.Delay) {
			return // the client gave up or the proxy closed: nothing was forwarded, Status stays 0
		}
	case fault.Kind == FaultDrop:
		record(0, 0)
		hijackAndReset(w)
		return
	case fault.Kind == FaultDropAfterForward:
		dw := &discardWriter{h: http.Header{}}
		f.rp.ServeHTTP(dw, r)
		record(0, dw.status)
		hijackAndReset(w)
		return
	default:
		status := fault.status()
		record(status, 0)
		writeError(w, status, fmt.Sprintf("openstackproxy: injected %s", fault.Kind), fault.retryAfterSeconds())
		return
	}
	sw := &statusWriter{ResponseWriter: w, onStatus: func(code int) { record(code, code) }}
	f.rp.ServeHTTP(sw, r)
}

// hijackAndReset closes the client connection without any response (a TCP reset).
func hijackAndReset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// not hijackable (HTTP/2): the best we can do is to abort the handler
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// writeError sends an OpenStack-looking JSON error.
func writeError(w http.ResponseWriter, status int, msg string, retryAfter int) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": status, "title": http.StatusText(status), "message": msg,
	}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", fmt.Sprint(len(body)))
	if retryAfter > 0 {
		h.Set("Retry-After", fmt.Sprint(retryAfter))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// rewriteResponse registers the endpoints of a service catalog found in the response (starting
// their listeners) and rewrites every absolute URL of a known upstream origin in JSON bodies and
// Location headers to the proxy's listener for it.
func (p *Proxy) rewriteResponse(resp *http.Response) error {
	if loc := resp.Header.Get("Location"); loc != "" {
		resp.Header.Set("Location", p.Rewrite(loc))
	}
	if !strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "json") || resp.Body == nil ||
		resp.Request != nil && resp.Request.Method == http.MethodHead ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRewriteBody+1))
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	if len(body) > maxRewriteBody {
		return fmt.Errorf("openstackproxy: JSON body over %d bytes", maxRewriteBody)
	}
	if bytes.Contains(body, []byte(`atalog"`)) { // "catalog" (v3) or "serviceCatalog" (v2.0)
		for _, ep := range catalogEndpoints(body) {
			if err := p.register(ep.url, ep.serviceType); err != nil {
				return err
			}
		}
	}
	body = p.rewriteBody(body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", fmt.Sprint(len(body)))
	return nil
}

// rewriteBody replaces every JSON string that starts with a known upstream origin.
func (p *Proxy) rewriteBody(body []byte) []byte {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for origin, f := range p.fronts {
		for _, end := range []string{"/", `"`, "?"} {
			body = replaceFold(body, `"`+origin+end, `"`+f.origin+end)
		}
	}
	return body
}

// replaceFold is bytes.ReplaceAll with an ASCII-case-insensitive match of old (hosts and
// schemes are case-insensitive; the origins are kept lower-case).
func replaceFold(s []byte, old, repl string) []byte {
	lower := bytes.ToLower(s)
	if !bytes.Contains(lower, []byte(old)) {
		return s
	}
	if len(lower) != len(s) { // non-ASCII case folding moved offsets: exact match only
		return bytes.ReplaceAll(s, []byte(old), []byte(repl))
	}
	var out bytes.Buffer
	out.Grow(len(s))
	i := 0
	for {
		j := bytes.Index(lower[i:], []byte(old))
		if j < 0 {
			out.Write(s[i:])
			return out.Bytes()
		}
		out.Write(s[i : i+j])
		out.WriteString(repl)
		i += j + len(old)
	}
}

type catalogEndpoint struct{ serviceType, url string }

// catalogEndpoints extracts every endpoint URL of a Keystone v3 token ({"token":{"catalog":..}}),
// a v3 catalog ({"catalog":..}) or a v2.0 token ({"access":{"serviceCatalog":..}}).
func catalogEndpoints(body []byte) []catalogEndpoint {
	type v3service struct {
		Type      string `json:"type"`
		Endpoints []struct {
			URL string `json:"url"`
		} `json:"endpoints"`
	}
	type v2service struct {
		Type      string              `json:"type"`
		Endpoints []map[string]string `json:"endpoints"`
	}
	var doc struct {
		Token *struct {
			Catalog []v3service `json:"catalog"`
		} `json:"token"`
		Catalog []v3service `json:"catalog"`
		Access  *struct {
			ServiceCatalog []v2service `json:"serviceCatalog"`
		} `json:"access"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return nil
	}
	var out []catalogEndpoint
	services := doc.Catalog
	if doc.Token != nil {
		services = append(services, doc.Token.Catalog...)
	}
	for _, s := range services {
		for _, e := range s.Endpoints {
			if e.URL != "" {
				out = append(out, catalogEndpoint{s.Type, e.URL})
			}
		}
	}
	if doc.Access != nil {
		for _, s := range doc.Access.ServiceCatalog {
			for _, e := range s.Endpoints {
				for _, k := range []string{"publicURL", "internalURL", "adminURL"} {
					if e[k] != "" {
						out = append(out, catalogEndpoint{s.Type, e[k]})
					}
				}
			}
		}
	}
	return out
}

// sleepCtx waits d or until ctx or the proxy ends; false if it did not wait the whole d.
func (p *Proxy) sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-p.done:
		return false
	}
}
