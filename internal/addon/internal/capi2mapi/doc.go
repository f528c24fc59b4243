// Package capi2mapi converts Cluster API objects back into the Machine API
// (machine.openshift.io/v1beta1) objects they mirror while Cluster API is
// authoritative: a CAPI MachineSet and its infrastructure machine template
// into a MAPI MachineSet, a CAPI Machine and its infrastructure machine into
// a MAPI Machine, with the providerSpec the template or machine describes:
//
//   - an OpenStackMachineTemplate or OpenStackMachine (this project's
//     infrastructure.cluster.x-k8s.io/v1beta2) becomes an
//     OpenstackProviderSpec (machine.openshift.io/v1alpha1);
//   - a Metal3MachineTemplate or Metal3Machine becomes a
//     BareMetalMachineProviderSpec (baremetal.cluster.k8s.io/v1alpha1).
//
// It is the inverse of internal/addon/internal/mapi2capi and as pure: no
// client, no clock. It returns the MAPI object, warnings and a
// field.ErrorList whose paths name the CAPI field at fault, in the CAPI
// MachineSet or Machine (spec.template.spec.version) or, prefixed with its
// kind, in the infrastructure object
// (OpenStackMachineTemplate.spec.template.spec.ports[2].network). A field
// that the Machine API cannot express is an error, not a silent loss: the
// MAPI mirror must describe the same machines, or the migration back to
// the Machine API would change them.
//
// For every MAPI object in canonical form (the form this package writes),
// mapi2capi followed by capi2mapi gives it back unchanged, and for every
// CAPI object this package accepts, capi2mapi followed by mapi2capi gives
// it back unchanged: the round-trip tests (FuzzRoundTrip) check both.
package capi2mapi
