package mapi2capi

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
)

func TestTemplateName(t *testing.T) {
	// The documented hash: FNV-1a 32-bit of the spec's JSON.
	name, err := TemplateName("ms", map[string]string{"a": "b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "ms-" + hex8(fnv32a([]byte(`{"a":"b"}`))); name != want {
		t.Errorf("name %q, want %q", name, want)
	}
	long := strings.Repeat("a", 250) + "..b"
	name, _ = TemplateName(long, 1)
	if len(name) > 253 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		t.Errorf("long name %q (%d) is not a valid name: %v", name, len(name), validation.IsDNS1123Subdomain(name))
	}
	if _, err := TemplateName("x", func() {}); err == nil {
		t.Errorf("a spec that does not encode gave no error")
	}
}

func TestLabelValue(t *testing.T) {
	if got := LabelValue("short"); got != "short" {
		t.Errorf("LabelValue(short) = %q", got)
	}
	a := LabelValue(strings.Repeat("a", 53) + "-.b" + strings.Repeat("c", 40))
	b := LabelValue(strings.Repeat("a", 53) + "-.b" + strings.Repeat("d", 40))
	for _, v := range []string{a, b} {
		if len(v) > 63 || len(validation.IsValidLabelValue(v)) > 0 {
			t.Errorf("%q is not a valid label value: %v", v, validation.IsValidLabelValue(v))
		}
	}
	if a == b {
		t.Errorf("two long names share the label value %q", a)
	}
}

func TestInfraFrom(t *testing.T) {
	infra := &configv1.Infrastructure{Status: configv1.InfrastructureStatus{
		InfrastructureName: "ocp-1", Platform: configv1.BareMetalPlatformType,
		PlatformStatus: &configv1.PlatformStatus{Type: configv1.OpenStackPlatformType, OpenStack: &configv1.OpenStackPlatformStatus{
			APIServerInternalIPs: []string{"10.0.0.5"}, IngressIPs: []string{"10.0.0.7"},
			LoadBalancer: &configv1.OpenStackPlatformLoadBalancer{Type: configv1.LoadBalancerTypeUserManaged},
		}},
	}}
	got := InfraFrom(infra, "", "ns")
	if got.ClusterName != "ocp-1" || got.Namespace != "ns" || got.Platform != configv1.OpenStackPlatformType ||
		len(got.APIVIPs) != 1 || len(got.IngressVIPs) != 1 || !got.UserManagedLoadBalancer {
		t.Errorf("InfraFrom = %+v", got)
	}
	if got := InfraFrom(infra, "override", "ns"); got.ClusterName != "override" {
		t.Errorf("the cluster name override was not used: %q", got.ClusterName)
	}
	if got := InfraFrom(nil, "c", "ns"); got.ClusterName != "c" || got.Platform != "" {
		t.Errorf("InfraFrom(nil) = %+v", got)
	}
}

func hex8(v uint32) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = digits[v&0xf]
		v >>= 4
	}
	return string(b)
}
