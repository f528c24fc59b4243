// Package mapi2capi converts a Machine API (machine.openshift.io/v1beta1)
// MachineSet into a Cluster API v1beta2 MachineSet and the infrastructure
// machine template its providerSpec describes, and a MAPI Machine into a
// CAPI Machine and its infrastructure machine (Machine). The inverse is
// internal/addon/internal/capi2mapi. The providerSpec kinds:
//
//   - an OpenstackProviderSpec (machine.openshift.io/v1alpha1) becomes an
//     OpenStackMachineTemplate (infrastructure.cluster.x-k8s.io/v1beta2, this
//     project's API);
//   - a BareMetalMachineProviderSpec (baremetal.cluster.k8s.io/v1alpha1)
//     becomes a Metal3MachineTemplate (infrastructure.cluster.x-k8s.io/v1beta1).
//
// It is pure: no client, no clock, no randomness. The inputs are the MAPI
// object and an Infra (the cluster context); the outputs are the CAPI
// objects, warnings and a field.ErrorList. Every error and
// warning names the MAPI field at fault by its path in the MachineSet, for
// example spec.template.spec.providerSpec.value.ports[1].profile. A field is
// either mapped, or dropped with a warning (it has no CAPI equivalent and
// MAPO ignores it too, or the approximation is harmless), or rejected with an
// error (converting it would change what the machines look like). Nothing is
// dropped silently; docs/addon/machineset-sync.md has the field table.
//
// The providerSpec is read as MAPO reads it (field names matched ignoring
// case, with a warning), but strictly otherwise: an unknown field, a field
// given twice or a value of the wrong type is an error at its full path.
//
// The conversion is deterministic: the same input gives byte-identical
// output, in particular the same template name. The template is named
// <MachineSet name>-<hash>, where hash is the FNV-1a 32-bit hash of the JSON
// encoding of the template's spec, as 8 lower-case hex digits (see
// TemplateName). Identical specs share a name, so an unchanged MachineSet
// reuses its template and reverting a change reuses the old one.
//
// The objects carry no sync bookkeeping (pause annotation, finalizers,
// ownerReferences, the created-by marks): that is the sync controller's.
package mapi2capi
