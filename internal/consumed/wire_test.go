/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package consumed_test

// Integration test against a real kube-apiserver with the upstream CRDs
// installed (or our generated ones when upstream's are not at hand): for
// each consumed kind, an object with every modelled field set is written
// and read back, and must come back unchanged. A field whose JSON name,
// type or place differs from upstream's schema would be pruned (or
// rejected), so this proves the types are wire-compatible.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/consumed"
	agentv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	buildv1 "github.com/ocp-capi/ocp-capi/internal/consumed/build/v1"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	machinev1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	mcov1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
	metal3v1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
	orcv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/orc/v1alpha1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// The API server is started once, by the first test that needs it, and
// stopped by TestMain; the pure tests of this package never start it.
var (
	envOnce  sync.Once
	env      *envtest.Environment
	envError error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the test API server: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

func testEnv(t *testing.T) *envtest.Environment {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not starting an API server")
	}
	envOnce.Do(func() { env, envError = envtest.Start(envtest.Options{}) })
	if envError != nil {
		t.Fatalf("starting the test API server: %v", envError)
	}
	return env
}

// wireCase describes how to exercise one kind.
type wireCase struct {
	// objects returns objects of the kind that, between them, set every
	// modelled spec field to a value upstream's schema accepts. More than
	// one is needed only where upstream forbids two fields together.
	objects func(name, namespace string) []client.Object
	// setStatus sets every modelled status field. Nil when the kind
	// models no status.
	setStatus func(client.Object)
	// statusInMain: the kind has no status subresource (OpenShift's Build
	// API), so status is written through the main resource.
	statusInMain bool
}

func ptr[T any](v T) *T { return &v }

// wireTime has the precision the API server keeps (seconds).
var wireTime = metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))

func rawJSON(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func meta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace}
}

func objectRef(kind, name string) corev1.ObjectReference {
	return corev1.ObjectReference{
		APIVersion: "v1", Kind: kind, Namespace: "ns", Name: name,
		UID: "6c3c2d3e-0c55-4a43-9a4c-2f6d5d7f1c01", ResourceVersion: "42", FieldPath: "spec",
	}
}

func labelSelector() metav1.LabelSelector {
	return metav1.LabelSelector{
		MatchLabels: map[string]string{"role": "worker"},
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
		},
	}
}

func machineSpec() machinev1beta1.MachineSpec {
	return machinev1beta1.MachineSpec{
		ObjectMeta: machinev1beta1.ObjectMeta{
			Name: "node-name", GenerateName: "node-", Namespace: "node-ns",
			Labels:      map[string]string{"node-role.kubernetes.io/worker": ""},
			Annotations: map[string]string{"example.com/a": "b"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: "owner",
				UID: "0d1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b", Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}},
		},
		LifecycleHooks: machinev1beta1.LifecycleHooks{
			PreDrain:     []machinev1beta1.LifecycleHook{{Name: "example.com/drain", Owner: "drain-owner"}},
			PreTerminate: []machinev1beta1.LifecycleHook{{Name: "terminate-hook", Owner: "terminate-owner"}},
		},
		Taints:           []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &wireTime}},
		ProviderSpec:     machinev1beta1.ProviderSpec{Value: rawJSON(`{"apiVersion":"machine.openshift.io/v1alpha1","flavor":"m1.large","kind":"OpenstackProviderSpec"}`)},
		ProviderID:       ptr("openstack:///0d1a2b3c"),
		AuthoritativeAPI: machinev1beta1.MachineAuthorityClusterAPI,
	}
}

func mapiConditions() []machinev1beta1.Condition {
	return []machinev1beta1.Condition{{
		Type: "Synchronized", Status: corev1.ConditionFalse, Severity: machinev1beta1.ConditionSeverityError,
		LastTransitionTime: wireTime, Reason: "FailedToConvertMAPIMachineSetToCAPI", Message: "m",
	}}
}

func metal3MachineSpec() metal3v1beta1.Metal3MachineSpec {
	return metal3v1beta1.Metal3MachineSpec{
		ProviderID:   ptr("metal3://ns/host/m"),
		Image:        metal3v1beta1.Image{URL: "http://images/rhcos.iso", Checksum: "abc", ChecksumType: ptr("sha256")},
		CustomDeploy: &metal3v1beta1.CustomDeploy{Method: "start_assisted_install"},
		UserData:     &corev1.SecretReference{Name: "ud", Namespace: "ns"},
		HostSelector: metal3v1beta1.HostSelector{
			MatchLabels:      map[string]string{"a": "b"},
			MatchExpressions: []metal3v1beta1.HostSelectorRequirement{{Key: "k", Operator: selection.In, Values: []string{"v"}}},
		},
		DataTemplate:          &metal3v1beta1.LocalObjectReference{Name: "dt", Namespace: "ns"},
		MetaData:              &corev1.SecretReference{Name: "md", Namespace: "ns"},
		NetworkData:           &corev1.SecretReference{Name: "nd", Namespace: "ns"},
		AutomatedCleaningMode: ptr("disabled"),
	}
}

var wireCases = map[string]wireCase{
	"MachineSet": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&machinev1beta1.MachineSet{
				ObjectMeta: meta(name, ns),
				Spec: machinev1beta1.MachineSetSpec{
					Replicas:        ptr[int32](3),
					MinReadySeconds: 5,
					DeletePolicy:    string(machinev1beta1.OldestMachineSetDeletePolicy),
					Selector:        labelSelector(),
					Template: machinev1beta1.MachineTemplateSpec{
						ObjectMeta: machinev1beta1.ObjectMeta{
							Name: "t", GenerateName: "t-", Namespace: ns,
							Labels: map[string]string{"role": "worker", "zone": "a"}, Annotations: map[string]string{"a": "b"},
							OwnerReferences: machineSpec().OwnerReferences,
						},
						Spec: machineSpec(),
					},
					AuthoritativeAPI: machinev1beta1.MachineAuthorityClusterAPI,
				},
			}}
		},
		setStatus: func(o client.Object) {
			o.(*machinev1beta1.MachineSet).Status = machinev1beta1.MachineSetStatus{
				Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 1,
				LabelSelector: "role=worker", ErrorReason: ptr(machinev1beta1.InvalidConfigurationMachineSetError),
				ErrorMessage: ptr("bad"), Conditions: mapiConditions(),
				AuthoritativeAPI: machinev1beta1.MachineAuthorityMigrating, SynchronizedAPI: machinev1beta1.SynchronizedAPIMachineAPI,
				SynchronizedGeneration: 7,
			}
		},
	},
	"Machine": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&machinev1beta1.Machine{ObjectMeta: meta(name, ns), Spec: machineSpec()}}
		},
		setStatus: func(o client.Object) {
			o.(*machinev1beta1.Machine).Status = machinev1beta1.MachineStatus{
				NodeRef: ptr(objectRef("Node", "node-0")), LastUpdated: &wireTime,
				ErrorReason: ptr(machinev1beta1.MachineStatusError("InvalidConfiguration")), ErrorMessage: ptr("bad"),
				ProviderStatus:   rawJSON(`{"instanceId":"i-1","instanceState":"ACTIVE"}`),
				Addresses:        []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}},
				Phase:            ptr("Running"),
				Conditions:       mapiConditions(),
				AuthoritativeAPI: machinev1beta1.MachineAuthorityMigrating, SynchronizedAPI: machinev1beta1.SynchronizedAPIClusterAPI,
				SynchronizedGeneration: 4,
			}
		},
	},
	"Infrastructure": {
		objects: func(name, _ string) []client.Object {
			return []client.Object{&configv1.Infrastructure{
				ObjectMeta: meta(name, ""),
				Spec:       configv1.InfrastructureSpec{PlatformSpec: configv1.PlatformSpec{Type: configv1.OpenStackPlatformType}},
			}}
		},
		setStatus: func(o client.Object) {
			o.(*configv1.Infrastructure).Status = configv1.InfrastructureStatus{
				InfrastructureName: "mycluster-x7k2p", Platform: configv1.OpenStackPlatformType,
				PlatformStatus: &configv1.PlatformStatus{Type: configv1.OpenStackPlatformType, OpenStack: &configv1.OpenStackPlatformStatus{
					APIServerInternalIPs: []string{"10.0.0.5", "fd00::5"}, IngressIPs: []string{"10.0.0.7"},
					LoadBalancer: &configv1.OpenStackPlatformLoadBalancer{Type: configv1.LoadBalancerTypeUserManaged},
				}},
				APIServerURL: "https://api.example.com:6443", APIServerInternalURL: "https://api-int.example.com:6443",
				ControlPlaneTopology: configv1.SingleReplicaTopologyMode, InfrastructureTopology: configv1.SingleReplicaTopologyMode,
			}
		},
	},
	"ClusterVersion": {
		// Upstream forbids desiredUpdate.architecture together with image, so
		// a second object carries the architecture.
		objects: func(name, _ string) []client.Object {
			spec := configv1.ClusterVersionSpec{
				ClusterID:     "5b1b8c0e-0d2c-4d0a-9d3e-1a2b3c4d5e6f",
				DesiredUpdate: &configv1.Update{Version: "4.20.1", Image: "quay.io/openshift-release-dev/ocp-release@sha256:0123", Force: true},
				Upstream:      "https://updates.example.com/graph",
				Channel:       "stable-4.20",
			}
			multi := *spec.DeepCopy()
			multi.DesiredUpdate = &configv1.Update{Architecture: configv1.ClusterVersionArchitectureMulti, Version: "4.20.1", Force: true}
			return []client.Object{
				&configv1.ClusterVersion{ObjectMeta: meta(name, ""), Spec: spec},
				&configv1.ClusterVersion{ObjectMeta: meta(name+"-multi", ""), Spec: multi},
			}
		},
		setStatus: func(o client.Object) {
			release := configv1.Release{
				Architecture: configv1.ClusterVersionArchitectureMulti, Version: "4.20.1", Image: "quay.io/r@sha256:0123",
				URL: "https://access.redhat.com/errata/1", Channels: []string{"fast-4.20", "stable-4.20"},
			}
			o.(*configv1.ClusterVersion).Status = configv1.ClusterVersionStatus{
				Desired: release,
				History: []configv1.UpdateHistory{{
					State: configv1.CompletedUpdate, StartedTime: wireTime, CompletionTime: &wireTime,
					Version: "4.20.1", Image: "quay.io/r@sha256:0123", Verified: true,
				}},
				ObservedGeneration: 2, VersionHash: "abc=",
				Conditions: []configv1.ClusterOperatorStatusCondition{{
					Type: "Available", Status: configv1.ConditionTrue, LastTransitionTime: wireTime, Reason: "Done", Message: "m",
				}},
				AvailableUpdates: []configv1.Release{release},
			}
		},
	},
	"MachineConfigPool": {
		objects: func(name, _ string) []client.Object {
			sel := labelSelector()
			return []client.Object{&mcov1.MachineConfigPool{
				ObjectMeta: meta(name, ""),
				Spec: mcov1.MachineConfigPoolSpec{
					MachineConfigSelector: &sel, NodeSelector: &sel, Paused: true,
					MaxUnavailable: ptr(intstr.FromString("10%")),
					Configuration: mcov1.MachineConfigPoolStatusConfiguration{
						ObjectReference: objectRef("MachineConfig", "rendered-worker-1"),
						Source:          []corev1.ObjectReference{objectRef("Build", "build-rendered-worker-1")},
					},
				},
			}}
		},
		setStatus: func(o client.Object) {
			o.(*mcov1.MachineConfigPool).Status = mcov1.MachineConfigPoolStatus{
				ObservedGeneration: 3,
				Configuration: mcov1.MachineConfigPoolStatusConfiguration{
					ObjectReference: objectRef("MachineConfig", "rendered-worker-1"),
					Source:          []corev1.ObjectReference{objectRef("MachineConfig", "00-worker")},
				},
				MachineCount: 5, UpdatedMachineCount: 4, ReadyMachineCount: 3, UnavailableMachineCount: 2, DegradedMachineCount: 1,
				Conditions: []mcov1.MachineConfigPoolCondition{{
					Type: "BuildSuccess", Status: corev1.ConditionTrue, LastTransitionTime: wireTime, Reason: "BuildSucceeded", Message: "m",
				}},
			}
		},
	},
	"MachineConfig": {
		objects: func(name, _ string) []client.Object {
			return []client.Object{&mcov1.MachineConfig{
				ObjectMeta: meta(name, ""),
				Spec: mcov1.MachineConfigSpec{
					OSImageURL:      "quay.io/os@sha256:0123",
					Config:          *rawJSON(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/x"}]}}`),
					KernelArguments: []string{"nosmt"}, Extensions: []string{"usbguard"}, FIPS: true, KernelType: "realtime",
				},
			}}
		},
	},
	"MachineOSConfig": {
		objects: func(name, _ string) []client.Object {
			return []client.Object{&mcov1.MachineOSConfig{
				ObjectMeta: meta(name, ""),
				Spec: mcov1.MachineOSConfigSpec{
					// Upstream's CEL: named after its pool.
					MachineConfigPool:       mcov1.MachineConfigPoolReference{Name: name},
					ImageBuilder:            mcov1.MachineOSImageBuilder{ImageBuilderType: "Job"},
					BaseImagePullSecret:     &mcov1.ImageSecretObjectReference{Name: "pull"},
					RenderedImagePushSecret: mcov1.ImageSecretObjectReference{Name: "push"},
					RenderedImagePushSpec:   "registry.example.com:5000/mco/os-image:latest",
					ContainerFile:           []mcov1.MachineOSContainerfile{{ContainerfileArch: "AMD64", Content: "FROM configs AS final\nRUN true"}},
				},
			}}
		},
		setStatus: func(o client.Object) {
			o.(*mcov1.MachineOSConfig).Status = mcov1.MachineOSConfigStatus{
				Conditions:           []metav1.Condition{{Type: "Seeded", Status: metav1.ConditionFalse, LastTransitionTime: wireTime, Reason: "NotSeeded", Message: "m", ObservedGeneration: 1}},
				ObservedGeneration:   1,
				CurrentImagePullSpec: "registry.example.com:5000/mco/os-image@sha256:" + strings.Repeat("a", 64),
				MachineOSBuild:       &mcov1.ObjectReference{Group: "machineconfiguration.openshift.io", Resource: "machineosbuilds", Namespace: "ns", Name: "worker-abc"},
			}
		},
	},
	"MachineOSBuild": {
		objects: func(name, _ string) []client.Object {
			return []client.Object{&mcov1.MachineOSBuild{
				ObjectMeta: meta(name, ""),
				Spec: mcov1.MachineOSBuildSpec{
					MachineConfig:         mcov1.MachineConfigReference{Name: "rendered-worker-0123456789"},
					MachineOSConfig:       mcov1.MachineOSConfigReference{Name: "worker"},
					RenderedImagePushSpec: "registry.example.com:5000/mco/os-image:worker-abc",
				},
			}}
		},
		setStatus: func(o client.Object) {
			end := metav1.NewTime(wireTime.Add(time.Minute))
			o.(*mcov1.MachineOSBuild).Status = mcov1.MachineOSBuildStatus{
				Conditions: []metav1.Condition{{Type: mcov1.MachineOSBuildSucceeded, Status: metav1.ConditionTrue, LastTransitionTime: wireTime, Reason: "Ready", Message: "Build Ready", ObservedGeneration: 1}},
				Builder: &mcov1.MachineOSBuilderReference{ImageBuilderType: "Job",
					Job: &mcov1.ObjectReference{Group: "batch", Resource: "jobs", Namespace: "openshift-machine-config-operator", Name: "build-worker-abc"}},
				RelatedObjects:        []mcov1.ObjectReference{{Group: "batch", Resource: "jobs", Namespace: "openshift-machine-config-operator", Name: "build-worker-abc"}},
				BuildStart:            &wireTime,
				BuildEnd:              &end,
				DigestedImagePushSpec: "registry.example.com:5000/mco/os-image@sha256:" + strings.Repeat("b", 64),
			}
		},
	},
	"Build": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&buildv1.Build{
				ObjectMeta: meta(name, ns),
				Spec: buildv1.BuildSpec{CommonSpec: buildv1.CommonSpec{
					ServiceAccount: "machine-os-builder",
					Source: buildv1.BuildSource{
						Type: buildv1.BuildSourceDockerfile, Dockerfile: ptr("FROM scratch"),
						Secrets:    []buildv1.SecretBuildSource{{Secret: corev1.LocalObjectReference{Name: "etc-pki"}, DestinationDir: "pki"}},
						ConfigMaps: []buildv1.ConfigMapBuildSource{{ConfigMap: corev1.LocalObjectReference{Name: "mc-rendered"}, DestinationDir: "machineconfig"}},
					},
					Strategy: buildv1.BuildStrategy{
						Type: buildv1.DockerBuildStrategyType,
						DockerStrategy: &buildv1.DockerBuildStrategy{
							From:                    ptr(corev1.ObjectReference{Kind: "DockerImage", Name: "quay.io/base:latest"}),
							PullSecret:              &corev1.LocalObjectReference{Name: "pull"},
							Env:                     []corev1.EnvVar{{Name: "A", Value: "1"}},
							BuildArgs:               []corev1.EnvVar{{Name: "B", Value: "2"}},
							ImageOptimizationPolicy: ptr(buildv1.ImageOptimizationSkipLayers),
						},
					},
					Output: buildv1.BuildOutput{
						To:          ptr(corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example.com/os:rendered"}),
						PushSecret:  &corev1.LocalObjectReference{Name: "push"},
						ImageLabels: []buildv1.ImageLabel{{Name: "io.openshift.machineconfig.pool", Value: "worker"}},
					},
					Resources: corev1.ResourceRequirements{
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
					},
					CompletionDeadlineSeconds: ptr[int64](3600),
					NodeSelector:              buildv1.OptionalNodeSelector{"kubernetes.io/arch": "amd64"},
				}},
			}}
		},
		statusInMain: true,
		setStatus: func(o client.Object) {
			o.(*buildv1.Build).Status = buildv1.BuildStatus{
				Phase: buildv1.BuildPhaseComplete, Cancelled: true, Reason: "BuildPodDeleted", Message: "m",
				StartTimestamp: &wireTime, CompletionTimestamp: &wireTime, Duration: 90 * time.Second,
				OutputDockerImageReference: "registry.example.com/os:rendered",
				Output:                     buildv1.BuildStatusOutput{To: &buildv1.BuildStatusOutputTo{ImageDigest: "sha256:0123"}},
				LogSnippet:                 "STEP 1/2",
				Conditions: []buildv1.BuildCondition{{
					Type: "Complete", Status: corev1.ConditionTrue, LastUpdateTime: wireTime, LastTransitionTime: wireTime,
					Reason: "r", Message: "m",
				}},
			}
		},
	},
	"InfraEnv": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&agentv1beta1.InfraEnv{
				ObjectMeta: meta(name, ns),
				Spec: agentv1beta1.InfraEnvSpec{
					Proxy:                      &agentv1beta1.Proxy{HTTPProxy: "http://p:3128", HTTPSProxy: "http://p:3129", NoProxy: ".local"},
					AdditionalNTPSources:       []string{"ntp.example.com"},
					SSHAuthorizedKey:           "ssh-ed25519 AAAA",
					PullSecretRef:              &corev1.LocalObjectReference{Name: "pull-secret"},
					AgentLabels:                map[string]string{"pool": "a"},
					NMStateConfigLabelSelector: labelSelector(),
					ClusterRef:                 &agentv1beta1.ClusterReference{Name: "cd", Namespace: ns},
					IgnitionConfigOverride:     `{"ignition":{"version":"3.1.0"}}`,
					CPUArchitecture:            "aarch64",
					IPXEScriptType:             agentv1beta1.BootOrderControl,
					KernelArguments:            []agentv1beta1.KernelArgument{{Operation: "append", Value: `rd.net.timeout.carrier=60`}},
					AdditionalTrustBundle:      "-----BEGIN CERTIFICATE-----",
					OSImageVersion:             "4.20",
					ImageType:                  agentv1beta1.ImageTypeMinimalISO,
				},
			}}
		},
		setStatus: func(o client.Object) {
			o.(*agentv1beta1.InfraEnv).Status = agentv1beta1.InfraEnvStatus{
				ISODownloadURL: "https://assisted/iso", CreatedTime: &wireTime,
				Conditions: []agentv1beta1.Condition{{
					Type: agentv1beta1.ImageCreatedCondition, Status: corev1.ConditionTrue, Reason: "ImageCreated", Message: "m",
					LastHeartbeatTime: wireTime, LastTransitionTime: wireTime,
				}},
				InfraEnvDebugInfo: agentv1beta1.InfraEnvDebugInfo{EventsURL: "https://assisted/events", StaticNetworkDownloadURL: "https://assisted/net"},
				BootArtifacts: agentv1beta1.BootArtifacts{
					InitrdURL: "https://a/initrd", RootfsURL: "https://a/rootfs", KernelURL: "https://a/kernel",
					IpxeScriptURL: "https://a/ipxe", DiscoveryIgnitionURL: "https://a/ign",
				},
			}
		},
	},
	"Agent": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&agentv1beta1.Agent{
				ObjectMeta: meta(name, ns),
				Spec: agentv1beta1.AgentSpec{
					ClusterDeploymentName:   &agentv1beta1.ClusterReference{Name: "cd", Namespace: ns},
					Role:                    agentv1beta1.HostRoleMaster,
					Hostname:                "master-0",
					MachineConfigPool:       "master",
					Approved:                true,
					InstallationDiskID:      "/dev/disk/by-id/wwn-0x1",
					InstallationDiskPath:    "/dev/sda",
					InstallerArgs:           `["--append-karg","nosmt"]`,
					IgnitionConfigOverrides: `{"ignition":{"version":"3.1.0"}}`,
					NodeLabels:              map[string]string{"node-role.kubernetes.io/infra": ""},
				},
			}}
		},
		setStatus: func(o client.Object) {
			o.(*agentv1beta1.Agent).Status = agentv1beta1.AgentStatus{
				Bootstrap: true, Role: agentv1beta1.HostRoleMaster,
				Inventory: agentv1beta1.HostInventory{
					Hostname: "master-0", BmcAddress: "10.0.0.1",
					Interfaces: []agentv1beta1.HostInterface{{
						IPV6Addresses: []string{"fd00::5/64"}, Name: "eth0", IPV4Addresses: []string{"10.0.0.5/24"},
						MacAddress: "52:54:00:00:00:01", Flags: []string{"up"}, SpeedMbps: 1000,
					}},
					SystemVendor: agentv1beta1.HostSystemVendor{SerialNumber: "s", ProductName: "p", Manufacturer: "m", Virtual: true},
				},
				Progress: agentv1beta1.HostProgressInfo{
					CurrentStage: "Joined", InstallationPercentage: 90, StageStartTime: &wireTime, StageUpdateTime: &wireTime,
				},
				NtpSources: []agentv1beta1.HostNTPSources{{SourceName: "ntp.example.com", SourceState: "synced"}},
				Conditions: []agentv1beta1.Condition{{
					Type: agentv1beta1.InstalledCondition, Status: corev1.ConditionFalse, Reason: "InstallationInProgress", Message: "m",
					LastHeartbeatTime: wireTime, LastTransitionTime: wireTime,
				}},
				DebugInfo: agentv1beta1.DebugInfo{EventsURL: "https://assisted/events", State: "installing", StateInfo: "Writing image to disk"},
			}
		},
	},
	"NMStateConfig": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&agentv1beta1.NMStateConfig{
				ObjectMeta: meta(name, ns),
				Spec: agentv1beta1.NMStateConfigSpec{
					Interfaces: []agentv1beta1.Interface{{Name: "eth0", MacAddress: "52:54:00:00:00:01"}},
					Config:     *rawJSON(`{"interfaces":[{"name":"eth0","state":"up","type":"ethernet"}]}`),
				},
			}}
		},
	},
	"AgentClusterInstall": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&hiveextv1beta1.AgentClusterInstall{
				ObjectMeta: meta(name, ns),
				Spec: hiveextv1beta1.AgentClusterInstallSpec{
					ImageSetRef:          &hivev1.ClusterImageSetReference{Name: "img4.20"},
					ClusterDeploymentRef: corev1.LocalObjectReference{Name: "cd"},
					ClusterMetadata: &hivev1.ClusterMetadata{
						ClusterID: "5b1b8c0e", InfraID: "mycluster-x7k2p",
						AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: "kubeconfig"},
						AdminPasswordSecretRef:   &corev1.LocalObjectReference{Name: "password"},
					},
					ManifestsConfigMapRef:  &corev1.LocalObjectReference{Name: "manifests"},
					ManifestsConfigMapRefs: []hiveextv1beta1.ManifestsConfigMapReference{{Name: "manifests-2"}},
					Networking: hiveextv1beta1.Networking{
						MachineNetwork:        []hiveextv1beta1.MachineNetworkEntry{{CIDR: "10.0.0.0/24"}},
						ClusterNetwork:        []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
						ServiceNetwork:        []string{"172.30.0.0/16"},
						NetworkType:           "OVNKubernetes",
						UserManagedNetworking: ptr(true),
					},
					SSHPublicKey: "ssh-ed25519 AAAA",
					ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{
						ControlPlaneAgents: 3, WorkerAgents: 2, ArbiterAgents: 1,
					},
					APIVIP: "10.0.0.10", APIVIPs: []string{"10.0.0.10"},
					IngressVIP: "10.0.0.11", IngressVIPs: []string{"10.0.0.11"},
					HoldInstallation: true,
					DiskEncryption: &hiveextv1beta1.DiskEncryption{
						EnableOn: ptr("masters,workers"), Mode: ptr("tang"), TangServers: `[{"url":"http://tang"}]`,
					},
					Proxy:              &hiveextv1beta1.Proxy{HTTPProxy: "http://p:3128", HTTPSProxy: "http://p:3129", NoProxy: ".local"},
					PlatformType:       hiveextv1beta1.BareMetalPlatformType,
					MastersSchedulable: true,
					MirrorRegistryRef:  &hiveextv1beta1.MirrorRegistryConfigMapReference{Name: "mirrors", Namespace: "ns"},
				},
			}}
		},
		setStatus: func(o client.Object) {
			o.(*hiveextv1beta1.AgentClusterInstall).Status = hiveextv1beta1.AgentClusterInstallStatus{
				Conditions: []hivev1.ClusterInstallCondition{{
					Type: hivev1.ClusterInstallCompleted, Status: corev1.ConditionFalse, LastProbeTime: wireTime,
					LastTransitionTime: wireTime, Reason: "InstallationInProgress", Message: "m",
				}},
				Progress:                   hiveextv1beta1.ClusterProgressInfo{TotalPercentage: 42},
				ConnectivityMajorityGroups: `{"10.0.0.0/24":["a","b"]}`,
				DebugInfo: hiveextv1beta1.DebugInfo{
					EventsURL: "https://assisted/events", LogsURL: "https://assisted/logs", State: "installing", StateInfo: "Installation in progress",
				},
				APIVIPs: []string{"10.0.0.10"}, IngressVIPs: []string{"10.0.0.11"},
				PlatformType: hiveextv1beta1.NonePlatformType,
			}
		},
	},
	"ClusterDeployment": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&hivev1.ClusterDeployment{
				ObjectMeta: meta(name, ns),
				Spec: hivev1.ClusterDeploymentSpec{
					ClusterName: "mycluster", BaseDomain: "example.com",
					Platform:         hivev1.Platform{AgentBareMetal: &hivev1.AgentBareMetalPlatform{AgentSelector: labelSelector()}},
					PullSecretRef:    &corev1.LocalObjectReference{Name: "pull-secret"},
					PreserveOnDelete: true,
					ClusterMetadata: &hivev1.ClusterMetadata{
						ClusterID: "5b1b8c0e", InfraID: "mycluster-x7k2p",
						AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: "kubeconfig"},
						AdminPasswordSecretRef:   &corev1.LocalObjectReference{Name: "password"},
					},
					Installed: true,
					ClusterInstallRef: &hivev1.ClusterInstallLocalReference{
						Group: "extensions.hive.openshift.io", Version: "v1beta1", Kind: "AgentClusterInstall", Name: "aci",
					},
				},
			}}
		},
		setStatus: func(o client.Object) {
			o.(*hivev1.ClusterDeployment).Status = hivev1.ClusterDeploymentStatus{
				Conditions: []hivev1.ClusterDeploymentCondition{{
					Type: "Provisioned", Status: corev1.ConditionTrue, LastProbeTime: wireTime, LastTransitionTime: wireTime,
					Reason: "r", Message: "m",
				}},
				InstalledTimestamp: &wireTime,
			}
		},
	},
	"ClusterImageSet": {
		objects: func(name, _ string) []client.Object {
			return []client.Object{&hivev1.ClusterImageSet{
				ObjectMeta: meta(name, ""),
				Spec:       hivev1.ClusterImageSetSpec{ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.20.1-x86_64"},
			}}
		},
	},
	"Metal3Cluster": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&metal3v1beta1.Metal3Cluster{
				ObjectMeta: meta(name, ns),
				Spec: metal3v1beta1.Metal3ClusterSpec{
					ControlPlaneEndpoint: metal3v1beta1.APIEndpoint{Host: "api.example.com", Port: 6443},
					CloudProviderEnabled: ptr(true),
				},
			}}
		},
		setStatus: func(o client.Object) {
			o.(*metal3v1beta1.Metal3Cluster).Status = metal3v1beta1.Metal3ClusterStatus{LastUpdated: &wireTime}
		},
	},
	"Metal3Machine": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&metal3v1beta1.Metal3Machine{ObjectMeta: meta(name, ns), Spec: metal3MachineSpec()}}
		},
		setStatus: func(o client.Object) {
			o.(*metal3v1beta1.Metal3Machine).Status = metal3v1beta1.Metal3MachineStatus{
				LastUpdated:  &wireTime,
				Addresses:    []metal3v1beta1.MachineAddress{{Type: "InternalIP", Address: "10.0.0.5"}},
				UserData:     &corev1.SecretReference{Name: "ud", Namespace: "ns"},
				RenderedData: &metal3v1beta1.LocalObjectReference{Name: "data-0", Namespace: "ns"},
				MetaData:     &corev1.SecretReference{Name: "md", Namespace: "ns"},
				NetworkData:  &corev1.SecretReference{Name: "nd", Namespace: "ns"},
			}
		},
	},
	"Metal3MachineTemplate": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&metal3v1beta1.Metal3MachineTemplate{
				ObjectMeta: meta(name, ns),
				Spec: metal3v1beta1.Metal3MachineTemplateSpec{
					Template:  metal3v1beta1.Metal3MachineTemplateResource{Spec: metal3MachineSpec()},
					NodeReuse: true,
				},
			}}
		},
	},
	"BareMetalHost": {
		objects: func(name, ns string) []client.Object {
			return []client.Object{&bmhv1alpha1.BareMetalHost{
				ObjectMeta: meta(name, ns),
				Spec: bmhv1alpha1.BareMetalHostSpec{
					BMC: bmhv1alpha1.BMCDetails{
						Address: "redfish-virtualmedia://10.0.0.1/redfish/v1/Systems/1", CredentialsName: "bmc-secret",
						DisableCertificateVerification: true,
					},
					BootMode:       bmhv1alpha1.UEFISecureBoot,
					BootMACAddress: "52:54:00:00:00:01",
					Online:         true,
					ConsumerRef:    ptr(objectRef("Metal3Machine", "m")),
					Image: &bmhv1alpha1.Image{
						URL: "http://images/rhcos.iso", Checksum: "abc", ChecksumType: "sha256", DiskFormat: ptr("live-iso"),
					},
					UserData:     &corev1.SecretReference{Name: "ud", Namespace: ns},
					NetworkData:  &corev1.SecretReference{Name: "nd", Namespace: ns},
					MetaData:     &corev1.SecretReference{Name: "md", Namespace: ns},
					CustomDeploy: &bmhv1alpha1.CustomDeploy{Method: "start_assisted_install"},
				},
			}}
		},
		setStatus: func(o client.Object) {
			o.(*bmhv1alpha1.BareMetalHost).Status = bmhv1alpha1.BareMetalHostStatus{
				OperationalStatus: bmhv1alpha1.OperationalStatusError, ErrorType: "provisioning error",
				LastUpdated:  &wireTime,
				Provisioning: bmhv1alpha1.ProvisionStatus{State: "provisioning", ID: "6c3c2d3e-0c55-4a43-9a4c-2f6d5d7f1c01"},
				ErrorMessage: "m", PoweredOn: true, ErrorCount: 2, ProvisioningFailCount: 1,
			}
		},
	},
	"Image": {
		objects: func(name, ns string) []client.Object {
			managed := &orcv1alpha1.Image{ObjectMeta: meta(name, ns), Spec: orcv1alpha1.ImageSpec{
				ManagementPolicy: "managed",
				ManagedOptions:   &orcv1alpha1.ManagedOptions{OnDelete: "detach"},
				Resource: &orcv1alpha1.ImageResourceSpec{
					Name: ptr("node-image"), Protected: ptr(false), Tags: []string{"capi"}, Visibility: ptr("private"),
					Content: &orcv1alpha1.ImageContent{ContainerFormat: "bare", DiskFormat: "qcow2",
						Download: &orcv1alpha1.ImageContentSourceDownload{URL: "https://images.example.com/node.qcow2.xz", Decompress: ptr("xz"),
							Hash: &orcv1alpha1.ImageHash{Algorithm: "sha256", Value: "0123456789abcdef"}}},
				},
				CloudCredentialsRef: orcv1alpha1.CloudCredentialsReference{SecretName: "cloud", CloudName: "openstack"},
			}}
			byID := &orcv1alpha1.Image{ObjectMeta: meta(name+"-id", ns), Spec: orcv1alpha1.ImageSpec{
				ManagementPolicy:    "unmanaged",
				Import:              &orcv1alpha1.ImageImport{ID: ptr("6c3c2d3e-0c55-4a43-9a4c-2f6d5d7f1c01")},
				CloudCredentialsRef: orcv1alpha1.CloudCredentialsReference{SecretName: "cloud", CloudName: "openstack"},
			}}
			byFilter := &orcv1alpha1.Image{ObjectMeta: meta(name+"-filter", ns), Spec: orcv1alpha1.ImageSpec{
				ManagementPolicy:    "unmanaged",
				Import:              &orcv1alpha1.ImageImport{Filter: &orcv1alpha1.ImageFilter{Name: ptr("rhcos"), Tags: []string{"a"}}},
				CloudCredentialsRef: orcv1alpha1.CloudCredentialsReference{SecretName: "cloud", CloudName: "openstack"},
			}}
			return []client.Object{managed, byID, byFilter}
		},
		setStatus: func(o client.Object) {
			o.(*orcv1alpha1.Image).Status = orcv1alpha1.ImageStatus{
				Conditions: []metav1.Condition{
					{Type: orcv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: orcv1alpha1.ReasonSuccess, Message: "Glance image is available", LastTransitionTime: wireTime, ObservedGeneration: 1},
					{Type: orcv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: orcv1alpha1.ReasonSuccess, Message: "done", LastTransitionTime: wireTime, ObservedGeneration: 1},
				},
				ID:       ptr("6c3c2d3e-0c55-4a43-9a4c-2f6d5d7f1c01"),
				Resource: &orcv1alpha1.ImageResourceStatus{Name: "node-image", Status: "active"},
			}
		},
	},
}

// TestWireRoundTrip writes every consumed kind to a real API server and
// reads it back unchanged.
func TestWireRoundTrip(t *testing.T) {
	e := testEnv(t)
	ctx := context.Background()
	ns, err := e.NewNamespace(ctx, "consumed-wire")
	if err != nil {
		t.Fatal(err)
	}
	sources := e.CRDSources()

	for _, k := range consumed.Kinds {
		t.Run(k.Kind, func(t *testing.T) {
			c, ok := wireCases[k.Kind]
			if !ok {
				t.Fatalf("no wire case for %s: add one to wireCases", k.Kind)
			}
			t.Logf("%s validated against %s", k.CRDName(), sources[k.CRDName()])

			name := strings.ToLower(k.Kind) + "-" + utilrand.String(5)
			namespace := ""
			if k.Namespaced {
				namespace = ns.Name
			}
			objs := c.objects(name, namespace)
			checkCoverage(t, "spec", objs)

			for i, obj := range objs {
				gvk, err := e.Client.GroupVersionKindFor(obj)
				if err != nil {
					t.Fatal(err)
				}
				if gvk != k.GroupVersionKind {
					t.Fatalf("wire case for %s builds a %s", k.Kind, gvk)
				}
				sent := field(t, obj, "spec")
				if err := e.Client.Create(ctx, obj); err != nil {
					t.Fatalf("create: %v", err)
				}
				got := fresh(t, e, obj)
				if diff := cmp.Diff(sent, field(t, got, "spec")); diff != "" {
					t.Errorf("spec changed on the round trip (-sent +read back), so upstream does not know these fields:\n%s", diff)
				}

				if c.setStatus != nil && i == 0 {
					c.setStatus(got)
					checkCoverage(t, "status", []client.Object{got})
					sentStatus := field(t, got, "status")
					update := e.Client.Status().Update
					if c.statusInMain {
						update = func(ctx context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
							return e.Client.Update(ctx, obj)
						}
					}
					if err := update(ctx, got); err != nil {
						t.Fatalf("status update: %v", err)
					}
					if diff := cmp.Diff(sentStatus, field(t, fresh(t, e, obj), "status")); diff != "" {
						t.Errorf("status changed on the round trip (-sent +read back), so upstream does not know these fields:\n%s", diff)
					}
				}

				if err := e.Client.Delete(ctx, obj); err != nil {
					t.Fatalf("delete: %v", err)
				}
				after := newLike(t, e, obj)
				if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), after); !apierrors.IsNotFound(err) {
					t.Errorf("after delete, get returned %v, want NotFound", err)
				}
			}
		})
	}
}

// newLike returns an empty object of obj's kind.
func newLike(t *testing.T, e *envtest.Environment, obj client.Object) client.Object {
	t.Helper()
	gvk, err := e.Client.GroupVersionKindFor(obj)
	if err != nil {
		t.Fatal(err)
	}
	o, err := e.Scheme.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	return o.(client.Object)
}

// fresh reads obj back from the API server into a new object.
func fresh(t *testing.T, e *envtest.Environment, obj client.Object) client.Object {
	t.Helper()
	got := newLike(t, e, obj)
	if err := e.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatalf("get: %v", err)
	}
	return got
}

// field returns a top-level field of obj as generic JSON, so that
// comparisons ignore Go-level details (time zones, raw JSON spacing).
func field(t *testing.T, obj client.Object, name string) any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m[name]
}

// checkCoverage fails when a modelled field under the top-level field
// named top (spec or status) is left at its zero value in every one of
// objs: a field never sent is a field never checked. Types of this module
// are walked field by field; other types (core and meta types, times,
// quantities, raw JSON) only need to be non-zero.
func checkCoverage(t *testing.T, top string, objs []client.Object) {
	t.Helper()
	all, set := map[string]bool{}, map[string]bool{}
	for _, obj := range objs {
		v := reflect.ValueOf(obj).Elem()
		for i := range v.NumField() {
			if jf := parseTag(v.Type().Field(i)); jf.name == top {
				coverage(v.Field(i).Type(), v.Field(i), top, all, set)
			}
		}
	}
	var missing []string
	for p := range all {
		if !set[p] && !hasMissingAncestor(p, all, set) {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the wire case leaves these %s fields unset, so they are not checked: %s", top, strings.Join(missing, ", "))
	}
}

func hasMissingAncestor(p string, all, set map[string]bool) bool {
	for q := range all {
		if q != p && !set[q] && (strings.HasPrefix(p, q+".") || strings.HasPrefix(p, q+"[]") || strings.HasPrefix(p, q+"{}")) {
			return true
		}
	}
	return false
}

// coverage records in all every path under typ, and in set those that v
// (which may be invalid, for an absent value) sets to a non-zero value.
func coverage(typ reflect.Type, v reflect.Value, path string, all, set map[string]bool) {
	if typ.Kind() == reflect.Struct && typ.NumField() == 0 {
		return // nothing to set (an empty status, for example)
	}
	all[path] = true
	if v.IsValid() && !v.IsZero() {
		set[path] = true
	}
	if isLeaf(typ) {
		return
	}
	switch typ.Kind() {
	case reflect.Pointer:
		// A pointer and what it points to share a path.
		var elem reflect.Value
		if v.IsValid() && !v.IsNil() {
			elem = v.Elem()
		}
		coverage(typ.Elem(), elem, path, all, set)
	case reflect.Slice, reflect.Map:
		suffix := "[]"
		if typ.Kind() == reflect.Map {
			suffix = "{}"
		}
		if !strings.HasPrefix(typ.Elem().PkgPath(), "github.com/ocp-capi/") {
			return
		}
		if v.IsValid() && v.Len() > 0 {
			if typ.Kind() == reflect.Slice {
				for i := range v.Len() {
					coverage(typ.Elem(), v.Index(i), path+suffix, all, set)
				}
			} else {
				for _, key := range v.MapKeys() {
					coverage(typ.Elem(), v.MapIndex(key), path+suffix, all, set)
				}
			}
		} else {
			coverage(typ.Elem(), reflect.Value{}, path+suffix, all, set)
		}
	case reflect.Struct:
		if !strings.HasPrefix(typ.PkgPath(), "github.com/ocp-capi/") {
			return
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			jf := parseTag(f)
			if jf.skip {
				continue
			}
			var fv reflect.Value
			if v.IsValid() {
				fv = v.Field(i)
			}
			if jf.inline {
				coverage(f.Type, fv, path, all, set)
				continue
			}
			coverage(f.Type, fv, path+"."+jf.name, all, set)
		}
	}
}
