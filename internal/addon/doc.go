// Package addon is the OpenShift add-on (the addon-manager): moving
// OpenShift machines between the Machine API (MAPI) and Cluster API (CAPI),
// and the MachineConfigPool BuildController.
//
// The sync controllers mirror the non-authoritative side of each MAPI
// MachineSet and Machine (a paused CAPI MachineSet or Machine with its
// OpenStack or Metal3 template, or the MAPI object mirroring a CAPI one),
// through pure conversions in both directions; the migration controllers
// switch a resource's authority between the two APIs; the secret sync copies
// the user data and cloud credentials the CAPI side needs. The
// BuildController builds a layered OS image for each opted-in
// MachineConfigPool, with the OpenShift Build API or a Kubernetes Job
// running buildah, and publishes its digest on the pool.
//
// Layout: controllers/ holds the reconcilers (glue): machinesetsync,
// machinesync, migration, secretsync, buildcontroller, and write, the write
// helper they share (its doc says which object gets which kind of write);
// controllers/ itself holds the add-on's one envtest suite. internal/ holds
// the pure logic: mapi2capi and capi2mapi (the two conversions, with
// warnings and field-path errors), authority (the switch's state machine and
// conditions), osbuild (build names, inputs, manifests and status mapping of
// the two backends). There are no webhooks; config/ is the kustomize tree
// (build-rbac/: the builds' own service-account RBAC). setup.go wires it for
// cmd/addon-manager. docs/addon/ is the user documentation.
package addon
