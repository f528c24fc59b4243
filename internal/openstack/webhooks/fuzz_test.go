package webhooks

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/webhookutil/webhookfuzz"
)

// The kinds FuzzOpenStackWebhooks validates, by which%5.
const (
	kindServer = iota
	kindMachine
	kindMachineTemplate
	kindCluster
	kindClusterTemplate
	kindCount
)

// FuzzOpenStackWebhooks validates any OpenStackServer, OpenStackMachine,
// OpenStackMachineTemplate, OpenStackCluster or OpenStackClusterTemplate
// (by which) the types accept, status included, created and updated by a
// JSON merge patch. Every webhook: no panic, the same verdict twice, the
// input unchanged, refusals that name fields, and an update that changes
// nothing in the spec answers as the kind's create would without the spec
// rules (let through for the immutable kinds; as a create for the
// cluster). The immutable specs (server, machine, machine template,
// cluster template) change only where they may (identityRef; a machine's
// providerID once), and server and templates refuse an update exactly when
// they refuse its reverse; a cluster update never lets
// through what a create of the new cluster refuses.
//
//	go test ./internal/openstack/webhooks -run '^$' -fuzz '^FuzzOpenStackWebhooks$' -fuzztime 10m -parallel 1
func FuzzOpenStackWebhooks(f *testing.F) {
	portSecurityOff := infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)}
	server := baseServer()
	machine := baseMachine()
	machine.Spec.ProviderID = "openstack:///0b6f4a44-0000-0000-0000-000000000001"
	machine.Spec.SecurityGroups = []infrav1.SecurityGroupParam{sg("a")}
	machine.Spec.Ports = append(machine.Spec.Ports, infrav1.PortOpts{Network: network(netB), ResolvedPortSpecFields: portSecurityOff})
	clusterTemplate := &infrav1.OpenStackClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns"},
		Spec: infrav1.OpenStackClusterTemplateSpec{Template: infrav1.OpenStackClusterTemplateResource{Spec: baseCluster().Spec}}}
	withRules := baseCluster()
	withEndpoint(withRules)
	withRules.Spec.ManagedSecurityGroups.ClusterNodesSecurityGroupRules = []infrav1.SecurityGroupRuleSpec{
		rule("prefix", func(r *infrav1.SecurityGroupRuleSpec) { r.RemoteIPPrefix = ptr.To("10.0.0.0/8") })}
	for _, seed := range []struct {
		which uint8
		obj   any
		patch string
	}{
		{kindServer, server, `{}`},
		{kindServer, server, `{"metadata":{"labels":{"a":"b"}},"spec":{"identityRef":{"name":"rotated"}},"status":{"instanceID":"x"}}`},
		{kindServer, server, `{"spec":{"flavor":"m1.xlarge"}}`},
		{kindServer, server, `{"spec":{"ports":[{"network":{"id":"` + netB + `"},"trunk":true}]}}`},
		{kindMachine, machine, `{}`},
		{kindMachine, machine, `{"spec":{"providerID":"openstack:///other","identityRef":{"name":"rotated"}}}`},
		{kindMachine, machine, `{"spec":{"providerID":null,"ports":[{"securityGroups":[{"filter":{"name":"b"}}],"enablePortSecurity":false}]}}`},
		{kindMachineTemplate, baseTemplate(), `{}`},
		{kindMachineTemplate, baseTemplate(), `{"spec":{"template":{"spec":{"providerID":"x","flavor":null}}}}`},
		{kindCluster, baseCluster(), `{}`},
		{kindCluster, baseCluster(), `{"spec":{"bastion":null,"tags":["u"],"managedSecurityGroups":null}}`},
		{kindCluster, existingNetworkCluster(), `{"spec":{"network":{"filter":null,"id":"` + netA + `"},"subnets":[{"id":"` + subnetA + `"},{"filter":{"name":"sub-b"}}]}}`},
		{kindCluster, withRules, `{"spec":{"controlPlaneEndpoint":{"host":"192.0.2.11"},"apiServer":{"port":6443,"managedLoadBalancer":{"enabled":true}}}}`},
		{kindCluster, withRules, `{"spec":{"managedSecurityGroups":{"clusterNodesSecurityGroupRules":[{"remoteGroupID":"g","remoteIPPrefix":"10.0.0.0/8"}]}}}`},
		{kindClusterTemplate, clusterTemplate, `{}`},
		{kindClusterTemplate, clusterTemplate, `{"spec":{"template":{"spec":{"bastion":{"spec":{"providerID":"x"}}}}}}`},
	} {
		f.Add(seed.which, webhookfuzz.Seed(f, seed.obj), []byte(seed.patch))
	}
	f.Fuzz(func(t *testing.T, which uint8, obj, patch []byte) {
		switch which % kindCount {
		case kindServer:
			fuzzImmutable(t, &openStackServerWebhook{}, obj, patch, func(s *infrav1alpha1.OpenStackServer) any {
				spec := s.Spec.DeepCopy()
				spec.IdentityRef = infrav1.OpenStackIdentityReference{}
				return spec
			}, func(to, from *infrav1alpha1.OpenStackServer) { to.Spec = from.Spec })
		case kindMachine:
			fuzzOpenStackMachine(t, obj, patch)
		case kindMachineTemplate:
			fuzzImmutable(t, &openStackMachineTemplateWebhook{}, obj, patch,
				func(m *infrav1.OpenStackMachineTemplate) any { return m.Spec.Template.Spec },
				func(to, from *infrav1.OpenStackMachineTemplate) { to.Spec = from.Spec })
		case kindCluster:
			fuzzOpenStackCluster(t, obj, patch)
		case kindClusterTemplate:
			fuzzImmutable(t, &openStackClusterTemplateWebhook{}, obj, patch,
				func(c *infrav1.OpenStackClusterTemplate) any { return c.Spec.Template.Spec },
				func(to, from *infrav1.OpenStackClusterTemplate) { to.Spec = from.Spec })
		}
	})
}

// fuzzImmutable checks a webhook whose spec is immutable (fixed gives its
// immutable part, copySpec copies the spec of from into to): an update that
// passes keeps the fixed part, updates that keep the spec pass, and an
// update is refused exactly when its reverse is.
func fuzzImmutable[T runtime.Object](t *testing.T, w admission.Validator[T], obj, patch []byte, fixed func(T) any, copySpec func(to, from T)) {
	var zero T
	oldO, ok := webhookfuzz.Decode(zero, obj)
	if !ok {
		return
	}
	webhookfuzz.Create(t, w, oldO)
	newO, ok := webhookfuzz.Patched(zero, obj, patch)
	if !ok {
		return
	}
	forward := webhookfuzz.Update(t, w, oldO, newO)
	if backward := webhookfuzz.Update(t, w, newO, oldO); forward.Allowed() != backward.Allowed() {
		t.Fatalf("an update and its reverse answer differently: %v / %v", forward.Err, backward.Err)
	}
	if forward.Allowed() && !webhookfuzz.SameJSON(t, fixed(oldO), fixed(newO)) {
		t.Fatalf("an update changed the immutable spec")
	}
	sameSpec := newO.DeepCopyObject().(T)
	copySpec(sameSpec, oldO)
	if v := webhookfuzz.Update(t, w, oldO, sameSpec); !v.Allowed() || len(v.Warnings) > 0 {
		t.Fatalf("an update that keeps the spec was refused or warned: %v %v", v.Warnings, v.Err)
	}
}

func fuzzOpenStackMachine(t *testing.T, obj, patch []byte) {
	w := &openStackMachineWebhook{}
	oldM, ok := webhookfuzz.Decode(&infrav1.OpenStackMachine{}, obj)
	if !ok {
		return
	}
	webhookfuzz.Create(t, w, oldM)
	newM, ok := webhookfuzz.Patched(&infrav1.OpenStackMachine{}, obj, patch)
	if !ok {
		return
	}
	if webhookfuzz.Update(t, w, oldM, newM).Allowed() {
		if oldM.Spec.ProviderID != "" && newM.Spec.ProviderID != oldM.Spec.ProviderID {
			t.Fatalf("providerID changed from %q to %q", oldM.Spec.ProviderID, newM.Spec.ProviderID)
		}
		fixed := func(m *infrav1.OpenStackMachine) any {
			spec := m.Spec.DeepCopy()
			spec.ProviderID, spec.IdentityRef = "", nil
			return spec
		}
		if !webhookfuzz.SameJSON(t, fixed(oldM), fixed(newM)) {
			t.Fatalf("an update changed the immutable spec")
		}
	}
	sameSpec := newM.DeepCopy()
	sameSpec.Spec = oldM.Spec
	if v := webhookfuzz.Update(t, w, oldM, sameSpec); !v.Allowed() || len(v.Warnings) > 0 {
		t.Fatalf("an update that keeps the spec was refused or warned: %v %v", v.Warnings, v.Err)
	}
}

func fuzzOpenStackCluster(t *testing.T, obj, patch []byte) {
	w := &openStackClusterWebhook{}
	oldC, ok := webhookfuzz.Decode(&infrav1.OpenStackCluster{}, obj)
	if !ok {
		return
	}
	webhookfuzz.Create(t, w, oldC)
	newC, ok := webhookfuzz.Patched(&infrav1.OpenStackCluster{}, obj, patch)
	if !ok {
		return
	}
	if webhookfuzz.Update(t, w, oldC, newC).Allowed() && !webhookfuzz.Create(t, w, newC).Allowed() {
		t.Fatalf("an update let through a cluster a create refuses")
	}
	sameSpec := newC.DeepCopy()
	sameSpec.Spec = *oldC.Spec.DeepCopy()
	webhookfuzz.Same(t, "an update that keeps the spec and a create", webhookfuzz.Update(t, w, oldC, sameSpec), webhookfuzz.Create(t, w, sameSpec))
}
