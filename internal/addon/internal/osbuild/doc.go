// Package osbuild holds the pure parts of the layered-pool BuildController
// (internal/addon/controllers/buildcontroller): the names of everything it reads and
// writes, parsing and validation of its inputs, the build request (a
// Containerfile rendered from an embedded template plus the compressed
// rendered MachineConfig), deterministic object names, and the two builder
// backends behind one small interface: OpenShift Build objects created
// directly (no BuildConfig, no ImageStream) and a plain Kubernetes Job that
// runs buildah.
//
// Nothing here talks to the API server except Backend.Observe (the Job
// backend reads the Job's pods through the reader it is given) and
// Backend.Stop.
package osbuild
