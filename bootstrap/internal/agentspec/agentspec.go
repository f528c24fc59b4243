// Package agentspec computes what this provider writes on an Agent bound to
// a machine: its role, hostname, node labels, install-time Ignition
// overrides (kubelet's provider ID, the bootstrap commands) and approval,
// from the machine's config and host. It is pure: no client, no I/O.
package agentspec

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/validation/assisted"
)

// Metal3UUIDLabel carries the BareMetalHost's UID on the node; CAPM3 finds
// the node by it to set its providerID.
const Metal3UUIDLabel = "metal3.io/uuid"

// Input is what the Agent of one machine is derived from.
type Input struct {
	// Spec is the machine's OpenshiftAssistedConfig spec.
	Spec bootstrapv1.OpenshiftAssistedConfigSpec
	// ControlPlane is true when the Machine has the control-plane label.
	ControlPlane bool
	// Vars are the host variables of the machine.
	Vars assisted.Vars
	// HostLabels are node labels the host needs (metal3.io/uuid).
	HostLabels map[string]string
	// DefaultProviderID is used when spec.nodeRegistration.providerID is
	// unset (the OpenStackMachine's spec.providerID); may be empty.
	DefaultProviderID string
	// Approve is false while the day-1/day-2 gate holds a worker back.
	Approve bool
}

// Desired is what the Agent should carry.
type Desired struct {
	Role aiv1beta1.HostRole
	// Hostname is "" when the config sets none: the Agent's is kept.
	Hostname   string
	NodeLabels map[string]string
	// IgnitionConfigOverrides is "" when there is nothing to override: the
	// Agent's is kept.
	IgnitionConfigOverrides string
	Approve                 bool
}

// Role is master for a control-plane machine, else worker.
func Role(controlPlane bool) aiv1beta1.HostRole {
	if controlPlane {
		return aiv1beta1.HostRoleMaster
	}
	return aiv1beta1.HostRoleWorker
}

// Build computes the Agent's desired fields. It fails when a host variable
// has no value for the host or a label is malformed; the message names the
// config field.
func Build(in Input) (Desired, error) {
	d := Desired{Role: Role(in.ControlPlane), Approve: in.Approve, NodeLabels: maps.Clone(in.HostLabels)}
	nr := in.Spec.NodeRegistration
	if nr.Name != "" {
		name, err := in.Vars.Resolve(nr.Name)
		if err != nil {
			return Desired{}, fmt.Errorf("spec.nodeRegistration.name: %w", err)
		}
		if errs := validation.IsDNS1123Subdomain(strings.ToLower(name)); len(errs) > 0 {
			return Desired{}, fmt.Errorf("spec.nodeRegistration.name resolves to %q, not a hostname: %s", name, strings.Join(errs, "; "))
		}
		d.Hostname = name
	}
	for i, l := range nr.KubeletExtraLabels {
		key, value, err := assisted.ParseLabel(l)
		if err != nil {
			return Desired{}, fmt.Errorf("spec.nodeRegistration.kubeletExtraLabels[%d]: %w", i, err)
		}
		if value, err = in.Vars.Resolve(value); err != nil {
			return Desired{}, fmt.Errorf("spec.nodeRegistration.kubeletExtraLabels[%d]: %w", i, err)
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return Desired{}, fmt.Errorf("spec.nodeRegistration.kubeletExtraLabels[%d]: value %q: %s", i, value, strings.Join(errs, "; "))
		}
		if d.NodeLabels == nil {
			d.NodeLabels = map[string]string{}
		}
		d.NodeLabels[key] = value
	}
	providerID := in.DefaultProviderID
	if nr.ProviderID != "" {
		var err error
		if providerID, err = in.Vars.Resolve(nr.ProviderID); err != nil {
			return Desired{}, fmt.Errorf("spec.nodeRegistration.providerID: %w", err)
		}
	}
	override, err := IgnitionOverride(IgnitionInput{
		ProviderID:  providerID,
		PreCommands: in.Spec.PreBootstrapCommands, PostCommands: in.Spec.PostBootstrapCommands,
		SentinelDir: in.Spec.BootstrapCommandSentinelDir, Kubeconfig: in.Spec.PostBootstrapKubeconfigPath,
	})
	if err != nil {
		return Desired{}, err
	}
	d.IgnitionConfigOverrides = override
	return d, nil
}

// Apply writes d onto agent, bound to the config configName, and reports
// whether anything changed. Node labels are merged (others' are kept); an
// approved Agent is never unapproved here.
func Apply(agent *aiv1beta1.Agent, configName string, d Desired) bool {
	before := agent.DeepCopy()
	labels := agent.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[bootstrapv1.ConfigLabel] = configName
	agent.SetLabels(labels)
	agent.Spec.Role = d.Role
	if d.Hostname != "" {
		agent.Spec.Hostname = d.Hostname
	}
	if len(d.NodeLabels) > 0 {
		if agent.Spec.NodeLabels == nil {
			agent.Spec.NodeLabels = map[string]string{}
		}
		maps.Copy(agent.Spec.NodeLabels, d.NodeLabels)
	}
	if d.IgnitionConfigOverrides != "" {
		agent.Spec.IgnitionConfigOverrides = d.IgnitionConfigOverrides
	}
	agent.Spec.Approved = agent.Spec.Approved || d.Approve
	return !equality.Semantic.DeepEqual(before, agent)
}

// Unbind removes this provider's binding from agent: its config label and
// its approval, so that the host does not install for a machine that is
// gone. It reports whether anything changed.
func Unbind(agent *aiv1beta1.Agent) bool {
	changed := false
	if _, ok := agent.Labels[bootstrapv1.ConfigLabel]; ok {
		delete(agent.Labels, bootstrapv1.ConfigLabel)
		changed = true
	}
	if agent.Spec.Approved {
		agent.Spec.Approved = false
		changed = true
	}
	return changed
}

// ApprovedCondition is the config's AgentApproved condition for an approved
// Agent. Both controllers build it here, so that the Agent controller can
// write it with its claim and the config controller then finds nothing to
// change.
func ApprovedCondition(agent *aiv1beta1.Agent) metav1.Condition {
	return metav1.Condition{
		Type:    bootstrapv1.AgentApprovedCondition,
		Status:  metav1.ConditionTrue,
		Reason:  bootstrapv1.AgentApprovedReason,
		Message: fmt.Sprintf("Agent %s is approved as %s", agent.Name, agent.Spec.Role),
	}
}
