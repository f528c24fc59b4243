package webhooks_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	infrawebhooks "github.com/ocp-capi/ocp-capi/internal/openstack/webhooks"
	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/scheme"
)

// webhookManifests is where hack/generate.sh writes the webhook
// configurations generated from this package's markers.
const webhookManifests = "internal/openstack/config/webhook"

// webhookEnv is one API server, with the generated webhook configurations
// and a manager serving only this package's webhooks, shared by the tests of
// this file. It starts on first use, so the unit tests of the package do not
// need the control plane binaries, and stops in TestMain.
var webhookEnv struct {
	once sync.Once
	err  error
	env  *envtest.Environment
	cl   client.Client
	stop func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if webhookEnv.stop != nil {
		webhookEnv.stop()
	}
	os.Exit(code)
}

// startWebhookEnv returns a client of the shared environment, whose scheme
// knows the infrastructure API, and a new namespace for the test.
func startWebhookEnv(t *testing.T) (client.Client, string) {
	t.Helper()
	webhookEnv.once.Do(func() { webhookEnv.err = startSharedWebhookEnv() })
	if webhookEnv.err != nil {
		t.Fatal(webhookEnv.err)
	}
	ns, err := webhookEnv.env.NewNamespace(context.Background(), "webhooks")
	if err != nil {
		t.Fatal(err)
	}
	return webhookEnv.cl, ns.Name
}

func startSharedWebhookEnv() error {
	env, err := envtest.Start(envtest.Options{WebhookManifests: []string{webhookManifests}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	started := false
	webhookEnv.stop = func() {
		cancel()
		if started {
			if err := <-done; err != nil {
				fmt.Fprintln(os.Stderr, "webhook manager:", err)
			}
		}
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}

	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{scheme.AddAll, infrav1.AddToScheme, infrav1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			return err
		}
	}
	// The manager logs through controller-runtime's global logger.
	ctrl.SetLogger(logr.Discard())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 s,
		WebhookServer:          webhook.NewServer(env.WebhookServerOptions()),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	if err := infrawebhooks.SetupWebhooks(mgr); err != nil {
		return err
	}
	go func() { done <- mgr.Start(ctx) }()
	started = true
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	if err := env.WaitForWebhookServer(waitCtx); err != nil {
		return err
	}

	cl, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	webhookEnv.env, webhookEnv.cl = env, cl
	return nil
}

const (
	networkA = "6f1c2a44-5a52-4d4b-9a3e-111111111111"
	networkB = "6f1c2a44-5a52-4d4b-9a3e-222222222222"
)

func machineSpec() infrav1.OpenStackMachineSpec {
	return infrav1.OpenStackMachineSpec{
		Flavor:     infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.large")}},
		Image:      infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
		SSHKeyName: "key",
		Ports:      []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(networkA)}}},
	}
}

func machine(ns, name string) *infrav1.OpenStackMachine {
	return &infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       machineSpec(),
	}
}

func template(ns, name string) *infrav1.OpenStackMachineTemplate {
	return &infrav1.OpenStackMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: infrav1.OpenStackMachineTemplateSpec{
			Template: infrav1.OpenStackMachineTemplateResource{Spec: machineSpec()},
		},
	}
}

func server(ns, name string) *infrav1alpha1.OpenStackServer {
	return &infrav1alpha1.OpenStackServer{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: infrav1alpha1.OpenStackServerSpec{
			Flavor:      ptr.To("m1.large"),
			IdentityRef: infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"},
			Image:       infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
			Ports:       []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(networkA)}}},
			SSHKeyName:  "key",
		},
	}
}

// wantInvalid asserts that err is an Invalid API error whose message
// contains every one of want.
func wantInvalid(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("the API server accepted the request; want it refused with %q", want)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid error, got %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not contain %q: %v", w, err)
		}
	}
}

func TestWebhooksThroughAPIServer(t *testing.T) {
	cl, ns := startWebhookEnv(t)
	ctx := context.Background()

	t.Run("OpenStackMachine flavor change is refused naming spec.flavor", func(t *testing.T) {
		m := machine(ns, "flavor")
		if err := cl.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		m.Spec.Flavor.Filter.Name = ptr.To("m1.xlarge")
		wantInvalid(t, cl.Update(ctx, m), "spec.flavor", "immutable")
	})

	t.Run("OpenStackMachine providerID may be set once", func(t *testing.T) {
		m := machine(ns, "providerid")
		if err := cl.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		m.Spec.ProviderID = "openstack:///0b6f4a44-0000-0000-0000-000000000001"
		if err := cl.Update(ctx, m); err != nil {
			t.Fatalf("setting providerID: %v", err)
		}
		m.Spec.ProviderID = "openstack:///0b6f4a44-0000-0000-0000-000000000002"
		wantInvalid(t, cl.Update(ctx, m), "spec.providerID")
	})

	t.Run("OpenStackMachine identityRef may change", func(t *testing.T) {
		m := machine(ns, "identity")
		m.Spec.IdentityRef = &infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"}
		if err := cl.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		m.Spec.IdentityRef.Name = "rotated"
		if err := cl.Update(ctx, m); err != nil {
			t.Fatalf("rotating credentials: %v", err)
		}
	})

	t.Run("OpenStackServer port change is refused naming spec.ports", func(t *testing.T) {
		s := server(ns, "ports")
		if err := cl.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		s.Spec.Ports[0].Network.ID = ptr.To(networkB)
		wantInvalid(t, cl.Update(ctx, s), "spec.ports[0].network.id")

		if err := cl.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
			t.Fatal(err)
		}
		s.Spec.Ports = append(s.Spec.Ports, infrav1.PortOpts{Network: &infrav1.NetworkParam{ID: ptr.To(networkB)}})
		wantInvalid(t, cl.Update(ctx, s), "spec.ports")
	})

	t.Run("port security disabled with security groups is refused on create", func(t *testing.T) {
		noPortSecurity := infrav1.PortOpts{
			Network:                &infrav1.NetworkParam{ID: ptr.To(networkA)},
			SecurityGroups:         []infrav1.SecurityGroupParam{{Filter: &infrav1.SecurityGroupFilter{Name: "sg"}}},
			ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)},
		}
		m := machine(ns, "portsecurity")
		m.Spec.Ports = []infrav1.PortOpts{noPortSecurity}
		wantInvalid(t, cl.Create(ctx, m), "spec.ports[0].securityGroups")

		s := server(ns, "portsecurity")
		s.Spec.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(networkB)}}, noPortSecurity}
		wantInvalid(t, cl.Create(ctx, s), "spec.ports[1].securityGroups")
	})

	t.Run("OpenStackMachineTemplate change is refused except topology dry-runs", func(t *testing.T) {
		tmpl := template(ns, "template")
		if err := cl.Create(ctx, tmpl); err != nil {
			t.Fatal(err)
		}
		changed := tmpl.DeepCopy()
		changed.Spec.Template.Spec.Flavor.Filter.Name = ptr.To("m1.xlarge")
		wantInvalid(t, cl.Update(ctx, changed.DeepCopy()), "spec.template.spec.flavor")
		wantInvalid(t, cl.Update(ctx, changed.DeepCopy(), client.DryRunAll), "spec.template.spec.flavor")

		changed.Annotations = map[string]string{clusterv1.TopologyDryRunAnnotation: ""}
		wantInvalid(t, cl.Update(ctx, changed.DeepCopy()), "spec.template.spec.flavor")
		if err := cl.Update(ctx, changed.DeepCopy(), client.DryRunAll); err != nil {
			t.Fatalf("topology dry-run refused: %v", err)
		}

		stored := &infrav1.OpenStackMachineTemplate{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(tmpl), stored); err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(stored.Spec.Template.Spec.Flavor.Filter.Name, ""); got != "m1.large" {
			t.Errorf("a dry-run changed the stored template: flavor %q", got)
		}
	})
}

func cluster(ns, name string) *infrav1.OpenStackCluster {
	return &infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: infrav1.OpenStackClusterSpec{
			IdentityRef:           infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"},
			ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
			ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
			Bastion: &infrav1.Bastion{Enabled: ptr.To(true), Spec: &infrav1.OpenStackMachineSpec{
				Flavor: infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.small")}},
				Image:  infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
			}},
		},
	}
}

// updateCluster re-reads the cluster, applies mutate and updates it.
func updateCluster(t *testing.T, cl client.Client, c *infrav1.OpenStackCluster, mutate func(*infrav1.OpenStackCluster)) error {
	t.Helper()
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(c), c); err != nil {
		t.Fatal(err)
	}
	mutate(c)
	return cl.Update(context.Background(), c)
}

func TestOpenStackClusterWebhookThroughAPIServer(t *testing.T) {
	cl, ns := startWebhookEnv(t)
	ctx := context.Background()

	t.Run("controlPlaneEndpoint is set once", func(t *testing.T) {
		c := cluster(ns, "endpoint")
		if err := cl.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) {
			c.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "192.0.2.10", Port: 6443}
		}); err != nil {
			t.Fatalf("setting the endpoint: %v", err)
		}
		wantInvalid(t, updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) {
			c.Spec.ControlPlaneEndpoint.Host = "192.0.2.11"
		}), "spec.controlPlaneEndpoint.host", "set once")
	})

	t.Run("identityRef rotates, region does not", func(t *testing.T) {
		c := cluster(ns, "identity")
		if err := cl.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) {
			c.Spec.IdentityRef.Name = "rotated"
			c.Spec.IdentityRef.CloudName = "other"
		}); err != nil {
			t.Fatalf("rotating credentials: %v", err)
		}
		wantInvalid(t, updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) {
			c.Spec.IdentityRef.Region = "RegionTwo"
		}), "region is immutable")
	})

	t.Run("network, API endpoint and tags are fixed, each named", func(t *testing.T) {
		c := cluster(ns, "network")
		if err := cl.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		wantInvalid(t, updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) {
			c.Spec.ManagedSubnets[0].CIDR = "10.7.0.0/24"
			c.Spec.ExternalNetwork = &infrav1.NetworkParam{ID: ptr.To(networkB)}
			c.Spec.APIServer = &infrav1.APIServer{Port: ptr.To(443), ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}}
			c.Spec.Tags = []string{"new"}
		}), "spec.managedSubnets[0].cidr", "spec.externalNetwork", "spec.apiServer.port",
			"spec.apiServer.managedLoadBalancer.enabled", "spec.tags", "cannot be changed after creation")
	})

	t.Run("bastion: spec mutable, removal only once disabled", func(t *testing.T) {
		c := cluster(ns, "bastion")
		if err := cl.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) {
			c.Spec.Bastion.Spec.Flavor.Filter.Name = ptr.To("m1.large")
		}); err != nil {
			t.Fatalf("changing the bastion flavor: %v", err)
		}
		wantInvalid(t, updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) { c.Spec.Bastion = nil }),
			"spec.bastion", "disable the bastion first")
		if err := updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) { c.Spec.Bastion.Enabled = ptr.To(false) }); err != nil {
			t.Fatalf("disabling the bastion: %v", err)
		}
		if err := updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) { c.Spec.Bastion = nil }); err != nil {
			t.Fatalf("removing the disabled bastion: %v", err)
		}
	})

	t.Run("security group rules are mutable, one remote each", func(t *testing.T) {
		c := cluster(ns, "rules")
		if err := cl.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		r := infrav1.SecurityGroupRuleSpec{Name: "web", Direction: "ingress", Protocol: ptr.To("tcp"),
			PortRangeMin: ptr.To[int32](8080), PortRangeMax: ptr.To[int32](8080), RemoteIPPrefix: ptr.To("10.0.0.0/8")}
		if err := updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) {
			c.Spec.ManagedSecurityGroups.WorkerNodesSecurityGroupRules = []infrav1.SecurityGroupRuleSpec{r}
			c.Spec.ManagedSecurityGroups.AllowAllInClusterTraffic = true
		}); err != nil {
			t.Fatalf("changing the rules: %v", err)
		}
		wantInvalid(t, updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) {
			c.Spec.ManagedSecurityGroups.WorkerNodesSecurityGroupRules[0].RemoteManagedGroups = []infrav1.ManagedSecurityGroupName{infrav1.ManagedSecurityGroupWorker}
		}), "spec.managedSecurityGroups.workerNodesSecurityGroupRules[0]", "only one of")
		wantInvalid(t, updateCluster(t, cl, c, func(c *infrav1.OpenStackCluster) { c.Spec.ManagedSecurityGroups = nil }),
			"spec.managedSecurityGroups", "cannot be turned on or off")
	})

	t.Run("OpenStackClusterTemplate change is refused except topology dry-runs", func(t *testing.T) {
		tmpl := &infrav1.OpenStackClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "template", Namespace: ns},
			Spec: infrav1.OpenStackClusterTemplateSpec{Template: infrav1.OpenStackClusterTemplateResource{Spec: cluster(ns, "x").Spec}}}
		if err := cl.Create(ctx, tmpl); err != nil {
			t.Fatal(err)
		}
		changed := tmpl.DeepCopy()
		changed.Spec.Template.Spec.Bastion.Spec.Flavor.Filter.Name = ptr.To("m1.large")
		wantInvalid(t, cl.Update(ctx, changed.DeepCopy()), "spec.template.spec.bastion.spec.flavor.filter.name")
		changed.Annotations = map[string]string{clusterv1.TopologyDryRunAnnotation: ""}
		if err := cl.Update(ctx, changed.DeepCopy(), client.DryRunAll); err != nil {
			t.Fatalf("topology dry-run refused: %v", err)
		}
	})
}

// TestCELRejectsUnsupportedCAPOFields shows, through the real API server,
// that the CAPO fields this provider does not implement are refused with
// their messages rather than accepted and ignored.
func TestCELRejectsUnsupportedCAPOFields(t *testing.T) {
	cl, ns := startWebhookEnv(t)
	ctx := context.Background()

	machineCases := []struct {
		name   string
		mutate func(*infrav1.OpenStackMachineSpec)
		want   []string
	}{
		{
			name:   "flavor with both id and filter",
			mutate: func(s *infrav1.OpenStackMachineSpec) { s.Flavor.ID = ptr.To("42") },
			want:   []string{"spec.flavor", "must have at most 1"},
		},
		{
			name: "additional block device named root",
			mutate: func(s *infrav1.OpenStackMachineSpec) {
				s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{{Name: "root", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}}}
			},
			want: []string{"additionalBlockDevices[0].name", "the name root is reserved for the root volume"},
		},
	}
	for i, tc := range machineCases {
		t.Run("OpenStackMachine "+tc.name, func(t *testing.T) {
			m := machine(ns, "cel-osm-"+string(rune('a'+i)))
			tc.mutate(&m.Spec)
			wantInvalid(t, cl.Create(ctx, m), tc.want...)
		})
		t.Run("OpenStackMachineTemplate "+tc.name, func(t *testing.T) {
			tmpl := template(ns, "cel-osmt-"+string(rune('a'+i)))
			tc.mutate(&tmpl.Spec.Template.Spec)
			wantInvalid(t, cl.Create(ctx, tmpl), tc.want...)
		})
	}

	serverCases := []struct {
		name   string
		mutate func(*infrav1alpha1.OpenStackServerSpec)
		want   []string
	}{
		{
			name: "additional block device named root",
			mutate: func(s *infrav1alpha1.OpenStackServerSpec) {
				s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{{Name: "root", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}}}
			},
			want: []string{"spec.additionalBlockDevices[0].name", "the name root is reserved for the root volume"},
		},
	}
	for i, tc := range serverCases {
		t.Run("OpenStackServer "+tc.name, func(t *testing.T) {
			s := server(ns, "cel-oss-"+string(rune('a'+i)))
			tc.mutate(&s.Spec)
			wantInvalid(t, cl.Create(ctx, s), tc.want...)
		})
	}

	// The bastion has its own floating IP (bastion.floatingIP); a pool's
	// would compete for its port.
	t.Run("OpenStackCluster bastion floatingIPPoolRef", func(t *testing.T) {
		c := cluster(ns, "cel-osc-bastion-pool")
		c.Spec.Bastion.Spec.FloatingIPPoolRef = &corev1.TypedLocalObjectReference{APIGroup: ptr.To("infrastructure.cluster.x-k8s.io"), Kind: "OpenStackFloatingIPPool", Name: "pool"}
		wantInvalid(t, cl.Create(ctx, c), "bastion.spec.floatingIPPoolRef is not supported")
	})

	// The base objects themselves are accepted: the refusals above are the
	// mutations' doing.
	for _, obj := range []client.Object{machine(ns, "cel-ok"), template(ns, "cel-ok"), server(ns, "cel-ok")} {
		if err := cl.Create(ctx, obj); err != nil {
			t.Errorf("creating the valid %T: %v", obj, err)
		}
	}
}

// TestCELAcceptsImplementedCAPOFields: the CAPO fields this provider once
// refused and now implements (image.imageRef, identityRef.type
// ClusterIdentity, ports[].propagateUplinkStatus, managedRouter, the API
// load balancer's flavor and availabilityZone, floatingIPPoolRef on
// machines, templates and servers) pass the real API server.
func TestCELAcceptsImplementedCAPOFields(t *testing.T) {
	cl, ns := startWebhookEnv(t)
	ctx := context.Background()
	imageRef := infrav1.ImageParam{ImageRef: &infrav1.ResourceReference{Name: "orc"}}
	clusterIdentity := infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeClusterIdentity, Name: "id", CloudName: "openstack"}
	pool := &corev1.TypedLocalObjectReference{APIGroup: ptr.To("infrastructure.cluster.x-k8s.io"), Kind: "OpenStackFloatingIPPool", Name: "pool"}

	m := machine(ns, "capo-osm")
	m.Spec.FloatingIPPoolRef = pool
	m.Spec.Image = imageRef
	m.Spec.IdentityRef = &clusterIdentity
	m.Spec.Ports[0].PropagateUplinkStatus = ptr.To(true)
	tmpl := template(ns, "capo-osmt")
	tmpl.Spec.Template.Spec = *m.Spec.DeepCopy()
	s := server(ns, "capo-oss")
	s.Spec.Image = imageRef
	s.Spec.IdentityRef = clusterIdentity
	s.Spec.Ports[0].PropagateUplinkStatus = ptr.To(false)
	s.Spec.FloatingIPPoolRef = pool
	c := cluster(ns, "capo-osc")
	c.Spec.IdentityRef = clusterIdentity
	c.Spec.ManagedRouter = &infrav1.ManagedRouter{ExternalIPs: []infrav1.ExternalRouterIPParam{
		{FixedIP: "172.24.4.10", Subnet: infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "public-subnet"}}}}}
	c.Spec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{
		Flavor: ptr.To("ocp-capi-single"), AvailabilityZone: ptr.To("ocp-capi-az")}}
	for _, obj := range []client.Object{m, tmpl, s, c} {
		if err := cl.Create(ctx, obj); err != nil {
			t.Errorf("creating %T with CAPO's fields: %v", obj, err)
		}
	}
}
