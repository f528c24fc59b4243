package openshiftassistedconfig

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cluster-api/util"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/agentspec"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/gate"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
)

// reportAgent sets AgentApproved from the Agent the Agent controller bound
// to the machine (status.agentRef). It writes nothing but the condition:
// this controller is the condition's only writer.
func (r *Reconciler) reportAgent(ctx context.Context, s *scope) (ctrl.Result, error) {
	config := s.config
	gated, gateMsg := false, ""
	if s.aci != nil && s.machine != nil && !util.IsControlPlaneMachine(s.machine) {
		ok, msg := gate.WorkerMayJoin(s.aci)
		gated, gateMsg = !ok, msg
	}
	infraEnv := "its InfraEnv"
	if ref := config.Status.InfraEnvRef; ref != nil {
		infraEnv = "InfraEnv " + ref.Name
	}
	// A Machine with a Node needs no Agent any more; after clusterctl move
	// there is none here (Agents stay with the assisted-service that
	// installed the host).
	joined := s.machine != nil && s.machine.Status.NodeRef.IsDefined()
	nodeJoined := func() {
		conditions.MarkTrue(config, bootstrapv1.AgentApprovedCondition,
			fmt.Sprintf("Machine %s has Node %s; no Agent of it is on this management cluster", s.machine.Name, s.machine.Status.NodeRef.Name),
			bootstrapv1.NodeJoinedReason)
	}
	if config.Status.AgentRef == nil && joined {
		nodeJoined()
		return ctrl.Result{}, nil
	}
	if config.Status.AgentRef == nil {
		conditions.MarkFalse(config, bootstrapv1.AgentApprovedCondition, bootstrapv1.WaitingForAgentReason,
			fmt.Sprintf("waiting for the host to boot from %s and register an Agent", infraEnv))
		return ctrl.Result{}, nil
	}
	name := config.Status.AgentRef.Name
	agent := &aiv1beta1.Agent{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: config.Namespace, Name: name}, agent); err != nil {
		if apierrors.IsNotFound(err) {
			if joined {
				nodeJoined()
				return ctrl.Result{}, nil
			}
			conditions.MarkFalse(config, bootstrapv1.AgentApprovedCondition, bootstrapv1.WaitingForAgentReason,
				fmt.Sprintf("Agent %s is gone; waiting for the host to register again from %s", name, infraEnv))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	switch {
	case agent.Spec.Approved:
		capiconditions.Set(config, agentspec.ApprovedCondition(agent))
	case gated:
		conditions.MarkFalse(config, bootstrapv1.AgentApprovedCondition, bootstrapv1.WaitingForInstallCompleteReason, gateMsg)
	default:
		conditions.MarkFalse(config, bootstrapv1.AgentApprovedCondition, bootstrapv1.WaitingForAgentReason,
			fmt.Sprintf("Agent %s is bound to this machine and waits for approval", name))
	}
	return ctrl.Result{}, nil
}
