package openshiftassistedcontrolplane

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/clusterinstall"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/release"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
)

// setReplicaStatus sets the contract's replica counters, the selector,
// MachinesReady and Remediating from the Machines.
func setReplicaStatus(s *scope, machines []*clusterv1.Machine) {
	oacp := s.oacp
	var ready, available, upToDate int32
	for _, m := range machines {
		if capiconditions.IsTrue(m, clusterv1.MachineReadyCondition) {
			ready++
		}
		if capiconditions.IsTrue(m, clusterv1.MachineAvailableCondition) {
			available++
		}
		if capiconditions.IsTrue(m, clusterv1.MachineUpToDateCondition) {
			upToDate++
		}
	}
	oacp.Status.Replicas = ptr.To(int32(len(machines)))
	oacp.Status.ReadyReplicas = ptr.To(ready)
	oacp.Status.AvailableReplicas = ptr.To(available)
	oacp.Status.UpToDateReplicas = ptr.To(upToDate)
	if s.clusterName != "" {
		oacp.Status.Selector = selectorOf(s)
	}
	setMachinesReady(oacp, machines)
	setRemediating(oacp, machines)
}

// setMachinesReady aggregates the Machines' Ready conditions, as CAPI's
// KubeadmControlPlane does.
func setMachinesReady(oacp *controlplanev1.OpenshiftAssistedControlPlane, machines []*clusterv1.Machine) {
	if len(machines) == 0 {
		conditions.MarkTrue(oacp, controlplanev1.MachinesReadyCondition, "", controlplanev1.NoReplicasReason)
		return
	}
	c, err := capiconditions.NewAggregateCondition(machines, clusterv1.MachineReadyCondition,
		capiconditions.TargetConditionType(controlplanev1.MachinesReadyCondition),
		capiconditions.CustomMergeStrategy{MergeStrategy: capiconditions.DefaultMergeStrategy(
			capiconditions.ComputeReasonFunc(capiconditions.GetDefaultComputeMergeReasonFunc(
				controlplanev1.MachinesNotReadyReason, controlplanev1.MachinesReadyUnknownReason, controlplanev1.MachinesReadyReason)))})
	if err != nil {
		conditions.MarkUnknown(oacp, controlplanev1.MachinesReadyCondition, controlplanev1.InternalErrorReason,
			"cannot aggregate the Machines' Ready conditions; see the controller's log")
		return
	}
	capiconditions.Set(oacp, *c)
}

// setInstallStatus sets Available and the contract's initialization from
// the AgentClusterInstall's state, and the installed version once the
// installation completes.
func setInstallStatus(oacp *controlplanev1.OpenshiftAssistedControlPlane, inst *installation, kubeconfig []byte) {
	st := inst.status
	switch st.Phase {
	case clusterinstall.Installed:
		// No message: CAPI mirrors Available into the Cluster's
		// ControlPlaneAvailable, whose healthy state has none.
		conditions.MarkTrue(oacp, controlplanev1.AvailableCondition, "", controlplanev1.AvailableReason)
		if kubeconfig != nil {
			oacp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		}
		if oacp.Status.DistributionVersion == "" {
			oacp.Status.DistributionVersion = inst.version
		}
	case clusterinstall.Installing:
		conditions.MarkFalse(oacp, controlplanev1.AvailableCondition, controlplanev1.ControlPlaneInstallingReason,
			fmt.Sprintf("AgentClusterInstall %s is in state %q: %s", inst.aci.Name, st.State, st.Message))
	case clusterinstall.Failed:
		conditions.MarkFalse(oacp, controlplanev1.AvailableCondition, controlplanev1.InstallationFailedReason,
			fmt.Sprintf("AgentClusterInstall %s is in state %q: %s. Look at its events and logs (status.debugInfo); "+
				"once the problem is fixed, assisted-service can reset the installation", inst.aci.Name, st.State, st.Message))
	default:
		state := st.State
		if state == "" {
			state = "(none yet)"
		}
		conditions.MarkFalse(oacp, controlplanev1.AvailableCondition, controlplanev1.InstallationNotStartedReason,
			fmt.Sprintf("AgentClusterInstall %s is in state %s: %s", inst.aci.Name, state, st.Message))
	}
}

// setKubernetesVersion sets status.version: spec.version, else
// the table's version for the installed OpenShift version (the installation
// version before it completes). spec.version describes spec's release, so
// while an upgrade to another release runs it is not reported: CAPI reads
// spec.version != status.version as "upgrading" and holds the workers'
// upgrade back until it ends.
func setKubernetesVersion(oacp *controlplanev1.OpenshiftAssistedControlPlane, installVersion string) {
	v := oacp.Status.DistributionVersion
	if v == "" {
		v = installVersion
	}
	if v == "" {
		v = oacp.Spec.DistributionVersion
	}
	override := oacp.Spec.KubernetesVersion
	if strings.TrimPrefix(v, "v") != strings.TrimPrefix(oacp.Spec.DistributionVersion, "v") {
		override = ""
		if _, _, known, _ := release.KubernetesVersion(v, ""); !known && oacp.Status.Version != "" {
			return // the table does not know the installed release: what was reported for it stands
		}
	}
	k8s, fromTable, ok, msg := release.KubernetesVersion(v, override)
	if !ok {
		conditions.MarkFalse(oacp, controlplanev1.KubernetesVersionAvailableCondition, controlplanev1.KubernetesVersionUnavailableReason, msg)
		return
	}
	oacp.Status.Version = k8s
	how := "from spec.version"
	if fromTable {
		how = fmt.Sprintf("from the built-in table for OpenShift %s (the minor's first release; the patch release is not known "+
			"without pulling the release image: set spec.version for it)", strings.TrimPrefix(v, "v"))
	}
	conditions.MarkTrue(oacp, controlplanev1.KubernetesVersionAvailableCondition, "Kubernetes "+k8s+" "+how,
		controlplanev1.KubernetesVersionAvailableReason)
}

// markWaitingForCluster says what is missing before anything is made.
func markWaitingForCluster(s *scope) {
	msg := "waiting for the Cluster's infrastructure to be provisioned"
	switch {
	case s.cluster == nil && s.clusterName == "":
		msg = "waiting for a Cluster to own this control plane (its spec.controlPlaneRef names it)"
	case s.cluster == nil:
		msg = fmt.Sprintf("waiting for Cluster %s", s.clusterName)
	case !ptr.Deref(s.cluster.Status.Initialization.InfrastructureProvisioned, false):
		msg = fmt.Sprintf("waiting for the infrastructure of Cluster %s to be provisioned", s.cluster.Name)
	}
	for _, t := range []string{controlplanev1.AvailableCondition, controlplanev1.KubeconfigAvailableCondition, controlplanev1.MachinesCreatedCondition} {
		conditions.MarkFalse(s.oacp, t, controlplanev1.WaitingForClusterInfrastructureReason, msg)
	}
}

// markDeleting sets the conditions of a control plane being deleted.
func markDeleting(oacp *controlplanev1.OpenshiftAssistedControlPlane, msg string) {
	for _, t := range []string{controlplanev1.AvailableCondition, controlplanev1.MachinesCreatedCondition} {
		capiconditions.Set(oacp, metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: controlplanev1.DeletingReason, Message: msg})
	}
}
