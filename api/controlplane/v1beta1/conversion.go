package v1beta1

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
)

// Conversion between v1beta1 and v1alpha3 (the hub). The versions differ
// only in where the machine template keeps infrastructureRef and deletion:
// v1beta1's spec.machineTemplate.spec.{infrastructureRef,deletion} are
// v1alpha3's spec.machineTemplate.{infrastructureRef,deletion}. Every other
// field has the same type in both, so each version holds all of the
// other's data and neither direction needs an annotation. The functions
// are pure: they read their source and write only their destination.

var (
	_ conversion.Convertible = &OpenshiftAssistedControlPlane{}
	_ conversion.Convertible = &OpenshiftAssistedControlPlaneTemplate{}
)

// ConvertTo converts this control plane to the hub version (v1alpha3).
func (src *OpenshiftAssistedControlPlane) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*controlplanev1.OpenshiftAssistedControlPlane)
	*dst = controlplanev1.OpenshiftAssistedControlPlane{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	specUp(&src.Spec, &dst.Spec)
	src.Status.DeepCopyInto(&dst.Status)
	return nil
}

// ConvertFrom converts from the hub version (v1alpha3) to this version.
func (dst *OpenshiftAssistedControlPlane) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*controlplanev1.OpenshiftAssistedControlPlane)
	*dst = OpenshiftAssistedControlPlane{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	specDown(&src.Spec, &dst.Spec)
	src.Status.DeepCopyInto(&dst.Status)
	return nil
}

// ConvertTo converts this template to the hub version (v1alpha3).
func (src *OpenshiftAssistedControlPlaneTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*controlplanev1.OpenshiftAssistedControlPlaneTemplate)
	*dst = controlplanev1.OpenshiftAssistedControlPlaneTemplate{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	src.Spec.Template.ObjectMeta.DeepCopyInto(&dst.Spec.Template.ObjectMeta)
	specUp(&src.Spec.Template.Spec, &dst.Spec.Template.Spec)
	return nil
}

// ConvertFrom converts from the hub version (v1alpha3) to this version.
func (dst *OpenshiftAssistedControlPlaneTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*controlplanev1.OpenshiftAssistedControlPlaneTemplate)
	*dst = OpenshiftAssistedControlPlaneTemplate{TypeMeta: dst.TypeMeta}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	src.Spec.Template.ObjectMeta.DeepCopyInto(&dst.Spec.Template.ObjectMeta)
	specDown(&src.Spec.Template.Spec, &dst.Spec.Template.Spec)
	return nil
}

// specUp writes the v1alpha3 spec of src into dst, which is zero.
func specUp(src *OpenshiftAssistedControlPlaneSpec, dst *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
	src.Config.DeepCopyInto(&dst.Config)
	src.MachineTemplate.ObjectMeta.DeepCopyInto(&dst.MachineTemplate.ObjectMeta)
	dst.MachineTemplate.InfrastructureRef = src.MachineTemplate.Spec.InfrastructureRef
	src.MachineTemplate.Spec.Deletion.DeepCopyInto(&dst.MachineTemplate.Deletion)
	src.OpenshiftAssistedConfigSpec.DeepCopyInto(&dst.OpenshiftAssistedConfigSpec)
	if src.Replicas != nil {
		dst.Replicas = new(*src.Replicas)
	}
	dst.DistributionVersion = src.DistributionVersion
	dst.KubernetesVersion = src.KubernetesVersion
}

// specDown writes the v1beta1 spec of src into dst, which is zero.
func specDown(src *controlplanev1.OpenshiftAssistedControlPlaneSpec, dst *OpenshiftAssistedControlPlaneSpec) {
	src.Config.DeepCopyInto(&dst.Config)
	src.MachineTemplate.ObjectMeta.DeepCopyInto(&dst.MachineTemplate.ObjectMeta)
	dst.MachineTemplate.Spec.InfrastructureRef = src.MachineTemplate.InfrastructureRef
	src.MachineTemplate.Deletion.DeepCopyInto(&dst.MachineTemplate.Spec.Deletion)
	src.OpenshiftAssistedConfigSpec.DeepCopyInto(&dst.OpenshiftAssistedConfigSpec)
	if src.Replicas != nil {
		dst.Replicas = new(*src.Replicas)
	}
	dst.DistributionVersion = src.DistributionVersion
	dst.KubernetesVersion = src.KubernetesVersion
}
