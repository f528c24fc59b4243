package webhooks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

// checkResult asserts that err is nil when wantPaths is empty, and otherwise
// an Invalid error of kind gk whose causes are exactly wantPaths, each a
// Forbidden error.
func checkResult(t *testing.T, err error, gk string, wantPaths ...string) {
	t.Helper()
	if len(wantPaths) == 0 {
		if err != nil {
			t.Fatalf("want no error, got %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("want errors at %v, got none", wantPaths)
	}
	var status *apierrors.StatusError
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid API error, got %T: %v", err, err)
	}
	if got := status.ErrStatus.Details.Kind; got != gk {
		t.Errorf("error kind %q, want %q", got, gk)
	}
	var got []string
	for _, c := range status.ErrStatus.Details.Causes {
		got = append(got, c.Field)
		if c.Type != metav1.CauseType(field.ErrorTypeForbidden) {
			t.Errorf("cause %s has type %q, want %q", c.Field, c.Type, field.ErrorTypeForbidden)
		}
	}
	slices.Sort(got)
	want := slices.Clone(wantPaths)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("error paths %v, want %v\nerror: %v", got, want, err)
	}
	for _, p := range wantPaths {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("message does not name %s: %v", p, err)
		}
	}
}

func checkWarnings(t *testing.T, got admission.Warnings, wantSubstrings ...string) {
	t.Helper()
	if len(got) != len(wantSubstrings) {
		t.Fatalf("warnings %q, want %d containing %q", got, len(wantSubstrings), wantSubstrings)
	}
	for i, w := range wantSubstrings {
		if !strings.Contains(got[i], w) {
			t.Errorf("warning %q does not contain %q", got[i], w)
		}
	}
}

func sg(name string) infrav1.SecurityGroupParam {
	return infrav1.SecurityGroupParam{Filter: &infrav1.SecurityGroupFilter{Name: name}}
}

func network(id string) *infrav1.NetworkParam { return &infrav1.NetworkParam{ID: ptr.To(id)} }

const (
	netA = "6f1c2a44-5a52-4d4b-9a3e-111111111111"
	netB = "6f1c2a44-5a52-4d4b-9a3e-222222222222"
)

func baseServer() *infrav1alpha1.OpenStackServer {
	return &infrav1alpha1.OpenStackServer{
		ObjectMeta: metav1.ObjectMeta{Name: "server", Namespace: "ns"},
		Spec: infrav1alpha1.OpenStackServerSpec{
			Flavor:      ptr.To("m1.large"),
			IdentityRef: infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"},
			Image:       infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
			Ports:       []infrav1.PortOpts{{Network: network(netA)}},
			SSHKeyName:  "key",
		},
	}
}

func baseMachine() *infrav1.OpenStackMachine {
	return &infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "machine", Namespace: "ns"},
		Spec: infrav1.OpenStackMachineSpec{
			Flavor:     infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.large")}},
			Image:      infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
			SSHKeyName: "key",
			Ports:      []infrav1.PortOpts{{Network: network(netA)}},
		},
	}
}

func baseTemplate() *infrav1.OpenStackMachineTemplate {
	return &infrav1.OpenStackMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "template", Namespace: "ns"},
		Spec: infrav1.OpenStackMachineTemplateSpec{
			Template: infrav1.OpenStackMachineTemplateResource{Spec: baseMachine().Spec},
		},
	}
}

func TestChangedPaths(t *testing.T) {
	type obj = map[string]any
	tests := []struct {
		name     string
		old, new any
		ignore   []string
		want     []string
	}{
		{name: "equal", old: obj{"a": "x", "b": []any{"1"}}, new: obj{"a": "x", "b": []any{"1"}}},
		{name: "scalar changed", old: obj{"a": "x"}, new: obj{"a": "y"}, want: []string{"spec.a"}},
		{name: "nested scalar", old: obj{"ports": []any{obj{"network": obj{"id": "1"}}}}, new: obj{"ports": []any{obj{"network": obj{"id": "2"}}}}, want: []string{"spec.ports[0].network.id"}},
		{name: "field set", old: obj{}, new: obj{"rootVolume": obj{"sizeGiB": 1}}, want: []string{"spec.rootVolume"}},
		{name: "field unset", old: obj{"trunk": true}, new: obj{}, want: []string{"spec.trunk"}},
		{name: "false is not absent", old: obj{"enablePortSecurity": false}, new: obj{}, want: []string{"spec.enablePortSecurity"}},
		{name: "list length changed", old: obj{"ports": []any{"a"}}, new: obj{"ports": []any{"a", "b"}}, want: []string{"spec.ports"}},
		{name: "empty list, empty object, null and absent are alike", old: obj{"a": []any{}, "b": obj{}, "c": nil}, new: obj{}},
		{name: "several changes, each reported", old: obj{"a": "1", "b": "1", "c": "1"}, new: obj{"a": "2", "b": "1", "c": "2"}, want: []string{"spec.a", "spec.c"}},
		{name: "ignored top-level key", old: obj{"a": "1", "identityRef": obj{"name": "x"}}, new: obj{"a": "1", "identityRef": obj{"name": "y"}}, ignore: []string{"identityRef"}},
		{name: "ignore is top-level only", old: obj{"x": obj{"identityRef": "1"}}, new: obj{"x": obj{"identityRef": "2"}}, ignore: []string{"identityRef"}, want: []string{"spec.x.identityRef"}},
		{name: "type changed", old: obj{"a": "1"}, new: obj{"a": obj{"b": "1"}}, want: []string{"spec.a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths, err := changedPaths(field.NewPath("spec"), tt.old, tt.new, tt.ignore...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range paths {
				got = append(got, p.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChangedPathsOnTypedSpecs(t *testing.T) {
	// nil and empty slices of the typed API are the same on the wire.
	a := baseMachine().Spec
	b := baseMachine().Spec
	a.Tags = nil
	b.Tags = []string{}
	paths, err := changedPaths(field.NewPath("spec"), &a, &b)
	if err != nil || len(paths) != 0 {
		t.Fatalf("nil vs empty tags: %v, %v", paths, err)
	}
}

// portSecurityCase is one create-time port security check, applied to each
// kind by the tests below.
type portSecurityCase struct {
	name           string
	ports          []infrav1.PortOpts
	serverSGs      []infrav1.SecurityGroupParam
	wantErrorPorts []int // indexes of ports whose securityGroups are refused
	wantWarnPorts  []int // indexes of ports warned about inherited groups
}

var portSecurityCases = []portSecurityCase{
	{name: "port security unset", ports: []infrav1.PortOpts{{Network: network(netA), SecurityGroups: []infrav1.SecurityGroupParam{sg("a")}}}},
	{name: "port security enabled with groups", ports: []infrav1.PortOpts{{Network: network(netA), SecurityGroups: []infrav1.SecurityGroupParam{sg("a")}, ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(true)}}}},
	{name: "port security disabled without groups", ports: []infrav1.PortOpts{{Network: network(netA), ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)}}}},
	{
		name: "port security disabled with groups on the port",
		ports: []infrav1.PortOpts{
			{Network: network(netA)},
			{Network: network(netB), SecurityGroups: []infrav1.SecurityGroupParam{sg("a")}, ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)}},
		},
		wantErrorPorts: []int{1},
	},
	{
		name: "port security disabled with groups on two ports",
		ports: []infrav1.PortOpts{
			{Network: network(netA), SecurityGroups: []infrav1.SecurityGroupParam{sg("a")}, ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)}},
			{Network: network(netB), SecurityGroups: []infrav1.SecurityGroupParam{sg("b")}, ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)}},
		},
		wantErrorPorts: []int{0, 1},
	},
	{
		name: "port security disabled inheriting the server's groups: warning only",
		ports: []infrav1.PortOpts{
			{Network: network(netA)},
			{Network: network(netB), ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)}},
		},
		serverSGs:     []infrav1.SecurityGroupParam{sg("a")},
		wantWarnPorts: []int{1},
	},
}

func portPaths(prefix string, idx []int, suffix string) []string {
	var out []string
	for _, i := range idx {
		out = append(out, field.NewPath(prefix).Index(i).String()+suffix)
	}
	return out
}

func TestOpenStackServerValidateCreate(t *testing.T) {
	w := &openStackServerWebhook{}
	for _, tc := range portSecurityCases {
		t.Run(tc.name, func(t *testing.T) {
			s := baseServer()
			s.Spec.Ports = tc.ports
			s.Spec.SecurityGroups = tc.serverSGs
			warnings, err := w.ValidateCreate(context.Background(), s)
			checkResult(t, err, "OpenStackServer",
				portPaths("spec.ports", tc.wantErrorPorts, ".securityGroups")...)
			checkWarnings(t, warnings, portPaths("spec.ports", tc.wantWarnPorts, "")...)
		})
	}
}

func TestOpenStackMachineValidateCreate(t *testing.T) {
	w := &openStackMachineWebhook{}
	for _, tc := range portSecurityCases {
		t.Run(tc.name, func(t *testing.T) {
			m := baseMachine()
			m.Spec.Ports = tc.ports
			m.Spec.SecurityGroups = tc.serverSGs
			warnings, err := w.ValidateCreate(context.Background(), m)
			checkResult(t, err, "OpenStackMachine",
				portPaths("spec.ports", tc.wantErrorPorts, ".securityGroups")...)
			checkWarnings(t, warnings, portPaths("spec.ports", tc.wantWarnPorts, "")...)
		})
	}
}

func TestOpenStackMachineTemplateValidateCreate(t *testing.T) {
	w := &openStackMachineTemplateWebhook{}
	for _, tc := range portSecurityCases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := baseTemplate()
			tmpl.Spec.Template.Spec.Ports = tc.ports
			tmpl.Spec.Template.Spec.SecurityGroups = tc.serverSGs
			warnings, err := w.ValidateCreate(context.Background(), tmpl)
			checkResult(t, err, "OpenStackMachineTemplate",
				portPaths("spec.template.spec.ports", tc.wantErrorPorts, ".securityGroups")...)
			checkWarnings(t, warnings, portPaths("spec.template.spec.ports", tc.wantWarnPorts, "")...)
		})
	}
	t.Run("providerID in a template", func(t *testing.T) {
		tmpl := baseTemplate()
		tmpl.Spec.Template.Spec.ProviderID = "openstack:///0b6f4a44-0000-0000-0000-000000000000"
		_, err := w.ValidateCreate(context.Background(), tmpl)
		checkResult(t, err, "OpenStackMachineTemplate", "spec.template.spec.providerID")
	})
}

func TestOpenStackServerValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*infrav1alpha1.OpenStackServer)
		want   []string
	}{
		{name: "no change", mutate: func(*infrav1alpha1.OpenStackServer) {}},
		{name: "metadata and status may change", mutate: func(s *infrav1alpha1.OpenStackServer) {
			s.Labels = map[string]string{"a": "b"}
			s.Finalizers = []string{infrav1alpha1.OpenStackServerFinalizer}
			s.Status.InstanceID = ptr.To("x")
		}},
		{name: "identityRef may change (credential rotation)", mutate: func(s *infrav1alpha1.OpenStackServer) {
			s.Spec.IdentityRef.Name = "rotated"
			s.Spec.IdentityRef.CloudName = "other"
		}},
		{name: "flavor", mutate: func(s *infrav1alpha1.OpenStackServer) { s.Spec.Flavor = ptr.To("m1.xlarge") }, want: []string{"spec.flavor"}},
		{name: "flavorID added", mutate: func(s *infrav1alpha1.OpenStackServer) { s.Spec.FlavorID = ptr.To("42") }, want: []string{"spec.flavorID"}},
		{name: "port network", mutate: func(s *infrav1alpha1.OpenStackServer) { s.Spec.Ports[0].Network = network(netB) }, want: []string{"spec.ports[0].network.id"}},
		{name: "port added", mutate: func(s *infrav1alpha1.OpenStackServer) {
			s.Spec.Ports = append(s.Spec.Ports, infrav1.PortOpts{Network: network(netB)})
		}, want: []string{"spec.ports"}},
		{name: "port trunk set", mutate: func(s *infrav1alpha1.OpenStackServer) { s.Spec.Ports[0].Trunk = ptr.To(true) }, want: []string{"spec.ports[0].trunk"}},
		{name: "user data", mutate: func(s *infrav1alpha1.OpenStackServer) {
			s.Spec.UserDataRef = &corev1.LocalObjectReference{Name: "bootstrap"}
		}, want: []string{"spec.userDataRef"}},
		{name: "several fields, each named", mutate: func(s *infrav1alpha1.OpenStackServer) {
			s.Spec.Flavor = ptr.To("m1.xlarge")
			s.Spec.Image = infrav1.ImageParam{ID: ptr.To("ce96e584-7ebc-46d6-9e55-987d72e3806c")}
			s.Spec.SSHKeyName = "other"
			s.Spec.Tags = []string{"t"}
			s.Spec.IdentityRef.Name = "rotated"
		}, want: []string{"spec.flavor", "spec.image.filter", "spec.image.id", "spec.sshKeyName", "spec.tags"}},
	}
	w := &openStackServerWebhook{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldS := baseServer()
			newS := oldS.DeepCopy()
			tt.mutate(newS)
			warnings, err := w.ValidateUpdate(context.Background(), oldS, newS)
			if len(warnings) != 0 {
				t.Errorf("unexpected warnings %v", warnings)
			}
			checkResult(t, err, "OpenStackServer", tt.want...)
		})
	}
}

func TestOpenStackMachineValidateUpdate(t *testing.T) {
	const (
		pid  = "openstack:///0b6f4a44-0000-0000-0000-000000000001"
		pid2 = "openstack:///0b6f4a44-0000-0000-0000-000000000002"
	)
	tests := []struct {
		name      string
		oldMutate func(*infrav1.OpenStackMachine)
		mutate    func(*infrav1.OpenStackMachine)
		want      []string
	}{
		{name: "no change", mutate: func(*infrav1.OpenStackMachine) {}},
		{name: "metadata and status may change", mutate: func(m *infrav1.OpenStackMachine) {
			m.Annotations = map[string]string{"a": "b"}
			m.Status.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.1"}}
		}},
		{name: "providerID set from empty", mutate: func(m *infrav1.OpenStackMachine) { m.Spec.ProviderID = pid }},
		{name: "providerID kept", oldMutate: func(m *infrav1.OpenStackMachine) { m.Spec.ProviderID = pid }, mutate: func(m *infrav1.OpenStackMachine) {}},
		{
			name:      "providerID changed",
			oldMutate: func(m *infrav1.OpenStackMachine) { m.Spec.ProviderID = pid },
			mutate:    func(m *infrav1.OpenStackMachine) { m.Spec.ProviderID = pid2 },
			want:      []string{"spec.providerID"},
		},
		{
			name:      "providerID cleared",
			oldMutate: func(m *infrav1.OpenStackMachine) { m.Spec.ProviderID = pid },
			mutate:    func(m *infrav1.OpenStackMachine) { m.Spec.ProviderID = "" },
			want:      []string{"spec.providerID"},
		},
		{name: "identityRef set", mutate: func(m *infrav1.OpenStackMachine) {
			m.Spec.IdentityRef = &infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"}
		}},
		{
			name: "identityRef changed",
			oldMutate: func(m *infrav1.OpenStackMachine) {
				m.Spec.IdentityRef = &infrav1.OpenStackIdentityReference{Name: "a", CloudName: "c"}
			},
			mutate: func(m *infrav1.OpenStackMachine) { m.Spec.IdentityRef.Name = "b" },
		},
		{name: "flavor", mutate: func(m *infrav1.OpenStackMachine) { m.Spec.Flavor.Filter.Name = ptr.To("m1.xlarge") }, want: []string{"spec.flavor.filter.name"}},
		{name: "flavor by id instead of name", mutate: func(m *infrav1.OpenStackMachine) {
			m.Spec.Flavor = infrav1.FlavorParam{ID: ptr.To("42")}
		}, want: []string{"spec.flavor.filter", "spec.flavor.id"}},
		{name: "trunk", mutate: func(m *infrav1.OpenStackMachine) { m.Spec.Trunk = true }, want: []string{"spec.trunk"}},
		{name: "root volume added", mutate: func(m *infrav1.OpenStackMachine) { m.Spec.RootVolume = &infrav1.RootVolume{SizeGiB: 50} }, want: []string{"spec.rootVolume"}},
		{name: "allowed address pairs", mutate: func(m *infrav1.OpenStackMachine) {
			m.Spec.Ports[0].AllowedAddressPairs = []infrav1.AddressPair{{IPAddress: "10.0.0.5"}}
		}, want: []string{"spec.ports[0].allowedAddressPairs"}},
		{
			name:      "several fields with providerID, each named",
			oldMutate: func(m *infrav1.OpenStackMachine) { m.Spec.ProviderID = pid },
			mutate: func(m *infrav1.OpenStackMachine) {
				m.Spec.ProviderID = pid2
				m.Spec.Flavor.Filter.Name = ptr.To("m1.xlarge")
				m.Spec.ServerMetadata = []infrav1.ServerMetadata{{Key: "k", Value: "v"}}
				m.Spec.IdentityRef = &infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"}
			},
			want: []string{"spec.flavor.filter.name", "spec.providerID", "spec.serverMetadata"},
		},
	}
	w := &openStackMachineWebhook{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldM := baseMachine()
			if tt.oldMutate != nil {
				tt.oldMutate(oldM)
			}
			newM := oldM.DeepCopy()
			tt.mutate(newM)
			_, err := w.ValidateUpdate(context.Background(), oldM, newM)
			checkResult(t, err, "OpenStackMachine", tt.want...)
		})
	}
}

func TestOpenStackMachineTemplateValidateUpdate(t *testing.T) {
	changeFlavor := func(tmpl *infrav1.OpenStackMachineTemplate) {
		tmpl.Spec.Template.Spec.Flavor.Filter.Name = ptr.To("m1.xlarge")
	}
	annotate := func(tmpl *infrav1.OpenStackMachineTemplate) {
		tmpl.Annotations = map[string]string{clusterv1.TopologyDryRunAnnotation: ""}
	}
	tests := []struct {
		name   string
		dryRun *bool // nil: no admission request in the context
		mutate []func(*infrav1.OpenStackMachineTemplate)
		want   []string
	}{
		{name: "no change", dryRun: ptr.To(false)},
		{name: "template metadata may change", dryRun: ptr.To(false), mutate: []func(*infrav1.OpenStackMachineTemplate){
			func(tmpl *infrav1.OpenStackMachineTemplate) {
				tmpl.Spec.Template.ObjectMeta.Labels = map[string]string{"a": "b"}
			},
		}},
		{name: "spec change", dryRun: ptr.To(false), mutate: []func(*infrav1.OpenStackMachineTemplate){changeFlavor}, want: []string{"spec.template.spec.flavor.filter.name"}},
		{name: "spec change without admission request", mutate: []func(*infrav1.OpenStackMachineTemplate){changeFlavor}, want: []string{"spec.template.spec.flavor.filter.name"}},
		{name: "several changes, each named", dryRun: ptr.To(false), mutate: []func(*infrav1.OpenStackMachineTemplate){
			changeFlavor,
			func(tmpl *infrav1.OpenStackMachineTemplate) {
				tmpl.Spec.Template.Spec.IdentityRef = &infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"}
				tmpl.Spec.Template.Spec.Ports[0].Network = network(netB)
			},
		}, want: []string{"spec.template.spec.flavor.filter.name", "spec.template.spec.identityRef", "spec.template.spec.ports[0].network.id"}},
		{name: "topology dry-run is exempt", dryRun: ptr.To(true), mutate: []func(*infrav1.OpenStackMachineTemplate){changeFlavor, annotate}},
		{name: "dry-run without the topology annotation", dryRun: ptr.To(true), mutate: []func(*infrav1.OpenStackMachineTemplate){changeFlavor}, want: []string{"spec.template.spec.flavor.filter.name"}},
		{name: "topology annotation without dry-run", dryRun: ptr.To(false), mutate: []func(*infrav1.OpenStackMachineTemplate){changeFlavor, annotate}, want: []string{"spec.template.spec.flavor.filter.name"}},
	}
	w := &openStackMachineTemplateWebhook{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldT := baseTemplate()
			newT := oldT.DeepCopy()
			for _, m := range tt.mutate {
				m(newT)
			}
			ctx := context.Background()
			if tt.dryRun != nil {
				ctx = admission.NewContextWithRequest(ctx, admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
					Operation: admissionv1.Update,
					DryRun:    tt.dryRun,
				}})
			}
			_, err := w.ValidateUpdate(ctx, oldT, newT)
			checkResult(t, err, "OpenStackMachineTemplate", tt.want...)
		})
	}
}

func TestValidateDeleteAllows(t *testing.T) {
	ctx := context.Background()
	if _, err := (&openStackServerWebhook{}).ValidateDelete(ctx, baseServer()); err != nil {
		t.Error(err)
	}
	if _, err := (&openStackMachineWebhook{}).ValidateDelete(ctx, baseMachine()); err != nil {
		t.Error(err)
	}
	if _, err := (&openStackMachineTemplateWebhook{}).ValidateDelete(ctx, baseTemplate()); err != nil {
		t.Error(err)
	}
}
