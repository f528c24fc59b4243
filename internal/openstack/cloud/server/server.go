// Package server creates and deletes one OpenStack server with its ports,
// trunks and volumes. It is plain Go: it takes authenticated clients, a
// server name, a spec and what is already known, and returns what changed.
// It knows nothing of Kubernetes objects, so the OpenStackServer controller,
// the bastion, or a Machine API provider can all use it.
//
// Every step is idempotent and safe to repeat after a crash: resources get
// deterministic names (<server>, <server>-<port suffix>, <server>-<volume>)
// and are adopted by name before anything is created, so a lost status
// write never leaks or duplicates a resource. No step waits: a step that
// must wait for OpenStack returns a Progress that tells the caller when to
// look again.
package server

import (
	"fmt"
	"time"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
)

// Scope is what every step needs: clients for one identity and a logger.
type Scope = scope.Scope

// Request is one server to build or delete.
type Request struct {
	// Name of the server; also the prefix of its ports and volumes.
	Name string
	Spec *infrav1alpha1.OpenStackServerSpec
	// UserData is passed to Nova as is.
	UserData []byte
	// MachineAZ is the failure domain of the Machine, for volumes with
	// availabilityZone.from: Machine. Empty when there is none.
	MachineAZ string
}

// Known is what a previous pass recorded (the object's status). Any part
// may be missing: after a crash or a clusterctl move the steps rebuild it
// from names.
type Known struct {
	Resolved   *infrav1alpha1.ResolvedServerSpec
	Resources  *infrav1alpha1.ServerResources
	InstanceID string
}

// Progress says that a step is not finished and when to look again.
type Progress = scope.Progress

func waitFor(reason, format string, d time.Duration, args ...any) *Progress {
	return scope.Wait(reason, d, format, args...)
}

// Names of what is created for a server.

// PortName is the name of the i-th port of server.
func PortName(server string, i int, p infrav1.PortOpts) string {
	if p.NameSuffix != nil && *p.NameSuffix != "" {
		return server + "-" + *p.NameSuffix
	}
	return fmt.Sprintf("%s-%d", server, i)
}

// TrunkName is the name of the trunk whose parent is port.
func TrunkName(port string) string { return port }

// RootVolumeName is the name of the server's root volume.
func RootVolumeName(server string) string { return server + "-root" }

// BlockDeviceVolumeName is the name of an additional volume.
func BlockDeviceVolumeName(server, device string) string { return server + "-" + device }
