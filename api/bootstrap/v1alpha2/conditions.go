package v1alpha2

// Condition types and reasons of OpenshiftAssistedConfig. Every owned
// condition is set on the controller's first visit (Unknown, reason Pending,
// when nothing is known yet) and always carries a reason from this list.
// docs/bootstrap.md documents them for users.

// Condition types.
const (
	// ReadyCondition summarizes DataSecretAvailable (CAPI core mirrors it
	// into the Machine's BootstrapConfigReady condition).
	ReadyCondition = "Ready"

	// DataSecretAvailableCondition is True once the bootstrap data Secret
	// exists and status.initialization.dataSecretCreated is set: the machine
	// may boot.
	DataSecretAvailableCondition = "DataSecretAvailable"

	// AgentApprovedCondition is True once the Agent that registered from
	// the machine is bound to it and approved for installation. It is not
	// part of Ready: the bootstrap data is ready before the host boots.
	AgentApprovedCondition = "AgentApproved"
)

// Reasons of DataSecretAvailable.
const (
	// DataSecretAvailableReason: the Secret exists; the machine may boot.
	DataSecretAvailableReason = "DataSecretAvailable"
	// WaitingForMachineReason: no Machine owns the config yet.
	WaitingForMachineReason = "WaitingForMachine"
	// WaitingForClusterInfrastructureReason: the Cluster's infrastructure is
	// not provisioned yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	// WaitingForInfrastructureMachineReason: the Machine's infrastructure
	// machine (Metal3Machine, OpenStackMachine) does not exist yet.
	WaitingForInfrastructureMachineReason = "WaitingForInfrastructureMachine"
	// WaitingForAssistedInstallerReason: the cluster's ClusterDeployment or
	// AgentClusterInstall (made by the control-plane provider) is missing.
	WaitingForAssistedInstallerReason = "WaitingForAssistedInstaller"
	// WaitingForInstallCompleteReason: a worker waits for the cluster's
	// day-1 installation to complete, to join as a day-2 host.
	WaitingForInstallCompleteReason = "WaitingForInstallComplete"
	// WaitingForInfraEnvToBeReadyReason: assisted-service has not generated
	// the InfraEnv's image (or ignition URL) yet.
	WaitingForInfraEnvToBeReadyReason = "WaitingForInfraEnvToBeReady"
	// InfraEnvFailedReason: assisted-service failed to generate the
	// InfraEnv's image; the message is the InfraEnv's.
	InfraEnvFailedReason = "InfraEnvFailed"
	// InfraEnvConflictReason: the InfraEnv's name is taken by one this
	// provider did not create, or machines of one template need different
	// InfraEnvs.
	InfraEnvConflictReason = "InfraEnvConflict"
	// BootModeUnsupportedReason: the boot mode cannot work with the
	// infrastructure machine's kind (LiveISO needs a Metal3Machine).
	BootModeUnsupportedReason = "BootModeUnsupported"
	// PropagatingLiveISOURLFailedReason: the ISO URL could not be written on
	// the Metal3Machine or its template.
	PropagatingLiveISOURLFailedReason = "PropagatingLiveISOURLFailed"
	// IgnitionFetchFailedReason: the discovery ignition could not be
	// fetched from assisted-service (network, TLS or HTTP error).
	IgnitionFetchFailedReason = "IgnitionFetchFailed"
	// CreatingSecretFailedReason: the bootstrap data Secret could not be
	// written.
	CreatingSecretFailedReason = "CreatingSecretFailed"
)

// Reasons of AgentApproved (WaitingForInstallComplete is shared).
const (
	// AgentApprovedReason: the machine's Agent is approved.
	AgentApprovedReason = "AgentApproved"
	// WaitingForBootstrapDataReason: the machine cannot boot before its
	// bootstrap data exists.
	WaitingForBootstrapDataReason = "WaitingForBootstrapData"
	// WaitingForAgentReason: no Agent has registered from the machine yet.
	WaitingForAgentReason = "WaitingForAgent"
	// NodeJoinedReason: the config has no Agent on this management cluster
	// but its Machine has a Node: the host was installed, under this or
	// another management cluster (clusterctl move does not carry Agents,
	// which belong to the assisted-service that installed the host).
	NodeJoinedReason = "NodeJoined"
)

// Reasons shared by several conditions.
const (
	// PendingReason: nothing is known yet (first visit).
	PendingReason = "Pending"
	// DeletingReason: the config is being deleted.
	DeletingReason = "Deleting"
)

// Keys this provider writes.
const (
	// ConfigFinalizer keeps a config until its InfraEnv is removed and its
	// Agents are unbound (the reference's key). It never waits for the
	// Machine or the Cluster.
	ConfigFinalizer = "openshiftassistedconfig.bootstrap.cluster.x-k8s.io/deprovision"

	// ConfigLabel is set on an InfraEnv made for one config, and on each
	// Agent bound to a config, to the config's name (the reference's key).
	ConfigLabel = "bootstrap.cluster.x-k8s.io/openshiftAssistedConfig"

	// TemplateInfraEnvLabel is set on an InfraEnv shared by the machines of
	// one infrastructure template (LiveISO), to the template's name.
	TemplateInfraEnvLabel = "bootstrap.cluster.x-k8s.io/infrastructure-template"
)
