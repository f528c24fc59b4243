package envtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// webhookInstallOptions resolves the webhook manifests of Options against
// the repository root. Every one must exist: a typo would otherwise leave
// the API server without webhooks and the test passing for the wrong reason.
func webhookInstallOptions(root string, manifests []string) (crenvtest.WebhookInstallOptions, error) {
	var o crenvtest.WebhookInstallOptions
	for _, m := range manifests {
		if !filepath.IsAbs(m) {
			m = filepath.Join(root, m)
		}
		if _, err := os.Stat(m); err != nil {
			return o, fmt.Errorf("webhook manifests: %w (run `make generate`?)", err)
		}
		o.Paths = append(o.Paths, m)
	}
	return o, nil
}

// WebhookServerOptions configure a controller-runtime webhook server (for
// example a manager's, through webhook.NewServer) to serve on the address
// and with the certificate that the installed webhook configurations expect.
func (e *Environment) WebhookServerOptions() webhook.Options {
	o := e.env.WebhookInstallOptions
	return webhook.Options{
		Host:    o.LocalServingHost,
		Port:    o.LocalServingPort,
		CertDir: o.LocalServingCertDir,
	}
}

// WaitForWebhookServer returns once the local webhook server completes a TLS
// handshake with the certificate envtest issued, or when ctx ends. Until
// then, requests that a webhook with failurePolicy Fail intercepts are
// refused by the API server.
func (e *Environment) WaitForWebhookServer(ctx context.Context) error {
	o := e.env.WebhookInstallOptions
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(o.LocalServingCAData) {
		return errors.New("envtest has no webhook serving CA")
	}
	addr := net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort))
	dialer := &tls.Dialer{
		NetDialer: &net.Dialer{Timeout: time.Second},
		Config:    &tls.Config{RootCAs: pool, ServerName: o.LocalServingHost, MinVersion: tls.VersionTLS12},
	}
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	for {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("webhook server on %s not ready: %w (last error: %w)", addr, ctx.Err(), err)
		case <-ticker.C:
		}
	}
}
