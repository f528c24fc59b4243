// Package bootstrap is the Cluster API bootstrap provider for OpenShift
// clusters installed by the assisted installer (the bootstrap-manager).
//
// An OpenshiftAssistedConfig (api/bootstrap/v1alpha2) owned by a Machine
// gets an InfraEnv bound to the cluster's hive ClusterDeployment. The
// machine boots into discovery either from the InfraEnv's live ISO (Metal3,
// bootMode LiveISO: the ISO URL goes on the Metal3Machine and its template,
// the bootstrap data Secret is empty) or from its own image with the
// discovery ignition as user data (bootMode DiscoveryIgnition: the Secret
// holds the ignition fetched from assisted-service over verified TLS). The
// host registers as an Agent, which the Agent controller binds to the
// Machine, gives a role, node labels and Ignition overrides, and approves,
// at most one per Machine; workers wait while the cluster's day-1
// installation runs and join as day-2 hosts.
//
// Layout: controllers/openshiftassistedconfig and controllers/agent are the
// two reconcilers (glue); controllers/index, host and install are what they
// share; internal/ holds the pure logic (InfraEnv derivation, boot modes and
// Metal3 images, Agent fields, the day-1/day-2 gate, the ignition fetch);
// webhooks/ validates the API. setup.go wires it for cmd/bootstrap-manager.
// docs/bootstrap.md is the user documentation.
package bootstrap
