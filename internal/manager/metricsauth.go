package manager

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long a metrics caller's decision is reused. A scraper asks every few
// seconds; without the cache each scrape would cost the API server a
// TokenReview and a SubjectAccessReview. A refusal is kept briefly, so that a
// newly granted permission takes effect soon.
const (
	metricsAllowedTTL = time.Minute
	metricsDeniedTTL  = 10 * time.Second
	metricsCacheSize  = 256
)

// metricsAuth guards /metrics the way the API server guards a non-resource
// URL: the bearer token is authenticated with a TokenReview, and the caller
// must be allowed the request's verb on its path (a SubjectAccessReview).
//
// It stands in for controller-runtime's metrics filter, which does the same
// through k8s.io/apiserver's delegating authenticator and authorizer. That
// library and what it brings (CEL, gRPC, OpenTelemetry) add 16 MB and 250
// packages to every manager binary, and about 1.6 MiB of heap at start
// (docs/reliability.md, Scale).
func metricsAuth(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authnclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authzclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	g := &metricsGuard{
		review: func(r *http.Request, token string) (int, error) {
			return reviewMetricsRequest(r, token, authn.TokenReviews(), authz.SubjectAccessReviews())
		},
		decisions: map[[sha256.Size]byte]metricsDecision{},
		now:       time.Now,
	}
	return g.filter, nil
}

type metricsDecision struct {
	code    int
	expires time.Time
}

type metricsGuard struct {
	// review returns the status for the request: 200 when it may go on.
	review func(r *http.Request, token string) (int, error)
	now    func() time.Time

	mu        sync.Mutex
	decisions map[[sha256.Size]byte]metricsDecision
}

func (g *metricsGuard) filter(log logr.Logger, next http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearerToken(r)
		if !ok {
			http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
			return
		}
		code, err := g.decide(r, token)
		if err != nil {
			log.Error(err, "Reviewing a metrics request", "path", r.URL.Path)
			http.Error(w, "Authentication or authorization failed", http.StatusInternalServerError)
			return
		}
		if code != http.StatusOK {
			http.Error(w, http.StatusText(code), code)
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}

// decide answers from the cache, or reviews the request and remembers the
// answer. Errors are not remembered.
func (g *metricsGuard) decide(r *http.Request, token string) (int, error) {
	key := sha256.Sum256([]byte(r.Method + "\x00" + r.URL.Path + "\x00" + token))
	now := g.now()
	g.mu.Lock()
	d, ok := g.decisions[key]
	g.mu.Unlock()
	if ok && now.Before(d.expires) {
		return d.code, nil
	}
	code, err := g.review(r, token)
	if err != nil {
		return 0, err
	}
	ttl := metricsDeniedTTL
	if code == http.StatusOK {
		ttl = metricsAllowedTTL
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.decisions) >= metricsCacheSize {
		for k, old := range g.decisions {
			if !now.Before(old.expires) {
				delete(g.decisions, k)
			}
		}
		if len(g.decisions) >= metricsCacheSize {
			clear(g.decisions)
		}
	}
	g.decisions[key] = metricsDecision{code: code, expires: now.Add(ttl)}
	return code, nil
}

func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// reviewMetricsRequest asks the API server who the token belongs to, then
// whether that user may use the request's verb on its path: 401 for a token
// it does not accept, 403 for a user without the permission.
func reviewMetricsRequest(r *http.Request, token string,
	tokens authnclient.TokenReviewInterface, access authzclient.SubjectAccessReviewInterface,
) (int, error) {
	tr, err := tokens.Create(r.Context(), &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	user := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := access.Create(r.Context(), &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   user.Username,
			UID:    user.UID,
			Groups: user.Groups,
			Extra:  extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{
				Path: r.URL.Path,
				Verb: strings.ToLower(r.Method),
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if !sar.Status.Allowed {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}
