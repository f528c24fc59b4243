//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
)

// Migration to Cluster API and back on bare metal, with the played Metal3
// (localenv.Metal3: CAPM3 and the Bare Metal Operator, running in the test
// process). As on OpenShift, the BareMetalHosts are in
// openshift-machine-api and the add-on runs with --capi-namespace
// openshift-machine-api (the CAPI side must be beside the hosts; see
// docs/addon/migration.md); the spec switches the installed add-on to that
// and back. The test plays the OpenShift cluster, cluster-capi-operator
// (Cluster, Metal3Cluster), the Machine API operator and its bare-metal
// actuator (cluster-api-provider-baremetal): it takes a free host of the
// Machine's namespace, puts the providerSpec's image and user data on it,
// makes the Machine its consumer, and writes on the Machine the host
// annotation, the instance state and the providerID
// baremetalhost:///<namespace>/<host>/<host UID>; on deletion it
// deprovisions the host and clears the consumer.
var _ = Describe("Migration to Cluster API and back (add-on), bare metal", func() {
	It("moves MAPI bare-metal machines to Cluster API keeping their hosts, scales under Cluster API, rolls back touching no host, and releases every host", func() {
		ctx := suiteCtx
		c := mgmt.GetClient()
		infra := "bm-" + util.RandomString(5)
		msName := infra + "-worker-0"
		w := &bareMetalWorld{mapiWorld: newMAPIWorld(ctx, c, infra, mapiNS, mapiNS)}
		DeferCleanup(w.close)

		By("Running the add-on with --capi-namespace " + mapiNS + ", as on OpenShift bare metal, and binding its Secret sync there")
		w.setAddonCAPINamespace(ctx, true)
		DeferCleanup(func() { w.setAddonCAPINamespace(context.Background(), false) })

		By("Playing the OpenShift cluster (" + infra + ", BareMetal), cluster-capi-operator's Cluster and Metal3Cluster, and 3 registered hosts")
		w.setUp(ctx)

		By("Creating the MAPI MachineSet " + msName + " with 2 Machines, and playing the bare-metal actuator: each takes and provisions a host")
		w.createMachineSet(ctx, msName, 2, w.providerSpec())
		machines := w.createMachines(ctx, msName, 2)
		for _, name := range machines {
			w.playActuatorCreate(ctx, name)
		}
		w.waitSynced(ctx, msName, machines, mapiv1beta1.SynchronizedAPIMachineAPI)
		for _, name := range machines {
			w.waitMirroredHost(ctx, name)
		}
		before := w.hosts(ctx)
		Expect(before.provisioned()).To(HaveLen(2))

		By("Switching the MachineSet and its Machines to Cluster API: each Metal3Machine takes its machine's host, which is not provisioned again")
		hw := w.watchHosts(ctx)
		start := time.Now()
		w.setAuthority(ctx, msName, machines, mapiv1beta1.MachineAuthorityClusterAPI)
		w.waitAuthority(ctx, msName, machines, mapiv1beta1.MachineAuthorityClusterAPI)
		for _, name := range machines {
			w.waitConsumer(ctx, name, "Metal3Machine")
		}
		changes := hw.stop()
		w.record("switch to ClusterAPI", start, changes.String())
		Expect(changes.provisioning).To(BeEmpty(), "a migration provisions or deprovisions no host: %s", changes)
		Expect(changes.consumer).To(HaveLen(2), "each machine's host changes consumer once: %s", changes)
		after := w.hosts(ctx)
		Expect(after.images()).To(Equal(before.images()), "the hosts keep their images")

		By("Scaling the CAPI MachineSet to 3: the free host is provisioned, and the MAPI mirror shows 3")
		hw = w.watchHosts(ctx)
		start = time.Now()
		Eventually(func() error {
			ms := &clusterv1.MachineSet{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: msName}, ms); err != nil {
				return err
			}
			base := ms.DeepCopy()
			ms.Spec.Replicas = ptr.To[int32](3)
			return c.Patch(ctx, ms, client.MergeFrom(base))
		}, time.Minute, time.Second).Should(Succeed())
		machines = w.waitScaled(ctx, msName, 3)
		changes = hw.stop()
		w.record("scale the CAPI MachineSet to 3", start, changes.String())
		Expect(w.hosts(ctx).provisioned()).To(HaveLen(3))
		Expect(changes.provisioning).To(HaveLen(1), "one host provisioned: %s", changes)

		By("Rolling back to the Machine API: the hosts go back to the MAPI Machines, none is touched otherwise")
		before = w.hosts(ctx)
		hw = w.watchHosts(ctx)
		start = time.Now()
		w.setAuthority(ctx, msName, machines, mapiv1beta1.MachineAuthorityMachineAPI)
		w.waitAuthority(ctx, msName, machines, mapiv1beta1.MachineAuthorityMachineAPI)
		w.waitSynced(ctx, msName, machines, mapiv1beta1.SynchronizedAPIMachineAPI)
		for _, name := range machines {
			w.waitMetal3Paused(ctx, name)
			w.waitConsumer(ctx, name, "Machine")
		}
		changes = hw.stop()
		w.record("roll back to MachineAPI", start, changes.String())
		Expect(changes.provisioning).To(BeEmpty(), "a rollback provisions or deprovisions no host: %s", changes)
		Expect(changes.consumer).To(HaveLen(3), "each host goes back to its MAPI Machine: %s", changes)
		Expect(w.hosts(ctx).images()).To(Equal(before.images()))
		for _, h := range w.hosts(ctx) {
			Expect(h.OwnerReferences).To(BeEmpty(), "host %s: no Metal3Machine owns it under the Machine API", h.Name)
		}

		By("Deleting the MachineSet: the actuator deprovisions and releases the hosts; the machine Cluster API made needs a hand (known limit)")
		w.deleteAll(ctx, msName)
	})
})

// bareMetalWorld is what the bare-metal migration suite plays.
type bareMetalWorld struct {
	*mapiWorld
	// bmcSecret is the hosts' BMC credentials.
	bmcSecret string
}

const (
	bareMetalImage    = "http://192.0.2.1:6180/images/rhcos.x86_64.qcow2"
	bareMetalChecksum = bareMetalImage + ".md5sum"
	// The add-on's namespaced Secret sync grant (internal/addon/config/build-rbac).
	secretSyncRole     = "ocp-capi-addon-system-secret-sync-role"
	addonNamespace     = "ocp-capi-addon-system"
	addonCAPINamespace = "--capi-namespace=" + mapiNS
	// provisionedState is the Bare Metal Operator's state of a host that
	// runs its image.
	provisionedState = "provisioned"
)

func (w *bareMetalWorld) close() { w.mapiWorld.close() }

// setAddonCAPINamespace runs the installed add-on with --capi-namespace
// openshift-machine-api and binds its Secret sync's role there (on, as the
// chart's value capiNamespace would), or undoes both.
func (w *bareMetalWorld) setAddonCAPINamespace(ctx context.Context, on bool) {
	c := w.c
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: "ocp-capi-addon-secret-sync-rolebinding-e2e"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: secretSyncRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "ocp-capi-addon-manager", Namespace: addonNamespace}},
	}
	Expect(client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mapiNS}}))).To(Succeed())
	if on {
		Expect(client.IgnoreAlreadyExists(c.Create(ctx, rb))).To(Succeed())
	}
	list := &appsv1.DeploymentList{}
	Expect(c.List(ctx, list, client.InNamespace(addonNamespace))).To(Succeed())
	Expect(list.Items).To(HaveLen(1))
	d := &list.Items[0]
	base := d.DeepCopy()
	var args []string
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if a != addonCAPINamespace {
			args = append(args, a)
		}
	}
	if on {
		args = append(args, addonCAPINamespace)
	}
	d.Spec.Template.Spec.Containers[0].Args = args
	Expect(c.Patch(ctx, d, client.MergeFrom(base))).To(Succeed())
	Expect(localenv.WaitForRollout(ctx, c, d, 3*time.Minute)).To(Succeed())
	if !on {
		Expect(client.IgnoreNotFound(c.Delete(ctx, rb))).To(Succeed())
	}
}

// setUp plays the OpenShift cluster on bare metal, cluster-capi-operator's
// Cluster and Metal3Cluster, the installer's user data Secret, and three
// hosts as the Bare Metal Operator leaves them once registered and
// inspected.
func (w *bareMetalWorld) setUp(ctx context.Context) {
	c := w.c
	inf := &configv1.Infrastructure{}
	if err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, inf); apierrors.IsNotFound(err) {
		inf = &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
		Expect(c.Create(ctx, inf)).To(Succeed())
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(setInfrastructure(ctx, c, inf, w.infra)).To(Succeed())
	base := inf.DeepCopy()
	inf.Status.Platform = configv1.BareMetalPlatformType
	inf.Status.PlatformStatus = &configv1.PlatformStatus{Type: configv1.BareMetalPlatformType}
	Expect(c.Status().Patch(ctx, inf, client.MergeFrom(base))).To(Succeed())

	w.bmcSecret = w.infra + "-bmc"
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: "worker-user-data"}, Data: map[string][]byte{"userData": []byte(`{"ignition":{"version":"3.2.0"}}`)}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: w.bmcSecret}, Data: map[string][]byte{"username": []byte("admin"), "password": []byte("e2e")}},
	} {
		existing := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(s), existing); err == nil {
			existing.Data = s.Data
			Expect(c.Update(ctx, existing)).To(Succeed())
			continue
		}
		Expect(c.Create(ctx, s)).To(Succeed())
	}

	for i := range 3 {
		h := &bmhv1alpha1.BareMetalHost{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: fmt.Sprintf("%s-host-%d", w.infra, i),
				Labels: map[string]string{"e2e.ocp-capi.io/pool": w.infra}},
			Spec: bmhv1alpha1.BareMetalHostSpec{
				BMC:            bmhv1alpha1.BMCDetails{Address: fmt.Sprintf("redfish-virtualmedia://192.0.2.1/redfish/v1/Systems/%d", i), CredentialsName: w.bmcSecret},
				BootMACAddress: fmt.Sprintf("52:54:00:e2:e1:%02x", i),
			},
		}
		Expect(c.Create(ctx, h)).To(Succeed())
		h.Status.Provisioning.State = "available"
		h.Status.Provisioning.ID = fmt.Sprintf("e2e-ironic-node-%s-%d", w.infra, i)
		h.Status.OperationalStatus = bmhv1alpha1.OperationalStatusOK
		Expect(c.Status().Update(ctx, h)).To(Succeed())
	}

	m3c := &unstructured.Unstructured{}
	m3c.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta2")
	m3c.SetKind("Metal3Cluster")
	m3c.SetNamespace(w.capiNS)
	m3c.SetName(w.infra)
	m3c.SetAnnotations(map[string]string{clusterv1.ManagedByAnnotation: "e2e"})
	Expect(unstructured.SetNestedMap(m3c.Object, map[string]any{"host": "api-int." + w.infra + ".example.com", "port": int64(6443)},
		"spec", "controlPlaneEndpoint")).To(Succeed())
	Expect(c.Create(ctx, m3c)).To(Succeed())
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.capiNS, Name: w.infra},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3Cluster", Name: w.infra}},
	}
	Expect(c.Create(ctx, cluster)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		g.Expect(ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false)).To(BeTrue())
	}, 2*time.Minute, time.Second).Should(Succeed())
}

// providerSpec is a worker BareMetalMachineProviderSpec as the installer
// writes one, selecting this suite's hosts.
func (w *bareMetalWorld) providerSpec() string {
	return fmt.Sprintf(`{"apiVersion":"baremetal.cluster.k8s.io/v1alpha1","kind":"BareMetalMachineProviderSpec",
"image":{"url":%q,"checksum":%q},"userData":{"name":"worker-user-data"},
"hostSelector":{"matchLabels":{"e2e.ocp-capi.io/pool":%q}}}`, bareMetalImage, bareMetalChecksum, w.infra)
}

// playActuatorCreate plays the Machine API's bare-metal actuator's Create
// and Update for a new Machine (chooseHost, provisionHost, ensureAnnotation,
// ensureMachineProviderID), and the Bare Metal Operator provisioning the
// host.
func (w *bareMetalWorld) playActuatorCreate(ctx context.Context, name string) {
	c := w.c
	var host *bmhv1alpha1.BareMetalHost
	Eventually(func(g Gomega) {
		list := &bmhv1alpha1.BareMetalHostList{}
		g.Expect(c.List(ctx, list, client.InNamespace(w.mapiNS), client.MatchingLabels{"e2e.ocp-capi.io/pool": w.infra})).To(Succeed())
		host = nil
		for i := range list.Items {
			h := &list.Items[i]
			if h.Spec.ConsumerRef == nil && h.DeletionTimestamp.IsZero() && h.Status.Provisioning.State == "available" && h.Status.ErrorMessage == "" {
				host = h
				break
			}
		}
		g.Expect(host).NotTo(BeNil(), "a free host")
		base := host.DeepCopy()
		host.Spec.Image = &bmhv1alpha1.Image{URL: bareMetalImage, Checksum: bareMetalChecksum}
		host.Spec.UserData = &corev1.SecretReference{Name: "worker-user-data", Namespace: w.mapiNS}
		host.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: mapiv1beta1.GroupVersion.String(), Kind: "Machine", Namespace: w.mapiNS, Name: name}
		host.Spec.Online = true
		g.Expect(c.Patch(ctx, host, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))).To(Succeed())
	}, time.Minute, time.Second).Should(Succeed())
	// The Bare Metal Operator writes the image and boots the host.
	Eventually(func() error {
		h := &bmhv1alpha1.BareMetalHost{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(host), h); err != nil {
			return err
		}
		base := h.DeepCopy()
		h.Status.Provisioning.State = provisionedState
		h.Status.PoweredOn = true
		return c.Status().Patch(ctx, h, client.MergeFrom(base))
	}, time.Minute, time.Second).Should(Succeed())
	Eventually(func() error {
		m := &mapiv1beta1.Machine{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: name}, m); err != nil {
			return err
		}
		base := m.DeepCopy()
		annotations.AddAnnotations(m, map[string]string{"metal3.io/BareMetalHost": host.Namespace + "/" + host.Name,
			"machine.openshift.io/instance-state": provisionedState})
		m.Spec.ProviderID = ptr.To(fmt.Sprintf("baremetalhost:///%s/%s/%s", host.Namespace, host.Name, host.UID))
		return c.Patch(ctx, m, client.MergeFrom(base))
	}, time.Minute, time.Second).Should(Succeed())
	Eventually(func() error {
		m := &mapiv1beta1.Machine{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: name}, m); err != nil {
			return err
		}
		base := m.DeepCopy()
		m.Status.Phase = ptr.To("Provisioned") // no Node: not Running
		return c.Status().Patch(ctx, m, client.MergeFrom(base))
	}, time.Minute, time.Second).Should(Succeed())
}

// hostList is this suite's hosts, by name.
type hostList []bmhv1alpha1.BareMetalHost

func (w *bareMetalWorld) hosts(ctx context.Context) hostList {
	list := &bmhv1alpha1.BareMetalHostList{}
	Expect(w.c.List(ctx, list, client.InNamespace(w.mapiNS), client.MatchingLabels{"e2e.ocp-capi.io/pool": w.infra})).To(Succeed())
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

func (l hostList) provisioned() []string {
	var out []string
	for _, h := range l {
		if h.Status.Provisioning.State == provisionedState {
			out = append(out, h.Name)
		}
	}
	return out
}

// images is host: image URL, for the hosts that have one.
func (l hostList) images() map[string]string {
	out := map[string]string{}
	for _, h := range l {
		if h.Spec.Image != nil {
			out[h.Name] = h.Spec.Image.URL
		}
	}
	return out
}

// hostWatch records every version of the suite's hosts during a step.
type hostWatch struct {
	w     watch.Interface
	done  chan struct{}
	mu    sync.Mutex
	first map[string]hostState
	last  map[string]hostState
	// provisioning: the hosts whose image, online, provisioning state or
	// power changed in some version; consumer: those whose consumer did.
	provisioning, consumer map[string]bool
}

type hostState struct {
	image, state, consumer string
	online, poweredOn      bool
}

func stateOf(h *bmhv1alpha1.BareMetalHost) hostState {
	s := hostState{state: string(h.Status.Provisioning.State), online: h.Spec.Online, poweredOn: h.Status.PoweredOn}
	if h.Spec.Image != nil {
		s.image = h.Spec.Image.URL
	}
	if r := h.Spec.ConsumerRef; r != nil {
		s.consumer = r.Kind + "/" + r.Name
	}
	return s
}

// hostChanges is what a step did to the hosts.
type hostChanges struct{ provisioning, consumer []string }

func (c hostChanges) String() string {
	return fmt.Sprintf("hosts (de)provisioned: %d %v; hosts whose consumer changed: %d %v", len(c.provisioning), c.provisioning, len(c.consumer), c.consumer)
}

// watchHosts starts recording: from the list's resourceVersion, so that
// no version is missed.
func (w *bareMetalWorld) watchHosts(ctx context.Context) *hostWatch {
	wc, err := client.NewWithWatch(mgmt.GetRESTConfig(), client.Options{Scheme: mgmt.GetScheme()})
	Expect(err).NotTo(HaveOccurred())
	list := &bmhv1alpha1.BareMetalHostList{}
	sel := client.MatchingLabels{"e2e.ocp-capi.io/pool": w.infra}
	Expect(wc.List(ctx, list, client.InNamespace(w.mapiNS), sel)).To(Succeed())
	hw := &hostWatch{done: make(chan struct{}), first: map[string]hostState{}, last: map[string]hostState{},
		provisioning: map[string]bool{}, consumer: map[string]bool{}}
	for i := range list.Items {
		s := stateOf(&list.Items[i])
		hw.first[list.Items[i].Name], hw.last[list.Items[i].Name] = s, s
	}
	hw.w, err = wc.Watch(ctx, &bmhv1alpha1.BareMetalHostList{}, client.InNamespace(w.mapiNS), sel,
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	Expect(err).NotTo(HaveOccurred())
	go func() {
		defer close(hw.done)
		for ev := range hw.w.ResultChan() {
			h, ok := ev.Object.(*bmhv1alpha1.BareMetalHost)
			if !ok {
				continue
			}
			s := stateOf(h)
			hw.mu.Lock()
			prev := hw.last[h.Name]
			if s.image != prev.image || s.state != prev.state || s.online != prev.online || s.poweredOn != prev.poweredOn || ev.Type == watch.Deleted {
				hw.provisioning[h.Name] = true
			}
			if s.consumer != prev.consumer {
				hw.consumer[h.Name] = true
			}
			hw.last[h.Name] = s
			hw.mu.Unlock()
		}
	}()
	return hw
}

func (hw *hostWatch) stop() hostChanges {
	hw.w.Stop()
	<-hw.done
	hw.mu.Lock()
	defer hw.mu.Unlock()
	var out hostChanges
	for n := range hw.provisioning {
		out.provisioning = append(out.provisioning, n)
	}
	for n := range hw.consumer {
		out.consumer = append(out.consumer, n)
	}
	sort.Strings(out.provisioning)
	sort.Strings(out.consumer)
	return out
}

// waitConsumer waits until the host of machine name is consumed by the
// object of kind (Metal3Machine or Machine) of that name, and provisioned.
func (w *bareMetalWorld) waitConsumer(ctx context.Context, name, kind string) {
	Eventually(func(g Gomega) {
		var found []string
		for _, h := range w.hosts(ctx) {
			if r := h.Spec.ConsumerRef; r != nil && r.Name == name {
				found = append(found, h.Name)
				g.Expect(r.Kind).To(Equal(kind), "host %s", h.Name)
				g.Expect(string(h.Status.Provisioning.State)).To(Equal(provisionedState), "host %s", h.Name)
			}
		}
		g.Expect(found).To(HaveLen(1), "one host consumed by %s", name)
		if kind == "Metal3Machine" {
			m3m := metal3Machine()
			g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: name}, m3m)).To(Succeed())
			provisioned, _, _ := unstructured.NestedBool(m3m.Object, "status", "initialization", "provisioned")
			g.Expect(provisioned).To(BeTrue(), "Metal3Machine %s", name)
			g.Expect(m3m.GetAnnotations()).To(HaveKeyWithValue("metal3.io/BareMetalHost", w.mapiNS+"/"+found[0]))
		}
	}, 3*time.Minute, 2*time.Second).Should(Succeed())
}

// waitMirroredHost waits until the paused Metal3Machine of a MAPI Machine
// names the Machine's host (an annotation: no new generation tells when
// the sync copied it).
func (w *bareMetalWorld) waitMirroredHost(ctx context.Context, name string) {
	Eventually(func(g Gomega) {
		m := &mapiv1beta1.Machine{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: name}, m)).To(Succeed())
		host := m.Annotations["metal3.io/BareMetalHost"]
		g.Expect(host).NotTo(BeEmpty())
		m3m := metal3Machine()
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: name}, m3m)).To(Succeed())
		g.Expect(annotations.HasPaused(m3m)).To(BeTrue())
		g.Expect(m3m.GetAnnotations()).To(HaveKeyWithValue("metal3.io/BareMetalHost", host))
	}, 2*time.Minute, time.Second).Should(Succeed())
}

func metal3Machine() *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta2")
	o.SetKind("Metal3Machine")
	return o
}

// waitScaled waits until the CAPI MachineSet runs n provisioned machines,
// each with a MAPI mirror synchronized from Cluster API, and the MAPI
// MachineSet mirrors it; it returns the Machines' names.
func (w *bareMetalWorld) waitScaled(ctx context.Context, msName string, n int) []string {
	var names []string
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(w.c.List(ctx, list, client.InNamespace(w.capiNS), client.MatchingLabels(w.selector(msName)))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		names = nil
		for _, m := range list.Items {
			m3m := metal3Machine()
			g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: m.Spec.InfrastructureRef.Name}, m3m)).To(Succeed())
			provisioned, _, _ := unstructured.NestedBool(m3m.Object, "status", "initialization", "provisioned")
			g.Expect(provisioned).To(BeTrue(), "Metal3Machine %s", m3m.GetName())
			mapi := &mapiv1beta1.Machine{}
			g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: m.Name}, mapi)).To(Succeed(), "MAPI mirror of %s", m.Name)
			g.Expect(synchronizedFrom(mapi.Status.Conditions, mapi.Status.SynchronizedAPI)).To(Equal("ClusterAPI"))
			names = append(names, m.Name)
		}
		ms := &mapiv1beta1.MachineSet{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: msName}, ms)).To(Succeed())
		g.Expect(ptr.Deref(ms.Spec.Replicas, 0)).To(BeEquivalentTo(n))
		g.Expect(ms.Status.Replicas).To(BeEquivalentTo(n))
	}, 4*time.Minute, 2*time.Second).Should(Succeed())
	sort.Strings(names)
	return names
}

// waitMetal3Paused waits until the CAPI Machine and Metal3Machine of a
// rolled back machine are paused.
func (w *bareMetalWorld) waitMetal3Paused(ctx context.Context, name string) {
	Eventually(func(g Gomega) {
		for _, o := range []client.Object{&clusterv1.Machine{}, metal3Machine()} {
			g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: name}, o)).To(Succeed())
			g.Expect(annotations.HasPaused(o)).To(BeTrue(), "%T %s", o, name)
		}
	}, 3*time.Minute, 2*time.Second).Should(Succeed())
}

// playActuatorDelete plays the bare-metal actuator's Delete (and the Bare
// Metal Operator deprovisioning): the host is deprovisioned, then its
// consumer cleared, then the Machine goes. It returns false, touching
// nothing, for a providerID the actuator cannot read (getHostKey accepts
// only baremetalhost:///): a machine Cluster API made (metal3://…).
func (w *bareMetalWorld) playActuatorDelete(ctx context.Context, m *mapiv1beta1.Machine) bool {
	c := w.c
	id := ptr.Deref(m.Spec.ProviderID, "")
	if id != "" && !strings.HasPrefix(id, "baremetalhost:///") {
		return false
	}
	ns, name, _ := strings.Cut(m.Annotations["metal3.io/BareMetalHost"], "/")
	if id != "" {
		parts := strings.Split(strings.TrimPrefix(id, "baremetalhost:///"), "/")
		ns, name = parts[0], parts[1]
	}
	w.releaseHost(ctx, client.ObjectKey{Namespace: ns, Name: name}, m.Name)
	Eventually(func() error {
		cur := &mapiv1beta1.Machine{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(m), cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		base := cur.DeepCopy()
		controllerutil.RemoveFinalizer(cur, mapiMachineFinalizer)
		return c.Patch(ctx, cur, client.MergeFrom(base))
	}, time.Minute, time.Second).Should(Succeed())
	return true
}

// releaseHost deprovisions the host that MAPI Machine machine consumes
// and clears its consumer, as the actuator and the Bare Metal Operator do.
func (w *bareMetalWorld) releaseHost(ctx context.Context, key client.ObjectKey, machine string) {
	c := w.c
	Eventually(func(g Gomega) {
		h := &bmhv1alpha1.BareMetalHost{}
		g.Expect(c.Get(ctx, key, h)).To(Succeed())
		if r := h.Spec.ConsumerRef; r == nil || r.Kind != "Machine" || r.Name != machine {
			return // not this machine's: left alone, as the actuator does
		}
		if h.Spec.Image != nil || h.Spec.UserData != nil {
			base := h.DeepCopy()
			h.Spec.Image, h.Spec.UserData, h.Spec.Online = nil, nil, false
			g.Expect(c.Patch(ctx, h, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))).To(Succeed())
		}
		if h.Status.Provisioning.State != "available" {
			base := h.DeepCopy()
			h.Status.Provisioning.State, h.Status.PoweredOn = "available", false
			g.Expect(c.Status().Patch(ctx, h, client.MergeFrom(base))).To(Succeed())
		}
		base := h.DeepCopy()
		h.Spec.ConsumerRef = nil
		g.Expect(c.Patch(ctx, h, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))).To(Succeed())
	}, time.Minute, time.Second).Should(Succeed())
}

// deleteAll deletes the MAPI MachineSet and plays the actuator for its
// Machines. The machine Cluster API made keeps a providerID the actuator
// cannot read: the test checks that it is held (its host untouched), then
// does by hand what its Delete would (the known limit in
// docs/addon/migration.md). Then every host must be free and nothing of
// the MachineSet left on either side.
func (w *bareMetalWorld) deleteAll(ctx context.Context, msName string) {
	c := w.c
	Expect(c.Delete(ctx, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: msName}})).To(Succeed())
	var held []mapiv1beta1.Machine
	Eventually(func(g Gomega) {
		list := &mapiv1beta1.MachineList{}
		g.Expect(c.List(ctx, list, client.InNamespace(w.mapiNS), client.MatchingLabels(w.selector(msName)))).To(Succeed())
		held = nil
		for i := range list.Items {
			m := &list.Items[i]
			g.Expect(m.DeletionTimestamp.IsZero()).To(BeFalse(), "Machine %s not deleted with its MachineSet", m.Name)
			if controllerutil.ContainsFinalizer(m, mapiMachineFinalizer) && !w.playActuatorDelete(ctx, m) {
				held = append(held, *m)
			}
		}
		g.Expect(list.Items).To(HaveLen(len(held)))
	}, 4*time.Minute, 3*time.Second).Should(Succeed())
	Expect(held).To(HaveLen(1), "the machine Cluster API made is held by the actuator")
	m := held[0]
	Expect(ptr.Deref(m.Spec.ProviderID, "")).To(HavePrefix("metal3://"))
	hostKey := m.Annotations["metal3.io/BareMetalHost"]
	Expect(hostKey).NotTo(BeEmpty())
	ns, name, _ := strings.Cut(hostKey, "/")
	h := &bmhv1alpha1.BareMetalHost{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h)).To(Succeed())
	Expect(string(h.Status.Provisioning.State)).To(Equal(provisionedState), "its host is left as it is")
	AddReportEntry("bare-metal migration", fmt.Sprintf("%s: Machine %s (providerID %s) is held by the Machine API's actuator after the rollback; released by hand",
		w.infra, m.Name, ptr.Deref(m.Spec.ProviderID, "")))
	w.releaseHost(ctx, client.ObjectKey{Namespace: ns, Name: name}, m.Name)
	Eventually(func() error {
		cur := &mapiv1beta1.Machine{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(&m), cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		base := cur.DeepCopy()
		controllerutil.RemoveFinalizer(cur, mapiMachineFinalizer)
		return c.Patch(ctx, cur, client.MergeFrom(base))
	}, time.Minute, time.Second).Should(Succeed())

	By("Checking that every host is free and nothing of the MachineSet is left")
	Eventually(func(g Gomega) {
		for _, h := range w.hosts(ctx) {
			g.Expect(h.Spec.ConsumerRef).To(BeNil(), "host %s still consumed", h.Name)
			g.Expect(h.Spec.Image).To(BeNil(), "host %s", h.Name)
			g.Expect(string(h.Status.Provisioning.State)).To(Equal("available"), "host %s", h.Name)
			g.Expect(h.OwnerReferences).To(BeEmpty(), "host %s", h.Name)
		}
		mapi := &mapiv1beta1.MachineList{}
		g.Expect(c.List(ctx, mapi, client.InNamespace(w.mapiNS), client.MatchingLabels(w.selector(msName)))).To(Succeed())
		g.Expect(mapi.Items).To(BeEmpty())
		err := c.Get(ctx, client.ObjectKey{Namespace: w.mapiNS, Name: msName}, &mapiv1beta1.MachineSet{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "MAPI MachineSet still there: %v", err)
		capi := &clusterv1.MachineList{}
		g.Expect(c.List(ctx, capi, client.InNamespace(w.capiNS), client.MatchingLabels(w.selector(msName)))).To(Succeed())
		g.Expect(capi.Items).To(BeEmpty())
		err = c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: msName}, &clusterv1.MachineSet{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "CAPI MachineSet still there: %v", err)
		for _, kind := range []string{"Metal3Machine", "Metal3MachineTemplate"} {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta2")
			l.SetKind(kind + "List")
			g.Expect(c.List(ctx, l, client.InNamespace(w.capiNS))).To(Succeed())
			var left []string
			for _, o := range l.Items {
				if strings.HasPrefix(o.GetName(), msName) {
					left = append(left, o.GetName())
				}
			}
			g.Expect(left).To(BeEmpty(), "%s objects left", kind)
		}
	}, 4*time.Minute, 3*time.Second).Should(Succeed())

	Expect(c.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.capiNS, Name: w.infra}})).To(Succeed())
	Eventually(func() bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: w.capiNS, Name: w.infra}, &clusterv1.Cluster{})
		return apierrors.IsNotFound(err)
	}, 3*time.Minute, 2*time.Second).Should(BeTrue())
	for _, h := range w.hosts(ctx) {
		Expect(c.Delete(ctx, &h)).To(Succeed())
	}
	for _, s := range []string{"worker-user-data", w.bmcSecret} {
		_ = c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.mapiNS, Name: s}})
	}
}
