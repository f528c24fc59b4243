package webhooks_test

// TestClusterClassTopology runs CAPI core's topology controller (the real
// cluster-api manager, bin/capi-manager-*) against an API server with our
// CRDs and the control-plane webhooks served, and checks that a ClusterClass
// whose control plane is a v1beta1 OpenshiftAssistedControlPlaneTemplate with
// a machineInfrastructure template works: the topology controller creates
// the control plane with its contract fields (spec.version, spec.replicas,
// and its clone of the machine template at v1beta1's
// spec.machineTemplate.spec.infrastructureRef, which v1alpha3's layout
// cannot take), and the webhook's refusal of a topology version that does
// not match the OpenShift version reaches the Cluster's TopologyReconciled
// condition.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	controlplanev1beta1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1beta1"
)

// clusterClassObjects are a ClusterClass of an OpenStack cluster whose
// control plane is ours, and a Cluster of it.
const clusterClassObjects = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: OpenStackClusterTemplate
metadata: {name: infra}
spec:
  template:
    spec:
      identityRef: {cloudName: openstack, name: cloud}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: OpenStackMachineTemplate
metadata: {name: control-plane}
spec:
  template:
    spec:
      flavor: {filter: {name: m1.xlarge}}
      image: {filter: {name: rhcos}}
---
# The template's infrastructureRef is required by the schema (the template
# has the control plane's spec); the topology replaces it with its clone of
# machineInfrastructure.
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: OpenshiftAssistedControlPlaneTemplate
metadata: {name: control-plane}
spec:
  template:
    spec:
      distributionVersion: "4.19.0"
      machineTemplate:
        spec:
          infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackMachineTemplate, name: unused}
      config: {baseDomain: example.com}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {name: openshift}
spec:
  infrastructure:
    templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: OpenStackClusterTemplate, name: infra}
  controlPlane:
    templateRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: OpenshiftAssistedControlPlaneTemplate, name: control-plane}
    machineInfrastructure:
      templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: OpenStackMachineTemplate, name: control-plane}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: demo}
spec:
  topology:
    classRef: {name: openshift}
    version: v1.32.0
    controlPlane: {replicas: 3}
`

// capiManager finds the cluster-api manager binary that `make
// bin/capi-manager` builds.
func capiManager() string {
	for _, dir := range []string{os.Getenv("KUBEBUILDER_ASSETS"), "../../bin"} {
		if dir == "" {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "capi-manager*")); len(m) > 0 {
			if abs, err := filepath.Abs(m[0]); err == nil {
				return abs
			}
		}
	}
	return ""
}

func TestClusterClassTopology(t *testing.T) {
	capi := capiManager()
	if capi == "" {
		if os.Getenv("CI") != "" {
			// make test builds it (TEST_TOOLS): in CI a missing manager is a broken build, not a reason to skip.
			t.Fatal("no cluster-api manager in bin/ (make bin/capi-manager)")
		}
		t.Skip("no cluster-api manager in bin/ (make bin/capi-manager): the ClusterClass topology is not exercised")
	}
	g := NewWithT(t)
	ctrl.SetLogger(logr.Discard())
	ctx := context.Background()
	env, stop, err := startWithWebhooks(ctx, clusterv1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()

	// CAPI core, with the ClusterTopology feature. Its own webhooks are not
	// installed in the API server; it serves them with a throwaway
	// certificate because it will not start without one.
	dir := t.TempDir()
	kc, err := env.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "kubeconfig"), kc, 0o600)).To(Succeed())
	g.Expect(writeSelfSignedCert(dir)).To(Succeed())
	logPath := filepath.Join(dir, "capi-manager.log")
	logFile, err := os.Create(logPath)
	g.Expect(err).NotTo(HaveOccurred())
	defer logFile.Close()
	cmd := exec.Command(capi, "--kubeconfig", filepath.Join(dir, "kubeconfig"), "--feature-gates=ClusterTopology=true",
		"--webhook-cert-dir", dir, "--webhook-port", freePort(t), "--health-addr", "127.0.0.1:"+freePort(t),
		"--diagnostics-address", "127.0.0.1:"+freePort(t), "--insecure-diagnostics")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	g.Expect(cmd.Start()).To(Succeed())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill(); <-exited }()
	logTail := func() string {
		data, _ := os.ReadFile(logPath)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		return string(data)
	}

	ns, err := env.NewNamespace(ctx, "clusterclass")
	g.Expect(err).NotTo(HaveOccurred())
	for _, doc := range strings.Split(clusterClassObjects, "\n---\n") {
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
		u.SetNamespace(ns.Name)
		g.Expect(env.Client.Create(ctx, u)).To(Succeed(), "%s", doc)
	}

	cluster := &clusterv1.Cluster{}
	topology := func() *metav1.Condition {
		select {
		case err := <-exited:
			exited <- err
			g.Expect(err).NotTo(HaveOccurred(), "the cluster-api manager exited:\n%s", logTail())
		default:
		}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "demo"}, cluster)).To(Succeed())
		return capiconditions.Get(cluster, clusterv1.ClusterTopologyReconciledCondition)
	}
	g.Eventually(topology, 2*time.Minute, 250*time.Millisecond).Should(And(Not(BeNil()),
		HaveField("Status", metav1.ConditionTrue)), "cluster-api manager log:\n%s", logTail())

	// The topology controller made the control plane from the template,
	// with the contract's fields.
	g.Expect(cluster.Spec.ControlPlaneRef.Kind).To(Equal("OpenshiftAssistedControlPlane"))
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: cluster.Spec.ControlPlaneRef.Name}, cp)).To(Succeed())
	g.Expect(cp.Spec.KubernetesVersion).To(Equal("v1.32.0"))
	g.Expect(cp.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))
	g.Expect(cp.Spec.DistributionVersion).To(Equal("4.19.0"))

	// The control plane has the topology's clone of machineInfrastructure
	// at v1beta1's spec.machineTemplate.spec.infrastructureRef (the
	// controllers read it at v1alpha3's spec.machineTemplate.infrastructureRef).
	cpBeta := &controlplanev1beta1.OpenshiftAssistedControlPlane{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), cpBeta)).To(Succeed())
	ref := cpBeta.Spec.MachineTemplate.Spec.InfrastructureRef
	g.Expect(ref.APIGroup).To(Equal("infrastructure.cluster.x-k8s.io"))
	g.Expect(ref.Kind).To(Equal("OpenStackMachineTemplate"))
	g.Expect(ref.Name).NotTo(BeElementOf("control-plane", "unused"))
	g.Expect(cp.Spec.MachineTemplate.InfrastructureRef).To(Equal(ref))
	clone := &unstructured.Unstructured{}
	clone.SetGroupVersionKind(schema.GroupVersionKind{Group: ref.APIGroup, Version: "v1beta2", Kind: ref.Kind})
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: ref.Name}, clone)).To(Succeed())
	g.Expect(clone.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, "control-plane"))
	flavor, _, _ := unstructured.NestedString(clone.Object, "spec", "template", "spec", "flavor", "filter", "name")
	g.Expect(flavor).To(Equal("m1.xlarge"))

	// The control plane reports itself installed and stable, as the
	// controller would (it does not run here): the topology controller
	// defers version changes of a control plane that is still provisioning
	// or scaling.
	cpBase := cp.DeepCopy()
	cp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	cp.Status.Version, cp.Status.DistributionVersion = "v1.32.0", "4.19.0"
	cp.Status.Replicas, cp.Status.ReadyReplicas = ptr.To[int32](3), ptr.To[int32](3)
	cp.Status.AvailableReplicas, cp.Status.UpToDateReplicas = ptr.To[int32](3), ptr.To[int32](3)
	g.Expect(env.Client.Status().Patch(ctx, cp, client.MergeFrom(cpBase))).To(Succeed())

	// A topology version of another Kubernetes minor than OpenShift 4.19's
	// (the variable that sets distributionVersion was not changed with it):
	// the webhook refuses it, and the topology does not reconcile.
	base := cluster.DeepCopy()
	cluster.Spec.Topology.Version = "v1.33.0"
	g.Expect(env.Client.Patch(ctx, cluster, client.MergeFrom(base))).To(Succeed())
	g.Eventually(topology, 2*time.Minute, 250*time.Millisecond).Should(And(
		HaveField("Status", metav1.ConditionFalse), HaveField("Reason", clusterv1.ClusterTopologyReconciledFailedReason)),
		"cluster-api manager log:\n%s", logTail())
	// The manager logs the reconcile error after the reconcile that set
	// the condition returned, and an earlier attempt may have failed
	// otherwise (a webhook call that timed out under load): the refusal is
	// awaited in the log.
	g.Eventually(func() (string, error) {
		fullLog, err := os.ReadFile(logPath)
		return string(fullLog), err
	}, time.Minute, 250*time.Millisecond).Should(ContainSubstring("OpenShift 4.19.0 ships Kubernetes 1.32"),
		"the webhook's refusal, in the topology controller's error")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), cp)).To(Succeed())
	g.Expect(cp.Spec.KubernetesVersion).To(Equal("v1.32.0"))
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// writeSelfSignedCert writes tls.crt and tls.key into dir.
func writeSelfSignedCert(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}
