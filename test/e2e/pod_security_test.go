//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
)

// The Pod Security Standard labels (k8s.io/pod-security-admission/api).
const (
	psaEnforce        = "pod-security.kubernetes.io/enforce"
	psaEnforceVersion = "pod-security.kubernetes.io/enforce-version"
	psaWarn           = "pod-security.kubernetes.io/warn"
	psaAudit          = "pod-security.kubernetes.io/audit"
)

// enforceRestricted makes the providers' namespaces on proxy's cluster (those
// clusterctl labels with cluster.x-k8s.io/provider: CAPI core's and ours)
// enforce the restricted Pod Security Standard, shows that the API server
// refuses a pod that breaks it there, and restarts every manager so that its
// pods are admitted under enforcement. The OpenStack provider's namespace is
// the exception: the harness runs that manager with hostNetwork
// (fitRepository, FitProviders: the local OpenStack's endpoints are on the
// host's loopback), which no standard admits, so its manager as released is
// checked by a dry-run under enforcement, and the namespace then only warns
// and audits.
func enforceRestricted(proxy framework.ClusterProxy, logFolder string) {
	ctx := suiteCtx
	c := proxy.GetClient()
	nss := &corev1.NamespaceList{}
	Expect(c.List(ctx, nss, client.HasLabels{clusterv1.ProviderNameLabel})).To(Succeed())
	var names []string
	for _, ns := range nss.Items {
		names = append(names, ns.Name)
	}
	slices.Sort(names)
	Expect(names).To(ContainElements("capi-system", localenv.BootstrapNamespace, localenv.InfraNamespace,
		"ocp-capi-controlplane-system", "ocp-capi-addon-system"))
	By("Labelling the provider namespaces of " + proxy.GetName() + " to enforce the restricted Pod Security Standard: " + strings.Join(names, ", "))
	for _, ns := range names {
		Expect(labelNamespace(ctx, c, ns, map[string]string{psaEnforce: "restricted", psaEnforceVersion: "latest"})).To(Succeed())
	}

	By("Checking that the API server refuses a privileged pod there, and admits it in a namespace without the label")
	for _, ns := range names {
		err := c.Create(ctx, nonCompliantPod(ns), client.DryRunAll)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a privileged pod in %s: %v (is the PodSecurity admission plugin enabled?)", ns, err)
		Expect(err.Error()).To(ContainSubstring(`violates PodSecurity "restricted:latest"`), "namespace %s", ns)
	}
	Expect(c.Create(ctx, nonCompliantPod(metav1.NamespaceDefault), client.DryRunAll)).To(Succeed(),
		"the same pod in namespace default, which enforces nothing")

	By("Checking every manager's pod template against the standard (dry-run pods)")
	var deps []*appsv1.Deployment
	for _, ns := range names {
		list := &appsv1.DeploymentList{}
		Expect(c.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).NotTo(BeEmpty(), "no Deployment in %s", ns)
		for i := range list.Items {
			d := &list.Items[i]
			spec := d.Spec.Template.Spec
			if ns == localenv.InfraNamespace {
				// Installed with the harness's hostNetwork (fitRepository):
				// the standard is checked on the manager as released.
				spec = releasedPodSpec(infraProvider, "InfrastructureProvider")
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: d.Name + "-pss-", Namespace: ns,
				Labels: d.Spec.Template.Labels}, Spec: spec}
			Expect(c.Create(ctx, pod, client.DryRunAll)).To(Succeed(), "the pod of Deployment %s/%s under restricted", ns, d.Name)
			if ns != localenv.InfraNamespace {
				deps = append(deps, d)
			}
		}
	}

	By("Restarting the managers so that their pods are admitted under enforcement")
	timeout, err := time.ParseDuration(e2eConfig.GetIntervals("default", "wait-deployment")[0].(string))
	Expect(err).NotTo(HaveOccurred())
	for _, d := range deps {
		base := d.DeepCopy()
		if d.Spec.Template.Annotations == nil {
			d.Spec.Template.Annotations = map[string]string{}
		}
		d.Spec.Template.Annotations["ocp-capi.io/e2e-pod-security"] = "restricted"
		Expect(c.Patch(ctx, d, client.MergeFrom(base))).To(Succeed())
	}
	for _, d := range deps {
		Expect(localenv.WaitForRollout(ctx, c, d, timeout)).To(Succeed(),
			"Deployment %s/%s under restricted (a refused pod shows in its ReplicaSet's events)", d.Namespace, d.Name)
		framework.WatchDeploymentLogsByName(ctx, framework.WatchDeploymentLogsByNameInput{
			GetLister: c, Cache: proxy.GetCache(ctx), ClientSet: proxy.GetClientSet(), Deployment: d,
			LogPath: filepath.Join(logFolder, "logs", d.Namespace),
		})
	}

	By("The OpenStack provider's namespace: warn and audit only, for the harness's hostNetwork")
	Expect(labelNamespace(ctx, c, localenv.InfraNamespace, map[string]string{psaEnforce: "", psaEnforceVersion: "",
		psaWarn: "restricted", psaAudit: "restricted"})).To(Succeed())
}

// releasedPodSpec is the manager's pod spec in the release's components of
// the provider name of type typ (the newest version of the configuration).
func releasedPodSpec(name, typ string) corev1.PodSpec {
	for _, p := range e2eConfig.Providers {
		if p.Name != name || p.Type != typ {
			continue
		}
		data, err := os.ReadFile(p.Versions[0].Value)
		Expect(err).NotTo(HaveOccurred())
		d, err := localenv.ComponentsDeployment(data)
		Expect(err).NotTo(HaveOccurred(), p.Versions[0].Value)
		Expect(d.Spec.Template.Spec.HostNetwork).To(BeFalse(), "%s: the release itself asks for hostNetwork", p.Versions[0].Value)
		return d.Spec.Template.Spec
	}
	Fail("no " + typ + " " + name + " in the e2e configuration")
	return corev1.PodSpec{}
}

// labelNamespace sets labels on namespace ns; an empty value removes one.
func labelNamespace(ctx context.Context, c client.Client, ns string, labels map[string]string) error {
	obj := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, obj); err != nil {
		return err
	}
	base := obj.DeepCopy()
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	for k, v := range labels {
		if v == "" {
			delete(obj.Labels, k)
		} else {
			obj.Labels[k] = v
		}
	}
	return c.Patch(ctx, obj, client.MergeFrom(base))
}

// nonCompliantPod breaks the restricted standard (and the baseline): a
// privileged container that may escalate, run as root, without seccomp.
func nonCompliantPod(ns string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "pss-probe-", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "ocp-capi.local/pause:v1",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true), AllowPrivilegeEscalation: ptr.To(true)}}}},
	}
}
