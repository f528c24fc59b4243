// Package managers tests the four manager binaries as processes against a
// real kube-apiserver: flags and --help, health probes, metrics served over
// HTTPS behind the API server's authentication and authorization, the
// namespace-restricted cache, leader election, and graceful shutdown on
// SIGTERM; and, opt-in (`make chaos`), the kill storm of the bootstrap
// and control-plane managers (killstorm_test.go).
package managers

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

var managers = []string{"bootstrap-manager", "controlplane-manager", "infrastructure-manager", "addon-manager"}

// Set up once by TestMain.
var (
	env        *envtest.Environment
	binDir     string
	kubeconfig string
	// readerToken may GET /metrics; strangerToken is a valid token without
	// that permission.
	readerToken, strangerToken string
)

const (
	readyTimeout = 90 * time.Second // a -race build on a busy 2-core machine
	// stopTimeout bounds SIGTERM to exit. Binaries built with -race exit
	// about 1 s later than others: the race runtime sleeps at exit
	// (GORACE atexit_sleep_ms, default 1000) to catch late reports.
	stopTimeout = 10 * time.Second
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "ocp-capi-managers-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	binDir = filepath.Join(tmp, "bin")

	// Build the binaries while the API server starts.
	buildErr := make(chan error, 1)
	go func() { buildErr <- buildManagers(binDir) }()

	env, err = envtest.Start(envtest.Options{})
	if err != nil {
		<-buildErr
		fmt.Fprintln(os.Stderr, "starting the test API server:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test API server:", err)
		}
	}()
	if err := <-buildErr; err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kc, err := env.KubeConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kubeconfig = filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := createMetricsReaders(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "creating the metrics readers:", err)
		return 1
	}
	return m.Run()
}

// buildManagers builds the four binaries into dir in one go build, with the
// race detector when the test itself has it.
func buildManagers(dir string) error {
	root, err := envtest.FindRepoRoot()
	if err != nil {
		return err
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if raceEnabled {
		args = append(args, "-race")
	}
	for _, m := range managers {
		args = append(args, "./cmd/"+m)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// createMetricsReaders creates two ServiceAccounts and tokens for them via
// the TokenRequest API; only the first is bound to a ClusterRole that
// allows GET on the non-resource URL /metrics.
func createMetricsReaders(ctx context.Context) error {
	const ns = "metrics-test"
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader", Namespace: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "stranger", Namespace: ns}},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "metrics-reader", Namespace: ns}},
		},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			return err
		}
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	token := func(sa string) (string, error) {
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
		}, metav1.CreateOptions{})
		if err != nil {
			return "", fmt.Errorf("TokenRequest for %s: %w", sa, err)
		}
		return tr.Status.Token, nil
	}
	if readerToken, err = token("metrics-reader"); err != nil {
		return err
	}
	strangerToken, err = token("stranger")
	return err
}

// wantFlags are the flags every manager has.
var wantFlags = []string{
	"--kubeconfig", "--metrics-bind-address", "--metrics-secure", "--health-probe-bind-address",
	"--leader-elect ", "--leader-elect-lease-duration", "--leader-elect-renew-deadline", "--leader-elect-retry-period",
	"--leader-election-namespace", "--namespace", "--watch-filter", "--sync-period",
	"--webhook-port", "--webhook-cert-dir", "--log-format", "-v, --v", "--version", "-h, --help",
}

// TestManagers runs each manager against the API server, checks its probes
// and metrics, then stops it with SIGTERM.
func TestManagers(t *testing.T) {
	for _, name := range managers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkCommandLine(t, name)

			p := start(t, name)
			p.waitReady(t)
			p.checkMetrics(t)
			elapsed := p.stop(t)
			t.Logf("%s exited 0 %s after SIGTERM", name, elapsed.Round(time.Millisecond))
			if !strings.Contains(p.out.String(), "Manager stopped gracefully") {
				t.Errorf("no graceful stop in the log:\n%s", p.out.String())
			}
		})
	}
}

// checkCommandLine checks --help, --version and a rejected flag.
func checkCommandLine(t *testing.T, name string) {
	t.Helper()
	bin := filepath.Join(binDir, name)

	out, err := exec.Command(bin, "--help").Output()
	if err != nil {
		t.Fatalf("--help: %v", err)
	}
	for _, f := range wantFlags {
		if !strings.Contains(string(out), f) {
			t.Errorf("--help lacks %s:\n%s", f, out)
		}
	}
	if !strings.Contains(string(out), name) {
		t.Errorf("--help does not name %s", name)
	}

	out, err = exec.Command(bin, "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != name+" dev" {
		t.Errorf("--version: %q, %v", out, err)
	}

	var stderr bytes.Buffer
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--leader-elect-renew-deadline=1m")
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), "--leader-elect-renew-deadline") {
		t.Errorf("an invalid flag: got %v with %q, want exit code 2 and a message naming the flag", err, stderr.String())
	}
}

// TestNamespaceAndLeaderElection runs a manager whose cache is restricted
// to one namespace, with leader election in that namespace and JSON logs.
func TestNamespaceAndLeaderElection(t *testing.T) {
	ctx := context.Background()
	const name = "infrastructure-manager"
	ns, err := env.NewNamespace(ctx, "watched")
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, name, "--namespace", ns.Name, "--leader-elect", "--leader-election-namespace", ns.Name,
		"--log-format=json", "--v=1")
	p.waitReady(t)

	// The effective configuration is logged as JSON and shows the namespace.
	var found bool
	for _, line := range strings.Split(p.out.String(), "\n") {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) != nil {
			continue
		}
		if entry["msg"] == "Effective configuration" {
			found = true
			if entry["namespace"] != ns.Name || entry["leaderElect"] != true {
				t.Errorf("effective configuration %v does not show namespace %s and leader election", entry, ns.Name)
			}
		}
	}
	if !found {
		t.Errorf("no JSON \"Effective configuration\" line in:\n%s", p.out.String())
	}

	// The manager takes the lease...
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: ns.Name, Name: name + "-leader-election"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := env.Client.Get(ctx, key, lease)
		if err == nil && ptr.Deref(lease.Spec.HolderIdentity, "") != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease %s not acquired: %v\n%s", key, err, p.out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}

	elapsed := p.stop(t)
	t.Logf("%s --namespace %s --leader-elect exited 0 %s after SIGTERM", name, ns.Name, elapsed.Round(time.Millisecond))

	// ...and releases it on shutdown, so a successor need not wait it out.
	if err := env.Client.Get(ctx, key, lease); err != nil {
		t.Fatal(err)
	}
	if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h != "" {
		t.Errorf("lease still held by %q after shutdown", h)
	}
}

// process is a running manager.
type process struct {
	name        string
	cmd         *exec.Cmd
	out         *syncBuffer
	done        chan struct{} // closed when the process has exited
	err         error         // cmd.Wait's result, set before done is closed
	healthAddr  string
	metricsAddr string
}

func start(t *testing.T, name string, extraArgs ...string) *process {
	t.Helper()
	ports, err := envtest.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	healthPort, metricsPort, webhookPort := ports[0], ports[1], ports[2]
	p := &process{
		name:        name,
		out:         &syncBuffer{},
		done:        make(chan struct{}),
		healthAddr:  fmt.Sprintf("127.0.0.1:%d", healthPort),
		metricsAddr: fmt.Sprintf("127.0.0.1:%d", metricsPort),
	}
	args := append([]string{
		"--kubeconfig", kubeconfig,
		"--health-probe-bind-address", p.healthAddr,
		"--metrics-bind-address", p.metricsAddr,
		// Managers with webhooks serve them; /readyz waits for that.
		"--webhook-port", fmt.Sprint(webhookPort),
		"--webhook-cert-dir", webhookCertDir(t),
	}, extraArgs...)
	p.cmd = exec.Command(filepath.Join(binDir, name), args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.out.String())
		}
	})
	return p
}

var httpClient = &http.Client{
	Timeout: 5 * time.Second,
	Transport: &http.Transport{
		// The metrics server's certificate is self-signed.
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // test against a self-signed server
		DisableKeepAlives: true,
	},
}

// get returns the status code and body of a GET, or an error when the
// server does not answer.
func get(url, token string) (int, http.Header, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body), err
}

// waitReady polls /healthz and /readyz until both answer 200.
func (p *process) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	var last string
	for {
		ready := true
		for _, path := range []string{"/healthz", "/readyz"} {
			code, _, body, err := get("http://"+p.healthAddr+path, "")
			if err != nil || code != http.StatusOK {
				ready = false
				last = fmt.Sprintf("%s: %d %q %v", path, code, body, err)
				break
			}
		}
		if ready {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before it was ready: %v", p.name, p.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %s; last answer %s", p.name, readyTimeout, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkMetrics checks that /metrics is HTTPS and needs a token allowed to
// GET /metrics.
func (p *process) checkMetrics(t *testing.T) {
	t.Helper()
	url := "https://" + p.metricsAddr + "/metrics"

	// The metrics server may start a moment after the probes.
	deadline := time.Now().Add(30 * time.Second)
	code, header, body, err := get(url, readerToken)
	for err != nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		code, header, body, err = get(url, readerToken)
	}
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if code != http.StatusOK {
		t.Fatalf("GET %s with an authorized token: %d %q", url, code, body)
	}
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want Prometheus text", ct)
	}
	if !strings.Contains(body, "# TYPE ") || !strings.Contains(body, "controller_runtime_") {
		t.Errorf("body is not controller-runtime's Prometheus text:\n%.500s", body)
	}

	for _, c := range []struct {
		what  string
		token string
		want  int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a token without the permission", strangerToken, http.StatusForbidden},
	} {
		code, _, body, err := get(url, c.token)
		if err != nil || code != c.want {
			t.Errorf("GET /metrics with %s: %d %q %v, want %d", c.what, code, body, err, c.want)
		}
	}
	// A token that the TokenReview rejects is 401, as the API server
	// answers it.
	if code, _, body, err := get(url, "not-a-token"); err != nil || code != http.StatusUnauthorized {
		t.Errorf("GET /metrics with an invalid token: %d %q %v, want %d", code, body, err, http.StatusUnauthorized)
	}

	// Plain HTTP is refused on the HTTPS port.
	if code, _, _, err := get("http://"+p.metricsAddr+"/metrics", readerToken); err == nil && code == http.StatusOK {
		t.Error("/metrics answers plain HTTP")
	}
}

// stop sends SIGTERM and requires exit code 0 within stopTimeout.
func (p *process) stop(t *testing.T) time.Duration {
	t.Helper()
	begin := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		t.Fatalf("%s still running %s after SIGTERM", p.name, stopTimeout)
	}
	elapsed := time.Since(begin)
	if p.err != nil {
		t.Fatalf("%s exited with %v after SIGTERM, want exit code 0", p.name, p.err)
	}
	return elapsed
}

// syncBuffer is a bytes.Buffer safe for the process's writers and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// webhookCertDir writes a self-signed serving certificate for 127.0.0.1.
func webhookCertDir(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "webhook"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}
