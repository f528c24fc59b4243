// Package controlplane is the Cluster API control-plane provider for
// OpenShift clusters installed by the assisted installer (the
// controlplane-manager).
//
// An OpenshiftAssistedControlPlane (api/controlplane/v1alpha3) owned by a
// Cluster gets the cluster's hive ClusterDeployment, a ClusterImageSet with
// the release image of its OpenShift version (cluster-scoped, named without
// collisions across namespaces) and an AgentClusterInstall whose
// control-plane and worker counts follow CAPI (the control-plane replicas;
// the workers of every MachineDeployment and MachineSet of the cluster).
// It makes the control-plane Machines with their OpenshiftAssistedConfigs
// and infrastructure machines cloned from a template, one per reconcile,
// spread over failure domains; the bootstrap provider boots them. Once the
// AgentClusterInstall reports the control plane up, the admin kubeconfig
// becomes <cluster>-kubeconfig (and follows it when it changes), and the
// v1beta2 contract's status.initialization.controlPlaneInitialized and
// Available are set. A new spec.distributionVersion after the installation
// upgrades the cluster through its ClusterVersion.
//
// Layout: controllers/openshiftassistedcontrolplane is the reconciler
// (glue, one file per concern), controllers/workload the workload cluster
// clients; internal/ holds the pure logic (the hive objects and the
// installation state, the release and Kubernetes versions, the scaling
// decisions, the upgrade decisions); webhooks/ validates the API. setup.go
// wires it for cmd/controlplane-manager. docs/controlplane.md is the user
// documentation.
package controlplane
