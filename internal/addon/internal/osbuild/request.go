package osbuild

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// Keys of the inputs ConfigMap mc-<stem>. The build context gets both under
// machineconfig/.
const (
	ContainerfileKey = "Containerfile"
	// MachineConfigKey holds the gzipped rendered MachineConfig JSON (in
	// binaryData: no base64 layer, more room under the 1 MiB limit).
	MachineConfigKey = "machineconfig.json.gz"
)

// maxConfigMapPayload is what the inputs ConfigMap may carry: an object is
// limited to 1 MiB, and its metadata needs some of it.
const maxConfigMapPayload = 1<<20 - 16<<10

// templateVersion is part of every build ID: changing the Containerfile
// template (or what goes into the ID) rebuilds every pool.
const templateVersion = "2"

//go:embed assets/Containerfile.tmpl
var containerfileTemplate string

//go:embed assets/buildah-build.sh
var buildahScript string

var containerfile = template.Must(template.New("Containerfile").Option("missingkey=error").Parse(containerfileTemplate))

// Inputs are everything a build depends on. Two versions of one pool whose
// Inputs have the same ID get the same image; a different ID means a
// different image, hence a build with different objects.
type Inputs struct {
	Pool string
	// RenderedConfig is the pool's rendered MachineConfig. It is not part
	// of the ID: only its image fields are (RequiresRebuild).
	RenderedConfig string
	// Image are the rendered MachineConfig's fields baked into the image.
	Image   ImageFields
	Builder BuilderConfig
	Images  OSImages
	// Containerfile is the user's Containerfile content, appended to the
	// generated one (MachineOSConfig spec.containerFile, or the ConfigMap
	// on-cluster-build-custom-dockerfile key <pool>); "" for none.
	Containerfile string
	// PushTag is the tag to push, when not the rendered MachineConfig's
	// name: the MachineOSBuild's name in the MachineOSConfig flow, as
	// upstream. Not part of the ID.
	PushTag string
}

// ID is a hash of what goes into the image: 16 hex digits. It names the
// build's objects and is recorded on the pool once the image is published.
// A new rendered MachineConfig whose image fields are unchanged keeps the
// ID, so its pool keeps its image (the rebuild rule, RequiresRebuild).
func (in Inputs) ID() string {
	// JSON of a fixed struct is canonical enough: field order is fixed.
	b, _ := json.Marshal(struct {
		V, Pool, Base, Release, Repo, PullSecret, PushSecret string
		Image                                                ImageFields
		Containerfile                                        string
	}{templateVersion, in.Pool, in.Images.BaseImage, in.Images.ReleaseVersion,
		in.Builder.FinalRepository, in.Builder.BaseImagePullSecret, in.Builder.FinalImagePushSecret,
		in.Image, in.Containerfile})
	return hash(string(b))[:idLength]
}

// Tag is the tag pushed: PushTag if set, else the rendered MachineConfig's
// name (as upstream), or the build ID when that name is not a valid tag.
func (in Inputs) Tag() string {
	if in.PushTag != "" && tagOnlyRE.MatchString(in.PushTag) {
		return in.PushTag
	}
	if tagOnlyRE.MatchString(in.RenderedConfig) {
		return in.RenderedConfig
	}
	return in.ID()
}

// PushSpec is where the builder pushes: <repo>:<tag>.
func (in Inputs) PushSpec() string { return in.Builder.FinalRepository + ":" + in.Tag() }

// ImageWithDigest is what the pool gets: <repo>@<digest>.
func (in Inputs) ImageWithDigest(digest string) string {
	return in.Builder.FinalRepository + "@" + digest
}

// Request is one build, ready to hand to a backend.
type Request struct {
	Inputs
	ID        string
	Names     Names
	Namespace string
	// Owner is the pool, as the owner of every object (so that deleting the
	// pool deletes them through garbage collection).
	Owner metav1.OwnerReference
	// Containerfile is rendered from the embedded template.
	Containerfile string
	// Payload is the gzipped rendered MachineConfig JSON.
	Payload []byte
	// RegistryCAs are the private registries' CAs the builder trusts (nil
	// for none). Not part of the ID: they do not change the image.
	RegistryCAs *RegistryCAs
}

// NewRequest renders the Containerfile and compresses the rendered
// MachineConfig (its JSON as read from the API server). A config that does
// not fit in a ConfigMap is an *InputError.
func NewRequest(namespace string, in Inputs, pool *mcfgv1.MachineConfigPool, machineConfigJSON []byte) (*Request, error) {
	id := in.ID()
	var cf strings.Builder
	if err := containerfile.Execute(&cf, struct {
		Pool, RenderedConfig, BaseImage, ReleaseVersion, UserContainerfile string
	}{in.Pool, in.RenderedConfig, in.Images.BaseImage, in.Images.ReleaseVersion, in.Containerfile}); err != nil {
		return nil, fmt.Errorf("rendering the Containerfile: %w", err)
	}
	payload, err := Compress(machineConfigJSON)
	if err != nil {
		return nil, err
	}
	if n := len(payload) + cf.Len(); n > maxConfigMapPayload {
		return nil, inputError(ReasonRenderedConfigTooLarge,
			fmt.Sprintf("The rendered MachineConfig %s is %d bytes compressed; with the Containerfile that exceeds the %d bytes a ConfigMap can carry. Move large files out of the MachineConfigs of pool %s.",
				in.RenderedConfig, len(payload), maxConfigMapPayload, in.Pool))
	}
	return &Request{
		Inputs:        in,
		ID:            id,
		Names:         NamesFor(in.Pool, id),
		Namespace:     namespace,
		Owner:         PoolOwnerReference(pool),
		Containerfile: cf.String(),
		Payload:       payload,
	}, nil
}

// PoolOwnerReference makes the pool the owner of a namespaced object. It is
// not a controller reference and does not block the pool's deletion (that
// would need update rights on machineconfigpools/finalizers).
func PoolOwnerReference(pool *mcfgv1.MachineConfigPool) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: mcfgv1.GroupVersion.String(),
		Kind:       "MachineConfigPool",
		Name:       pool.Name,
		UID:        pool.UID,
	}
}

// Compress gzips b at the best compression: it runs once per build.
func Compress(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ObjectMeta is the metadata of one of the request's objects.
func (r *Request) ObjectMeta(name, role string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       r.Namespace,
		Labels:          r.Labels(role),
		Annotations:     map[string]string{PoolAnnotation: r.Pool, DesiredConfigAnnotation: r.RenderedConfig},
		OwnerReferences: []metav1.OwnerReference{r.Owner},
	}
}

// Labels are the labels of the request's objects with the given role.
func (r *Request) Labels(role string) map[string]string {
	return map[string]string{
		ManagedByLabel: ManagedByValue,
		PoolLabel:      PoolLabelValue(r.Pool),
		BuildIDLabel:   r.ID,
		RoleLabel:      role,
	}
}

// InputsConfigMap is mc-<stem>: the Containerfile and the compressed
// rendered MachineConfig. Both backends mount it as the build context's
// machineconfig/ directory.
func (r *Request) InputsConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: r.ObjectMeta(r.Names.Inputs, RoleInputs),
		Data:       map[string]string{ContainerfileKey: r.Containerfile},
		BinaryData: map[string][]byte{MachineConfigKey: r.Payload},
	}
}

// SelectorForPool selects every object made for a pool.
func SelectorForPool(pool string) map[string]string {
	return map[string]string{ManagedByLabel: ManagedByValue, PoolLabel: PoolLabelValue(pool)}
}
