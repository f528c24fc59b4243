package localnode

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CoreDNS listens on an unprivileged port, so its image can run as a
// non-root user without NET_BIND_SERVICE; the Service maps 53 to it.
const coreDNSPort = 1053

// coreDNSLabels are the labels upstream manifests use (kubectl and many
// tools look for k8s-app=kube-dns).
var coreDNSLabels = map[string]string{"k8s-app": "kube-dns"}

// Corefile serves the cluster domain from the API. There is no forward
// plugin: the node's namespace has no way out, so other names fail fast
// instead of timing out.
func Corefile() string {
	return fmt.Sprintf(`.:%d {
    errors
    health :8080
    ready :8181
    kubernetes %s in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    cache 30
    loadbalance
}
`, coreDNSPort, ClusterDomain)
}

// CoreDNSObjects are the cluster DNS add-on: RBAC, the Corefile, the
// Deployment (image imported by `up`, never pulled) and the kube-dns
// Service at the kubelet's clusterDNS address.
func CoreDNSObjects(image string) []client.Object {
	const ns, name = metav1.NamespaceSystem, "coredns"
	meta := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: coreDNSLabels}
	sc := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To[int64](65532),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	probe := func(path string, port int) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(int32(port))}},
			PeriodSeconds: 2,
		}
	}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "system:coredns", Labels: coreDNSLabels},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
				{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "system:coredns", Labels: coreDNSLabels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:coredns"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
		},
		&corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"Corefile": Corefile()}},
		&appsv1.Deployment{
			ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: coreDNSLabels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: coreDNSLabels},
					Spec: corev1.PodSpec{
						ServiceAccountName: name,
						PriorityClassName:  "system-cluster-critical",
						DNSPolicy:          corev1.DNSDefault,
						Containers: []corev1.Container{{
							Name:            name,
							Image:           image,
							ImagePullPolicy: corev1.PullNever,
							Args:            []string{"-conf", "/etc/coredns/Corefile"},
							Ports: []corev1.ContainerPort{
								{Name: "dns", ContainerPort: coreDNSPort, Protocol: corev1.ProtocolUDP},
								{Name: "dns-tcp", ContainerPort: coreDNSPort, Protocol: corev1.ProtocolTCP},
							},
							ReadinessProbe:  probe("/ready", 8181),
							LivenessProbe:   probe("/health", 8080),
							SecurityContext: sc,
							VolumeMounts:    []corev1.VolumeMount{{Name: "config", MountPath: "/etc/coredns", ReadOnly: true}},
						}},
						Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
							ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}},
						}}},
					},
				},
			},
		},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: ns, Labels: coreDNSLabels},
			Spec: corev1.ServiceSpec{
				ClusterIP: DNSServiceIP,
				Selector:  coreDNSLabels,
				Ports: []corev1.ServicePort{
					{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(coreDNSPort)},
					{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(coreDNSPort)},
				},
			},
		},
	}
}

// Ensure creates each object, or updates it to the desired spec when it
// exists (a warm start after an upgrade of this tool gets the new spec).
func Ensure(ctx context.Context, c client.Client, objs []client.Object) error {
	for _, desired := range objs {
		current := desired.DeepCopyObject().(client.Object)
		err := c.Get(ctx, client.ObjectKeyFromObject(desired), current)
		switch {
		case apierrors.IsNotFound(err):
			err = c.Create(ctx, desired.DeepCopyObject().(client.Object))
		case err == nil:
			obj := desired.DeepCopyObject().(client.Object)
			obj.SetResourceVersion(current.GetResourceVersion())
			if svc, ok := obj.(*corev1.Service); ok {
				// Keep what the API server filled in and may not change.
				cur := current.(*corev1.Service)
				svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = cur.Spec.ClusterIPs, cur.Spec.IPFamilies, cur.Spec.IPFamilyPolicy
			}
			err = c.Update(ctx, obj)
		}
		if err != nil {
			return fmt.Errorf("%T %s: %w", desired, client.ObjectKeyFromObject(desired), err)
		}
	}
	return nil
}
