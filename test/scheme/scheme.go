// Package scheme registers every API type this project knows: Kubernetes
// built-ins, CAPI core, the APIs we serve and the APIs we consume.
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	controlplanev1beta1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1beta1"
	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1beta1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/consumed"
)

// AddAll adds every known API group to s.
func AddAll(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		clusterv1.AddToScheme,
		ipamv1.AddToScheme,
		consumed.AddToScheme,
		infrav1.AddToScheme,
		infrav1beta1.AddToScheme,
		infrav1alpha1.AddToScheme,
		bootstrapv1.AddToScheme,
		controlplanev1.AddToScheme,
		controlplanev1beta1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// New returns a scheme with every known API group.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := AddAll(s); err != nil {
		panic(err) // only a programming error (a conflicting registration) gets here
	}
	return s
}
