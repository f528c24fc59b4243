// Package e2e holds the end-to-end suites, written on the Cluster API test
// framework (sigs.k8s.io/cluster-api/test/framework). They run against a
// real local management cluster (`mgmt up --size node`), with the providers
// installed by `clusterctl init` from the local release (out/), the real local
// OpenStack (hack/openstack) and the assisted-service simulator (test/assisted)
// running in the test process.
//
// The suites carry the build tag e2e, so `go test ./...` does not run them;
// `make test-e2e` brings up what they need and runs them. docs/e2e.md
// describes them, what they check and what they do not.
package e2e
