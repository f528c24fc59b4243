// Package addon is the OpenShift add-on (the addon-manager): the MAPI to
// CAPI MachineSet sync and the MachineConfigPool BuildController.
//
// The MachineSet sync mirrors each machine.openshift.io MachineSet of an
// OpenShift cluster as a paused CAPI MachineSet with its infrastructure
// template (OpenStack or Metal3), through a pure conversion. The
// BuildController builds a layered OS image for each opted-in
// MachineConfigPool, with the OpenShift Build API or a Kubernetes Job
// running buildah, and publishes its digest on the pool.
//
// Layout: controllers/machinesetsync and controllers/buildcontroller are the
// reconcilers (glue), controllers/write the write helper they share (its
// doc says which object gets which kind of write); internal/ holds the pure
// logic (mapi2capi: the MAPI→CAPI conversion with warnings and field-path
// errors; osbuild: build names, inputs, manifests and status mapping of the
// two backends); there are no webhooks; config/ is the kustomize tree
// (build-rbac/: the builds' own service-account RBAC). setup.go wires it
// for cmd/addon-manager. docs/addon/ is the user documentation.
package addon
