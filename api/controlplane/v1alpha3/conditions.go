package v1alpha3

// Condition types and reasons of OpenshiftAssistedControlPlane. Every owned
// condition is set on the controller's first visit (Unknown, reason
// Pending, when nothing is known yet) and always carries a reason from this
// list. docs/controlplane.md documents them for users.

// Condition types.
const (
	// ReadyCondition summarizes Available, KubeconfigAvailable,
	// MachinesCreated and MachinesReady.
	ReadyCondition = "Ready"

	// AvailableCondition is True once the AgentClusterInstall reports the
	// control plane up: state finalizing, installed or adding-hosts. CAPI
	// core mirrors it into the Cluster's ControlPlaneAvailable condition.
	AvailableCondition = "Available"

	// KubeconfigAvailableCondition is True once <cluster>-kubeconfig holds
	// the installed cluster's admin kubeconfig.
	KubeconfigAvailableCondition = "KubeconfigAvailable"

	// MachinesCreatedCondition is True when the control plane has as many
	// Machines as spec.replicas asks for, and creating them raised no
	// error.
	MachinesCreatedCondition = "MachinesCreated"

	// MachinesReadyCondition aggregates the Ready conditions of the
	// control-plane Machines.
	MachinesReadyCondition = "MachinesReady"

	// UpgradeCompletedCondition is True when the workload cluster runs
	// spec.distributionVersion; False while an upgrade waits, runs or has
	// failed.
	UpgradeCompletedCondition = "UpgradeCompleted"

	// KubernetesVersionAvailableCondition is True when status.version is
	// known: from spec.version or the built-in table of OpenShift
	// to Kubernetes versions.
	KubernetesVersionAvailableCondition = "KubernetesVersionAvailable"

	// RemediatingCondition is True while a control-plane Machine that a
	// MachineHealthCheck found unhealthy waits for, or goes through, its
	// replacement (CAPI's control-plane Remediating condition).
	RemediatingCondition = "Remediating"
)

// Reasons of Available.
const (
	// AvailableReason: the AgentClusterInstall is in finalizing, installed
	// or adding-hosts: the control plane serves.
	AvailableReason = "Available"
	// InstallationNotStartedReason: the installation waits for its hosts
	// (AgentClusterInstall insufficient, pending-for-input or ready); the
	// message is assisted-service's RequirementsMet message.
	InstallationNotStartedReason = "InstallationNotStarted"
	// ControlPlaneInstallingReason: the installation runs
	// (preparing-for-installation, installing).
	ControlPlaneInstallingReason = "ControlPlaneInstalling"
	// InstallationFailedReason: the AgentClusterInstall is in state error
	// (or cancelled); the message is assisted-service's.
	InstallationFailedReason = "InstallationFailed"
	// ImportingClusterReason: the cluster was installed under another
	// management cluster (clusterctl move, or a restore): its
	// <cluster>-kubeconfig exists but no ClusterDeployment does, and the
	// control plane imports it into this management cluster's
	// assisted-service (a ClusterDeployment with installed: true). The
	// message says what the import waits for.
	ImportingClusterReason = "ImportingCluster"
)

// Reasons of KubeconfigAvailable.
const (
	// KubeconfigAvailableReason: <cluster>-kubeconfig is up to date.
	KubeconfigAvailableReason = "KubeconfigAvailable"
	// KubeconfigUnavailableReason: the AgentClusterInstall has not
	// published the admin kubeconfig yet, or its Secret lacks the
	// kubeconfig key.
	KubeconfigUnavailableReason = "KubeconfigUnavailable"
	// KubeconfigSecretConflictReason: a Secret named <cluster>-kubeconfig
	// exists and is not this control plane's; it is left alone.
	KubeconfigSecretConflictReason = "KubeconfigSecretConflict"
)

// Reasons of MachinesCreated.
const (
	// MachinesCreatedReason: as many Machines as spec.replicas.
	MachinesCreatedReason = "MachinesCreated"
	// ScalingUpReason: a Machine is being added (one per reconcile).
	ScalingUpReason = "ScalingUp"
	// ScalingDownReason: a Machine is being removed.
	ScalingDownReason = "ScalingDown"
	// WaitingForInstallCompleteReason: the installation runs; the number of
	// control-plane Machines changes only before it starts or after it
	// completes.
	WaitingForInstallCompleteReason = "WaitingForInstallComplete"
	// InfrastructureTemplateCloningFailedReason: the infrastructure machine
	// could not be cloned from spec.machineTemplate.infrastructureRef.
	InfrastructureTemplateCloningFailedReason = "InfrastructureTemplateCloningFailed"
	// BootstrapTemplateCloningFailedReason: the Machine's
	// OpenshiftAssistedConfig could not be created.
	BootstrapTemplateCloningFailedReason = "BootstrapTemplateCloningFailed"
	// MachineGenerationFailedReason: the Machine could not be created.
	MachineGenerationFailedReason = "MachineGenerationFailed"
)

// Reasons of MachinesReady.
const (
	// MachinesReadyReason: every control-plane Machine is Ready.
	MachinesReadyReason = "Ready"
	// MachinesNotReadyReason: at least one Machine is not Ready.
	MachinesNotReadyReason = "NotReady"
	// MachinesReadyUnknownReason: at least one Machine's readiness is
	// unknown.
	MachinesReadyUnknownReason = "ReadyUnknown"
	// NoReplicasReason: there are no control-plane Machines.
	NoReplicasReason = "NoReplicas"
	// InternalErrorReason: the aggregation failed; see the controller's log.
	InternalErrorReason = "InternalError"
)

// Reasons of UpgradeCompleted.
const (
	// UpgradeCompletedReason: the workload cluster runs
	// spec.distributionVersion.
	UpgradeCompletedReason = "UpgradeCompleted"
	// NoUpgradeRequestedReason: the cluster is being installed at
	// spec.distributionVersion; there is nothing to upgrade.
	NoUpgradeRequestedReason = "NoUpgradeRequested"
	// UpgradePendingReason: spec.distributionVersion differs from the
	// installed version and the upgrade cannot start yet (installation not
	// complete, kubeconfig missing).
	UpgradePendingReason = "UpgradePending"
	// UpgradeInProgressReason: the workload cluster's ClusterVersion has the
	// update and is applying it.
	UpgradeInProgressReason = "UpgradeInProgress"
	// UpgradeFailedReason: the cluster-version operator reports the update
	// failing or not accepted; the message is its own.
	UpgradeFailedReason = "UpgradeFailed"
	// WorkloadClusterUnreachableReason: the workload cluster's
	// ClusterVersion cannot be read with <cluster>-kubeconfig.
	WorkloadClusterUnreachableReason = "WorkloadClusterUnreachable"
)

// Reasons of KubernetesVersionAvailable.
const (
	// KubernetesVersionAvailableReason: status.version is known.
	KubernetesVersionAvailableReason = "KubernetesVersionAvailable"
	// KubernetesVersionUnavailableReason: the OpenShift version is not in
	// the built-in table and spec.version is not set.
	KubernetesVersionUnavailableReason = "KubernetesVersionUnavailable"
)

// Reasons of Remediating.
const (
	// RemediatingReason: at least one Machine has HealthCheckSucceeded and
	// OwnerRemediated False; the message aggregates their OwnerRemediated.
	RemediatingReason = "Remediating"
	// NotRemediatingReason: no Machine waits for remediation.
	NotRemediatingReason = "NotRemediating"
)

// Reasons this control plane sets on a Machine's OwnerRemediated
// condition, CAPI's KubeadmControlPlane's values.
const (
	// RemediationDeferredReason: the Machine is replaced later, once the
	// cluster is installed and not upgrading and no other Machine is being
	// added, removed or provisioned.
	RemediationDeferredReason = "RemediationDeferred"
	// CannotBeRemediatedReason: removing the Machine would leave fewer
	// healthy control-plane Machines than etcd's quorum of spec.replicas.
	CannotBeRemediatedReason = "CannotBeRemediated"
	// MachineDeletingReason: the Machine was deleted to be replaced.
	MachineDeletingReason = "MachineDeleting"
)

// Reasons shared by several conditions.
const (
	// PendingReason: nothing is known yet (first visit).
	PendingReason = "Pending"
	// WaitingForClusterInfrastructureReason: the Cluster is missing, does
	// not refer to this control plane yet, or its infrastructure is not
	// provisioned.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	// DeletingReason: the control plane is being deleted.
	DeletingReason = "Deleting"
)

// Keys this provider reads or writes.
const (
	// ControlPlaneFinalizer keeps the control plane until its Machines, its
	// AgentClusterInstall, its ClusterDeployment and its ClusterImageSet are
	// gone (the reference's key).
	ControlPlaneFinalizer = "openshiftassistedcontrolplane.controlplane.cluster.x-k8s.io/deprovision"

	// InstallConfigOverrideAnnotation holds install-config overrides (JSON)
	// merged into the AgentClusterInstall's
	// agent-install.openshift.io/install-config-overrides (the reference's
	// key).
	InstallConfigOverrideAnnotation = "controlplane.cluster.x-k8s.io/install-config-override"

	// ReleaseImageRepositoryOverrideAnnotation replaces the repository of
	// the default release image: <repository>:<version>-<arch> (the
	// reference's key). spec.config.releaseImage takes precedence.
	ReleaseImageRepositoryOverrideAnnotation = "cluster.x-k8s.io/release-image-repository-override"

	// OwnerAnnotation is set on the cluster-scoped ClusterImageSet, which
	// cannot have a namespaced owner: <namespace>/<name> of its control
	// plane.
	OwnerAnnotation = "controlplane.cluster.x-k8s.io/openshiftassistedcontrolplane"

	// DistributionVersionAnnotation records on the ClusterImageSet the
	// OpenShift version its release image is, which is the version the
	// cluster is installed at.
	DistributionVersionAnnotation = "controlplane.cluster.x-k8s.io/distribution-version"
)
