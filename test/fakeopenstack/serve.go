package fakeopenstack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
)

// Request is one request the fake received.
type Request struct {
	Method string
	// Path is the path as sent; Template is the path with every ID (UUID or
	// 32 hex digits) replaced by "{id}", e.g. "/compute/v2.1/servers/{id}".
	Path, Template string
	Query          string
	Header         http.Header
	Body           []byte
	// Status is the answer; 0 when the connection was dropped.
	Status int
}

// String is "METHOD template", the key of HitCounts.
func (r Request) String() string { return r.Method + " " + r.Template }

// JSON decodes the request body.
func (r Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Requests returns the request log, oldest first.
func (c *Cloud) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.log...)
}

// Calls returns the request log as "METHOD template" lines.
func (c *Cloud) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.log))
	for i, r := range c.log {
		out[i] = r.String()
	}
	return out
}

// HitCounts counts the logged requests per "METHOD template".
func (c *Cloud) HitCounts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for _, r := range c.log {
		out[r.String()]++
	}
	return out
}

// Hits counts the logged requests with this method and path template.
func (c *Cloud) Hits(method, template string) int {
	return c.HitCounts()[method+" "+template]
}

// Last returns the latest logged request with this method and path
// template.
func (c *Cloud) Last(method, template string) (Request, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.log) - 1; i >= 0; i-- {
		if r := c.log[i]; r.Method == method && r.Template == template {
			return r, true
		}
	}
	return Request{}, false
}

// ResetRequests empties the request log.
func (c *Cloud) ResetRequests() { c.locked(func() { c.log = nil }) }

var idSegment = regexp.MustCompile(`^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})$`)

// Template replaces every path segment that is an ID by "{id}".
func Template(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if idSegment.MatchString(s) {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

// ServeHTTP serves one request under the fake's lock: an injected fault,
// else a 401 without a valid token, else the service's answer.
func (c *Cloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))

	c.mu.Lock()
	defer c.mu.Unlock()
	rec := Request{Method: r.Method, Path: r.URL.Path, Template: Template(r.URL.Path), Query: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body}
	sw := &statusWriter{ResponseWriter: w}
	switch f := c.takeFault(rec); {
	case f != nil && f.Drop:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
	case f != nil:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		reply(sw, f.Status, object{"error": object{"code": f.Status, "message": "injected: " + http.StatusText(f.Status)}})
	case c.disabledPath(r.URL.Path):
		// A catalog entry with nothing behind it: the web server's 404.
		sw.Header().Set("Content-Type", "text/html")
		sw.WriteHeader(http.StatusNotFound)
		_, _ = sw.Write([]byte("<html><body><h1>404 Not Found</h1></body></html>"))
	case !c.public(r) && !c.tokens[r.Header.Get("X-Auth-Token")]:
		reply(sw, http.StatusUnauthorized, object{"error": object{"code": 401, "title": "Unauthorized",
			"message": "The request you have made requires authentication."}})
	default:
		if v := r.Header.Get("X-OpenStack-Nova-API-Version"); v != "" && strings.HasPrefix(r.URL.Path, "/compute/") {
			w.Header().Set("X-OpenStack-Nova-API-Version", v)
			w.Header().Set("OpenStack-API-Version", "compute "+v)
		}
		if strings.HasPrefix(r.URL.Path, "/load-balancer/") {
			c.advanceLoadBalancers()
		}
		c.mux.ServeHTTP(sw, r)
	}
	rec.Status = sw.status
	c.log = append(c.log, rec)
}

func (c *Cloud) takeFault(r Request) *Fault {
	for i, f := range c.faults {
		if f.Method != "" && !strings.EqualFold(f.Method, r.Method) {
			continue
		}
		if !strings.HasPrefix(r.Path, f.PathPrefix) && !strings.HasPrefix(r.Template, f.PathPrefix) {
			continue
		}
		if f.After > 0 {
			f.After--
			continue
		}
		if f.Times--; f.Times <= 0 {
			c.faults = append(c.faults[:i], c.faults[i+1:]...)
		}
		return f
	}
	return nil
}

// public reports whether a request needs no token: authentication and
// version discovery.
func (c *Cloud) public(r *http.Request) bool {
	p := r.URL.Path
	return p == "/identity/v3/auth/tokens" || strings.Count(strings.TrimSuffix(p, "/"), "/") <= 1
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Answers.

func reply(w http.ResponseWriter, status int, v any) {
	if status == http.StatusNoContent || v == nil {
		w.WriteHeader(status)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// apiError is a failed request in the service's own error format.
type apiError struct {
	status int
	body   object
}

// novaError is Nova's and Cinder's format: {"itemNotFound": {"code": 404, "message": ...}}.
func novaError(status int, key, format string, args ...any) *apiError {
	return &apiError{status, object{key: object{"code": status, "message": fmt.Sprintf(format, args...)}}}
}

func notFound(format string, args ...any) *apiError {
	return novaError(http.StatusNotFound, "itemNotFound", format, args...)
}

func badRequest(format string, args ...any) *apiError {
	return novaError(http.StatusBadRequest, "badRequest", format, args...)
}

// neutronError is Neutron's format.
func neutronError(status int, typ, format string, args ...any) *apiError {
	return &apiError{status, object{"NeutronError": object{"type": typ, "message": fmt.Sprintf(format, args...), "detail": ""}}}
}

func (e *apiError) write(w http.ResponseWriter) { reply(w, e.status, e.body) }

// decode reads a JSON request body.
func decode(r *http.Request, v any) *apiError {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return badRequest("malformed request body: %v", err)
	}
	return nil
}

// Loose accessors for decoded JSON.

func str(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	default:
		return fmt.Sprint(t)
	}
}

func num(v any) int {
	f, _ := v.(float64)
	if i, ok := v.(int); ok {
		return i
	}
	return int(f)
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func strs(v any) []string {
	switch t := v.(type) {
	case []string:
		return t
	case []any:
		out := make([]string, 0, len(t))
		for _, s := range t {
			out = append(out, str(s))
		}
		return out
	}
	return nil
}

func boolean(v any, dflt bool) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	return dflt
}
