package mapi2capi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/api/deprecated/errors" //nolint:staticcheck // CAPI's v1beta1 status block uses it

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// TestMachineSet covers the MachineSet-level mapping: metadata, spec and
// status, and the MachineSet fields that are rejected.
func TestMachineSet(t *testing.T) {
	tests := []struct {
		name         string
		mutate       func(*mapiv1beta1.MachineSet)
		infra        func(*Infra)
		check        func(*testing.T, *clusterv1.MachineSet)
		wantWarnings []string
		wantErrs     []string
	}{
		{
			name:   "name, namespace, cluster, replicas, deletion order",
			mutate: func(ms *mapiv1beta1.MachineSet) { ms.Spec.DeletePolicy = "Oldest" },
			check: func(t *testing.T, c *clusterv1.MachineSet) {
				if c.Name != testMSName || c.Namespace != testCAPINS {
					t.Errorf("%s/%s", c.Namespace, c.Name)
				}
				if c.APIVersion != "cluster.x-k8s.io/v1beta2" || c.Kind != "MachineSet" {
					t.Errorf("type %s %s", c.APIVersion, c.Kind)
				}
				if c.Spec.ClusterName != testCluster || c.Spec.Template.Spec.ClusterName != testCluster {
					t.Errorf("cluster %q %q", c.Spec.ClusterName, c.Spec.Template.Spec.ClusterName)
				}
				if *c.Spec.Replicas != 3 || c.Spec.Deletion.Order != clusterv1.OldestMachineSetDeletionOrder {
					t.Errorf("replicas %d order %q", *c.Spec.Replicas, c.Spec.Deletion.Order)
				}
				if c.Spec.Template.Spec.MinReadySeconds != nil || c.Spec.Template.Spec.Version != "" {
					t.Errorf("minReadySeconds or version set")
				}
			},
		},
		{
			name:   "defaults: one replica, Random order",
			mutate: func(ms *mapiv1beta1.MachineSet) { ms.Spec.Replicas = nil },
			check: func(t *testing.T, c *clusterv1.MachineSet) {
				if *c.Spec.Replicas != 1 || c.Spec.Deletion.Order != clusterv1.RandomMachineSetDeletionOrder {
					t.Errorf("replicas %d order %q", *c.Spec.Replicas, c.Spec.Deletion.Order)
				}
			},
		},
		{
			name:   "zero replicas stay zero; minReadySeconds",
			mutate: func(ms *mapiv1beta1.MachineSet) { ms.Spec.Replicas = ptr.To[int32](0); ms.Spec.MinReadySeconds = 30 },
			check: func(t *testing.T, c *clusterv1.MachineSet) {
				if *c.Spec.Replicas != 0 || ptr.Deref(c.Spec.Template.Spec.MinReadySeconds, 0) != 30 {
					t.Errorf("replicas %d minReadySeconds %v", *c.Spec.Replicas, c.Spec.Template.Spec.MinReadySeconds)
				}
			},
		},
		{
			name: "labels and annotations, translated",
			mutate: func(ms *mapiv1beta1.MachineSet) {
				ms.Labels = map[string]string{"team": "a", MAPIMachineRoleLabel: "infra", MAPIRegionLabel: "r"}
				ms.Annotations = map[string]string{
					"machine.openshift.io/memoryMb": "16384", MAPIDeleteMachineAnnotation: "yes",
					MAPIInstanceStateAnnotation: "running", LastAppliedAnnotation: "{}",
				}
			},
			check: func(t *testing.T, c *clusterv1.MachineSet) {
				wantL := map[string]string{"team": "a", "node-role.kubernetes.io/infra": "", clusterv1.ClusterNameLabel: testCluster}
				if diff := cmp.Diff(wantL, c.Labels); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
				wantA := map[string]string{"machine.openshift.io/memoryMb": "16384", clusterv1.DeleteMachineAnnotation: "yes"}
				if diff := cmp.Diff(wantA, c.Annotations); diff != "" {
					t.Errorf("annotations (-want +got):\n%s", diff)
				}
			},
			wantWarnings: []string{"metadata.labels[machine.openshift.io/region]", "metadata.annotations[machine.openshift.io/instance-state]"},
		},
		{
			name: "selector and template labels, node labels, lifecycle hooks",
			mutate: func(ms *mapiv1beta1.MachineSet) {
				ms.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "x", Operator: metav1.LabelSelectorOpExists}}
				ms.Spec.Template.Labels["x"] = "1"
				ms.Spec.Template.Annotations = map[string]string{"a": "b"}
				ms.Spec.Template.Spec.Labels = map[string]string{"node-role.kubernetes.io/infra": "", "custom": "v"}
				ms.Spec.Template.Spec.Annotations = map[string]string{"node.cluster.x-k8s.io/n": "1", "other": "2"}
				ms.Spec.Template.Spec.LifecycleHooks = mapiv1beta1.LifecycleHooks{
					PreDrain:     []mapiv1beta1.LifecycleHook{{Name: "drain-hook", Owner: "me"}},
					PreTerminate: []mapiv1beta1.LifecycleHook{{Name: "term-hook", Owner: "you"}},
				}
			},
			check: func(t *testing.T, c *clusterv1.MachineSet) {
				wantSel := metav1.LabelSelector{
					MatchLabels: map[string]string{
						"machine.openshift.io/cluster-api-cluster": testCluster, "machine.openshift.io/cluster-api-machineset": testMSName,
					},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: metav1.LabelSelectorOpExists}},
				}
				if diff := cmp.Diff(wantSel, c.Spec.Selector); diff != "" {
					t.Errorf("selector (-want +got):\n%s", diff)
				}
				wantL := map[string]string{
					"machine.openshift.io/cluster-api-cluster": testCluster, "machine.openshift.io/cluster-api-machineset": testMSName,
					"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/infra": "", "custom": "v", "x": "1",
					clusterv1.ClusterNameLabel: testCluster,
				}
				if diff := cmp.Diff(wantL, c.Spec.Template.Labels); diff != "" {
					t.Errorf("template labels (-want +got):\n%s", diff)
				}
				wantA := map[string]string{
					"a": "b", "node.cluster.x-k8s.io/n": "1", "other": "2",
					"pre-drain.delete.hook.machine.cluster.x-k8s.io/drain-hook":    "me",
					"pre-terminate.delete.hook.machine.cluster.x-k8s.io/term-hook": "you",
				}
				if diff := cmp.Diff(wantA, c.Spec.Template.Annotations); diff != "" {
					t.Errorf("template annotations (-want +got):\n%s", diff)
				}
				if c.Status.Selector == "" {
					t.Errorf("no status selector")
				}
			},
			wantWarnings: []string{"spec.template.spec.metadata.labels[custom]", "spec.template.spec.metadata.annotations[other]"},
		},
		{
			name: "a node label conflicting with a template label",
			mutate: func(ms *mapiv1beta1.MachineSet) {
				ms.Spec.Template.Spec.Labels = map[string]string{"machine.openshift.io/cluster-api-cluster": "other"}
			},
			wantWarnings: []string{"spec.template.spec.metadata.labels[machine.openshift.io/cluster-api-cluster]"},
			wantErrs:     []string{"spec.template.spec.metadata.labels[machine.openshift.io/cluster-api-cluster]"},
		},
		{
			name:     "selector not matching the converted template labels",
			mutate:   func(ms *mapiv1beta1.MachineSet) { ms.Spec.Selector.MatchLabels["absent"] = "x" },
			wantErrs: []string{"spec.selector"},
		},
		{
			name: "invalid selector",
			mutate: func(ms *mapiv1beta1.MachineSet) {
				ms.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}
			},
			wantErrs: []string{"spec.selector"},
		},
		{
			name:     "a role label that makes no label key",
			mutate:   func(ms *mapiv1beta1.MachineSet) { ms.Spec.Template.Labels[MAPIMachineRoleLabel] = "a b" },
			wantErrs: []string{"spec.template.metadata.labels[machine.openshift.io/cluster-api-machine-role]"},
		},
		{
			name: "taints: Always propagation",
			mutate: func(ms *mapiv1beta1.MachineSet) {
				ms.Spec.Template.Spec.Taints = []corev1.Taint{
					{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule},
					{Key: "node.kubernetes.io/out-of-service", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{}},
				}
			},
			check: func(t *testing.T, c *clusterv1.MachineSet) {
				want := []clusterv1.MachineTaint{
					{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationAlways},
					{Key: "node.kubernetes.io/out-of-service", Effect: corev1.TaintEffectNoExecute, Propagation: clusterv1.MachineTaintPropagationAlways},
				}
				if diff := cmp.Diff(want, c.Spec.Template.Spec.Taints); diff != "" {
					t.Errorf("taints (-want +got):\n%s", diff)
				}
			},
			wantWarnings: []string{"spec.template.spec.taints[1].timeAdded"},
		},
		{
			name: "taints with reserved keys",
			mutate: func(ms *mapiv1beta1.MachineSet) {
				ms.Spec.Template.Spec.Taints = []corev1.Taint{
					{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule},
					{Key: "node.cloudprovider.kubernetes.io/uninitialized", Effect: corev1.TaintEffectNoSchedule},
					{Key: "node-role.kubernetes.io/master", Effect: corev1.TaintEffectNoSchedule},
				}
			},
			wantErrs: []string{"spec.template.spec.taints[0].key", "spec.template.spec.taints[1].key", "spec.template.spec.taints[2].key"},
		},
		{
			name: "template metadata and providerID refused",
			mutate: func(ms *mapiv1beta1.MachineSet) {
				ms.Spec.Template.Name, ms.Spec.Template.GenerateName, ms.Spec.Template.Namespace = "n", "g", "ns"
				ms.Spec.Template.Spec.Name = "x"
				ms.Spec.Template.Spec.OwnerReferences = []metav1.OwnerReference{{Name: "o"}}
				ms.Spec.Template.Spec.ProviderID = ptr.To("openstack:///x")
			},
			wantErrs: []string{
				"spec.template.metadata.name", "spec.template.metadata.generateName", "spec.template.metadata.namespace",
				"spec.template.spec.metadata.name", "spec.template.spec.metadata.ownerReferences", "spec.template.spec.providerID",
			},
		},
		{
			name:     "cluster name and namespace required",
			infra:    func(i *Infra) { i.ClusterName, i.Namespace = "", "" },
			wantErrs: []string{"infrastructure.status.infrastructureName", "namespace"},
		},
		{
			name: "status mirrored",
			mutate: func(ms *mapiv1beta1.MachineSet) {
				ms.Status = mapiv1beta1.MachineSetStatus{
					Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 1,
					ErrorReason: ptr.To(mapiv1beta1.InvalidConfigurationMachineSetError), ErrorMessage: ptr.To("bad"),
				}
			},
			check: func(t *testing.T, c *clusterv1.MachineSet) {
				want := wantMirroredStatus(c.Status.Selector)
				if diff := cmp.Diff(want, c.Status); diff != "" {
					t.Errorf("status (-want +got):\n%s", diff)
				}
				if c.Status.Selector != "machine.openshift.io/cluster-api-cluster=ocp-x7k2p,machine.openshift.io/cluster-api-machineset=ocp-x7k2p-worker-0" {
					t.Errorf("status selector %q", c.Status.Selector)
				}
			},
		},
		{
			name: "authoritativeAPI fields are not converted",
			mutate: func(ms *mapiv1beta1.MachineSet) {
				ms.Spec.AuthoritativeAPI = mapiv1beta1.MachineAuthorityMachineAPI
				ms.Spec.Template.Spec.AuthoritativeAPI = mapiv1beta1.MachineAuthorityClusterAPI
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := testMachineSet(t, baseOpenStack())
			if tt.mutate != nil {
				tt.mutate(ms)
			}
			infra := testInfra()
			if tt.infra != nil {
				tt.infra(&infra)
			}
			capi, _, warnings, errs := MachineSet(ms, infra)
			checkReport(t, warnings, errs, tt.wantWarnings, tt.wantErrs)
			if len(errs) == 0 && tt.check != nil {
				tt.check(t, capi)
			}
		})
	}
}

// TestDeterminism: the same MachineSet converts to the same objects, and the
// template's name follows its spec: a change makes a new name, a revert the
// old one. The input is not modified.
func TestDeterminism(t *testing.T) {
	ps := baseOpenStack()
	ps.ServerMetadata = map[string]string{"a": "1", "b": "2", "c": "3"}
	ps.Networks = append(ps.Networks, networkWithSubnets())
	ms := testMachineSet(t, ps)
	before := ms.DeepCopy()

	capi1, t1, _, errs := MachineSet(ms, testInfra())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for range 20 {
		capi2, t2, _, _ := MachineSet(ms.DeepCopy(), testInfra())
		if diff := cmp.Diff(capi1, capi2); diff != "" {
			t.Fatalf("MachineSet differs between runs:\n%s", diff)
		}
		if diff := cmp.Diff(t1, t2); diff != "" {
			t.Fatalf("template differs between runs:\n%s", diff)
		}
	}
	if diff := cmp.Diff(before, ms); diff != "" {
		t.Errorf("input modified:\n%s", diff)
	}

	ps.Flavor = "m1.huge"
	_, changed, _, _ := MachineSet(testMachineSet(t, ps), testInfra())
	if changed.GetName() == t1.GetName() {
		t.Errorf("a changed spec kept the name %s", t1.GetName())
	}
	ps.Flavor = baseOpenStack().Flavor
	_, reverted, _, _ := MachineSet(testMachineSet(t, ps), testInfra())
	if reverted.GetName() != t1.GetName() {
		t.Errorf("a reverted spec is named %s, want %s", reverted.GetName(), t1.GetName())
	}

	// What is not in the template's spec does not change its name.
	ms2 := testMachineSet(t, ps)
	ms2.Spec.Replicas = ptr.To[int32](7)
	ms2.Labels["x"] = "y"
	_, same, _, _ := MachineSet(ms2, testInfra())
	if same.GetName() != t1.GetName() {
		t.Errorf("a MachineSet change renamed the template: %s, want %s", same.GetName(), t1.GetName())
	}
}

// wantMirroredStatus is the status the "status mirrored" case expects.
//
//nolint:staticcheck // the v1beta1 block is deprecated in CAPI, yet MAPI has its fields
func wantMirroredStatus(selector string) clusterv1.MachineSetStatus {
	return clusterv1.MachineSetStatus{
		Selector: selector, Replicas: ptr.To[int32](3), ReadyReplicas: ptr.To[int32](2), AvailableReplicas: ptr.To[int32](1),
		Deprecated: &clusterv1.MachineSetDeprecatedStatus{V1Beta1: &clusterv1.MachineSetV1Beta1DeprecatedStatus{
			FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1,
			FailureReason: ptr.To(capierrors.MachineSetStatusError("InvalidConfiguration")), FailureMessage: ptr.To("bad"),
		}},
	}
}
