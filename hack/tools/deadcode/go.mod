// deadcode (golang.org/x/tools/cmd/deadcode) in its own module, so that the
// golang.org/x/tools version it is built from does not move the one
// controller-gen and golangci-lint are built with.
module github.com/ocp-capi/ocp-capi/hack/tools/deadcode

go 1.26.0

require golang.org/x/tools v0.52.0

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/telemetry v0.0.0-20261009151841-97e8ea77aa2a // indirect
)
