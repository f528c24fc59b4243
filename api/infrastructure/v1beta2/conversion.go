package v1beta2

// v1beta2 is the hub of conversion: the storage version, and the version the
// controllers use. api/infrastructure/v1beta1 converts to and from it.

// Hub marks OpenStackCluster as the conversion hub.
func (*OpenStackCluster) Hub() {}

// Hub marks OpenStackClusterTemplate as the conversion hub.
func (*OpenStackClusterTemplate) Hub() {}

// Hub marks OpenStackMachine as the conversion hub.
func (*OpenStackMachine) Hub() {}

// Hub marks OpenStackMachineTemplate as the conversion hub.
func (*OpenStackMachineTemplate) Hub() {}
