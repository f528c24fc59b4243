package envtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CAPIManagerBinary finds the cluster-api core manager that `make
// bin/capi-manager` builds (in $KUBEBUILDER_ASSETS or the repository's
// bin/), or "" when it was not built.
func CAPIManagerBinary() string {
	dirs := []string{os.Getenv("KUBEBUILDER_ASSETS")}
	if root, err := FindRepoRoot(); err == nil {
		dirs = append(dirs, filepath.Join(root, "bin"))
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "capi-manager*")); len(m) > 0 {
			if abs, err := filepath.Abs(m[0]); err == nil {
				return abs
			}
		}
	}
	return ""
}

// CAPIManager is a cluster-api core manager process run against an
// Environment.
type CAPIManager struct {
	// Log is the manager's log file.
	Log    string
	cmd    *exec.Cmd
	exited chan error
}

// StartCAPIManager runs the cluster-api core manager (binary) against e,
// with extra flags (for example --feature-gates=ClusterTopology=true), its
// kubeconfig, log and a throwaway webhook certificate in dir. Its webhooks
// are not installed in the API server; it serves them only because it does
// not start without a certificate. Stop it with Stop.
func (e *Environment) StartCAPIManager(binary, dir string, flags ...string) (*CAPIManager, error) {
	kc, err := e.KubeConfig()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), kc, 0o600); err != nil {
		return nil, err
	}
	if err := writeSelfSignedCert(dir); err != nil {
		return nil, err
	}
	ports, err := FreePorts(3)
	if err != nil {
		return nil, err
	}
	m := &CAPIManager{Log: filepath.Join(dir, "capi-manager.log"), exited: make(chan error, 1)}
	logFile, err := os.Create(m.Log)
	if err != nil {
		return nil, err
	}
	args := append([]string{"--kubeconfig", filepath.Join(dir, "kubeconfig"),
		"--webhook-cert-dir", dir, "--webhook-port", strconv.Itoa(ports[0]),
		"--health-addr", fmt.Sprintf("127.0.0.1:%d", ports[1]),
		"--diagnostics-address", fmt.Sprintf("127.0.0.1:%d", ports[2]), "--insecure-diagnostics"}, flags...)
	m.cmd = exec.Command(binary, args...)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	if err := m.cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	go func() {
		m.exited <- m.cmd.Wait()
		_ = logFile.Close()
	}()
	return m, nil
}

// Exited returns the manager's exit error if it has exited, and whether it
// has.
func (m *CAPIManager) Exited() (error, bool) { //nolint:revive // the error is the result, not a failure of Exited
	select {
	case err := <-m.exited:
		m.exited <- err
		return err, true
	default:
		return nil, false
	}
}

// WaitForControllers waits until each named controller of the manager has
// started its workers (its caches have synced), as its log says, for at
// most timeout. Starting a manager on a loaded machine is slow, and that is
// not what a test measures: its own timeouts start after this.
func (m *CAPIManager) WaitForControllers(timeout time.Duration, controllers ...string) error {
	deadline := time.Now().Add(timeout)
	for {
		data, err := os.ReadFile(m.Log)
		if err != nil {
			return err
		}
		missing := []string{}
		for _, c := range controllers {
			if !startedWorkers(string(data), c) {
				missing = append(missing, c)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if err, exited := m.Exited(); exited {
			return fmt.Errorf("the cluster-api manager exited (%w) before controllers %v started:\n%s", err, missing, m.LogTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("controllers %v of the cluster-api manager did not start in %s:\n%s", missing, timeout, m.LogTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startedWorkers tells whether log has controller-runtime's "Starting
// workers" line of controller.
func startedWorkers(log, controller string) bool {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `"Starting workers"`) && strings.Contains(l, `controller="`+controller+`"`) {
			return true
		}
	}
	return false
}

// LogTail is the end of the manager's log, for failure messages.
func (m *CAPIManager) LogTail() string {
	data, _ := os.ReadFile(m.Log)
	if len(data) > 6000 {
		data = data[len(data)-6000:]
	}
	return string(data)
}

// Stop kills the manager and waits for it.
func (m *CAPIManager) Stop() {
	_ = m.cmd.Process.Kill()
	err := <-m.exited
	m.exited <- err
}

// writeSelfSignedCert writes tls.crt and tls.key for localhost into dir.
func writeSelfSignedCert(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}
