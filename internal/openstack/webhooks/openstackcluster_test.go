package webhooks

import (
	"context"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

const (
	subnetA = "6f1c2a44-5a52-4d4b-9a3e-aaaaaaaaaaaa"
	subnetB = "6f1c2a44-5a52-4d4b-9a3e-bbbbbbbbbbbb"
)

func bastion() *infrav1.Bastion {
	return &infrav1.Bastion{Enabled: ptr.To(true), Spec: &infrav1.OpenStackMachineSpec{
		Flavor: infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.small")}},
		Image:  infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
	}}
}

// baseCluster is a managed-network cluster with managed security groups
// and a bastion.
func baseCluster() *infrav1.OpenStackCluster {
	return &infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: "ns"},
		Spec: infrav1.OpenStackClusterSpec{
			IdentityRef:           infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"},
			ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24", DNSNameservers: []string{"10.6.0.53"}}},
			ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
			Bastion:               bastion(),
			Tags:                  []string{"t"},
		},
	}
}

// existingNetworkCluster uses an existing network and subnet by filter.
func existingNetworkCluster() *infrav1.OpenStackCluster {
	c := baseCluster()
	c.Spec.ManagedSubnets = nil
	c.Spec.Network = &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "net"}}
	c.Spec.Subnets = []infrav1.SubnetParam{{Filter: &infrav1.SubnetFilter{Name: "sub-a"}}, {Filter: &infrav1.SubnetFilter{Name: "sub-b"}}}
	c.Status.Network = &infrav1.NetworkStatusWithSubnets{
		NetworkStatus: infrav1.NetworkStatus{Name: "net", ID: netA},
		Subnets:       []infrav1.Subnet{{Name: "sub-a", ID: subnetA, CIDR: "10.0.0.0/24"}, {Name: "sub-b", ID: subnetB, CIDR: "10.0.1.0/24"}},
	}
	return c
}

func withEndpoint(c *infrav1.OpenStackCluster) {
	c.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "192.0.2.10", Port: 6443}
}

func rule(name string, mutate func(*infrav1.SecurityGroupRuleSpec)) infrav1.SecurityGroupRuleSpec {
	r := infrav1.SecurityGroupRuleSpec{Name: name, Direction: "ingress", Protocol: ptr.To("tcp"), PortRangeMin: ptr.To[int32](8080), PortRangeMax: ptr.To[int32](8080)}
	if mutate != nil {
		mutate(&r)
	}
	return r
}

func TestOpenStackClusterValidateCreate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*infrav1.OpenStackCluster)
		want   []string
		warn   []string
	}{
		{name: "managed network with bastion", mutate: func(*infrav1.OpenStackCluster) {}},
		{name: "existing network", mutate: func(c *infrav1.OpenStackCluster) { *c = *existingNetworkCluster() }},
		{name: "rules with one remote each", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ManagedSecurityGroups.ClusterNodesSecurityGroupRules = []infrav1.SecurityGroupRuleSpec{
				rule("prefix", func(r *infrav1.SecurityGroupRuleSpec) { r.RemoteIPPrefix = ptr.To("10.0.0.0/8") }),
				rule("group", func(r *infrav1.SecurityGroupRuleSpec) { r.RemoteGroupID = ptr.To(netB) }),
				rule("managed", func(r *infrav1.SecurityGroupRuleSpec) {
					r.RemoteManagedGroups = []infrav1.ManagedSecurityGroupName{infrav1.ManagedSecurityGroupWorker}
				}),
				rule("none", nil),
			}
		}},
		{name: "rules with two remotes, in each list", mutate: func(c *infrav1.OpenStackCluster) {
			both := func(r *infrav1.SecurityGroupRuleSpec) {
				r.RemoteIPPrefix = ptr.To("10.0.0.0/8")
				r.RemoteManagedGroups = []infrav1.ManagedSecurityGroupName{infrav1.ManagedSecurityGroupWorker}
			}
			c.Spec.ManagedSecurityGroups.ClusterNodesSecurityGroupRules = []infrav1.SecurityGroupRuleSpec{rule("ok", nil), rule("both", both)}
			c.Spec.ManagedSecurityGroups.ControlPlaneNodesSecurityGroupRules = []infrav1.SecurityGroupRuleSpec{rule("both", func(r *infrav1.SecurityGroupRuleSpec) {
				r.RemoteIPPrefix = ptr.To("10.0.0.0/8")
				r.RemoteGroupID = ptr.To(netB)
			})}
			c.Spec.ManagedSecurityGroups.WorkerNodesSecurityGroupRules = []infrav1.SecurityGroupRuleSpec{rule("both", both)}
		}, want: []string{
			"spec.managedSecurityGroups.clusterNodesSecurityGroupRules[1]",
			"spec.managedSecurityGroups.controlPlaneNodesSecurityGroupRules[0]",
			"spec.managedSecurityGroups.workerNodesSecurityGroupRules[0]",
		}},
		{name: "bastion port with port security disabled and security groups", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Bastion.Spec.Ports = []infrav1.PortOpts{{Network: network(netA), SecurityGroups: []infrav1.SecurityGroupParam{sg("a")},
				ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)}}}
		}, want: []string{"spec.bastion.spec.ports[0].securityGroups"}},
		{name: "bastion port with port security disabled inheriting groups: warning", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Bastion.Spec.SecurityGroups = []infrav1.SecurityGroupParam{sg("a")}
			c.Spec.Bastion.Spec.Ports = []infrav1.PortOpts{{Network: network(netA),
				ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)}}}
		}, warn: []string{"spec.bastion.spec.ports[0]"}},
		{name: "bastion providerID", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Bastion.Spec.ProviderID = "openstack:///x"
		}, want: []string{"spec.bastion.spec.providerID"}},
	}
	w := &openStackClusterWebhook{}
	tw := &openStackClusterTemplateWebhook{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseCluster()
			tt.mutate(c)
			warnings, err := w.ValidateCreate(context.Background(), c)
			checkResult(t, err, "OpenStackCluster", tt.want...)
			checkWarnings(t, warnings, tt.warn...)

			// A template with the same spec: the same errors under
			// spec.template.
			tmpl := &infrav1.OpenStackClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns"},
				Spec: infrav1.OpenStackClusterTemplateSpec{Template: infrav1.OpenStackClusterTemplateResource{Spec: c.Spec}}}
			var want, warn []string
			for _, p := range tt.want {
				want = append(want, "spec.template."+p)
			}
			for _, p := range tt.warn {
				warn = append(warn, "spec.template."+p)
			}
			warnings, err = tw.ValidateCreate(context.Background(), tmpl)
			checkResult(t, err, "OpenStackClusterTemplate", want...)
			checkWarnings(t, warnings, warn...)
		})
	}
}

func TestOpenStackClusterValidateUpdate(t *testing.T) {
	tests := []struct {
		name      string
		base      func() *infrav1.OpenStackCluster
		oldMutate func(*infrav1.OpenStackCluster)
		mutate    func(*infrav1.OpenStackCluster)
		want      []string
	}{
		{name: "no change", mutate: func(*infrav1.OpenStackCluster) {}},
		{name: "metadata and status may change", mutate: func(c *infrav1.OpenStackCluster) {
			c.Finalizers = []string{infrav1.OpenStackClusterFinalizer}
			c.Status.Initialization = &infrav1.OpenStackClusterInitializationStatus{Provisioned: ptr.To(true)}
		}},

		// controlPlaneEndpoint: once.
		{name: "controlPlaneEndpoint set from unset", mutate: withEndpoint},
		{name: "controlPlaneEndpoint set from an empty host", oldMutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{}
		}, mutate: withEndpoint},
		{name: "controlPlaneEndpoint kept", oldMutate: withEndpoint, mutate: func(*infrav1.OpenStackCluster) {}},
		{name: "controlPlaneEndpoint host changed", oldMutate: withEndpoint, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ControlPlaneEndpoint.Host = "192.0.2.11"
		}, want: []string{"spec.controlPlaneEndpoint.host"}},
		{name: "controlPlaneEndpoint port changed", oldMutate: withEndpoint, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ControlPlaneEndpoint.Port = 443
		}, want: []string{"spec.controlPlaneEndpoint.port"}},
		{name: "controlPlaneEndpoint removed", oldMutate: withEndpoint, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ControlPlaneEndpoint = nil
		}, want: []string{"spec.controlPlaneEndpoint"}},

		// identityRef: rotation yes, region no.
		{name: "identityRef name and cloudName rotate", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.IdentityRef.Name = "rotated"
			c.Spec.IdentityRef.CloudName = "other"
		}},
		{name: "identityRef region", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.IdentityRef.Region = "RegionTwo"
		}, want: []string{"spec.identityRef.region"}},

		// The network choice.
		{name: "managedSubnets cidr", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ManagedSubnets[0].CIDR = "10.7.0.0/24"
		}, want: []string{"spec.managedSubnets[0].cidr"}},
		{name: "managedSubnets dnsNameservers", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ManagedSubnets[0].DNSNameservers = []string{"10.6.0.54"}
		}, want: []string{"spec.managedSubnets[0].dnsNameservers[0]"}},
		{name: "managedSubnets removed for an existing network", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ManagedSubnets = nil
			c.Spec.Network = network(netA)
		}, want: []string{"spec.managedSubnets", "spec.network"}},
		{name: "managedNetwork mtu", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ManagedNetwork = &infrav1.ManagedNetwork{MTU: ptr.To[int32](1400)}
		}, want: []string{"spec.managedNetwork"}},
		{name: "router set", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Router = &infrav1.RouterParam{ID: ptr.To(netB)}
		}, want: []string{"spec.router"}},
		{name: "externalNetwork set", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ExternalNetwork = network(netB)
		}, want: []string{"spec.externalNetwork"}},
		{name: "enableExternalNetwork set", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.EnableExternalNetwork = ptr.To(false)
		}, want: []string{"spec.enableExternalNetwork"}},
		{name: "primarySubnet set", base: existingNetworkCluster, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.PrimarySubnet = &infrav1.SubnetParam{ID: ptr.To(subnetB)}
		}, want: []string{"spec.primarySubnet"}},
		{name: "network filter changed", base: existingNetworkCluster, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Network.Filter.Name = "other"
		}, want: []string{"spec.network.filter.name"}},
		{name: "network filter replaced by the resolved ID", base: existingNetworkCluster, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Network = network(netA)
		}},
		{name: "network filter replaced by another ID", base: existingNetworkCluster, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Network = network(netB)
		}, want: []string{"spec.network.filter", "spec.network.id"}},
		{name: "network filter replaced by an ID before it resolved", base: existingNetworkCluster,
			oldMutate: func(c *infrav1.OpenStackCluster) { c.Status.Network = nil },
			mutate:    func(c *infrav1.OpenStackCluster) { c.Spec.Network = network(netA) },
			want:      []string{"spec.network.filter", "spec.network.id"}},
		{name: "subnet filters replaced by the resolved IDs", base: existingNetworkCluster, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Subnets = []infrav1.SubnetParam{{ID: ptr.To(subnetA)}, {ID: ptr.To(subnetB)}}
		}},
		{name: "subnet filters replaced by swapped IDs", base: existingNetworkCluster, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Subnets = []infrav1.SubnetParam{{ID: ptr.To(subnetB)}, {ID: ptr.To(subnetA)}}
		}, want: []string{"spec.subnets[0].filter", "spec.subnets[0].id", "spec.subnets[1].filter", "spec.subnets[1].id"}},
		{name: "subnet added", base: existingNetworkCluster, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Subnets = append(c.Spec.Subnets, infrav1.SubnetParam{ID: ptr.To(netB)})
		}, want: []string{"spec.subnets"}},

		// The API endpoint.
		{name: "load balancer disabled", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}}
		}, want: []string{"spec.apiServer.managedLoadBalancer.enabled"}},
		{name: "load balancer enabled spelled out", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{Enabled: ptr.To(true)}, Port: ptr.To(6443)}
		}},
		{name: "load balancer re-enabled", oldMutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{Enabled: ptr.To(false)}}
		}, mutate: func(c *infrav1.OpenStackCluster) { c.Spec.APIServer = nil },
			want: []string{"spec.apiServer.managedLoadBalancer.enabled"}},
		{name: "port", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.APIServer = &infrav1.APIServer{Port: ptr.To(443)}
		}, want: []string{"spec.apiServer.port"}},
		{name: "floatingIP", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.APIServer = &infrav1.APIServer{FloatingIP: ptr.To("192.0.2.20")}
		}, want: []string{"spec.apiServer.floatingIP"}},
		{name: "enableFloatingIP", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.APIServer = &infrav1.APIServer{EnableFloatingIP: ptr.To(false)}
		}, want: []string{"spec.apiServer.enableFloatingIP"}},
		{name: "fixedIP", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.APIServer = &infrav1.APIServer{FixedIP: ptr.To("10.6.0.5")}
		}, want: []string{"spec.apiServer.fixedIP"}},
		{name: "load balancer allowedCIDRs and additionalPorts", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{
				AllowedCIDRs: []string{"10.0.0.0/8"}, AdditionalPorts: []int32{22623}}}
		}, want: []string{"spec.apiServer.managedLoadBalancer.additionalPorts", "spec.apiServer.managedLoadBalancer.allowedCIDRs"}},

		// The bastion.
		{name: "bastion flavor changes (replaces the bastion)", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Bastion.Spec.Flavor.Filter.Name = ptr.To("m1.large")
			c.Spec.Bastion.AvailabilityZone = ptr.To("az2")
			c.Spec.Bastion.FloatingIP = ptr.To("192.0.2.30")
		}},
		{name: "bastion disabled", mutate: func(c *infrav1.OpenStackCluster) { c.Spec.Bastion.Enabled = ptr.To(false) }},
		{name: "bastion added", oldMutate: func(c *infrav1.OpenStackCluster) { c.Spec.Bastion = nil }, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Bastion = bastion()
		}},
		{name: "bastion removed while enabled", mutate: func(c *infrav1.OpenStackCluster) { c.Spec.Bastion = nil },
			want: []string{"spec.bastion"}},
		{name: "bastion removed while enabled by default", oldMutate: func(c *infrav1.OpenStackCluster) { c.Spec.Bastion.Enabled = nil },
			mutate: func(c *infrav1.OpenStackCluster) { c.Spec.Bastion = nil }, want: []string{"spec.bastion"}},
		{name: "bastion removed once disabled", oldMutate: func(c *infrav1.OpenStackCluster) { c.Spec.Bastion.Enabled = ptr.To(false) },
			mutate: func(c *infrav1.OpenStackCluster) { c.Spec.Bastion = nil }},
		{name: "new bastion with a bad port", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.Bastion.Spec.Ports = []infrav1.PortOpts{{Network: network(netA), SecurityGroups: []infrav1.SecurityGroupParam{sg("a")},
				ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)}}}
		}, want: []string{"spec.bastion.spec.ports[0].securityGroups"}},

		// Managed security groups.
		{name: "security group rules change", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ManagedSecurityGroups.ControlPlaneNodesSecurityGroupRules = []infrav1.SecurityGroupRuleSpec{rule("a", nil)}
			c.Spec.ManagedSecurityGroups.WorkerNodesSecurityGroupRules = []infrav1.SecurityGroupRuleSpec{rule("b", nil)}
			c.Spec.ManagedSecurityGroups.ClusterNodesSecurityGroupRules = []infrav1.SecurityGroupRuleSpec{rule("c", nil)}
			c.Spec.ManagedSecurityGroups.AllowAllInClusterTraffic = true
		}},
		{name: "security group rule with two remotes", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ManagedSecurityGroups.WorkerNodesSecurityGroupRules = []infrav1.SecurityGroupRuleSpec{rule("b", func(r *infrav1.SecurityGroupRuleSpec) {
				r.RemoteIPPrefix = ptr.To("0.0.0.0/0")
				r.RemoteGroupID = ptr.To(netA)
			})}
		}, want: []string{"spec.managedSecurityGroups.workerNodesSecurityGroupRules[0]"}},
		{name: "managed security groups turned off", mutate: func(c *infrav1.OpenStackCluster) { c.Spec.ManagedSecurityGroups = nil },
			want: []string{"spec.managedSecurityGroups"}},
		{name: "managed security groups turned on", oldMutate: func(c *infrav1.OpenStackCluster) { c.Spec.ManagedSecurityGroups = nil },
			mutate: func(c *infrav1.OpenStackCluster) { c.Spec.ManagedSecurityGroups = &infrav1.ManagedSecurityGroups{} },
			want:   []string{"spec.managedSecurityGroups"}},

		// The rest.
		{name: "tags", mutate: func(c *infrav1.OpenStackCluster) { c.Spec.Tags = []string{"t", "u"} }, want: []string{"spec.tags"}},
		{name: "control plane availability zones", mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ControlPlaneAvailabilityZones = []string{"az1"}
			c.Spec.ControlPlaneOmitAvailabilityZone = ptr.To(true)
		}, want: []string{"spec.controlPlaneAvailabilityZones", "spec.controlPlaneOmitAvailabilityZone"}},

		{name: "several changes, each named", oldMutate: withEndpoint, mutate: func(c *infrav1.OpenStackCluster) {
			c.Spec.ControlPlaneEndpoint.Host = "192.0.2.99"
			c.Spec.ManagedSubnets[0].CIDR = "10.9.0.0/24"
			c.Spec.APIServer = &infrav1.APIServer{Port: ptr.To(443)}
			c.Spec.Bastion = nil
			c.Spec.Tags = nil
			c.Spec.IdentityRef.Name = "rotated"
		}, want: []string{"spec.apiServer.port", "spec.bastion", "spec.controlPlaneEndpoint.host", "spec.managedSubnets[0].cidr", "spec.tags"}},
	}
	w := &openStackClusterWebhook{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := baseCluster
			if tt.base != nil {
				base = tt.base
			}
			oldC := base()
			if tt.oldMutate != nil {
				tt.oldMutate(oldC)
			}
			newC := oldC.DeepCopy()
			tt.mutate(newC)
			_, err := w.ValidateUpdate(context.Background(), oldC, newC)
			checkResult(t, err, "OpenStackCluster", tt.want...)
		})
	}
}

func TestOpenStackClusterTemplateValidateUpdate(t *testing.T) {
	base := func() *infrav1.OpenStackClusterTemplate {
		return &infrav1.OpenStackClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns"},
			Spec: infrav1.OpenStackClusterTemplateSpec{Template: infrav1.OpenStackClusterTemplateResource{Spec: baseCluster().Spec}}}
	}
	changeBastion := func(tmpl *infrav1.OpenStackClusterTemplate) {
		// Mutable on a cluster, not in a template.
		tmpl.Spec.Template.Spec.Bastion.Spec.Flavor.Filter.Name = ptr.To("m1.large")
	}
	annotate := func(tmpl *infrav1.OpenStackClusterTemplate) {
		tmpl.Annotations = map[string]string{clusterv1.TopologyDryRunAnnotation: ""}
	}
	tests := []struct {
		name   string
		dryRun *bool
		mutate []func(*infrav1.OpenStackClusterTemplate)
		want   []string
	}{
		{name: "no change", dryRun: ptr.To(false)},
		{name: "template metadata may change", dryRun: ptr.To(false), mutate: []func(*infrav1.OpenStackClusterTemplate){
			func(tmpl *infrav1.OpenStackClusterTemplate) {
				tmpl.Spec.Template.ObjectMeta.Labels = map[string]string{"a": "b"}
			},
		}},
		{name: "bastion change", dryRun: ptr.To(false), mutate: []func(*infrav1.OpenStackClusterTemplate){changeBastion},
			want: []string{"spec.template.spec.bastion.spec.flavor.filter.name"}},
		{name: "several changes, each named", mutate: []func(*infrav1.OpenStackClusterTemplate){changeBastion,
			func(tmpl *infrav1.OpenStackClusterTemplate) {
				tmpl.Spec.Template.Spec.IdentityRef.Name = "rotated"
				tmpl.Spec.Template.Spec.ManagedSubnets[0].CIDR = "10.9.0.0/24"
			}}, want: []string{"spec.template.spec.bastion.spec.flavor.filter.name", "spec.template.spec.identityRef.name", "spec.template.spec.managedSubnets[0].cidr"}},
		{name: "topology dry-run is exempt", dryRun: ptr.To(true), mutate: []func(*infrav1.OpenStackClusterTemplate){changeBastion, annotate}},
		{name: "dry-run without the topology annotation", dryRun: ptr.To(true), mutate: []func(*infrav1.OpenStackClusterTemplate){changeBastion},
			want: []string{"spec.template.spec.bastion.spec.flavor.filter.name"}},
		{name: "topology annotation without dry-run", dryRun: ptr.To(false), mutate: []func(*infrav1.OpenStackClusterTemplate){changeBastion, annotate},
			want: []string{"spec.template.spec.bastion.spec.flavor.filter.name"}},
	}
	w := &openStackClusterTemplateWebhook{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldT := base()
			newT := oldT.DeepCopy()
			for _, m := range tt.mutate {
				m(newT)
			}
			ctx := context.Background()
			if tt.dryRun != nil {
				ctx = admission.NewContextWithRequest(ctx, admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
					Operation: admissionv1.Update, DryRun: tt.dryRun}})
			}
			_, err := w.ValidateUpdate(ctx, oldT, newT)
			checkResult(t, err, "OpenStackClusterTemplate", tt.want...)
		})
	}
}

func TestOpenStackClusterValidateDeleteAllows(t *testing.T) {
	ctx := context.Background()
	if _, err := (&openStackClusterWebhook{}).ValidateDelete(ctx, baseCluster()); err != nil {
		t.Error(err)
	}
	if _, err := (&openStackClusterTemplateWebhook{}).ValidateDelete(ctx, &infrav1.OpenStackClusterTemplate{}); err != nil {
		t.Error(err)
	}
}

// FuzzOpenStackClusterUpdateNoPanic: odd specs (nil blocks, empty
// lists) never panic the update check, and an unchanged spec is always
// accepted.
func FuzzOpenStackClusterUpdateNoPanic(f *testing.F) {
	f.Add(uint16(0), uint16(0))
	f.Add(uint16(0xffff), uint16(0x1234))
	f.Fuzz(func(t *testing.T, a, b uint16) {
		oldC, newC := fuzzCluster(a), fuzzCluster(b)
		w := &openStackClusterWebhook{}
		_, _ = w.ValidateUpdate(context.Background(), oldC, newC)
		if _, err := w.ValidateUpdate(context.Background(), oldC, oldC.DeepCopy()); err != nil {
			if _, errs := validateClusterSpec(nil, &oldC.Spec); len(errs) == 0 {
				t.Fatalf("an unchanged spec was refused: %v", err)
			}
		}
	})
}

// fuzzCluster builds a cluster whose optional blocks are on or off by the
// bits of m.
func fuzzCluster(m uint16) *infrav1.OpenStackCluster {
	c := &infrav1.OpenStackCluster{}
	bit := func(i int) bool { return m&(1<<i) != 0 }
	if bit(0) {
		c.Spec.ManagedSubnets = []infrav1.SubnetSpec{{CIDR: "10.0.0.0/24"}}
	}
	if bit(1) {
		c.Spec.Network = &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "n"}}
		c.Status.Network = &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{ID: netA}}
	}
	if bit(2) {
		c.Spec.Network = network(netA)
	}
	if bit(3) {
		c.Spec.Subnets = []infrav1.SubnetParam{{Filter: &infrav1.SubnetFilter{Name: "s"}}}
	}
	if bit(4) {
		c.Spec.APIServer = &infrav1.APIServer{}
	}
	if bit(5) {
		c.Spec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{}, Port: ptr.To(0)}
	}
	if bit(6) {
		c.Spec.Bastion = &infrav1.Bastion{}
	}
	if bit(7) {
		c.Spec.Bastion = bastion()
	}
	if bit(8) {
		c.Spec.ManagedSecurityGroups = &infrav1.ManagedSecurityGroups{}
	}
	if bit(9) {
		c.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{}
	}
	if bit(10) {
		c.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "h", Port: 1}
	}
	if bit(11) {
		c.Status.Network = &infrav1.NetworkStatusWithSubnets{Subnets: []infrav1.Subnet{{ID: subnetA}}}
	}
	if bit(12) {
		c.Spec.Subnets = []infrav1.SubnetParam{{ID: ptr.To(subnetA)}}
	}
	if bit(13) {
		c.Spec.Bastion = &infrav1.Bastion{Spec: &infrav1.OpenStackMachineSpec{}}
	}
	return c
}
