package localnode

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is long: the cluster is local and its CA dies with `down`.
const certValidity = 10 * 365 * 24 * time.Hour

// CertSpec describes one certificate signed by one of the two CAs.
type CertSpec struct {
	// Name is the file name stem (<name>.crt, <name>.key).
	Name string
	// CA is "ca" or "front-proxy-ca".
	CA           string
	CommonName   string
	Organization []string
	Usage        x509.ExtKeyUsage
	DNSNames     []string
	IPs          []string
}

// CertSpecs are the certificates of an instance: the API server's serving
// certificate, the clients of each component, the kubelet's serving
// certificate and the aggregation layer's front-proxy client.
func CertSpecs(i Instance) []CertSpec {
	node := i.NodeName()
	return []CertSpec{
		{Name: "apiserver", CA: "ca", CommonName: "kube-apiserver", Usage: x509.ExtKeyUsageServerAuth,
			DNSNames: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + ClusterDomain, "localhost", node},
			IPs:      []string{"127.0.0.1", i.NodeIP(), APIServiceIP}},
		{Name: "apiserver-kubelet-client", CA: "ca", CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}, Usage: x509.ExtKeyUsageClientAuth},
		{Name: "front-proxy-client", CA: "front-proxy-ca", CommonName: "front-proxy-client", Usage: x509.ExtKeyUsageClientAuth},
		{Name: "admin", CA: "ca", CommonName: "kubernetes-admin", Organization: []string{"system:masters"}, Usage: x509.ExtKeyUsageClientAuth},
		{Name: "controller-manager", CA: "ca", CommonName: "system:kube-controller-manager", Usage: x509.ExtKeyUsageClientAuth},
		{Name: "scheduler", CA: "ca", CommonName: "system:kube-scheduler", Usage: x509.ExtKeyUsageClientAuth},
		{Name: "kube-proxy", CA: "ca", CommonName: "system:kube-proxy", Usage: x509.ExtKeyUsageClientAuth},
		{Name: "kubelet-client", CA: "ca", CommonName: "system:node:" + node, Organization: []string{"system:nodes"}, Usage: x509.ExtKeyUsageClientAuth},
		{Name: "kubelet", CA: "ca", CommonName: node, Usage: x509.ExtKeyUsageServerAuth,
			DNSNames: []string{node, "localhost"}, IPs: []string{i.NodeIP(), "127.0.0.1"}},
	}
}

// KeyPair is a PEM certificate and key.
type KeyPair struct {
	CertPEM, KeyPEM []byte
}

// PKI is everything the cluster's TLS needs.
type PKI struct {
	CA, FrontProxyCA KeyPair
	Certs            map[string]KeyPair
	// ServiceAccountKey and ServiceAccountPub sign and verify tokens.
	ServiceAccountKey, ServiceAccountPub []byte
}

// GeneratePKI makes both CAs, every certificate of CertSpecs and the
// service-account key pair. Keys are ECDSA P-256: generating them is
// instant, and every component accepts them.
func GeneratePKI(i Instance, now time.Time) (*PKI, error) {
	p := &PKI{Certs: map[string]KeyPair{}}
	cas := map[string]*issuer{}
	for _, ca := range []struct {
		name, cn string
		out      *KeyPair
	}{{"ca", "ocp-capi-mgmt-ca", &p.CA}, {"front-proxy-ca", "ocp-capi-mgmt-front-proxy-ca", &p.FrontProxyCA}} {
		iss, kp, err := newCA(ca.cn, now)
		if err != nil {
			return nil, err
		}
		cas[ca.name], *ca.out = iss, kp
	}
	for _, s := range CertSpecs(i) {
		iss, ok := cas[s.CA]
		if !ok {
			return nil, fmt.Errorf("certificate %s: unknown CA %q", s.Name, s.CA)
		}
		kp, err := iss.sign(s, now)
		if err != nil {
			return nil, fmt.Errorf("certificate %s: %w", s.Name, err)
		}
		p.Certs[s.Name] = kp
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if p.ServiceAccountKey, err = keyPEM(saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	p.ServiceAccountPub = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	return p, nil
}

type issuer struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func newCA(cn string, now time.Time) (*issuer, KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, KeyPair{}, err
	}
	sn, err := serial()
	if err != nil {
		return nil, KeyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, KeyPair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, KeyPair{}, err
	}
	kp, err := pair(der, key)
	return &issuer{cert: cert, key: key}, kp, err
}

func (iss *issuer) sign(s CertSpec, now time.Time) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, err
	}
	sn, err := serial()
	if err != nil {
		return KeyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: s.CommonName, Organization: s.Organization},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{s.Usage},
		BasicConstraintsValid: true,
		DNSNames:              s.DNSNames,
	}
	for _, ip := range s.IPs {
		parsed := net.ParseIP(ip)
		if parsed == nil {
			return KeyPair{}, fmt.Errorf("bad IP SAN %q", ip)
		}
		tmpl.IPAddresses = append(tmpl.IPAddresses, parsed)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, iss.cert, &key.PublicKey, iss.key)
	if err != nil {
		return KeyPair{}, err
	}
	return pair(der, key)
}

func pair(der []byte, key *ecdsa.PrivateKey) (KeyPair, error) {
	k, err := keyPEM(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), KeyPEM: k}, nil
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// PKIFiles are the file names under the PKI directory.
const (
	saKeyFile = "sa.key"
	saPubFile = "sa.pub"
)

// Write stores the PKI as <dir>/<name>.crt/.key, sa.key and sa.pub; keys
// are readable by root only.
func (p *PKI) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	files := map[string][]byte{saKeyFile: p.ServiceAccountKey, saPubFile: p.ServiceAccountPub}
	add := func(name string, kp KeyPair) {
		files[name+".crt"], files[name+".key"] = kp.CertPEM, kp.KeyPEM
	}
	add("ca", p.CA)
	add("front-proxy-ca", p.FrontProxyCA)
	for n, kp := range p.Certs {
		add(n, kp)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// LoadPKI reads what Write stored.
func LoadPKI(i Instance, dir string) (*PKI, error) {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	pairOf := func(name string) (KeyPair, error) {
		c, err := read(name + ".crt")
		if err != nil {
			return KeyPair{}, err
		}
		k, err := read(name + ".key")
		return KeyPair{CertPEM: c, KeyPEM: k}, err
	}
	p := &PKI{Certs: map[string]KeyPair{}}
	var err error
	if p.CA, err = pairOf("ca"); err != nil {
		return nil, err
	}
	if p.FrontProxyCA, err = pairOf("front-proxy-ca"); err != nil {
		return nil, err
	}
	for _, s := range CertSpecs(i) {
		if p.Certs[s.Name], err = pairOf(s.Name); err != nil {
			return nil, err
		}
	}
	if p.ServiceAccountKey, err = read(saKeyFile); err != nil {
		return nil, err
	}
	if p.ServiceAccountPub, err = read(saPubFile); err != nil {
		return nil, err
	}
	return p, nil
}

// EnsurePKI loads the instance's PKI, or generates and writes it when the
// directory has none yet. A PKI made for another instance (another node IP)
// is refused rather than silently served with wrong SANs.
func EnsurePKI(i Instance, dir string, now time.Time) (*PKI, error) {
	if _, err := os.Stat(filepath.Join(dir, "ca.crt")); errors.Is(err, os.ErrNotExist) {
		p, err := GeneratePKI(i, now)
		if err != nil {
			return nil, err
		}
		return p, p.Write(dir)
	}
	p, err := LoadPKI(i, dir)
	if err != nil {
		return nil, fmt.Errorf("reading the PKI in %s (run `mgmt down` to start over): %w", dir, err)
	}
	if err := p.Verify(i); err != nil {
		return nil, fmt.Errorf("the PKI in %s does not fit this instance (run `mgmt down` to start over): %w", dir, err)
	}
	return p, nil
}

// Verify checks that every certificate chains to its CA and that the
// serving certificates name the instance's addresses.
func (p *PKI) Verify(i Instance) error {
	pools := map[string]*x509.CertPool{}
	for name, kp := range map[string]KeyPair{"ca": p.CA, "front-proxy-ca": p.FrontProxyCA} {
		c, err := parseCert(kp.CertPEM)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		pools[name] = x509.NewCertPool()
		pools[name].AddCert(c)
	}
	for _, s := range CertSpecs(i) {
		c, err := parseCert(p.Certs[s.Name].CertPEM)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		opts := x509.VerifyOptions{Roots: pools[s.CA], KeyUsages: []x509.ExtKeyUsage{s.Usage}}
		if _, err := c.Verify(opts); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, ip := range s.IPs {
			if err := c.VerifyHostname(ip); err != nil {
				return fmt.Errorf("%s: %w", s.Name, err)
			}
		}
	}
	return nil
}

func parseCert(data []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}
