// Package assisted is a stand-in for assisted-service in its Kubernetes
// role, for tests, the e2e suites and the quickstart: assisted-service
// itself (with its database, image service and real hosts) cannot run here.
//
// It is NOT assisted-service. It plays, with the real wire types
// (internal/consumed) and the real state, condition and reason names, the
// part of it that this project's providers see through the API server:
//
//   - InfraEnvs: it adds assisted-service's finalizer, fills the status (ISO
//     download URL, debugInfo.eventsURL, bootArtifacts including the
//     discovery ignition URL, the ImageCreated condition) and, on deletion,
//     deletes the InfraEnv's Agents;
//   - an HTTPS server with its own self-signed CA (CABundle) that serves the
//     discovery ignition at assisted-service's REST path
//     /api/assisted-install/v2/infra-envs/<id>/downloads/files?file_name=discovery.ign
//     (checking the api_key), events and a token ISO;
//   - "booting" hosts: when an infrastructure machine (Metal3Machine or
//     OpenStackMachine) reports status.initialization.provisioned, it finds
//     what the host booted (the discovery ignition in the Machine's bootstrap
//     data, or the live ISO URL on the Metal3Machine) and registers an Agent
//     in that InfraEnv, labelled infraenvs.agent-install.openshift.io=<name>
//     plus the InfraEnv's agentLabels, with an inventory carrying the host's
//     MAC (the BareMetalHost's bootMACAddress, the OpenStack server's port
//     MACs) and hostname; the Agent's name derives from the host's identity,
//     as assisted-service's host ID derives from the system UUID;
//   - installs: it drives each AgentClusterInstall through insufficient,
//     ready, preparing-for-installation, installing, finalizing and
//     adding-hosts (or error on demand), with the Completed, Failed,
//     Stopped, RequirementsMet and Validated conditions and the progress
//     percentage; approved Agents bound to the cluster are installed (day 1)
//     or added (day 2, in adding-hosts); at the end it writes the admin
//     kubeconfig and password Secrets, sets spec.clusterMetadata on the
//     AgentClusterInstall and the ClusterDeployment, and marks the
//     ClusterDeployment installed.
//
// Knobs (HoldAt, Release, Fail, FailImage, FailIgnition, DuplicateRegistrations)
// let tests stop an install in a state, fail it, make an image or an
// ignition fetch fail, or make a host register twice at once.
//
// What it does not do: validate hosts, pull release images, serve real ISOs
// or run hosts; hosts exist only as infrastructure objects. docs/assisted-simulator.md
// describes it for users of the e2e suites.
package assisted
