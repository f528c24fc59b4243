// Package envtest starts a real kube-apiserver and etcd for tests and for the
// local management plane, with three sets of CRDs installed:
//
//   - CAPI core's CRDs, read from the cluster-api module in the Go module
//     cache at the version go.mod pins, so they never drift from the code;
//   - the CRDs this project serves (internal/openstack/config, bootstrap/config,
//     controlplane/config);
//   - the CRDs of the APIs we consume: the real upstream CRDs when
//     ../shared/upstream-crds (or $OCP_CAPI_UPSTREAM_CRDS) is present, else
//     the ones generated from our mirrored types in test/crds/consumed.
//
// The binaries come from bin/ (built by `make test-tools`) or
// $KUBEBUILDER_ASSETS; nothing is downloaded.
package envtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ocp-capi/ocp-capi/test/scheme"
)

// Options configure Start. The zero value is what tests want.
type Options struct {
	// RepoRoot is the project's root. Default: found by walking up from the
	// working directory to this module's go.mod.
	RepoRoot string
	// BinDir holds kube-apiserver, etcd and kubectl.
	// Default: $KUBEBUILDER_ASSETS, else <root>/bin.
	BinDir string
	// UpstreamCRDs is the directory of upstream CRDs for the consumed APIs.
	// Default: $OCP_CAPI_UPSTREAM_CRDS, else <root>/../shared/upstream-crds
	// when it exists. "none" turns it off.
	UpstreamCRDs string
	// APIServerPort fixes the secure port; 0 picks a free one.
	APIServerPort int
	// DataDir keeps etcd's data across restarts (the management plane's warm
	// start). Empty means a temporary directory removed on Stop.
	DataDir string
	// AttachOutput copies the control plane's logs to stdout and stderr.
	AttachOutput bool
	// ExtraCRDs are installed after the standard sets.
	ExtraCRDs []*apiextensionsv1.CustomResourceDefinition
	// WebhookManifests are files or directories of webhook configurations
	// (controller-gen's manifests.yaml), relative to RepoRoot unless
	// absolute. They are installed calling a webhook server on this machine,
	// which the test runs with WebhookServerOptions. Default: none.
	WebhookManifests []string
	// AuditLogPath, when set, makes the API server write an audit log
	// there (JSON lines), one entry per request at the Metadata level, at
	// ResponseComplete: who did what to which object (ReadAuditLog).
	AuditLogPath string
}

// Environment is a running API server with the project's CRDs.
type Environment struct {
	Config *rest.Config
	Client client.Client
	Scheme *runtime.Scheme
	Paths  Paths
	// Guard sees every write made through ControllerConfig; TestMain ends
	// with Guard.Finish so that a reconcile loop fails the suite.
	Guard *LoopGuard

	env  *crenvtest.Environment
	crds []CRD
	// restarted are the API server processes RestartAPIServer started.
	restarted []*exec.Cmd
}

// Start launches etcd and kube-apiserver and installs the CRDs.
func Start(opts Options) (*Environment, error) {
	paths, err := ResolvePaths(opts)
	if err != nil {
		return nil, err
	}
	crds, err := paths.AllCRDs()
	if err != nil {
		return nil, err
	}
	s := runtime.NewScheme()
	if err := scheme.AddAll(s); err != nil {
		return nil, err
	}

	objs := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(crds)+len(opts.ExtraCRDs))
	for _, c := range crds {
		objs = append(objs, c.Object.DeepCopy())
	}
	objs = append(objs, opts.ExtraCRDs...)

	env := &crenvtest.Environment{
		BinaryAssetsDirectory:    paths.BinDir,
		CRDs:                     objs,
		Scheme:                   s,
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
		AttachControlPlaneOutput: opts.AttachOutput,
	}
	if env.WebhookInstallOptions, err = webhookInstallOptions(paths.RepoRoot, opts.WebhookManifests); err != nil {
		return nil, err
	}
	// envtest resolves binaries by name in BinaryAssetsDirectory, but a
	// missing one only shows up as an obscure start failure; say it plainly.
	for _, b := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(paths.BinDir, b)); err != nil {
			return nil, fmt.Errorf("%s not found in %s: run `make test-tools` first (or set KUBEBUILDER_ASSETS)", b, paths.BinDir)
		}
	}
	api := env.ControlPlane.GetAPIServer()
	if opts.APIServerPort != 0 {
		api.Address = "127.0.0.1"
		api.Port = strconv.Itoa(opts.APIServerPort)
	}
	if opts.AuditLogPath != "" {
		policy := opts.AuditLogPath + ".policy.yaml"
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
			return nil, err
		}
		api.Configure().Set("audit-policy-file", policy).Set("audit-log-path", opts.AuditLogPath).
			Set("audit-log-format", "json")
	}
	if opts.DataDir != "" {
		if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
			return nil, err
		}
		env.ControlPlane.Etcd = &crenvtest.Etcd{DataDir: opts.DataDir}
	}

	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", paths.BinDir, err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Environment{Config: cfg, Client: cl, Scheme: s, Paths: paths, Guard: NewLoopGuard(), env: env, crds: crds}, nil
}

// ControllerConfig is a copy of Config for the controllers under test:
// their writes pass the loop guard (Guard). Tests and stand-ins use Config.
func (e *Environment) ControllerConfig() *rest.Config { return e.Guard.WrapConfig(e.Config) }

// Stop stops the API server and etcd.
func (e *Environment) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	return errors.Join(e.stopRestarted(), e.env.Stop())
}

// CRDs are the CRDs installed by Start (not counting Options.ExtraCRDs).
func (e *Environment) CRDs() []CRD { return e.crds }

// CRDSources maps each installed CRD's name to the file it came from.
func (e *Environment) CRDSources() map[string]string {
	out := make(map[string]string, len(e.crds))
	for _, c := range e.crds {
		out[c.Object.Name] = c.Source
	}
	return out
}

// KubeConfig returns an admin kubeconfig (system:masters) for this server.
func (e *Environment) KubeConfig() ([]byte, error) {
	user, err := e.env.AddUser(crenvtest.User{Name: "ocp-capi-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	return user.KubeConfig()
}

// NewNamespace creates a namespace with a generated name for one test.
func (e *Environment) NewNamespace(ctx context.Context, prefix string) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := e.Client.Create(ctx, ns); err != nil {
		return nil, err
	}
	return ns, nil
}

// Paths are the files and directories an environment is built from.
type Paths struct {
	RepoRoot string
	BinDir   string
	// CAPICRDs is core/config/crd/bases of the cluster-api module.
	CAPICRDs string
	// OwnCRDs are the CRD directories of the APIs this project serves.
	OwnCRDs []string
	// ConsumedCRDs is where our generated consumed-API CRDs are.
	ConsumedCRDs string
	// UpstreamCRDs is the upstream CRD directory, or "" when not used.
	UpstreamCRDs string
}

// OwnCRDDirs are the directories, relative to the repository root, that
// hold the CRDs of the APIs we serve, one per provider.
var OwnCRDDirs = []string{
	"internal/openstack/config/crd/bases",
	"bootstrap/config/crd/bases",
	"controlplane/config/crd/bases",
}

// ResolvePaths fills in defaults and checks that the inputs exist.
func ResolvePaths(opts Options) (Paths, error) {
	root := opts.RepoRoot
	if root == "" {
		r, err := FindRepoRoot()
		if err != nil {
			return Paths{}, err
		}
		root = r
	}
	p := Paths{RepoRoot: root, ConsumedCRDs: filepath.Join(root, "test", "crds", "consumed")}

	p.BinDir = opts.BinDir
	if p.BinDir == "" {
		p.BinDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if p.BinDir == "" {
		p.BinDir = filepath.Join(root, "bin")
	}

	capi, err := CAPICoreCRDDir(root)
	if err != nil {
		return Paths{}, err
	}
	p.CAPICRDs = capi

	for _, d := range OwnCRDDirs {
		abs := filepath.Join(root, d)
		if _, err := os.Stat(abs); err == nil {
			p.OwnCRDs = append(p.OwnCRDs, abs)
		}
	}

	up := opts.UpstreamCRDs
	if up == "" {
		up = os.Getenv("OCP_CAPI_UPSTREAM_CRDS")
	}
	switch {
	case up == "none":
		up = ""
	case up == "":
		if d := filepath.Join(root, "..", "shared", "upstream-crds"); isDir(d) {
			up = d
		}
	case !isDir(up):
		return Paths{}, fmt.Errorf("upstream CRD directory %q does not exist (set OCP_CAPI_UPSTREAM_CRDS=none to use the generated CRDs)", up)
	}
	if up != "" {
		up, _ = filepath.Abs(up)
	}
	p.UpstreamCRDs = up
	return p, nil
}

// AllCRDs reads the three CRD sets. A CRD name defined twice is an error:
// that would mean we both serve and consume a kind.
func (p Paths) AllCRDs() ([]CRD, error) {
	var all []CRD
	capi, err := ReadCRDDir(p.CAPICRDs)
	if err != nil {
		return nil, fmt.Errorf("reading CAPI core CRDs: %w", err)
	}
	all = append(all, capi...)
	for _, d := range p.OwnCRDs {
		own, err := ReadCRDDir(d)
		if err != nil {
			return nil, err
		}
		all = append(all, own...)
	}
	consumed, err := ConsumedCRDs(p.ConsumedCRDs, p.UpstreamCRDs)
	if err != nil {
		return nil, err
	}
	all = append(all, consumed...)

	seen := map[string]string{}
	for _, c := range all {
		if prev, ok := seen[c.Object.Name]; ok {
			return nil, fmt.Errorf("CRD %s is defined in both %s and %s", c.Object.Name, prev, c.Source)
		}
		seen[c.Object.Name] = c.Source
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Object.Name < all[j].Object.Name })
	return all, nil
}

// FreePorts returns n distinct free ports of 127.0.0.1. All n are held
// until all are chosen: closing each before asking for the next lets the
// kernel hand out the same port twice (seen: a manager's webhook port equal
// to its metrics port).
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
