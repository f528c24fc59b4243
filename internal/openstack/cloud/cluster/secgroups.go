package cluster

import (
	"context"
	"fmt"
	"sort"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"k8s.io/utils/ptr"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// SecurityGroups are the managed groups of a cluster.
type SecurityGroups struct {
	ControlPlane, Worker, Bastion *infrav1.SecurityGroupStatus
}

// bastionEnabled reports whether the spec wants a bastion.
func (r Request) bastionEnabled() bool {
	b := r.Spec.Bastion
	return b != nil && ptr.Deref(b.Enabled, true) && b.Spec != nil
}

// ruleSpec is one rule in a form that can be compared with Neutron's.
type ruleSpec struct {
	Direction, EtherType, Protocol string
	PortMin, PortMax               int
	RemoteIPPrefix                 string
	RemoteGroup                    infrav1.ManagedSecurityGroupName // resolved to an ID later
	RemoteGroupID                  string
	Description                    string
}

func tcp(desc string, min, max int, remote ...infrav1.ManagedSecurityGroupName) []ruleSpec {
	return proto("tcp", desc, min, max, remote...)
}

func proto(p, desc string, min, max int, remote ...infrav1.ManagedSecurityGroupName) []ruleSpec {
	if len(remote) == 0 {
		return []ruleSpec{{Direction: "ingress", EtherType: "IPv4", Protocol: p, PortMin: min, PortMax: max, RemoteIPPrefix: "0.0.0.0/0", Description: desc}}
	}
	out := make([]ruleSpec, 0, len(remote))
	for _, g := range remote {
		out = append(out, ruleSpec{Direction: "ingress", EtherType: "IPv4", Protocol: p, PortMin: min, PortMax: max, RemoteGroup: g, Description: desc})
	}
	return out
}

// DesiredRules are the rules of each managed group. The defaults are for
// OpenShift nodes (docs/openstack/cluster.md lists them); the user's rules
// come on top. Egress stays open, as Neutron creates groups.
func DesiredRules(req Request) map[infrav1.ManagedSecurityGroupName][]ruleSpec {
	msg := req.Spec.ManagedSecurityGroups
	cp, wk := infrav1.ManagedSecurityGroupControlPlane, infrav1.ManagedSecurityGroupWorker
	egress := []ruleSpec{{Direction: "egress", EtherType: "IPv4"}, {Direction: "egress", EtherType: "IPv6"}}

	var common []ruleSpec
	if msg.AllowAllInClusterTraffic {
		common = append(common, proto("", "all traffic within the cluster", 0, 0, cp, wk)...)
	} else {
		common = append(common, tcp("kubelet", 10250, 10250, cp, wk)...)
		common = append(common, tcp("node ports", 30000, 32767, cp, wk)...)
		common = append(common, proto("udp", "node ports (UDP)", 30000, 32767, cp, wk)...)
		common = append(common, proto("udp", "Geneve (OVN-Kubernetes)", 6081, 6081, cp, wk)...)
		common = append(common, proto("udp", "VXLAN", 4789, 4789, cp, wk)...)
		common = append(common, tcp("host-level services", 9000, 9999, cp, wk)...)
		common = append(common, proto("icmp", "ICMP within the cluster", 0, 0, cp, wk)...)
	}
	if req.bastionEnabled() {
		common = append(common, tcp("SSH from the bastion", 22, 22, infrav1.ManagedSecurityGroupBastion)...)
	}
	port := req.APIPort()
	controlPlane := append(append([]ruleSpec{}, egress...), common...)
	controlPlane = append(controlPlane, tcp("Kubernetes API", port, port)...)
	if !msg.AllowAllInClusterTraffic {
		controlPlane = append(controlPlane, tcp("machine config server", 22623, 22623, cp, wk)...)
		controlPlane = append(controlPlane, tcp("etcd", 2379, 2380, cp)...)
	}
	worker := append(append([]ruleSpec{}, egress...), common...)
	worker = append(worker, tcp("ingress HTTP", 80, 80)...)
	worker = append(worker, tcp("ingress HTTPS", 443, 443)...)

	for _, r := range msg.ClusterNodesSecurityGroupRules {
		controlPlane = append(controlPlane, userRule(r)...)
		worker = append(worker, userRule(r)...)
	}
	for _, r := range msg.ControlPlaneNodesSecurityGroupRules {
		controlPlane = append(controlPlane, userRule(r)...)
	}
	for _, r := range msg.WorkerNodesSecurityGroupRules {
		worker = append(worker, userRule(r)...)
	}
	out := map[infrav1.ManagedSecurityGroupName][]ruleSpec{cp: controlPlane, wk: worker}
	if req.bastionEnabled() {
		out[infrav1.ManagedSecurityGroupBastion] = append(append([]ruleSpec{}, egress...), tcp("SSH", 22, 22)...)
	}
	return out
}

func userRule(r infrav1.SecurityGroupRuleSpec) []ruleSpec {
	base := ruleSpec{
		Direction:      r.Direction,
		EtherType:      ptr.Deref(r.EtherType, "IPv4"),
		Protocol:       ptr.Deref(r.Protocol, ""),
		PortMin:        int(ptr.Deref(r.PortRangeMin, 0)),
		PortMax:        int(ptr.Deref(r.PortRangeMax, 0)),
		RemoteIPPrefix: ptr.Deref(r.RemoteIPPrefix, ""),
		RemoteGroupID:  ptr.Deref(r.RemoteGroupID, ""),
		Description:    ptr.Deref(r.Description, r.Name),
	}
	if len(r.RemoteManagedGroups) == 0 {
		return []ruleSpec{base}
	}
	out := make([]ruleSpec, 0, len(r.RemoteManagedGroups))
	for _, g := range r.RemoteManagedGroups {
		rr := base
		rr.RemoteGroup = g
		out = append(out, rr)
	}
	return out
}

// key identifies a rule regardless of description and ID.
func (r ruleSpec) key() string {
	return fmt.Sprintf("%s|%s|%s|%d|%d|%s|%s", r.Direction, r.EtherType, r.Protocol, r.PortMin, r.PortMax, r.RemoteIPPrefix, r.RemoteGroupID)
}

func existingKey(r rules.SecGroupRule) string {
	return ruleSpec{Direction: r.Direction, EtherType: r.EtherType, Protocol: r.Protocol, PortMin: r.PortRangeMin, PortMax: r.PortRangeMax,
		RemoteIPPrefix: r.RemoteIPPrefix, RemoteGroupID: r.RemoteGroupID}.key()
}

// EnsureSecurityGroups creates (or adopts by name) the managed groups and
// makes their rules exactly the desired ones. Calls: one list of the
// project's groups (rules included), one create per missing group, one
// bulk create of missing rules, one delete per extra rule.
func EnsureSecurityGroups(ctx context.Context, s Scope, req Request) (SecurityGroups, error) {
	var out SecurityGroups
	if req.Spec.ManagedSecurityGroups == nil {
		return out, nil
	}
	desired := DesiredRules(req)
	roles := make([]infrav1.ManagedSecurityGroupName, 0, len(desired))
	for role := range desired {
		roles = append(roles, role)
	}
	sort.Slice(roles, func(i, j int) bool { return roles[i] < roles[j] })

	existing, err := s.Clients.Network.ListSecurityGroups(ctx, groups.ListOpts{ProjectID: s.Clients.ProjectID})
	if err != nil {
		return out, clients.Classify(err, "listing security groups")
	}
	byName := map[string]groups.SecGroup{}
	for _, g := range existing {
		if _, dup := byName[g.Name]; dup {
			return out, terminal(clients.ReasonAmbiguous, "more than one security group is named %q; delete the extra one", g.Name)
		}
		byName[g.Name] = g
	}
	found := map[infrav1.ManagedSecurityGroupName]groups.SecGroup{}
	for _, role := range roles {
		name := req.SecurityGroupName(role)
		g, ok := byName[name]
		if !ok {
			created, err := s.Clients.NetworkInfra.CreateSecurityGroup(ctx, groups.CreateOpts{Name: name,
				Description: fmt.Sprintf("Cluster %s/%s %s nodes (ocp-capi)", req.Namespace, req.Name, role)})
			if err != nil {
				return out, clients.Classify(err, "creating security group "+name)
			}
			s.Log.Info("Created security group", "securityGroup", name, "id", created.ID)
			if err := tag(ctx, s, "security-groups", created.ID, req.Spec.Tags, &created.Tags); err != nil {
				return out, err
			}
			g = *created
		}
		found[role] = g
	}
	ids := map[infrav1.ManagedSecurityGroupName]string{}
	for role, g := range found {
		ids[role] = g.ID
	}
	for _, role := range roles {
		g := found[role]
		if err := syncRules(ctx, s, g, desired[role], ids); err != nil {
			return out, err
		}
		st := &infrav1.SecurityGroupStatus{Name: g.Name, ID: g.ID}
		switch role {
		case infrav1.ManagedSecurityGroupControlPlane:
			out.ControlPlane = st
		case infrav1.ManagedSecurityGroupWorker:
			out.Worker = st
		case infrav1.ManagedSecurityGroupBastion:
			out.Bastion = st
		}
	}
	return out, nil
}

func syncRules(ctx context.Context, s Scope, g groups.SecGroup, want []ruleSpec, ids map[infrav1.ManagedSecurityGroupName]string) error {
	wantByKey := map[string]ruleSpec{}
	for _, r := range want {
		if r.RemoteGroup != "" {
			id, ok := ids[r.RemoteGroup]
			if !ok {
				continue // e.g. rules from the bastion group while it is disabled
			}
			r.RemoteGroupID = id
		}
		wantByKey[r.key()] = r
	}
	have := map[string]bool{}
	for _, r := range g.Rules {
		k := existingKey(r)
		if _, ok := wantByKey[k]; ok && !have[k] {
			have[k] = true
			continue
		}
		if err := s.Clients.NetworkInfra.DeleteSecurityGroupRule(ctx, r.ID); err != nil {
			if err := ignoreNotFound(err, "deleting a rule of security group "+g.Name); err != nil {
				return err
			}
		}
	}
	keys := make([]string, 0, len(wantByKey))
	for k := range wantByKey {
		if !have[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	opts := make([]rules.CreateOpts, 0, len(keys))
	for _, k := range keys {
		r := wantByKey[k]
		opts = append(opts, rules.CreateOpts{
			SecGroupID: g.ID, Direction: rules.RuleDirection(r.Direction), EtherType: rules.RuleEtherType(r.EtherType),
			Protocol: rules.RuleProtocol(r.Protocol), PortRangeMin: r.PortMin, PortRangeMax: r.PortMax,
			RemoteIPPrefix: r.RemoteIPPrefix, RemoteGroupID: r.RemoteGroupID, Description: r.Description,
		})
	}
	if _, err := s.Clients.NetworkInfra.CreateSecurityGroupRules(ctx, opts); err != nil {
		return clients.Classify(err, "creating the rules of security group "+g.Name)
	}
	return nil
}
