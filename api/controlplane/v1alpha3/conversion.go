package v1alpha3

// v1alpha3 is the hub of conversion: the storage version, and the version
// the controllers use. api/controlplane/v1beta1 converts to and from it.

// Hub marks OpenshiftAssistedControlPlane as the conversion hub.
func (*OpenshiftAssistedControlPlane) Hub() {}

// Hub marks OpenshiftAssistedControlPlaneTemplate as the conversion hub.
func (*OpenshiftAssistedControlPlaneTemplate) Hub() {}
