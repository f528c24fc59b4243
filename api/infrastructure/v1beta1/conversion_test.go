package v1beta1

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

func testScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := infrav1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// fuzzIterations per kind and direction. CAPI's own test makes 10000; the
// conversion here is heavier (it compares through JSON), and the suite
// runs with -race on two cores. OCP_CAPI_FUZZ_ITERATIONS raises it.
func fuzzIterations(t *testing.T) int {
	if v, err := strconv.Atoi(os.Getenv("OCP_CAPI_FUZZ_ITERATIONS")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 100
	}
	return 500
}

type kind struct {
	name  string
	hub   func() conversion.Hub
	spoke func() conversion.Convertible
}

var kinds = []kind{
	{"OpenStackCluster", func() conversion.Hub { return &infrav1.OpenStackCluster{} }, func() conversion.Convertible { return &OpenStackCluster{} }},
	{"OpenStackClusterTemplate", func() conversion.Hub { return &infrav1.OpenStackClusterTemplate{} }, func() conversion.Convertible { return &OpenStackClusterTemplate{} }},
	{"OpenStackMachine", func() conversion.Hub { return &infrav1.OpenStackMachine{} }, func() conversion.Convertible { return &OpenStackMachine{} }},
	{"OpenStackMachineTemplate", func() conversion.Hub { return &infrav1.OpenStackMachineTemplate{} }, func() conversion.Convertible { return &OpenStackMachineTemplate{} }},
}

// TestFuzzyConversion converts fuzzed objects of each kind from v1beta1 to
// v1beta2 and back, and from v1beta2 to v1beta1 and back, and requires the
// round trip to give back exactly what it started from, as CAPI's
// conversion tests do: what the other version cannot hold travels in the
// annotation. It also converts objects that have nothing but metadata and
// the annotation (the API server sends such objects when it converts
// managed fields).
func TestFuzzyConversion(t *testing.T) {
	s := testScheme(t)
	n := fuzzIterations(t)
	for _, k := range kinds {
		t.Run(k.name+"/spoke-hub-spoke", func(t *testing.T) {
			f := utilconversion.GetFuzzer(s)
			for i := range n {
				before := k.spoke()
				f.Fill(before)
				shapeLoadBalancer(before, i)
				hub := k.hub()
				if err := before.ConvertTo(hub); err != nil {
					t.Fatal(err)
				}
				after := k.spoke()
				if err := after.ConvertFrom(hub); err != nil {
					t.Fatal(err)
				}
				// The annotation ConvertFrom may add is for the next
				// conversion to v1beta2, not part of the comparison.
				delete(after.(metav1.Object).GetAnnotations(), ConversionDataAnnotation)
				if !apiequality.Semantic.DeepEqual(before, after) {
					t.Fatalf("v1beta1 → v1beta2 → v1beta1 changed the object:\n%s", cmp.Diff(before, after))
				}
			}
		})
		t.Run(k.name+"/hub-spoke-hub", func(t *testing.T) {
			f := utilconversion.GetFuzzer(s)
			for i := range n {
				before := k.hub()
				f.Fill(before)
				shapeLoadBalancer(before, i)
				spoke := k.spoke()
				if err := spoke.ConvertFrom(before.DeepCopyObject().(conversion.Hub)); err != nil {
					t.Fatal(err)
				}
				onlyMeta := k.spoke()
				onlyMeta.(metav1.Object).SetAnnotations(spoke.(metav1.Object).GetAnnotations())
				if err := onlyMeta.ConvertTo(k.hub()); err != nil {
					t.Fatalf("an object with only metadata: %v", err)
				}
				after := k.hub()
				if err := spoke.ConvertTo(after); err != nil {
					t.Fatal(err)
				}
				if !apiequality.Semantic.DeepEqual(before, after) {
					t.Fatalf("v1beta2 → v1beta1 → v1beta2 changed the object:\n%s", cmp.Diff(before, after))
				}
			}
		})
	}
}

// Losses of a conversion there and back without the annotation: the JSON
// paths ([] for any index) at which the objects may differ, and why. A
// path of a machine spec or a cluster spec also covers it in a template
// (spec.template.spec) and in the bastion (spec.bastion.spec). Every other difference is a conversion
// bug that the annotation would hide.
var (
	spokeLosses = []loss{
		{"status.ready", "v1beta1's ready is computed from the Ready condition"},
		{"status.failureReason", "no v1beta2 field"},
		{"status.failureMessage", "no v1beta2 field"},
		{"status.conditions[].severity", "metav1 conditions have no severity"},
		{"status.conditions[].reason", "an empty reason becomes NoReasonReported"},
		{"status.resolved", "v1beta2 keeps it on the OpenStackServer"},
		{"status.resources", "v1beta2 keeps it on the OpenStackServer"},
		{"status.bastion.resolved", "v1beta2 keeps it on the bastion's OpenStackServer"},
		{"status.bastion.resources", "v1beta2 keeps it on the bastion's OpenStackServer"},
		{"spec.flavor", "flavorID wins over flavor"},
		{"spec.apiServerLoadBalancer", "enabled: false alone is written as no apiServerLoadBalancer, which CAPO reads the same"},
		{"spec.providerID", "an empty providerID is none in v1beta2"},
	}
	hubLosses = []loss{
		{"status.conditions[].observedGeneration", "v1beta1 conditions have none; it becomes the object's generation"},
		{"status.conditions[].reason", "an empty reason becomes NoReasonReported"},
		{"status.apiServerLoadBalancerID", "no v1beta1 field"},
		{"status.failureDomains", "a map in v1beta1: order, duplicates and an unset controlPlane are lost"},
		{"status.initialization.provisioned", "false and unset are one in v1beta1"},
		{"status.nodeInfo", "an empty nodeInfo is no nodeInfo in v1beta1"},
		{"spec.template.metadata", "no v1beta1 field"},
		{"spec.apiServer.managedLoadBalancer", "absent (one when Octavia is in the catalog) has no v1beta1 spelling: enabled when the status has a load balancer, else none"},
		{"spec.apiServer", "an apiServer without any field is none in v1beta1"},
		{"spec.managedNetwork", "a managedNetwork without any field is none in v1beta1"},
		{"spec.managedRouter", "a managedRouter without externalIPs is none in v1beta1"},
		{"spec.flavor.filter", "id wins over filter; a filter without name is none"},
	}
)

type loss struct{ path, why string }

// TestConversionLosesOnlyDocumentedFields converts fuzzed objects there and
// back with the conversion functions alone, without the annotation, and
// requires every difference to be a documented loss. Integers are kept in
// int32's range, which v1beta2 uses and CAPO's v1beta1 does not limit
// (larger ones survive through the annotation).
func TestConversionLosesOnlyDocumentedFields(t *testing.T) {
	s := testScheme(t)
	n := fuzzIterations(t)
	int32Range := func(_ runtimeserializer.CodecFactory) []any {
		return []any{func(i *int, c randfill.Continue) { *i = int(c.Int31()) }}
	}
	pairs := []struct {
		name           string
		up             func(any, any) error
		down           func(any, any) error
		spoke, hub     func() any
		spokeAllowList []loss
	}{
		{"OpenStackCluster", wrap(clusterUp), wrap(clusterDown), func() any { return &OpenStackCluster{} }, func() any { return &infrav1.OpenStackCluster{} }, spokeLosses},
		{"OpenStackClusterTemplate", wrap(clusterTemplateUp), wrap(clusterTemplateDown), func() any { return &OpenStackClusterTemplate{} }, func() any { return &infrav1.OpenStackClusterTemplate{} }, spokeLosses},
		{"OpenStackMachine", wrap(machineUp), wrap(machineDown), func() any { return &OpenStackMachine{} }, func() any { return &infrav1.OpenStackMachine{} }, spokeLosses},
		{"OpenStackMachineTemplate", wrap(machineTemplateUp), wrap(machineTemplateDown), func() any { return &OpenStackMachineTemplate{} }, func() any { return &infrav1.OpenStackMachineTemplate{} }, spokeLosses},
	}
	seen := map[string]bool{}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			f := utilconversion.GetFuzzer(s, int32Range)
			check := func(from, to func() any, there, back func(any, any) error, allowed []loss, direction string) {
				for i := range n {
					before := from()
					f.Fill(before)
					shapeLoadBalancer(before, i)
					mid, after := to(), from()
					if err := there(before, mid); err != nil {
						t.Fatal(err)
					}
					if err := back(mid, after); err != nil {
						t.Fatal(err)
					}
					for _, d := range jsonDiff(t, before, after) {
						if l, ok := allowedLoss(d, allowed); ok {
							seen[direction+" "+l.path] = true
							continue
						}
						t.Fatalf("%s: %s differs after a round trip, and is not a documented loss", direction, d)
					}
				}
			}
			check(p.spoke, p.hub, p.up, p.down, p.spokeAllowList, "v1beta1")
			check(p.hub, p.spoke, p.down, p.up, hubLosses, "v1beta2")
		})
	}
	t.Logf("losses met: %v", keys(seen))
}

func wrap[A, B any](f func(*A, *B) error) func(any, any) error {
	return func(a, b any) error { return f(a.(*A), b.(*B)) }
}

func allowedLoss(p string, list []loss) (loss, bool) {
	if rest, ok := strings.CutPrefix(p, "spec.template.spec."); ok {
		p = "spec." + rest
	}
	if rest, ok := strings.CutPrefix(p, "spec.bastion.spec."); ok {
		p = "spec." + rest
	}
	for _, l := range list {
		if p == l.path || strings.HasPrefix(p, l.path+".") || strings.HasPrefix(p, l.path+"[") {
			return l, true
		}
	}
	return loss{}, false
}

// jsonDiff lists the paths at which the JSON of a and b differ (indices as
// [], map keys of metadata ignored).
func jsonDiff(t *testing.T, a, b any) []string {
	t.Helper()
	am, bm := toJSONMap(t, a), toJSONMap(t, b)
	var out []string
	diffValues("", am["spec"], bm["spec"], "spec", &out)
	diffValues("", am["status"], bm["status"], "status", &out)
	sort.Strings(out)
	return out
}

func toJSONMap(t *testing.T, obj any) map[string]any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var mapKeyPaths = regexp.MustCompile(`^(status\.capacity|.*\.attributes|.*\.labels|.*\.annotations)$`)

func diffValues(_ string, a, b any, p string, out *[]string) {
	if reflect.DeepEqual(a, b) {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok && !mapKeyPaths.MatchString(p) {
		for _, k := range keysOf(am, bm) {
			diffValues("", am[k], bm[k], p+"."+k, out)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			diffValues("", as[i], bs[i], p+"[]", out)
		}
		return
	}
	*out = append(*out, p)
}

func keysOf(ms ...map[string]any) []string {
	set := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			set[k] = true
		}
	}
	return keys(set)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestMapping converts, field by field, each row of the mapping (in both
// directions where the row is reversible).
func TestMapping(t *testing.T) {
	cases := []struct {
		name        string
		kind        string
		v1beta1     string
		v1beta2     string
		upOnly      bool // v1beta2 → v1beta1 gives another spelling
		annotations bool // the conversion up needs the annotation
	}{
		{name: "API server fields", kind: "OpenStackCluster",
			v1beta1: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServerFloatingIP":"1.2.3.4","apiServerFixedIP":"10.0.0.5","apiServerPort":6444,"disableAPIServerFloatingIP":true,"apiServerLoadBalancer":{"enabled":true,"additionalPorts":[22],"allowedCIDRs":["0.0.0.0/0"],"provider":"ovn","flavor":"lb.small","availabilityZone":"az1","monitor":{"delay":5,"timeout":3,"maxRetries":2,"maxRetriesDown":1}}},"status":{"ready":false}}`,
			v1beta2: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServer":{"enableFloatingIP":false,"floatingIP":"1.2.3.4","fixedIP":"10.0.0.5","port":6444,"managedLoadBalancer":{"enabled":true,"additionalPorts":[22],"allowedCIDRs":["0.0.0.0/0"],"provider":"ovn","flavor":"lb.small","availabilityZone":"az1","monitor":{"delay":5,"timeout":3,"maxRetries":2,"maxRetriesDown":1}}}},"status":{}}`},
		{name: "network, router, external network", kind: "OpenStackCluster",
			v1beta1: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"networkMTU":1450,"disablePortSecurity":true,"disableExternalNetwork":false,"externalRouterIPs":[{"fixedIP":"172.24.4.10","subnet":{"filter":{"name":"public-subnet"}}}]},"status":{"ready":false}}`,
			v1beta2: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServer":{"managedLoadBalancer":{"enabled":false}},"managedNetwork":{"mtu":1450,"enablePortSecurity":false},"enableExternalNetwork":true,"managedRouter":{"externalIPs":[{"fixedIP":"172.24.4.10","subnet":{"filter":{"name":"public-subnet"}}}]}},"status":{}}`},
		{name: "security group rules", kind: "OpenStackCluster",
			v1beta1: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"managedSecurityGroups":{"allowAllInClusterTraffic":false,"allNodesSecurityGroupRules":[{"name":"bgp","direction":"ingress","etherType":"IPv4","portRangeMin":179,"portRangeMax":179,"protocol":"tcp","remoteManagedGroups":["controlplane","worker"]}],"workerNodesSecurityGroupRules":[{"name":"np","direction":"ingress","portRangeMin":30000,"portRangeMax":32767,"protocol":"tcp"}]}},"status":{"ready":false}}`,
			v1beta2: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServer":{"managedLoadBalancer":{"enabled":false}},"managedSecurityGroups":{"allowAllInClusterTraffic":false,"clusterNodesSecurityGroupRules":[{"name":"bgp","direction":"ingress","etherType":"IPv4","portRangeMin":179,"portRangeMax":179,"protocol":"tcp","remoteManagedGroups":["controlplane","worker"]}],"workerNodesSecurityGroupRules":[{"name":"np","direction":"ingress","portRangeMin":30000,"portRangeMax":32767,"protocol":"tcp"}]}},"status":{}}`},
		{name: "bastion with a machine spec", kind: "OpenStackCluster",
			v1beta1: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"bastion":{"enabled":true,"availabilityZone":"az1","floatingIP":"172.24.4.9","spec":{"flavor":"m1.small","image":{"filter":{"name":"cirros"}},"sshKeyName":"k","ports":[{"disablePortSecurity":true}]}}},"status":{"ready":false}}`,
			v1beta2: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServer":{"managedLoadBalancer":{"enabled":false}},"bastion":{"enabled":true,"availabilityZone":"az1","floatingIP":"172.24.4.9","spec":{"flavor":{"filter":{"name":"m1.small"}},"image":{"filter":{"name":"cirros"}},"sshKeyName":"k","ports":[{"enablePortSecurity":false}]}}},"status":{}}`},
		{name: "cluster status", kind: "OpenStackCluster",
			v1beta1: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"}},"status":{"ready":true,"initialization":{"provisioned":true},"apiServerLoadBalancer":{"name":"lb","id":"1","ip":"172.24.4.3","internalIP":"10.6.0.3"},"failureDomains":{"az2":{"controlPlane":true},"az1":{"attributes":{"a":"b"}}},"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"Ready"}]}}`,
			v1beta2: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServer":{"managedLoadBalancer":{"enabled":false}}},"status":{"initialization":{"provisioned":true},"apiServerManagedLoadBalancer":{"name":"lb","id":"1","ip":"172.24.4.3","internalIP":"10.6.0.3"},"failureDomains":[{"name":"az1","controlPlane":false,"attributes":{"a":"b"}},{"name":"az2","controlPlane":true}],"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"Ready","observedGeneration":3,"message":""}]}}`},
		// CAPO's cluster-template-without-lb: no apiServerLoadBalancer is
		// no load balancer, in CAPO's v1beta1 and v1beta2 alike.
		{name: "no load balancer", kind: "OpenStackCluster",
			v1beta1: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"disableAPIServerFloatingIP":true},"status":{"ready":false}}`,
			v1beta2: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServer":{"enableFloatingIP":false,"managedLoadBalancer":{"enabled":false}}},"status":{}}`},
		{name: "no load balancer in a template", kind: "OpenStackClusterTemplate",
			v1beta1: `{"spec":{"template":{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"}}}}}`,
			v1beta2: `{"spec":{"template":{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServer":{"managedLoadBalancer":{"enabled":false}}}}}}`},
		// Written as absent going back, which CAPO reads the same; the
		// annotation keeps the spelling.
		{name: "load balancer enabled: false", kind: "OpenStackCluster", annotations: true, upOnly: true,
			v1beta1: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServerLoadBalancer":{"enabled":false}},"status":{"ready":false}}`,
			v1beta2: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServer":{"managedLoadBalancer":{"enabled":false}}},"status":{}}`},
		{name: "load balancer enabled: false with a field", kind: "OpenStackCluster",
			v1beta1: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServerLoadBalancer":{"enabled":false,"provider":"ovn"}},"status":{"ready":false}}`,
			v1beta2: `{"spec":{"identityRef":{"type":"Secret","name":"c","cloudName":"o"},"apiServer":{"managedLoadBalancer":{"enabled":false,"provider":"ovn"}}},"status":{}}`},
		{name: "flavor by name, ports", kind: "OpenStackMachine",
			v1beta1: `{"spec":{"flavor":"m1.small","image":{"id":"6e3b1b4c-6c2a-4a38-9f1e-6a1f1b0b7a11"},"ports":[{"network":{"filter":{"name":"n"}},"disablePortSecurity":false,"propagateUplinkStatus":true,"tags":["a"]}],"rootVolume":{"sizeGiB":20,"type":"ssd","availabilityZone":{"from":"Machine"}}},"status":{"ready":false}}`,
			v1beta2: `{"spec":{"flavor":{"filter":{"name":"m1.small"}},"image":{"id":"6e3b1b4c-6c2a-4a38-9f1e-6a1f1b0b7a11"},"ports":[{"network":{"filter":{"name":"n"}},"enablePortSecurity":true,"propagateUplinkStatus":true,"tags":["a"]}],"rootVolume":{"sizeGiB":20,"type":"ssd","availabilityZone":{"from":"Machine"}}},"status":{}}`},
		{name: "flavor by ID", kind: "OpenStackMachine",
			v1beta1: `{"spec":{"flavorID":"42","image":{"imageRef":{"name":"node-image"}},"providerID":"openstack:///abc"},"status":{"ready":false}}`,
			v1beta2: `{"spec":{"flavor":{"id":"42"},"image":{"imageRef":{"name":"node-image"}},"providerID":"openstack:///abc"},"status":{}}`},
		{name: "machine status as CAPO stores it", kind: "OpenStackMachine", annotations: true, upOnly: true,
			v1beta1: `{"spec":{"flavor":"m1.small","image":{"filter":{"name":"cirros"}}},"status":{"ready":true,"initialization":{"provisioned":true},"instanceID":"abc","instanceState":"ACTIVE","addresses":[{"type":"InternalIP","address":"10.6.0.7"}],"resolved":{"imageID":"i","flavorID":"f","ports":[{"name":"m-0","description":"d","networkID":"n"}]},"resources":{"ports":[{"id":"p"}]},"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`,
			v1beta2: `{"spec":{"flavor":{"filter":{"name":"m1.small"}},"image":{"filter":{"name":"cirros"}}},"status":{"initialization":{"provisioned":true},"instanceID":"abc","instanceState":"ACTIVE","addresses":[{"type":"InternalIP","address":"10.6.0.7"}],"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"NoReasonReported","observedGeneration":3,"message":""}]}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var k kind
			for _, kk := range kinds {
				if kk.name == c.kind {
					k = kk
				}
			}
			spoke := k.spoke()
			if err := json.Unmarshal([]byte(c.v1beta1), spoke); err != nil {
				t.Fatal(err)
			}
			spoke.(metav1.Object).SetGeneration(3)
			hub := k.hub()
			if err := spoke.ConvertTo(hub); err != nil {
				t.Fatal(err)
			}
			_, annotated := hub.(metav1.Object).GetAnnotations()[ConversionDataAnnotation]
			if annotated != c.annotations {
				t.Errorf("annotation on v1beta2: %v, want %v", annotated, c.annotations)
			}
			hub.(metav1.Object).SetAnnotations(nil)
			hub.(metav1.Object).SetGeneration(0)
			assertJSON(t, hub, c.v1beta2)
			if c.upOnly {
				return
			}
			wantHub := k.hub()
			if err := json.Unmarshal([]byte(c.v1beta2), wantHub); err != nil {
				t.Fatal(err)
			}
			wantHub.(metav1.Object).SetGeneration(3)
			down := k.spoke()
			if err := down.ConvertFrom(wantHub); err != nil {
				t.Fatal(err)
			}
			down.(metav1.Object).SetAnnotations(nil)
			down.(metav1.Object).SetGeneration(0)
			assertJSON(t, down, c.v1beta1)
		})
	}
}

func assertJSON(t *testing.T, obj any, want string) {
	t.Helper()
	got := toJSONMap(t, obj)
	delete(got, "metadata")
	w := map[string]any{}
	if err := utiljson.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := yaml.Marshal(got)
		ww, _ := yaml.Marshal(w)
		t.Errorf("got:\n%s\nwant:\n%s\ndiff (-want +got):\n%s", g, ww, cmp.Diff(w, got))
	}
}

// TestAnnotationIsIgnoredWhenForeign: an annotation that does not hold the
// expected version (copied by hand from an object of the other version) is
// dropped, not trusted.
func TestAnnotationIsIgnoredWhenForeign(t *testing.T) {
	spoke := &OpenStackMachine{Spec: OpenStackMachineSpec{Flavor: ptrTo("m1.small")}}
	spoke.SetAnnotations(map[string]string{ConversionDataAnnotation: `{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","spec":{"flavor":"x"}}`})
	hub := &infrav1.OpenStackMachine{}
	if err := spoke.ConvertTo(hub); err != nil {
		t.Fatal(err)
	}
	if got := *hub.Spec.Flavor.Filter.Name; got != "m1.small" {
		t.Errorf("flavor %q, want m1.small", got)
	}
	if _, ok := hub.Annotations[ConversionDataAnnotation]; ok {
		t.Errorf("annotation kept: %v", hub.Annotations)
	}
}

// TestSpecChangeWins: a v1beta1 writer changes a field of an object that
// came from v1beta2 with something v1beta1 cannot hold; the change is
// applied and the rest restored.
func TestSpecChangeWins(t *testing.T) {
	orig := &infrav1.OpenStackMachineTemplate{}
	orig.Spec.Template.ObjectMeta.Labels = map[string]string{"a": "b"}
	orig.Spec.Template.Spec.Flavor.Filter = &infrav1.FlavorFilter{Name: ptrTo("m1.small")}
	orig.Spec.Template.Spec.SSHKeyName = "old"
	spoke := &OpenStackMachineTemplate{}
	if err := spoke.ConvertFrom(orig); err != nil {
		t.Fatal(err)
	}
	if _, ok := spoke.Annotations[ConversionDataAnnotation]; !ok {
		t.Fatal("no annotation for the template metadata")
	}
	spoke.Spec.Template.Spec.SSHKeyName = "new"
	spoke.Spec.Template.Spec.Flavor = ptrTo("m1.large")
	hub := &infrav1.OpenStackMachineTemplate{}
	if err := spoke.ConvertTo(hub); err != nil {
		t.Fatal(err)
	}
	if hub.Spec.Template.Spec.SSHKeyName != "new" || *hub.Spec.Template.Spec.Flavor.Filter.Name != "m1.large" {
		t.Errorf("the v1beta1 change was lost: %+v", hub.Spec.Template.Spec)
	}
	if hub.Spec.Template.ObjectMeta.Labels["a"] != "b" {
		t.Errorf("template metadata not restored: %+v", hub.Spec.Template.ObjectMeta)
	}
	if len(hub.Annotations) != 0 {
		t.Errorf("annotations left on the hub: %v", hub.Annotations)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestAbsentManagedLoadBalancer: v1beta2's absent managedLoadBalancer (a
// load balancer whenever Octavia is in the catalog) has no v1beta1
// spelling. Read at v1beta1 it is what it came to, so that CAPO, after a
// switch back, keeps a load balancer this provider made; converted up
// again, the annotation gives the absence back.
func TestAbsentManagedLoadBalancer(t *testing.T) {
	for _, c := range []struct {
		name   string
		status infrav1.OpenStackClusterStatus
		want   *APIServerLoadBalancer
	}{
		{"with a load balancer", infrav1.OpenStackClusterStatus{APIServerLoadBalancer: &infrav1.LoadBalancer{Name: "lb", ID: "1", IP: "172.24.4.3"}}, &APIServerLoadBalancer{Enabled: ptrTo(true)}},
		{"without", infrav1.OpenStackClusterStatus{}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			hub := &infrav1.OpenStackCluster{Status: c.status}
			hub.Spec.IdentityRef.Name = "c"
			spoke := &OpenStackCluster{}
			if err := spoke.ConvertFrom(hub.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(spoke.Spec.APIServerLoadBalancer, c.want) {
				t.Errorf("v1beta1 apiServerLoadBalancer %+v, want %+v", spoke.Spec.APIServerLoadBalancer, c.want)
			}
			back := &infrav1.OpenStackCluster{}
			if err := spoke.ConvertTo(back); err != nil {
				t.Fatal(err)
			}
			if back.Spec.APIServer != nil {
				t.Errorf("v1beta2 apiServer %+v after the round trip, want none", back.Spec.APIServer)
			}
			// Without the annotation (as CAPO would write it), v1beta1's
			// meaning holds.
			spoke.SetAnnotations(nil)
			if err := spoke.ConvertTo(back); err != nil {
				t.Fatal(err)
			}
			got := back.Spec.APIServer.ManagedLoadBalancer
			if got == nil || *got.Enabled != (c.want != nil) {
				t.Errorf("v1beta2 managedLoadBalancer %+v, want enabled: %v", got, c.want != nil)
			}
		})
	}
	t.Run("template", func(t *testing.T) {
		hub := &infrav1.OpenStackClusterTemplate{}
		hub.Spec.Template.Spec.IdentityRef.Name = "c"
		spoke := &OpenStackClusterTemplate{}
		if err := spoke.ConvertFrom(hub.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		if spoke.Spec.Template.Spec.APIServerLoadBalancer != nil {
			t.Errorf("v1beta1 apiServerLoadBalancer %+v, want none", spoke.Spec.Template.Spec.APIServerLoadBalancer)
		}
		back := &infrav1.OpenStackClusterTemplate{}
		if err := spoke.ConvertTo(back); err != nil {
			t.Fatal(err)
		}
		if back.Spec.Template.Spec.APIServer != nil {
			t.Errorf("v1beta2 apiServer %+v after the round trip, want none", back.Spec.Template.Spec.APIServer)
		}
	})
}

// shapeLoadBalancer gives every third fuzzed cluster or cluster template no
// load balancer block, and every third one enabled: false alone: the
// spellings the conversion treats apart, which the filler seldom makes.
func shapeLoadBalancer(obj any, i int) {
	var spoke **APIServerLoadBalancer
	var hub **infrav1.APIServer
	switch o := obj.(type) {
	case *OpenStackCluster:
		spoke = &o.Spec.APIServerLoadBalancer
	case *OpenStackClusterTemplate:
		spoke = &o.Spec.Template.Spec.APIServerLoadBalancer
	case *infrav1.OpenStackCluster:
		hub = &o.Spec.APIServer
	case *infrav1.OpenStackClusterTemplate:
		hub = &o.Spec.Template.Spec.APIServer
	default:
		return
	}
	switch {
	case spoke != nil && i%3 == 0:
		*spoke = nil
	case spoke != nil && i%3 == 1:
		*spoke = &APIServerLoadBalancer{Enabled: ptrTo(false)}
	case hub != nil && i%3 == 0 && *hub != nil:
		(*hub).ManagedLoadBalancer = nil
	case hub != nil && i%3 == 1:
		if *hub == nil {
			*hub = &infrav1.APIServer{}
		}
		(*hub).ManagedLoadBalancer = &infrav1.ManagedLoadBalancer{Enabled: ptrTo(false)}
	}
}
