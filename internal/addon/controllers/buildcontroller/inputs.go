package buildcontroller

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// inputs reads what the build ID depends on, all from caches: the pool's
// rendered config name and the two ConfigMaps. An *osbuild.InputError says
// what the user must fix.
func (r *Reconciler) inputs(ctx context.Context, pool *mcfgv1.MachineConfigPool) (osbuild.Inputs, error) {
	rendered, err := osbuild.RenderedConfig(pool)
	if err != nil {
		return osbuild.Inputs{}, err
	}
	cm, err := r.configMap(ctx, osbuild.BuilderConfigMapName, osbuild.BuilderConfigMapAlias)
	if err != nil {
		return osbuild.Inputs{}, err
	}
	if cm == nil {
		return osbuild.Inputs{}, &osbuild.InputError{Reason: osbuild.ReasonConfigMapNotFound, Message: fmt.Sprintf(
			"ConfigMap %s/%s not found (nor upstream's name %s): create it with keys %s, %s and %s.",
			r.Options.Namespace, osbuild.BuilderConfigMapName, osbuild.BuilderConfigMapAlias,
			osbuild.BaseImagePullSecretNameKey, osbuild.FinalImagePushSecretNameKey, osbuild.FinalImagePullspecKey)}
	}
	builder, err := osbuild.ParseBuilderConfig(cm)
	if err != nil {
		return osbuild.Inputs{}, err
	}
	cm, err = r.configMap(ctx, osbuild.OSImageURLConfigMapName)
	if err != nil {
		return osbuild.Inputs{}, err
	}
	if cm == nil {
		return osbuild.Inputs{}, &osbuild.InputError{Reason: osbuild.ReasonConfigMapNotFound, Message: fmt.Sprintf(
			"ConfigMap %s/%s not found: the machine-config operator writes it; it must have the key %s (the base OS image).",
			r.Options.Namespace, osbuild.OSImageURLConfigMapName, osbuild.BaseOSContainerImageKey)}
	}
	images, err := osbuild.ParseOSImageURL(cm)
	if err != nil {
		return osbuild.Inputs{}, err
	}
	return osbuild.Inputs{Pool: pool.Name, RenderedConfig: rendered, Builder: builder, Images: images}, nil
}

// configMap returns the first of names that exists in the build namespace,
// or nil.
func (r *Reconciler) configMap(ctx context.Context, names ...string) (*corev1.ConfigMap, error) {
	for _, name := range names {
		cm := &corev1.ConfigMap{}
		err := r.Cache.Get(ctx, client.ObjectKey{Namespace: r.Options.Namespace, Name: name}, cm)
		if err == nil {
			return cm, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", r.Options.Namespace, name, err)
		}
	}
	return nil, nil
}

// checkSecrets reads the pull and push secrets (uncached: the controller may
// get Secrets, not list or watch them) and validates them.
func (r *Reconciler) checkSecrets(ctx context.Context, in osbuild.Inputs) error {
	for _, s := range []struct{ role, key, name string }{
		{"base image pull", osbuild.BaseImagePullSecretNameKey, in.Builder.BaseImagePullSecret},
		{"final image push", osbuild.FinalImagePushSecretNameKey, in.Builder.FinalImagePushSecret},
	} {
		secret := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Options.Namespace, Name: s.name}, secret); err != nil {
			if apierrors.IsNotFound(err) {
				return &osbuild.InputError{Reason: osbuild.ReasonSecretNotFound, Message: fmt.Sprintf(
					"The %s secret %s/%s, named by %s in ConfigMap %s, does not exist: create it (type %s), or name another in the ConfigMap.",
					s.role, r.Options.Namespace, s.name, s.key, in.Builder.ConfigMapName, corev1.SecretTypeDockerConfigJson)}
			}
			return fmt.Errorf("reading Secret %s/%s: %w", r.Options.Namespace, s.name, err)
		}
		if err := osbuild.ValidatePullSecret(s.role, s.key, secret); err != nil {
			return err
		}
	}
	return nil
}

// renderedConfigJSON reads the rendered MachineConfig uncached and whole
// (unstructured, so no field is lost to our subset of the type) and returns
// its JSON without managedFields.
func (r *Reconciler) renderedConfigJSON(ctx context.Context, name, pool string) ([]byte, error) {
	mc := &unstructured.Unstructured{}
	mc.SetGroupVersionKind(mcfgv1.GroupVersion.WithKind("MachineConfig"))
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &osbuild.InputError{Reason: osbuild.ReasonMachineConfigNotFound, Message: fmt.Sprintf(
				"The rendered MachineConfig %s of pool %s does not exist yet; the build starts when the machine-config controller creates it.", name, pool)}
		}
		return nil, fmt.Errorf("reading MachineConfig %s: %w", name, err)
	}
	mc.SetManagedFields(nil)
	b, err := json.Marshal(mc.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding MachineConfig %s: %w", name, err)
	}
	return b, nil
}
