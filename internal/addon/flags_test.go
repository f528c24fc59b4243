package addon

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// TestMigrationUsesParsedNamespaces: the addon-manager calls Controllers
// before it parses the flags; the migration controllers must still look
// for the CAPI side in --capi-namespace. A MAPI MachineSet asking for
// ClusterAPI, synchronized, whose CAPI MachineSet is in the flag's
// namespace, goes to Migrating; read before the flags, the controller
// looked in the default namespace and waited (WaitingForPartner).
func TestMigrationUsesParsedNamespaces(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := envtest.Start(envtest.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c := env.Client
	mapiNS, err := env.NewNamespace(ctx, "mapi")
	g.Expect(err).NotTo(HaveOccurred())
	capiNS, err := env.NewNamespace(ctx, "capi")
	g.Expect(err).NotTo(HaveOccurred())

	o := NewOptions()
	controllers := Controllers(o) // as cmd/addon-manager does, before the flags
	fs := pflag.NewFlagSet("addon-manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	g.Expect(fs.Parse([]string{"--mapi-namespace=" + mapiNS.Name, "--capi-namespace=" + capiNS.Name})).To(Succeed())
	mgr, err := ctrl.NewManager(env.Config, env.ManagerOptions())
	g.Expect(err).NotTo(HaveOccurred())
	for _, ctl := range controllers {
		if strings.HasSuffix(ctl.Name, "migration") {
			g.Expect(ctl.Setup(ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: 1})).To(Succeed())
		}
	}
	const name = "ms-flags"
	sel := map[string]string{"machine.openshift.io/cluster-api-machineset": name}
	capi := &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: capiNS.Name, Name: name, Annotations: map[string]string{clusterv1.PausedAnnotation: ""}},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: "c", Replicas: ptr.To[int32](0), Selector: metav1.LabelSelector{MatchLabels: sel},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: sel},
				Spec: clusterv1.MachineSpec{ClusterName: "c", Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("u")},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: name}},
			},
		},
	}
	g.Expect(c.Create(ctx, capi)).To(Succeed())
	mapi := &mapiv1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS.Name, Name: name},
		Spec: mapiv1beta1.MachineSetSpec{
			AuthoritativeAPI: mapiv1beta1.MachineAuthorityClusterAPI, Replicas: ptr.To[int32](0),
			Selector: metav1.LabelSelector{MatchLabels: sel},
			Template: mapiv1beta1.MachineTemplateSpec{ObjectMeta: mapiv1beta1.ObjectMeta{Labels: sel}},
		},
	}
	g.Expect(c.Create(ctx, mapi)).To(Succeed())
	// What the MachineSet sync and MAO leave: status MachineAPI, the CAPI
	// side synchronized from the MAPI one at its generation, MAO not yet
	// paused.
	mapi.Status.AuthoritativeAPI = mapiv1beta1.MachineAuthorityMachineAPI
	mapi.Status.SynchronizedAPI = mapiv1beta1.SynchronizedAPIMachineAPI
	mapi.Status.SynchronizedGeneration = mapi.Generation
	mapi.Status.Conditions = []mapiv1beta1.Condition{{Type: "Synchronized", Status: corev1.ConditionTrue, Reason: "ResourceSynchronized", LastTransitionTime: metav1.Now()}}
	g.Expect(c.Status().Update(ctx, mapi)).To(Succeed())
	// Started only now: on a MachineSet without status.authoritativeAPI
	// the migration controller's first step sets it from spec
	// (ClusterAPI), which would race the update above.
	stop := envtest.RunManager(ctx, mgr)
	t.Cleanup(func() { _ = stop() })

	g.Eventually(func(g Gomega) {
		got := &mapiv1beta1.MachineSet{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(mapi), got)).To(Succeed())
		g.Expect(got.Status.AuthoritativeAPI).To(Equal(mapiv1beta1.MachineAuthorityMigrating), "conditions %+v", got.Status.Conditions)
	}).WithTimeout(30 * time.Second).Should(Succeed())
}
