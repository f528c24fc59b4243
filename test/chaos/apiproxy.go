package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"math/rand"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// APIProxy stands between a manager and the Kubernetes API server and
// plays the API server's faults at it:
//   - a share of the status writes (PUT or PATCH of a /status
//     subresource) is answered 409 Conflict without being forwarded, with
//     the body the API server sends when a write's resourceVersion is
//     stale (apierrors.NewConflict);
//   - every watch is cut after a random time, as the API server's
//     --min-request-timeout does (at random between 1 and 2 times it) and
//     as a load balancer in front of it would;
//   - an outage closes every connection and refuses new ones for a while,
//     which is what the API server's clients see while it restarts.
//
// It listens on plain HTTP on the loopback and forwards to the API server
// with the credentials of the rest.Config it was made from.
type APIProxy struct {
	target    *url.URL
	transport http.RoundTripper
	addr      string

	mu                 sync.Mutex
	rng                *rand.Rand
	conflictRate       float64
	watchMin, watchMax time.Duration
	srv                *http.Server
	stats              APIStats
	down               bool
	serveErr           chan error
}

// APIStats counts what the proxy saw and did.
type APIStats struct {
	Requests, StatusWrites, Conflicts int
	Watches, WatchesCut               int
	Outages                           int
}

// NewAPIProxy starts a proxy to the API server of cfg; seed makes its
// choices repeatable.
func NewAPIProxy(cfg *rest.Config, seed int64) (*APIProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &APIProxy{target: target, transport: transport, addr: l.Addr().String(), rng: rand.New(rand.NewSource(seed))}
	p.serve(l)
	return p, nil
}

// URL is the proxy's address, for a kubeconfig's server.
func (p *APIProxy) URL() string { return "http://" + p.addr }

// SetFaults sets the share of status writes answered 409 and the range
// of a watch's life (0: watches are not cut).
func (p *APIProxy) SetFaults(conflictRate float64, watchMin, watchMax time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conflictRate, p.watchMin, p.watchMax = conflictRate, watchMin, watchMax
}

// Stats returns the counts so far.
func (p *APIProxy) Stats() APIStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Outage cuts every connection and refuses new ones for d, then serves
// again on the same address.
func (p *APIProxy) Outage(d time.Duration) error {
	p.mu.Lock()
	srv := p.srv
	p.down = true
	p.stats.Outages++
	p.mu.Unlock()
	_ = srv.Close() // the listener and every connection, watches included
	if err := <-p.serveErr; err != nil {
		return err
	}
	time.Sleep(d)
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
	p.serve(l)
	return nil
}

// Close stops the proxy.
func (p *APIProxy) Close() error {
	p.mu.Lock()
	srv := p.srv
	p.mu.Unlock()
	if err := srv.Close(); err != nil {
		return err
	}
	return <-p.serveErr
}

func (p *APIProxy) serve(l net.Listener) {
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(p.target)
			r.Out.Host = p.target.Host
		},
		Transport:     p.transport,
		FlushInterval: -1, // watches stream
		// A cut watch ends the response mid-stream; that is the fault,
		// not an error worth a log line (Stats counts it).
		ErrorLog: log.New(io.Discard, "", 0),
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.handle(rp, w, r) }),
		ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	p.mu.Lock()
	p.srv, p.serveErr = srv, done
	p.mu.Unlock()
	go func() {
		err := srv.Serve(l)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
}

func (p *APIProxy) handle(rp *httputil.ReverseProxy, w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.stats.Requests++
	conflict := false
	var life time.Duration
	switch {
	case IsStatusWrite(r.Method, r.URL.Path):
		p.stats.StatusWrites++
		if p.conflictRate > 0 && p.rng.Float64() < p.conflictRate {
			conflict = true
			p.stats.Conflicts++
		}
	case IsWatch(r.URL):
		p.stats.Watches++
		if p.watchMax > 0 {
			life = p.watchMin + time.Duration(p.rng.Int63n(int64(p.watchMax-p.watchMin)+1))
		}
	}
	p.mu.Unlock()

	if conflict {
		writeConflict(w, r.URL.Path)
		return
	}
	if life > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), life)
		defer cancel()
		r = r.WithContext(ctx)
		defer func() {
			// Cut by the proxy, not ended by the client or the server.
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				p.mu.Lock()
				p.stats.WatchesCut++
				p.mu.Unlock()
			}
		}()
	}
	rp.ServeHTTP(w, r)
}

// IsStatusWrite says whether a request writes a status subresource.
func IsStatusWrite(method, path string) bool {
	if method != http.MethodPut && method != http.MethodPatch {
		return false
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// /api/<version>/... or /apis/<group>/<version>/...
	switch {
	case len(parts) > 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return false
	}
	// <resource>/<name>/status, or namespaces/<ns>/<resource>/<name>/status
	return parts[len(parts)-1] == "status" && (len(parts) == 3 || len(parts) == 5 && parts[0] == "namespaces")
}

// IsWatch says whether a request is a watch (?watch=true or =1).
func IsWatch(u *url.URL) bool {
	w := u.Query().Get("watch")
	return w == "true" || w == "1"
}

// writeConflict answers as the API server does to a write with a stale
// resourceVersion: 409 with a Status of reason Conflict naming the
// object (.../namespaces/<ns>/<resource>/<name>/status).
func writeConflict(w http.ResponseWriter, path string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	resource, name := "", ""
	if len(parts) >= 3 {
		resource, name = parts[len(parts)-3], parts[len(parts)-2]
	}
	group := ""
	if len(parts) > 2 && parts[0] == "apis" {
		group = parts[1]
	}
	status := apierrors.NewConflict(schema.GroupResource{Group: group, Resource: resource}, name,
		errors.New("the object has been modified; please apply your changes to the latest version and try again")).ErrStatus
	status.Kind, status.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusConflict)
	_ = json.NewEncoder(w).Encode(status)
}
