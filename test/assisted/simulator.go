package assisted

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // UUID version 5 is defined with SHA-1
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Options configure a Simulator. The zero value serves on 127.0.0.1 on a
// free port and advances installs as fast as the API server allows.
type Options struct {
	// Addr is the HTTPS listen address (default 127.0.0.1:0).
	Addr string
	// StepDelay is how long an installation that moves waits for its next
	// step when nothing else wakes it (default 1 ms). Its own writes wake
	// it, so alone it does not slow an installation: MinStepInterval does.
	StepDelay time.Duration
	// MinStepInterval is the least time between two steps of one
	// installation (default: none). assisted-service moves a cluster and
	// its hosts on its monitor's timer and on the agents' reports, not on
	// its own writes; without a minimum the simulator steps on every watch
	// event its previous step caused, and an installation runs through
	// all its states in about half a second.
	MinStepInterval time.Duration
	// Kubeconfig is written to the admin kubeconfig Secret (default: a
	// placeholder that names the cluster).
	Kubeconfig []byte
	// Concurrency is the number of parallel reconciles of each of the
	// simulator's controllers (default 10), so that a large test is paced
	// by the provider under test, not by the stand-in.
	Concurrency int
	// OmitDiscoveryIgnitionURL leaves status.bootArtifacts.discoveryIgnitionURL
	// empty, as assisted-service versions before it existed did; clients
	// then build the URL from debugInfo.eventsURL.
	OmitDiscoveryIgnitionURL bool
}

// Simulator plays assisted-service's Kubernetes role. Make one with New,
// add it to a manager with SetupWithManager.
type Simulator struct {
	opts     Options
	listener net.Listener
	server   *http.Server
	caPEM    []byte
	cert     tls.Certificate
	baseURL  string
	secret   []byte // signs api_keys
	// taken tells that a manager has had the server: the next is a restart.
	taken bool

	mu sync.Mutex
	// infraEnvs maps an InfraEnv's ID to its key, filled by the InfraEnv
	// reconciler (and refilled after a restart).
	infraEnvs map[string]types.NamespacedName
	holds     map[types.NamespacedName]string
	failures  map[types.NamespacedName]string
	images    map[types.NamespacedName]string
	ignStatus int
	extra     int
	fetches   int

	installEvents  chan event.GenericEvent
	infraEnvEvents chan event.GenericEvent

	// Set by SetupWithManager.
	mgr    ctrl.Manager
	client client.Client
	// failAt fails an installation once it reaches a state.
	failAt map[types.NamespacedName]failure
	// kubeconfigs are per-cluster admin kubeconfigs (SetKubeconfig).
	kubeconfigs map[types.NamespacedName][]byte
	// workloads are the API servers that play installed clusters.
	workloads       map[types.NamespacedName]*workloadCluster
	upgradeFailures map[types.NamespacedName]string
	upgradeHolds    map[types.NamespacedName]bool
	cvoEvents       map[types.NamespacedName]chan event.GenericEvent
	// deprovisioned records the finalizers removed, in order.
	deprovisioned []string
	// stepped is when each installation last took a step (MinStepInterval).
	stepped map[types.NamespacedName]time.Time
}

type failure struct{ state, message string }

// New makes a simulator and binds its HTTPS listener, so that URL and
// CABundle are known before the manager starts.
func New(opts Options) (*Simulator, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 10
	}
	l, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("assisted simulator: %w", err)
	}
	host, port, _ := net.SplitHostPort(l.Addr().String())
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		ips = append(ips, ip)
	}
	caPEM, cert, err := newServingCert(ips, []string{"localhost", "assisted-service"})
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		_ = l.Close()
		return nil, err
	}
	urlHost := host
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		urlHost = "127.0.0.1"
	}
	s := &Simulator{
		opts:           opts,
		listener:       tls.NewListener(l, serverTLS(cert)),
		caPEM:          caPEM,
		cert:           cert,
		baseURL:        "https://" + net.JoinHostPort(urlHost, port),
		secret:         secret,
		infraEnvs:      map[string]types.NamespacedName{},
		holds:          map[types.NamespacedName]string{},
		failures:       map[types.NamespacedName]string{},
		images:         map[types.NamespacedName]string{},
		installEvents:  make(chan event.GenericEvent, 64),
		infraEnvEvents: make(chan event.GenericEvent, 64),

		failAt:          map[types.NamespacedName]failure{},
		stepped:         map[types.NamespacedName]time.Time{},
		kubeconfigs:     map[types.NamespacedName][]byte{},
		workloads:       map[types.NamespacedName]*workloadCluster{},
		upgradeFailures: map[types.NamespacedName]string{},
		upgradeHolds:    map[types.NamespacedName]bool{},
		cvoEvents:       map[types.NamespacedName]chan event.GenericEvent{},
	}
	s.server = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

func serverTLS(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// URL is the base URL of the simulated REST API (https://127.0.0.1:port).
func (s *Simulator) URL() string { return s.baseURL }

// CABundle is the PEM CA that signs the server's certificate: pass it to
// the bootstrap provider (--assisted-ca-bundle).
func (s *Simulator) CABundle() []byte { return append([]byte(nil), s.caPEM...) }

// serve runs the HTTPS server until ctx ends.
func (s *Simulator) serve(ctx context.Context) error {
	s.mu.Lock()
	server, listener := s.server, s.listener
	s.mu.Unlock()
	errc := make(chan error, 1)
	go func() { errc <- server.Serve(listener) }()
	select {
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// Close stops the HTTPS server of a simulator whose manager never started.
func (s *Simulator) Close() error { return s.server.Close() }

// SetupWithManager adds the simulator's controllers and HTTPS server to
// mgr. The InfraEnv, Agent, AgentClusterInstall and ClusterDeployment CRDs
// must exist; Metal3Machine, BareMetalHost, OpenStackMachine and
// OpenStackServer are used when their CRDs exist.
//
// Once that manager has stopped, SetupWithManager may be called again with
// a new one: a restart of assisted-service, which keeps what it keeps in its
// database (the key that signs the image URLs, the serving certificate),
// listens again on the same address and reads everything else back from
// the API server. The knobs (HoldAt, Fail...) stay set.
func (s *Simulator) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := s.takeServer(); err != nil {
		return err
	}
	s.mu.Lock()
	s.mgr, s.client = mgr, mgr.GetClient()
	s.mu.Unlock()
	if err := mgr.Add(manager.RunnableFunc(s.serve)); err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(s.stopWorkloads)); err != nil {
		return err
	}
	if err := s.setupDeprovision(mgr); err != nil {
		return err
	}
	if err := s.setupInfraEnvs(mgr); err != nil {
		return err
	}
	if err := s.setupHosts(ctx, mgr); err != nil {
		return err
	}
	return s.setupInstalls(mgr)
}

// takeServer readies the HTTPS server for a manager: the one New made, or,
// after a manager stopped it (shutting its listener), a new one on the same
// address with the same certificate.
func (s *Simulator) takeServer() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken {
		l, err := net.Listen("tcp", s.listener.Addr().String())
		if err != nil {
			return fmt.Errorf("assisted simulator restart: %w", err)
		}
		s.listener = tls.NewListener(l, serverTLS(s.cert))
		s.server = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	}
	s.taken = true
	return nil
}

func (s *Simulator) controllerOptions() controller.Options {
	return controller.Options{MaxConcurrentReconciles: s.opts.Concurrency}
}

// HoldAt keeps the AgentClusterInstall key in state once it gets there
// (for example "installing": the day-1 installation does not finish).
func (s *Simulator) HoldAt(key types.NamespacedName, state string) {
	s.mu.Lock()
	s.holds[key] = state
	s.mu.Unlock()
}

// Release lets a held AgentClusterInstall go on, and clears a failure: a
// failed install is reset to insufficient, as a reset in assisted-service
// would.
func (s *Simulator) Release(key types.NamespacedName) {
	s.mu.Lock()
	delete(s.holds, key)
	delete(s.failures, key)
	delete(s.failAt, key)
	s.mu.Unlock()
	s.poke(s.installEvents, key)
}

// Fail puts the AgentClusterInstall key in state error with message, as a
// failed installation does.
func (s *Simulator) Fail(key types.NamespacedName, message string) {
	s.mu.Lock()
	s.failures[key] = message
	s.mu.Unlock()
	s.poke(s.installEvents, key)
}

// FailAt makes the AgentClusterInstall key fail with message once it
// reaches state (for example "installing"), as an installation that breaks
// midway does.
func (s *Simulator) FailAt(key types.NamespacedName, state, message string) {
	s.mu.Lock()
	s.failAt[key] = failure{state: state, message: message}
	s.mu.Unlock()
	s.poke(s.installEvents, key)
}

// Deprovisioned lists the assisted-service finalizers removed so far, in
// order, as "<Kind> <namespace>/<name>".
func (s *Simulator) Deprovisioned() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.deprovisioned...)
}

func (s *Simulator) recordDeprovision(kind string, key types.NamespacedName) {
	s.mu.Lock()
	s.deprovisioned = append(s.deprovisioned, kind+" "+key.String())
	s.mu.Unlock()
}

// untilStep is how long the installation key must wait before its next
// step (MinStepInterval); 0 when it may step now.
func (s *Simulator) untilStep(key types.NamespacedName) time.Duration {
	if s.opts.MinStepInterval <= 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.stepped[key]
	if !ok {
		return 0
	}
	return max(0, s.opts.MinStepInterval-time.Since(last))
}

// recordStep notes that the installation key took a step now.
func (s *Simulator) recordStep(key types.NamespacedName) {
	if s.opts.MinStepInterval <= 0 {
		return
	}
	s.mu.Lock()
	s.stepped[key] = time.Now()
	s.mu.Unlock()
}

// step is the time an installation or an upgrade spends in each state.
func (s *Simulator) step() time.Duration {
	if s.opts.StepDelay > 0 {
		return s.opts.StepDelay
	}
	return time.Millisecond
}

// FailImage makes the InfraEnv key's image creation fail with message
// (ImageCreated False, ImageCreationError); "" clears it.
func (s *Simulator) FailImage(key types.NamespacedName, message string) {
	s.mu.Lock()
	if message == "" {
		delete(s.images, key)
	} else {
		s.images[key] = message
	}
	s.mu.Unlock()
	s.poke(s.infraEnvEvents, key)
}

// FailIgnition makes every discovery ignition request answer HTTP status
// (0 restores normal answers).
func (s *Simulator) FailIgnition(status int) {
	s.mu.Lock()
	s.ignStatus = status
	s.mu.Unlock()
}

// DuplicateRegistrations makes each booting host register n more Agents,
// at the same time, as a host that re-registers under new IDs would.
func (s *Simulator) DuplicateRegistrations(n int) {
	s.mu.Lock()
	s.extra = n
	s.mu.Unlock()
}

// IgnitionFetches counts the discovery ignitions served.
func (s *Simulator) IgnitionFetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

func (s *Simulator) poke(ch chan event.GenericEvent, key types.NamespacedName) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetNamespace(key.Namespace)
	obj.SetName(key.Name)
	select {
	case ch <- event.GenericEvent{Object: obj}:
	default: // the periodic requeue catches up
	}
}

// infraEnvID is the InfraEnv's ID in the simulated service: a UUID derived
// from the object's UID, stable across restarts of the simulator.
func infraEnvID(uid types.UID) string { return uuid5("infraenv/" + string(uid)) }

// apiKey signs an InfraEnv ID, as assisted-service's api_key does.
func (s *Simulator) apiKey(id string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(id))
	return hex.EncodeToString(m.Sum(nil))[:32]
}

// uuid5 is an RFC 4122 version 5 UUID of name in a fixed namespace.
func uuid5(name string) string {
	h := sha1.New() //nolint:gosec // UUID version 5
	h.Write([]byte("ocp-capi.assisted-simulator/"))
	h.Write([]byte(name))
	b := h.Sum(nil)[:16]
	b[6] = (b[6] & 0x0f) | 0x50
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
