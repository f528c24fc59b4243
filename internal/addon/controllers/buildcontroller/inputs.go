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
// rendered config name, the builder configuration (the MachineOSConfig
// mosc when it drives the pool, else the builder ConfigMap) and the base
// image's ConfigMap. An *osbuild.InputError says what the user must fix.
func (r *Reconciler) inputs(ctx context.Context, pool *mcfgv1.MachineConfigPool, mosc *mcfgv1.MachineOSConfig) (osbuild.Inputs, error) {
	rendered, err := osbuild.RenderedConfig(pool)
	if err != nil {
		return osbuild.Inputs{}, err
	}
	var builder osbuild.BuilderConfig
	if mosc != nil {
		builder, err = osbuild.BuilderConfigOf(mosc)
	} else {
		builder, err = r.builderConfigMap(ctx)
	}
	if err != nil {
		return osbuild.Inputs{}, err
	}
	cm, err := r.configMap(ctx, osbuild.OSImageURLConfigMapName)
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
	fields, err := r.imageFields(ctx, rendered, pool.Name)
	if err != nil {
		return osbuild.Inputs{}, err
	}
	var custom string
	if mosc != nil {
		custom = osbuild.ContainerfileOf(mosc)
	} else if custom, err = r.customContainerfile(ctx, pool.Name); err != nil {
		return osbuild.Inputs{}, err
	}
	in := osbuild.Inputs{Pool: pool.Name, RenderedConfig: rendered, Image: fields, Builder: builder, Images: images, Containerfile: custom}
	if mosc != nil {
		// Upstream tags the image with its MachineOSBuild's name.
		in.PushTag = osbuild.MachineOSBuildName(mosc.Name, rendered, in.ID())
	}
	return in, nil
}

// builderConfigMap reads the builder ConfigMap of the label flow.
func (r *Reconciler) builderConfigMap(ctx context.Context) (osbuild.BuilderConfig, error) {
	cm, err := r.configMap(ctx, osbuild.BuilderConfigMapName, osbuild.BuilderConfigMapAlias)
	if err != nil {
		return osbuild.BuilderConfig{}, err
	}
	if cm == nil {
		return osbuild.BuilderConfig{}, &osbuild.InputError{Reason: osbuild.ReasonConfigMapNotFound, Message: fmt.Sprintf(
			"ConfigMap %s/%s not found (nor upstream's name %s): create it with keys %s, %s and %s.",
			r.Options.Namespace, osbuild.BuilderConfigMapName, osbuild.BuilderConfigMapAlias,
			osbuild.BaseImagePullSecretNameKey, osbuild.FinalImagePushSecretNameKey, osbuild.FinalImagePullspecKey)}
	}
	return osbuild.ParseBuilderConfig(cm)
}

// imageFields reads the rendered MachineConfig's image fields from the
// stripped cache: they decide whether the config needs a new image.
func (r *Reconciler) imageFields(ctx context.Context, rendered, pool string) (osbuild.ImageFields, error) {
	mc := &mcfgv1.MachineConfig{}
	if err := r.MachineConfigs.Get(ctx, client.ObjectKey{Name: rendered}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return osbuild.ImageFields{}, &osbuild.InputError{Reason: osbuild.ReasonMachineConfigNotFound, Message: fmt.Sprintf(
				"The rendered MachineConfig %s of pool %s does not exist yet; the build starts when the machine-config controller creates it.", rendered, pool)}
		}
		return osbuild.ImageFields{}, fmt.Errorf("reading MachineConfig %s: %w", rendered, err)
	}
	return osbuild.ImageFieldsOf(&mc.Spec), nil
}

// customContainerfile is the user's Containerfile for pool from upstream's
// optional ConfigMap, or "".
func (r *Reconciler) customContainerfile(ctx context.Context, pool string) (string, error) {
	cm, err := r.configMap(ctx, osbuild.CustomContainerfileConfigMapName)
	if err != nil || cm == nil {
		return "", err
	}
	content := cm.Data[pool]
	if len(content) > osbuild.MaxContainerfileLength {
		return "", &osbuild.InputError{Reason: osbuild.ReasonInvalidConfigMap, Message: fmt.Sprintf(
			"ConfigMap %s/%s: the Containerfile of pool %s is %d bytes; at most %d are allowed.",
			r.Options.Namespace, osbuild.CustomContainerfileConfigMapName, pool, len(content), osbuild.MaxContainerfileLength)}
	}
	return content, nil
}

// registryCAs reads the optional registry CA ConfigMap.
func (r *Reconciler) registryCAs(ctx context.Context) (*osbuild.RegistryCAs, error) {
	cm, err := r.configMap(ctx, osbuild.RegistryCAConfigMapName)
	if err != nil {
		return nil, err
	}
	return osbuild.ParseRegistryCAs(cm), nil
}

// registryAuth is how the controller reaches the registry of image: the
// push secret's credentials for it (read uncached, by name) and its CA.
func (r *Reconciler) registryAuth(ctx context.Context, pushSecret, registry string) (RegistryAuth, error) {
	var out RegistryAuth
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Options.Namespace, Name: pushSecret}, secret); err != nil {
		return out, fmt.Errorf("reading the push secret %s/%s: %w", r.Options.Namespace, pushSecret, err)
	}
	if c, ok := osbuild.CredentialsFor(secret.Data[corev1.DockerConfigJsonKey], registry); ok {
		out.Credentials = &c
	}
	cas, err := r.registryCAs(ctx)
	if err != nil {
		return out, err
	}
	if cas != nil {
		out.CAPEM = cas.PEM[registry]
	}
	return out, nil
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
	for _, s := range []struct{ role, key, field, name string }{
		{"base image pull", osbuild.BaseImagePullSecretNameKey, "spec.baseImagePullSecret (unset: " + osbuild.GlobalPullSecretCopy + ")", in.Builder.BaseImagePullSecret},
		{"final image push", osbuild.FinalImagePushSecretNameKey, "spec.renderedImagePushSecret", in.Builder.FinalImagePushSecret},
	} {
		secret := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Options.Namespace, Name: s.name}, secret); err != nil {
			if apierrors.IsNotFound(err) {
				where := fmt.Sprintf("by %s in ConfigMap %s", s.key, in.Builder.ConfigMapName)
				if in.Builder.MachineOSConfig != "" {
					where = fmt.Sprintf("by %s of MachineOSConfig %s", s.field, in.Builder.MachineOSConfig)
				}
				return &osbuild.InputError{Reason: osbuild.ReasonSecretNotFound, Message: fmt.Sprintf(
					"The %s secret %s/%s, named %s, does not exist: create it (type %s), or name another.",
					s.role, r.Options.Namespace, s.name, where, corev1.SecretTypeDockerConfigJson)}
			}
			return fmt.Errorf("reading Secret %s/%s: %w", r.Options.Namespace, s.name, err)
		}
		key := s.key
		if in.Builder.MachineOSConfig != "" {
			key = "MachineOSConfig " + in.Builder.MachineOSConfig + " " + s.field
		}
		if err := osbuild.ValidatePullSecret(s.role, key, secret); err != nil {
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
