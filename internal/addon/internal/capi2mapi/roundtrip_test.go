package capi2mapi

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	bmv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetal/v1alpha1"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

const (
	testMAPINS  = "openshift-machine-api"
	testCAPINS  = "openshift-cluster-api"
	testCluster = "ocp-x7k2p"
)

var testVIPs = []string{"10.0.0.5", "10.0.0.7"}

func toCAPIInfra(platform configv1.PlatformType) mapi2capi.Infra {
	return mapi2capi.Infra{ClusterName: testCluster, Namespace: testCAPINS, Platform: platform,
		APIVIPs: testVIPs[:1], IngressVIPs: testVIPs[1:]}
}

func toMAPIInfra() Infra {
	return Infra{MAPINamespace: testMAPINS, ClusterName: testCluster, APIVIPs: testVIPs[:1], IngressVIPs: testVIPs[1:]}
}

// FuzzRoundTrip checks both round trips on objects made from the fuzzer's
// seed:
//
//   - MAPI→CAPI→MAPI: a random MAPI MachineSet and Machine in canonical form
//     (genMachineSet: every field both sides model, written the way this
//     package writes it) come back unchanged, spec, labels and annotations;
//   - CAPI→MAPI→CAPI: a random OpenStack machine spec of any shape
//     (genOpenStackSpec, including fields MAPI cannot express) is either
//     refused by this package, or comes back unchanged through mapi2capi.
//
// Run longer with
//
//	go test ./internal/addon/internal/capi2mapi -run '^$' -fuzz FuzzRoundTrip -fuzztime 120s
func FuzzRoundTrip(f *testing.F) {
	for _, seed := range []uint64{0, 1, 2, 3, 42, 1 << 40} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
		baremetal := g.r.IntN(4) == 0
		ms := g.machineSet(baremetal)
		roundTripMachineSet(t, ms)
		roundTripMachine(t, g.machineOf(ms))
		if !baremetal {
			roundTripCAPISpec(t, g)
		}
	})
}

// TestRoundTripMany runs many seeds in a plain test run.
func TestRoundTripMany(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	for seed := range uint64(n) {
		g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
		baremetal := g.r.IntN(4) == 0
		ms := g.machineSet(baremetal)
		ok := t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			roundTripMachineSet(t, ms)
			roundTripMachine(t, g.machineOf(ms))
			if !baremetal {
				roundTripCAPISpec(t, g)
			}
		})
		if !ok {
			return
		}
	}
}

func roundTripMachineSet(t *testing.T, ms *mapiv1beta1.MachineSet) {
	t.Helper()
	platform := configv1.OpenStackPlatformType
	if isBareMetal(ms.Spec.Template.Spec.ProviderSpec) {
		platform = configv1.BareMetalPlatformType
	}
	capi, tmpl, _, errs := mapi2capi.MachineSet(ms, toCAPIInfra(platform))
	if len(errs) > 0 {
		t.Fatalf("the generator made a MachineSet mapi2capi refuses: %v\n%s", errs, dump(ms))
	}
	back, warnings, errs := MachineSet(capi, tmpl, toMAPIInfra())
	if len(errs) > 0 {
		t.Fatalf("capi2mapi refused what mapi2capi made: %v\nCAPI: %s\ntemplate: %s", errs, dump(capi), dump(tmpl))
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	compareMAPI(t, "MachineSet", ms.ObjectMeta, back.ObjectMeta, ms.Spec, back.Spec, ms.Spec.Template.Spec.ProviderSpec, back.Spec.Template.Spec.ProviderSpec)
}

func roundTripMachine(t *testing.T, m *mapiv1beta1.Machine) {
	t.Helper()
	platform := configv1.OpenStackPlatformType
	if isBareMetal(m.Spec.ProviderSpec) {
		platform = configv1.BareMetalPlatformType
	}
	capi, im, _, errs := mapi2capi.Machine(m, toCAPIInfra(platform))
	if len(errs) > 0 {
		t.Fatalf("the generator made a Machine mapi2capi refuses: %v\n%s", errs, dump(m))
	}
	back, _, errs := Machine(capi, im, toMAPIInfra())
	if len(errs) > 0 {
		t.Fatalf("capi2mapi refused what mapi2capi made: %v\nCAPI: %s\ninfra machine: %s", errs, dump(capi), dump(im))
	}
	compareMAPI(t, "Machine", m.ObjectMeta, back.ObjectMeta, m.Spec, back.Spec, m.Spec.ProviderSpec, back.Spec.ProviderSpec)
	if diff := cmp.Diff(m.Status, back.Status, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Machine status changed on the round trip (-MAPI +back):\n%s", diff)
	}
}

// compareMAPI compares metadata and spec, the providerSpec decoded (JSON
// key order is not part of it).
func compareMAPI(t *testing.T, kind string, m, back metav1.ObjectMeta, spec, backSpec any, ps, backPS mapiv1beta1.ProviderSpec) {
	t.Helper()
	if diff := cmp.Diff(m.Labels, back.Labels, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s labels changed (-MAPI +back):\n%s", kind, diff)
	}
	if diff := cmp.Diff(m.Annotations, back.Annotations, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s annotations changed (-MAPI +back):\n%s", kind, diff)
	}
	if diff := cmp.Diff(decodePS(t, ps), decodePS(t, backPS), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s providerSpec changed (-MAPI +back):\n%s", kind, diff)
	}
	ignorePS := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ProviderSpec" }, cmp.Ignore())
	if diff := cmp.Diff(spec, backSpec, cmpopts.EquateEmpty(), ignorePS); diff != "" {
		t.Errorf("%s spec changed (-MAPI +back):\n%s", kind, diff)
	}
}

// roundTripCAPISpec: a CAPI OpenStack machine spec that capi2mapi accepts
// comes back the same through mapi2capi. The equivalences allowed: a
// volume without a zone and a volume in the machine's zone (from: Machine)
// are the same when the machine has a zone, and MAPI says both the same
// way; a Volume block device with empty volume options has none.
func roundTripCAPISpec(t *testing.T, g *gen) {
	t.Helper()
	spec, fd, secret := g.openStackSpec()
	ms := capiShell()
	ms.Spec.Template.Spec.FailureDomain = fd
	ms.Spec.Template.Spec.Bootstrap.DataSecretName = secret
	tmpl := &infrav1.OpenStackMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: testCAPINS}}
	tmpl.Spec.Template.Spec = spec
	ms.Spec.Template.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: mapi2capi.InfrastructureGroup, Kind: mapi2capi.OpenStackMachineTemplateKind, Name: "t"}
	mapi, _, errs := MachineSet(ms, tmpl, toMAPIInfra())
	if len(errs) > 0 {
		return // refused: nothing is lost silently
	}
	capi, back, _, errs := mapi2capi.MachineSet(mapi, toCAPIInfra(configv1.OpenStackPlatformType))
	if len(errs) > 0 {
		t.Fatalf("mapi2capi refused what capi2mapi made: %v\nCAPI spec: %s\nMAPI: %s", errs, dump(spec), dump(mapi))
	}
	got := back.(*infrav1.OpenStackMachineTemplate).Spec.Template.Spec
	want := normalizeZones(spec, fd)
	if diff := cmp.Diff(want, normalizeZones(got, fd), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("CAPI spec changed on the round trip (-CAPI +back):\n%s\nMAPI: %s", diff, dump(mapi))
	}
	if capi.Spec.Template.Spec.FailureDomain != fd || !reflect.DeepEqual(capi.Spec.Template.Spec.Bootstrap.DataSecretName, secret) {
		t.Errorf("failure domain or bootstrap data changed: %q %v", capi.Spec.Template.Spec.FailureDomain, capi.Spec.Template.Spec.Bootstrap.DataSecretName)
	}
}

func normalizeZones(s infrav1.OpenStackMachineSpec, fd string) infrav1.OpenStackMachineSpec {
	s = *s.DeepCopy()
	machine := &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromMachine}
	if s.RootVolume != nil && s.RootVolume.AvailabilityZone == nil && fd != "" {
		s.RootVolume.AvailabilityZone = machine
	}
	for i := range s.AdditionalBlockDevices {
		st := &s.AdditionalBlockDevices[i].Storage
		if st.Type != infrav1.VolumeBlockDevice {
			continue
		}
		if st.Volume == nil {
			st.Volume = &infrav1.BlockDeviceVolume{}
		}
		if st.Volume.AvailabilityZone == nil && fd != "" {
			st.Volume.AvailabilityZone = machine
		}
		// No options and none at all are the same.
		if *st.Volume == (infrav1.BlockDeviceVolume{}) {
			st.Volume = nil
		}
	}
	return s
}

// capiShell is a CAPI MachineSet in canonical form, for the template tests.
func capiShell() *clusterv1.MachineSet {
	sel := map[string]string{"machine.openshift.io/cluster-api-machineset": "w"}
	return &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: testCAPINS},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: testCluster, Replicas: ptr.To[int32](1),
			Deletion: clusterv1.MachineSetDeletionSpec{Order: clusterv1.RandomMachineSetDeletionOrder},
			Selector: metav1.LabelSelector{MatchLabels: sel},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: sel},
				Spec:       clusterv1.MachineSpec{ClusterName: testCluster},
			},
		},
	}
}

func decodePS(t *testing.T, ps mapiv1beta1.ProviderSpec) any {
	t.Helper()
	if ps.Value == nil {
		return nil
	}
	var out any = &mapiv1alpha1.OpenstackProviderSpec{}
	if isBareMetal(ps) {
		out = &bmv1alpha1.BareMetalMachineProviderSpec{}
	}
	if err := json.Unmarshal(ps.Value.Raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func isBareMetal(ps mapiv1beta1.ProviderSpec) bool {
	var tm metav1.TypeMeta
	_ = json.Unmarshal(ps.Value.Raw, &tm)
	return tm.Kind == mapi2capi.BareMetalProviderSpecKind
}

func dump(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// gen makes random objects from one seed.
type gen struct{ r *rand.Rand }

func (g *gen) maybe() bool { return g.r.IntN(2) == 0 }

func (g *gen) word(prefix string) string { return fmt.Sprintf("%s%d", prefix, g.r.IntN(1000)) }

func (g *gen) uuid() string {
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", g.r.Uint32(), g.r.IntN(1<<16), g.r.IntN(1<<12), g.r.IntN(1<<12), g.r.Uint64()&(1<<48-1))
}

// words are n distinct words.
func (g *gen) words(prefix string, n int) []string {
	var out []string
	for len(out) < n {
		if w := g.word(prefix); !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func (g *gen) optWord(prefix string) string {
	if g.maybe() {
		return ""
	}
	return g.word(prefix)
}

func (g *gen) optBool() *bool {
	switch g.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return ptr.To(true)
	}
	return ptr.To(false)
}

// machineSet is a MAPI MachineSet in canonical form: every field both
// sides model, written as capi2mapi writes it.
func (g *gen) machineSet(baremetal bool) *mapiv1beta1.MachineSet {
	name := g.word("ms-")
	sel := map[string]string{"machine.openshift.io/cluster-api-cluster": testCluster, "machine.openshift.io/cluster-api-machineset": name}
	tl := map[string]string{}
	for k, v := range sel {
		tl[k] = v
	}
	if g.maybe() {
		role := g.word("role")
		tl[mapi2capi.MAPIMachineRoleLabel], tl[mapi2capi.MAPIMachineTypeLabel] = role, role
	}
	if g.maybe() {
		tl["example.com/"+g.word("l")] = g.word("v")
	}
	ms := &mapiv1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testMAPINS, Labels: g.labels(), Annotations: g.annotations()},
		Spec: mapiv1beta1.MachineSetSpec{
			Replicas:        ptr.To(int32(g.r.IntN(5))),
			MinReadySeconds: int32(g.r.IntN(3) * 10),
			DeletePolicy:    []string{"Random", "Newest", "Oldest"}[g.r.IntN(3)],
			Selector:        metav1.LabelSelector{MatchLabels: sel},
			Template: mapiv1beta1.MachineTemplateSpec{
				ObjectMeta: mapiv1beta1.ObjectMeta{Labels: tl, Annotations: g.annotations()},
				Spec:       g.machineSpec(baremetal),
			},
		},
	}
	if g.maybe() {
		ms.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "machine.openshift.io/cluster-api-cluster", Operator: metav1.LabelSelectorOpIn, Values: []string{testCluster}}}
	}
	return ms
}

func (g *gen) labels() map[string]string {
	out := map[string]string{"machine.openshift.io/cluster-api-cluster": testCluster}
	if g.maybe() {
		role := g.word("role")
		out[mapi2capi.MAPIMachineRoleLabel], out[mapi2capi.MAPIMachineTypeLabel] = role, role
	}
	if g.maybe() {
		out["example.com/"+g.word("l")] = g.word("v")
	}
	return out
}

func (g *gen) annotations() map[string]string {
	out := map[string]string{}
	if g.maybe() {
		out["example.com/"+g.word("a")] = g.word("v")
	}
	if g.r.IntN(4) == 0 {
		out[mapi2capi.MAPIDeleteMachineAnnotation] = "true"
	}
	return out
}

// machineSpec is a MAPI machine spec in canonical form.
func (g *gen) machineSpec(baremetal bool) mapiv1beta1.MachineSpec {
	s := mapiv1beta1.MachineSpec{}
	if g.maybe() {
		s.Labels = map[string]string{"node.cluster.x-k8s.io/" + g.word("n"): g.word("v")}
	}
	if g.maybe() {
		s.Annotations = map[string]string{"node.cluster.x-k8s.io/" + g.word("n"): g.word("v")}
	}
	if g.maybe() {
		s.LifecycleHooks.PreDrain = []mapiv1beta1.LifecycleHook{{Name: g.word("drain"), Owner: g.word("owner")}}
	}
	if g.maybe() {
		names := g.words("term", 2)
		slices.Sort(names)
		for _, n := range names {
			s.LifecycleHooks.PreTerminate = append(s.LifecycleHooks.PreTerminate, mapiv1beta1.LifecycleHook{Name: n, Owner: g.word("owner")})
		}
	}
	if g.maybe() {
		s.Taints = []corev1.Taint{{Key: "example.com/" + g.word("t"), Value: g.optWord("v"), Effect: corev1.TaintEffectNoSchedule}}
	}
	var ps any
	if baremetal {
		ps = g.bareMetalProviderSpec()
	} else {
		ps = g.openStackProviderSpec()
	}
	raw, _ := json.Marshal(ps)
	s.ProviderSpec.Value = &runtime.RawExtension{Raw: raw}
	return s
}

// machineOf is a Machine of ms, as MAPI makes it, with a providerID and
// the status and provider annotations a running machine has.
func (g *gen) machineOf(ms *mapiv1beta1.MachineSet) *mapiv1beta1.Machine {
	m := &mapiv1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: ms.Name + "-" + g.word("x"), Namespace: testMAPINS,
			Labels: ms.Spec.Template.Labels, Annotations: ms.Spec.Template.Annotations},
		Spec: *ms.Spec.Template.Spec.DeepCopy(),
	}
	m.Labels = cloneMap(m.Labels)
	m.Annotations = cloneMap(m.Annotations)
	ps := decodeRaw(m.Spec.ProviderSpec)
	id := g.uuid()
	switch p := ps.(type) {
	case *mapiv1alpha1.OpenstackProviderSpec:
		m.Spec.ProviderID = ptr.To("openstack:///" + id)
		setKey(&m.Labels, mapi2capi.MAPIInstanceTypeLabel, p.Flavor)
		if p.AvailabilityZone != "" {
			setKey(&m.Labels, mapi2capi.MAPIZoneLabel, p.AvailabilityZone)
		}
		setKey(&m.Annotations, mapi2capi.MAPIInstanceStateAnnotation, "ACTIVE")
		setKey(&m.Annotations, mapi2capi.MAPOResourceIDAnnotation, id)
	case *bmv1alpha1.BareMetalMachineProviderSpec:
		// The host is in the CAPI namespace: mapi2capi refuses one
		// elsewhere (CAPM3 would own it across namespaces).
		host := g.word("host")
		m.Spec.ProviderID = ptr.To("baremetalhost:///" + testCAPINS + "/" + host + "/" + id)
		setKey(&m.Annotations, mapi2capi.HostAnnotation, testCAPINS+"/"+host)
	}
	m.Status = mapiv1beta1.MachineStatus{
		NodeRef:   &corev1.ObjectReference{Kind: "Node", Name: m.Name},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.1." + fmt.Sprint(g.r.IntN(250))}, {Type: corev1.NodeHostName, Address: m.Name}},
		Phase:     ptr.To([]string{"Provisioning", "Provisioned", "Running", "Deleting", "Failed"}[g.r.IntN(5)]),
	}
	if g.r.IntN(4) == 0 {
		m.Status.ErrorReason = ptr.To(mapiv1beta1.MachineStatusError("InvalidConfiguration"))
		m.Status.ErrorMessage = ptr.To("broken")
	}
	return m
}

func decodeRaw(ps mapiv1beta1.ProviderSpec) any {
	var out any = &mapiv1alpha1.OpenstackProviderSpec{}
	if isBareMetal(ps) {
		out = &bmv1alpha1.BareMetalMachineProviderSpec{}
	}
	_ = json.Unmarshal(ps.Value.Raw, out)
	return out
}

func (g *gen) bareMetalProviderSpec() *bmv1alpha1.BareMetalMachineProviderSpec {
	ps := &bmv1alpha1.BareMetalMachineProviderSpec{
		TypeMeta: metav1.TypeMeta{APIVersion: "baremetal.cluster.k8s.io/v1alpha1", Kind: mapi2capi.BareMetalProviderSpecKind},
		UserData: &corev1.SecretReference{Name: g.word("user-data-")},
	}
	if g.r.IntN(3) == 0 {
		ps.CustomDeploy.Method = "install_coreos"
	} else {
		ps.Image = bmv1alpha1.Image{URL: "http://images/" + g.word("i"), Checksum: "http://images/" + g.word("c")}
	}
	if g.maybe() {
		ps.HostSelector.MatchLabels = map[string]string{g.word("k"): g.word("v")}
	}
	if g.maybe() {
		ps.HostSelector.MatchExpressions = []bmv1alpha1.HostSelectorRequirement{{Key: g.word("k"), Operator: "in", Values: g.words("v", 2)}}
	}
	return ps
}

// openStackProviderSpec is an OpenstackProviderSpec in canonical form.
func (g *gen) openStackProviderSpec() *mapiv1alpha1.OpenstackProviderSpec {
	ps := &mapiv1alpha1.OpenstackProviderSpec{
		TypeMeta:         metav1.TypeMeta{APIVersion: "machine.openshift.io/v1alpha1", Kind: mapi2capi.OpenStackProviderSpecKind},
		Flavor:           g.word("m1."),
		KeyName:          g.optWord("key"),
		AvailabilityZone: g.optWord("az"),
		UserDataSecret:   &corev1.SecretReference{Name: g.word("user-data-")},
		Trunk:            g.maybe(),
		ConfigDrive:      g.optBool(),
	}
	if g.maybe() {
		ps.CloudsSecret = &corev1.SecretReference{Name: g.word("creds"), Namespace: testMAPINS}
		ps.CloudName = g.word("cloud")
	}
	if g.maybe() {
		ps.Tags = g.words("tag", 1+g.r.IntN(3))
	}
	if g.maybe() {
		ps.ServerMetadata = map[string]string{g.word("k"): g.word("v"), g.word("k"): g.word("v")}
	}
	image := g.word("rhcos-")
	if g.maybe() {
		ps.RootVolume = &mapiv1alpha1.RootVolume{SourceUUID: image, VolumeType: g.optWord("ssd"), Size: 1 + g.r.IntN(200), Zone: g.optWord("vz")}
	} else {
		ps.Image = image
	}
	for i, name := range g.words("bd", g.r.IntN(3)) {
		bd := mapiv1alpha1.AdditionalBlockDevice{Name: name, SizeGiB: 1 + i, Storage: mapiv1alpha1.BlockDeviceStorage{Type: mapiv1alpha1.LocalBlockDevice}}
		if g.maybe() {
			bd.Storage.Type = mapiv1alpha1.VolumeBlockDevice
			if v := (mapiv1alpha1.BlockDeviceVolume{Type: g.optWord("t"), AvailabilityZone: g.optWord("vz")}); v != (mapiv1alpha1.BlockDeviceVolume{}) {
				bd.Storage.Volume = &v
			}
		}
		ps.AdditionalBlockDevices = append(ps.AdditionalBlockDevices, bd)
	}
	switch g.r.IntN(3) {
	case 0:
		ps.ServerGroupID = g.uuid()
	case 1:
		ps.ServerGroupName = g.word("sg")
	}
	for range g.r.IntN(3) {
		if g.maybe() {
			ps.SecurityGroups = append(ps.SecurityGroups, mapiv1alpha1.SecurityGroupParam{UUID: g.uuid()})
			continue
		}
		ps.SecurityGroups = append(ps.SecurityGroups, mapiv1alpha1.SecurityGroupParam{Name: g.word("sg"),
			Filter: mapiv1alpha1.SecurityGroupFilter{Description: g.optWord("d"), ProjectID: g.optWord("p"), Tags: g.optWord("t"), NotTagsAny: g.optWord("n")}})
	}
	for range g.r.IntN(4) {
		ps.Networks = append(ps.Networks, g.network())
	}
	for _, suffix := range g.words("p", g.r.IntN(3)) {
		ps.Ports = append(ps.Ports, g.port(suffix))
	}
	return ps
}

// network is a network entry in canonical form.
func (g *gen) network() mapiv1alpha1.NetworkParam {
	n := mapiv1alpha1.NetworkParam{VNICType: g.optWord("vnic"), PortSecurity: g.optBool()}
	if g.maybe() {
		n.PortTags = g.words("pt", 1+g.r.IntN(2))
	}
	switch g.r.IntN(3) {
	case 0:
		n.Profile = map[string]string{"capabilities": `["switchdev"]`}
	case 1:
		n.Profile = map[string]string{"trusted": "true"}
	}
	// Address pairs: MAPO's VIPs, unless asked for none or port security
	// is off (then none: the canonical way to say it).
	n.NoAllowedAddressPairs = g.maybe() || ptr.Deref(n.PortSecurity, true) == false
	subnet := func() mapiv1alpha1.SubnetParam {
		if g.maybe() {
			return mapiv1alpha1.SubnetParam{UUID: g.uuid()}
		}
		return mapiv1alpha1.SubnetParam{Filter: mapiv1alpha1.SubnetFilter{Name: g.word("sn"), CIDR: g.optWord("cidr"), Tags: g.optWord("t"), IPVersion: []int{0, 4, 6}[g.r.IntN(3)]}}
	}
	switch g.r.IntN(3) {
	case 0: // by ID
		n.UUID = g.uuid()
	case 1: // by filter
		n.Filter = mapiv1alpha1.Filter{Name: g.word("net"), ProjectID: g.optWord("p"), TagsAny: g.optWord("t")}
	default: // one subnet only
		n.Subnets = []mapiv1alpha1.SubnetParam{subnet()}
		return n
	}
	for range g.r.IntN(3) {
		n.Subnets = append(n.Subnets, subnet())
	}
	return n
}

// port is an explicit port in canonical form; its name suffix makes sure
// it is not a network entry.
func (g *gen) port(suffix string) mapiv1alpha1.PortOpts {
	p := mapiv1alpha1.PortOpts{
		NetworkID: g.uuid(), NameSuffix: suffix, Description: g.optWord("d"), AdminStateUp: g.optBool(),
		MACAddress: g.optWord("fa:16:3e:00:00:"), VNICType: g.optWord("vnic"), PortSecurity: g.optBool(), Trunk: g.optBool(),
	}
	if g.maybe() {
		p.Tags = g.words("t", 1+g.r.IntN(2))
	}
	if g.maybe() {
		p.Profile = map[string]string{"capabilities": `["switchdev"]`, "trusted": "true"}
	}
	for range g.r.IntN(3) {
		f := mapiv1alpha1.FixedIPs{}
		if g.maybe() {
			f.SubnetID = g.uuid()
		}
		if g.maybe() {
			f.IPAddress = "10.1.0." + fmt.Sprint(g.r.IntN(250))
		}
		p.FixedIPs = append(p.FixedIPs, f)
	}
	if ptr.Deref(p.PortSecurity, true) {
		if g.maybe() {
			ids := []string{g.uuid()}
			p.SecurityGroups = &ids
		}
		if g.maybe() {
			p.AllowedAddressPairs = []mapiv1alpha1.AddressPair{{IPAddress: "10.2.0.1", MACAddress: g.optWord("fa:16:3e:00:00:")}}
		}
	}
	return p
}

// openStackSpec is a CAPI machine spec of any shape, with its machine's
// failure domain and bootstrap data Secret: also what MAPI cannot express.
func (g *gen) openStackSpec() (infrav1.OpenStackMachineSpec, string, *string) {
	s := infrav1.OpenStackMachineSpec{
		Flavor:      infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To(g.word("m1."))}},
		Image:       infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To(g.word("img"))}},
		SSHKeyName:  g.optWord("k"),
		Trunk:       g.maybe(),
		ConfigDrive: g.optBool(),
	}
	if g.r.IntN(8) == 0 {
		s.Flavor = infrav1.FlavorParam{ID: ptr.To(g.uuid())}
	}
	if g.r.IntN(8) == 0 {
		s.Image.Filter.Tags = []string{"t"}
	}
	if g.maybe() {
		s.IdentityRef = &infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: g.word("c"), CloudName: g.word("cl")}
		if g.r.IntN(8) == 0 {
			s.IdentityRef.Region = "r"
		}
	}
	if g.maybe() {
		s.Tags = g.words("tag", 1+g.r.IntN(2))
	}
	fd := g.optWord("az")
	zone := func() *infrav1.VolumeAvailabilityZone {
		switch g.r.IntN(3) {
		case 0:
			return nil
		case 1:
			if fd != "" {
				return &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromMachine}
			}
		}
		return &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromName, Name: ptr.To(infrav1.VolumeAZName(g.word("vz")))}
	}
	if g.maybe() {
		s.RootVolume = &infrav1.RootVolume{SizeGiB: int32(1 + g.r.IntN(100)), BlockDeviceVolume: infrav1.BlockDeviceVolume{Type: g.optWord("t"), AvailabilityZone: zone()}}
	}
	for i, name := range g.words("bd", g.r.IntN(3)) {
		bd := infrav1.AdditionalBlockDevice{Name: name, SizeGiB: int32(1 + i), Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}}
		if g.maybe() {
			bd.Storage.Type = infrav1.VolumeBlockDevice
			if g.maybe() {
				bd.Storage.Volume = &infrav1.BlockDeviceVolume{Type: g.optWord("t"), AvailabilityZone: zone()}
			}
		}
		s.AdditionalBlockDevices = append(s.AdditionalBlockDevices, bd)
	}
	switch g.r.IntN(3) {
	case 0:
		s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To(g.uuid())}
	case 1:
		s.ServerGroup = &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To(g.word("sg"))}}
	}
	for range g.r.IntN(3) {
		if g.maybe() {
			s.SecurityGroups = append(s.SecurityGroups, infrav1.SecurityGroupParam{ID: ptr.To(g.uuid())})
		} else {
			s.SecurityGroups = append(s.SecurityGroups, infrav1.SecurityGroupParam{Filter: &infrav1.SecurityGroupFilter{Name: g.word("sg"), Description: g.optWord("d")}})
		}
	}
	for _, k := range g.words("k", g.r.IntN(3)) {
		s.ServerMetadata = append(s.ServerMetadata, infrav1.ServerMetadata{Key: k, Value: g.word("v")})
	}
	slices.SortFunc(s.ServerMetadata, func(a, b infrav1.ServerMetadata) int { return strings.Compare(a.Key, b.Key) })
	for range g.r.IntN(5) {
		s.Ports = append(s.Ports, g.capiPort())
	}
	var secret *string
	if g.r.IntN(10) > 0 {
		secret = ptr.To(g.word("ud"))
	}
	return s, fd, secret
}

// capiPort is a CAPI port of any shape.
func (g *gen) capiPort() infrav1.PortOpts {
	p := infrav1.PortOpts{}
	switch g.r.IntN(4) {
	case 0:
		p.Network = &infrav1.NetworkParam{ID: ptr.To(g.uuid())}
	case 1:
		p.Network = &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: g.word("net")}}
	case 2:
		if g.r.IntN(4) == 0 {
			p.Network = &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{}}
		}
	}
	if g.maybe() {
		p.NameSuffix = ptr.To(g.word("s"))
	}
	if g.r.IntN(4) == 0 {
		p.Description = ptr.To(g.word("d"))
	}
	if g.r.IntN(4) == 0 {
		p.Trunk = g.optBool()
	}
	if g.r.IntN(4) == 0 {
		p.AdminStateUp = ptr.To(g.maybe())
	}
	for range g.r.IntN(3) {
		f := infrav1.FixedIP{}
		switch g.r.IntN(4) {
		case 0:
			f.Subnet = &infrav1.SubnetParam{ID: ptr.To(g.uuid())}
		case 1:
			f.Subnet = &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: g.word("sn")}}
		case 2:
			f.Subnet = &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{}}
		}
		if g.r.IntN(4) == 0 {
			f.IPAddress = ptr.To("10.1.0.9")
		}
		p.FixedIPs = append(p.FixedIPs, f)
	}
	if g.r.IntN(4) == 0 {
		p.SecurityGroups = []infrav1.SecurityGroupParam{{ID: ptr.To(g.uuid())}}
		if g.r.IntN(4) == 0 {
			p.SecurityGroups = []infrav1.SecurityGroupParam{{Filter: &infrav1.SecurityGroupFilter{Name: "x"}}}
		}
	}
	if g.maybe() {
		p.Tags = []infrav1.NeutronTag{infrav1.NeutronTag(g.word("t"))}
	}
	switch g.r.IntN(3) {
	case 0:
		for _, ip := range testVIPs {
			p.AllowedAddressPairs = append(p.AllowedAddressPairs, infrav1.AddressPair{IPAddress: ip})
		}
	case 1:
		p.AllowedAddressPairs = []infrav1.AddressPair{{IPAddress: "10.3.0.1"}}
	}
	if g.maybe() {
		p.VNICType = ptr.To(g.word("v"))
	}
	switch g.r.IntN(4) {
	case 0:
		p.Profile = &infrav1.BindingProfile{OVSHWOffload: ptr.To(true)}
	case 1:
		p.Profile = &infrav1.BindingProfile{TrustedVF: ptr.To(true), OVSHWOffload: ptr.To(true)}
	}
	p.EnablePortSecurity = g.optBool()
	if g.r.IntN(10) == 0 {
		p.HostID = ptr.To("h")
	}
	return p
}
