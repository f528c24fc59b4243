// Package webhooks holds the validating admission webhooks of the
// control-plane provider: OpenshiftAssistedControlPlane and
// OpenshiftAssistedControlPlaneTemplate.
//
// The CRD schema does the checks that need neither code nor the status,
// and holds through the scale subresource (which bypasses these webhooks):
// types, enums, patterns, sizes, replicas of 1, 3, 4 or 5 (CEL), and, as
// CEL rules of the control plane (not of its template): an infrastructureRef
// with apiGroup, kind and name, an immutable base domain and cluster name,
// and replicas that never move between 1 and more. These webhooks add, with
// errors that name the field:
//
//   - the OpenShift version is one (4.14 or later), spec.version has the
//     Kubernetes minor of that OpenShift minor (when the built-in table
//     knows it), 4 or 5 replicas come with OpenShift 4.18 or later,
//     infrastructureRef names a template kind,
//     the VIPs are IP addresses given in pairs, the base domain and cluster
//     name are DNS names, the capabilities baseline, the release image and
//     the install-config override annotation are valid, and the bootstrap
//     configuration passes the checks the bootstrap provider applies too
//     (internal/validation/assisted);
//   - on update, once the installation has started (the status says so):
//     the install-time configuration (spec.config) is fixed, since the
//     controller no longer applies it; and once a version is installed,
//     distributionVersion only goes forward. These depend on the status,
//     which CEL on spec cannot see.
//
// The configurations are generated from the markers into
// controlplane/config/webhook/manifests.yaml.
package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	controlplanev1beta1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1beta1"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/clusterinstall"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/release"
	"github.com/ocp-capi/ocp-capi/internal/jsonfields"
	"github.com/ocp-capi/ocp-capi/internal/validation/assisted"
	"github.com/ocp-capi/ocp-capi/internal/webhookutil"
)

// SetupWebhooks registers the validating webhooks with the manager, and
// with them the conversion webhook (/convert) between v1alpha3, the hub,
// and v1beta1 when the manager's scheme has v1beta1.
func SetupWebhooks(mgr ctrl.Manager) error {
	return webhookutil.Register(mgr,
		webhookutil.Validator(&controlplanev1.OpenshiftAssistedControlPlane{}, &controlPlaneWebhook{}),
		webhookutil.Validator(&controlplanev1.OpenshiftAssistedControlPlaneTemplate{}, &templateWebhook{}))
}

// minMinorFourOrFiveReplicas is the first OpenShift 4 minor with control
// planes of 4 or 5 nodes (before it: 1 or 3).
const minMinorFourOrFiveReplicas = 18

var (
	controlPlaneGK = controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane").GroupKind()
	templateGK     = controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlaneTemplate").GroupKind()
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-controlplane-cluster-x-k8s-io-v1alpha3-openshiftassistedcontrolplane,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes,versions=v1alpha3,name=validation.openshiftassistedcontrolplane.controlplane.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

type controlPlaneWebhook struct {
	webhookutil.AllowDelete[*controlplanev1.OpenshiftAssistedControlPlane]
}

var _ admission.Validator[*controlplanev1.OpenshiftAssistedControlPlane] = &controlPlaneWebhook{}

func (*controlPlaneWebhook) ValidateCreate(ctx context.Context, c *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	errs := ValidateSpec(field.NewPath("spec"), &c.Spec)
	errs = append(errs, validateAnnotations(c.Annotations)...)
	return nil, webhookutil.Invalid(controlPlaneGK, c, atRequestVersion(ctx, errs))
}

// ValidateUpdate checks the spec only when it changed, and the annotation
// only when it changed: writes of metadata (finalizers, owner references,
// labels by CAPI core) must not fail on an object admitted before this
// webhook existed.
func (*controlPlaneWebhook) ValidateUpdate(ctx context.Context, oldC, newC *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	var errs field.ErrorList
	if !reflect.DeepEqual(oldC.Spec, newC.Spec) {
		errs = append(errs, ValidateSpec(field.NewPath("spec"), &newC.Spec)...)
		errs = append(errs, ValidateUpdate(oldC, newC)...)
	}
	if oldC.Annotations[controlplanev1.InstallConfigOverrideAnnotation] != newC.Annotations[controlplanev1.InstallConfigOverrideAnnotation] {
		errs = append(errs, validateAnnotations(newC.Annotations)...)
	}
	return nil, webhookutil.Invalid(controlPlaneGK, newC, atRequestVersion(ctx, errs))
}

// +kubebuilder:webhook:verbs=create;update,path=/validate-controlplane-cluster-x-k8s-io-v1alpha3-openshiftassistedcontrolplanetemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanetemplates,versions=v1alpha3,name=validation.openshiftassistedcontrolplanetemplate.controlplane.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// templateWebhook validates templates. They stay mutable: a change applies
// to the control planes made from then on.
type templateWebhook struct {
	webhookutil.AllowDelete[*controlplanev1.OpenshiftAssistedControlPlaneTemplate]
}

var _ admission.Validator[*controlplanev1.OpenshiftAssistedControlPlaneTemplate] = &templateWebhook{}

func (*templateWebhook) ValidateCreate(ctx context.Context, t *controlplanev1.OpenshiftAssistedControlPlaneTemplate) (admission.Warnings, error) {
	p := field.NewPath("spec", "template")
	errs := ValidateSpec(p.Child("spec"), &t.Spec.Template.Spec)
	errs = append(errs, validateAnnotationsAt(p.Child("metadata", "annotations"), t.Spec.Template.ObjectMeta.Annotations)...)
	return nil, webhookutil.Invalid(templateGK, t, atRequestVersion(ctx, errs))
}

func (w *templateWebhook) ValidateUpdate(ctx context.Context, _, newT *controlplanev1.OpenshiftAssistedControlPlaneTemplate) (admission.Warnings, error) {
	return w.ValidateCreate(ctx, newT)
}

// atRequestVersion names the fields as the request's version has them. The
// webhooks are registered for v1alpha3 only (matchPolicy Equivalent): the
// API server converts a v1beta1 request to v1alpha3 for them, and v1beta1
// keeps the machine template's infrastructureRef and deletion under
// machineTemplate.spec.
func atRequestVersion(ctx context.Context, errs field.ErrorList) field.ErrorList {
	req, err := admission.RequestFromContext(ctx)
	if err != nil || req.RequestKind == nil || req.RequestKind.Version != controlplanev1beta1.GroupVersion.Version {
		return errs
	}
	for _, e := range errs {
		for _, f := range []string{"infrastructureRef", "deletion"} {
			e.Field = strings.Replace(e.Field, ".machineTemplate."+f, ".machineTemplate.spec."+f, 1)
		}
	}
	return errs
}

// ValidateSpec checks what the schema cannot.
func ValidateSpec(p *field.Path, s *controlplanev1.OpenshiftAssistedControlPlaneSpec) field.ErrorList {
	var errs field.ErrorList
	dv := p.Child("distributionVersion")
	if s.DistributionVersion == "" {
		errs = append(errs, field.Required(dv, "the OpenShift version to install, e.g. 4.19.0"))
	} else if v, err := semver.Parse(strings.TrimPrefix(s.DistributionVersion, "v")); err != nil {
		// Strict: the version is a release image tag (4.19.0-x86_64), so
		// 4.19 or " 4.19.0" would name no release.
		errs = append(errs, field.Invalid(dv, s.DistributionVersion,
			"want an OpenShift version major.minor.patch[-prerelease], e.g. 4.19.0 or 4.19.0-okd-scos.ec.6: "+err.Error()))
	} else if v.Major < release.MinVersion.Major || (v.Major == release.MinVersion.Major && v.Minor < release.MinVersion.Minor) {
		errs = append(errs, field.Invalid(dv, s.DistributionVersion, fmt.Sprintf("OpenShift %s or later is required", release.MinVersion)))
	}
	// The schema allows 1, 3, 4 or 5; 4 and 5 came with OpenShift 4.18
	// (before, 1 or 3). Not checked through the scale subresource.
	if r := s.Replicas; r != nil && (*r == 4 || *r == 5) {
		if v, err := release.Parse(s.DistributionVersion); err == nil && v.Major == 4 && v.Minor < minMinorFourOrFiveReplicas {
			errs = append(errs, field.Invalid(p.Child("replicas"), *r,
				fmt.Sprintf("4 or 5 control-plane nodes need OpenShift 4.%d or later; %s supports 1 or 3", minMinorFourOrFiveReplicas, s.DistributionVersion)))
		}
	}
	// spec.version (a ClusterClass topology's version, or the user's
	// override) must be a version of the Kubernetes minor the table gives
	// for distributionVersion: a different minor is another release.
	if s.KubernetesVersion != "" {
		if table, fromTable, ok, _ := release.KubernetesVersion(s.DistributionVersion, ""); ok && fromTable {
			want, errW := semver.ParseTolerant(table)
			got, errG := semver.ParseTolerant(s.KubernetesVersion)
			if errW == nil && errG == nil && (got.Major != want.Major || got.Minor != want.Minor) {
				errs = append(errs, field.Invalid(p.Child("version"), s.KubernetesVersion,
					fmt.Sprintf("OpenShift %s ships Kubernetes %d.%d: set a v%d.%d.x version, or change distributionVersion with it "+
						"(with a ClusterClass: Cluster spec.topology.version and the variable that sets distributionVersion together)",
						s.DistributionVersion, want.Major, want.Minor, want.Major, want.Minor)))
			}
		}
	}
	ref := s.MachineTemplate.InfrastructureRef
	if ref.Kind != "" && !strings.HasSuffix(ref.Kind, "Template") {
		errs = append(errs, field.Invalid(p.Child("machineTemplate", "infrastructureRef", "kind"), ref.Kind,
			"name an infrastructure machine template kind (such as Metal3MachineTemplate), which each Machine's infrastructure machine is cloned from"))
	}

	cp := p.Child("config")
	c := s.Config
	if c.BaseDomain == "" {
		errs = append(errs, field.Required(cp.Child("baseDomain"), "the cluster's base domain, e.g. example.com"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(c.BaseDomain) {
			errs = append(errs, field.Invalid(cp.Child("baseDomain"), c.BaseDomain, msg))
		}
	}
	if c.ClusterName != "" {
		for _, msg := range validation.IsDNS1123Label(c.ClusterName) {
			errs = append(errs, field.Invalid(cp.Child("clusterName"), c.ClusterName, msg))
		}
	}
	errs = append(errs, validateVIPs(cp, c.APIVIPs, c.IngressVIPs)...)
	if r := c.PullSecretRef; r != nil && r.Name == "" {
		errs = append(errs, field.Required(cp.Child("pullSecretRef", "name"), "name the pull secret, or leave pullSecretRef unset (OKD)"))
	}
	if r := c.ImageRegistryRef; r != nil && r.Name == "" {
		errs = append(errs, field.Required(cp.Child("imageRegistryRef", "name"), "name the ConfigMap, or leave imageRegistryRef unset"))
	}
	for i, r := range c.ManifestsConfigMapRefs {
		if r.Name == "" {
			errs = append(errs, field.Required(cp.Child("manifestsConfigMapRefs").Index(i).Child("name"), "name the ConfigMap"))
		}
	}
	if b := c.Capabilities.BaselineCapability; !clusterinstall.ValidBaseline(b) {
		errs = append(errs, field.Invalid(cp.Child("capabilities", "baselineCapability"), b, "want None, vCurrent or v4.x"))
	}
	if img := c.ReleaseImage; img != "" && !isPullspecWithTagOrDigest(img) {
		errs = append(errs, field.Invalid(cp.Child("releaseImage"), img, "want an image pullspec with a tag or a digest, e.g. registry.example.com/ocp/release:4.19.0-x86_64"))
	}
	errs = append(errs, assisted.ValidateConfigSpec(p.Child("openshiftAssistedConfigSpec"), &s.OpenshiftAssistedConfigSpec)...)
	return errs
}

// isPullspecWithTagOrDigest tells whether img names a repository and a tag
// or a digest. A tag is after the last slash: a colon before it is a
// registry's port.
func isPullspecWithTagOrDigest(img string) bool {
	slash := strings.LastIndex(img, "/")
	return slash > 0 && (strings.Contains(img, "@") || strings.Contains(img[slash:], ":"))
}

// validateVIPs checks the API and ingress VIPs: IP addresses, given
// together (the BareMetal platform needs both), as many of each, distinct.
func validateVIPs(p *field.Path, api, ingress []string) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for _, l := range []struct {
		name string
		vips []string
	}{{"apiVIPs", api}, {"ingressVIPs", ingress}} {
		for i, v := range l.vips {
			switch {
			case net.ParseIP(v) == nil:
				errs = append(errs, field.Invalid(p.Child(l.name).Index(i), v, "not an IP address"))
			case seen[v]:
				errs = append(errs, field.Duplicate(p.Child(l.name).Index(i), v))
			}
			seen[v] = true
		}
	}
	switch {
	case len(api) > 0 && len(ingress) == 0:
		errs = append(errs, field.Required(p.Child("ingressVIPs"), "set with apiVIPs (both make the platform BareMetal; neither makes it None)"))
	case len(ingress) > 0 && len(api) == 0:
		errs = append(errs, field.Required(p.Child("apiVIPs"), "set with ingressVIPs (both make the platform BareMetal; neither makes it None)"))
	case len(api) != len(ingress):
		errs = append(errs, field.Invalid(p.Child("ingressVIPs"), ingress, "give as many ingress VIPs as API VIPs (one per IP stack)"))
	}
	return errs
}

func validateAnnotations(a map[string]string) field.ErrorList {
	return validateAnnotationsAt(field.NewPath("metadata", "annotations"), a)
}

// validateAnnotationsAt checks the install-config override annotation: a
// JSON object.
func validateAnnotationsAt(p *field.Path, a map[string]string) field.ErrorList {
	v, ok := a[controlplanev1.InstallConfigOverrideAnnotation]
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(v), &obj); err != nil {
		return field.ErrorList{field.Invalid(p.Key(controlplanev1.InstallConfigOverrideAnnotation), v,
			"want a JSON object of install-config overrides: "+err.Error())}
	}
	// json.Unmarshal takes null for a map without error.
	if obj == nil {
		return field.ErrorList{field.Invalid(p.Key(controlplanev1.InstallConfigOverrideAnnotation), v,
			"want a JSON object of install-config overrides, got null")}
	}
	return nil
}

// ValidateUpdate checks what may not change once the installation has
// started. (The base domain, the cluster name and single-node versus
// highly available never change: CEL transition rules in the CRD.)
func ValidateUpdate(oldC, newC *controlplanev1.OpenshiftAssistedControlPlane) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	cp := p.Child("config")
	started, state := installationStarted(oldC)
	if !started {
		return errs
	}
	// The controller stops copying spec.config into the
	// AgentClusterInstall when the installation starts: a change now would
	// be silently ignored. (baseDomain and clusterName are left to the CEL
	// rules, whose error says why.)
	for _, k := range jsonfields.Changed(oldC.Spec.Config, newC.Spec.Config) {
		if k == "baseDomain" || k == "clusterName" {
			continue
		}
		errs = append(errs, field.Forbidden(cp.Child(k), "the installation has started ("+state+
			"): the install-time configuration is the installer's and cannot change"))
	}
	if installed := oldC.Status.DistributionVersion; installed != "" && newC.Spec.DistributionVersion != oldC.Spec.DistributionVersion &&
		release.Compare(newC.Spec.DistributionVersion, installed) < 0 {
		errs = append(errs, field.Forbidden(p.Child("distributionVersion"),
			fmt.Sprintf("the cluster runs OpenShift %s: downgrades are not supported", installed)))
	}
	return errs
}

// installationStarted tells, from the status the controller wrote, whether
// the cluster's installation has started (or is done), and how the status
// says so: the control plane is initialized, or Available's reason is one
// of an installation that runs, failed or completed. While the
// installation has not started (or assisted-service reset a failed one),
// the controller still applies spec.config.
func installationStarted(c *controlplanev1.OpenshiftAssistedControlPlane) (bool, string) {
	if ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false) {
		return true, "the control plane is initialized"
	}
	for _, cond := range c.Status.Conditions {
		if cond.Type != controlplanev1.AvailableCondition {
			continue
		}
		switch cond.Reason {
		case controlplanev1.ControlPlaneInstallingReason, controlplanev1.InstallationFailedReason, controlplanev1.AvailableReason:
			return true, "condition Available has reason " + cond.Reason
		}
	}
	return false, ""
}
