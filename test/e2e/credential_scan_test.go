//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/yaml"

	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
)

// adminCloud is the local OpenStack's admin in its clouds.yaml
// (hack/openstack/up.sh).
const adminCloud = "local"

// useTwinCloudUser points the suite at a clouds.yaml whose cloud
// OPENSTACK_CLOUD signs in as a twin of its user with a random password
// (the local OpenStack's own are short words that the scan cannot look for),
// and deletes the twin when the suite ends, after the scan.
func useTwinCloudUser(ctx context.Context) {
	cloud := e2eConfig.MustGetVariable("OPENSTACK_CLOUD")
	pw, err := localenv.RandomPassword()
	Expect(err).NotTo(HaveOccurred())
	name := "ocp-capi-e2e-" + util.RandomString(6)
	By("Making Keystone user " + name + ", a twin of " + cloud + "'s with a random password, for the credential scan")
	data, remove, err := localenv.TwinUser(ctx, *cloudsYAML, adminCloud, cloud, name, pw)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) {
		Expect(remove(ctx)).To(Succeed(), "deleting Keystone user %s", name)
	})
	path := filepath.Join(*artifactFolder, "clouds.yaml")
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	*cloudsYAML = path
}

// handedOut are credentials that specs made and handed to the managers
// while they ran (the build registry's), kept here because what holds them
// is gone by the time the suite scans.
var handedOut struct {
	sync.Mutex
	secrets []localenv.Secret
}

// recordSecrets adds credentials to those the suite's scan looks for.
func recordSecrets(secrets ...localenv.Secret) {
	handedOut.Lock()
	defer handedOut.Unlock()
	handedOut.secrets = append(handedOut.secrets, secrets...)
}

// knownSecrets are the credentials the suite's clusters were given: every
// cloud's password and application credential secret in the clouds.yaml
// the suite hands out (the twin's, useTwinCloudUser), and those specs
// recorded (recordSecrets: the build registry's password, user:password and
// docker config auth field).
func knownSecrets() ([]localenv.Secret, error) {
	data, err := os.ReadFile(*cloudsYAML)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Clouds map[string]struct {
			Auth map[string]any `json:"auth"`
		} `json:"clouds"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", *cloudsYAML, err)
	}
	var out []localenv.Secret
	for name, cloud := range doc.Clouds {
		for _, key := range []string{"password", "application_credential_secret"} {
			if v, ok := cloud.Auth[key].(string); ok && v != "" {
				out = append(out, localenv.Secret{Name: "cloud " + name + " " + key, Value: v})
			}
		}
	}
	handedOut.Lock()
	out = append(out, handedOut.secrets...)
	handedOut.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// scanTally is what one scan read.
type scanTally struct {
	pods, containers, logLines, events, unavailable int
	findings                                        []localenv.Finding
}

// scanForCredentials fails the suite if a known credential (as written or
// base64-encoded) is in a log line of any container of any pod (previous
// instances too) or in any event of the suite's management clusters, or in
// the logs the framework saved (which hold pods that rollouts replaced). It prints what it read.
func scanForCredentials(ctx context.Context) {
	By("Scanning every pod log and event of the management clusters for the suite's credentials")
	secrets, err := knownSecrets()
	Expect(err).NotTo(HaveOccurred())
	s := localenv.NewScanner(secrets)
	Expect(s.Secrets()).To(BeNumerically(">", 0), "no credential long enough to scan for")
	var names []string
	for _, sec := range secrets {
		if !slices.Contains(s.Skipped(), sec.Name) {
			names = append(names, sec.Name)
		}
	}
	GinkgoWriter.Printf("credential scan: looking for %d secrets (%s), each as written and base64 (standard and URL, at any alignment)\n",
		s.Secrets(), strings.Join(names, ", "))
	if skipped := s.Skipped(); len(skipped) > 0 {
		GinkgoWriter.Printf("credential scan: too short to tell from a word (under %d bytes), not looked for: %s\n",
			localenv.MinSecretLength, strings.Join(skipped, ", "))
	}

	var all []localenv.Finding
	for _, kc := range []struct{ name, path string }{{"mgmt", *mgmtKubeconfig}, {"mgmt2", *mgmt2Kubeconfig}, {"mgmt3", *mgmt3Kubeconfig}, {"mgmt4", *mgmt4Kubeconfig}} {
		if kc.path == "" {
			continue
		}
		if _, err := os.Stat(kc.path); err != nil {
			GinkgoWriter.Printf("credential scan: %s: no kubeconfig at %s, not scanned\n", kc.name, kc.path)
			continue
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kc.path)
		Expect(err).NotTo(HaveOccurred())
		cs, err := kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		t, err := scanCluster(ctx, cs, kc.name, s)
		Expect(err).NotTo(HaveOccurred(), "scanning %s", kc.name)
		GinkgoWriter.Printf("credential scan: %s: %d pods, %d containers, %d log lines, %d events (%d previous logs not available): %d findings\n",
			kc.name, t.pods, t.containers, t.logLines, t.events, t.unavailable, len(t.findings))
		all = append(all, t.findings...)
	}
	files, lines, findings, err := s.ScanLogFiles(filepath.Join(*artifactFolder, "clusters"))
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("credential scan: saved logs (*.log) under %s: %d files, %d lines: %d findings\n",
		filepath.Join(*artifactFolder, "clusters"), files, lines, len(findings))
	all = append(all, findings...)

	report := make([]string, 0, len(all))
	for _, f := range all {
		report = append(report, f.String())
	}
	Expect(report).To(BeEmpty(), "credentials in logs or events (the secret is named, not quoted)")
}

// scanCluster reads every container's log of every pod (the previous
// instance too when it restarted) and every event of the cluster.
func scanCluster(ctx context.Context, cs kubernetes.Interface, cluster string, s *localenv.Scanner) (scanTally, error) {
	var t scanTally
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return t, fmt.Errorf("listing pods: %w", err)
	}
	for _, p := range pods.Items {
		t.pods++
		restarts := map[string]int32{}
		for _, st := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			restarts[st.Name] = st.RestartCount
		}
		var containers []string
		for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			containers = append(containers, c.Name)
		}
		for _, c := range p.Spec.EphemeralContainers {
			containers = append(containers, c.Name)
		}
		for _, c := range containers {
			t.containers++
			for _, previous := range []bool{false, true} {
				if previous && restarts[c] == 0 {
					continue
				}
				where := fmt.Sprintf("%s: pod %s/%s container %s", cluster, p.Namespace, p.Name, c)
				if previous {
					where += " (previous)"
				}
				if err := scanLog(ctx, cs, &p, c, previous, where, s, &t); err != nil {
					if previous && strings.Contains(err.Error(), "not found") {
						// The kubelet keeps one previous instance; it may have gone with its pod's sandbox.
						GinkgoWriter.Printf("credential scan: %s: not available (%v)\n", where, err)
						t.unavailable++
						continue
					}
					return t, err
				}
			}
		}
	}
	opts := metav1.ListOptions{Limit: 500}
	for {
		events, err := cs.CoreV1().Events("").List(ctx, opts)
		if err != nil {
			return t, fmt.Errorf("listing events: %w", err)
		}
		for i := range events.Items {
			e := &events.Items[i]
			t.events++
			line, err := json.Marshal(e)
			if err != nil {
				return t, err
			}
			t.findings = append(t.findings, s.ScanString(fmt.Sprintf("%s: event %s/%s", cluster, e.Namespace, e.Name), 1, string(line))...)
		}
		if events.Continue == "" {
			return t, nil
		}
		opts.Continue = events.Continue
	}
}

// scanLog scans one container's log. A container that never started has
// no log; that is not an error.
func scanLog(ctx context.Context, cs kubernetes.Interface, p *corev1.Pod, container string, previous bool, where string, s *localenv.Scanner, t *scanTally) error {
	stream, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: container, Previous: previous}).Stream(ctx)
	if err != nil {
		if strings.Contains(err.Error(), "waiting to start") || strings.Contains(err.Error(), "ContainerCreating") ||
			strings.Contains(err.Error(), "PodInitializing") {
			GinkgoWriter.Printf("credential scan: %s: no log (%v)\n", where, err)
			return nil
		}
		return fmt.Errorf("%s: %w", where, err)
	}
	defer stream.Close()
	n, findings, err := s.Scan(where, stream)
	t.logLines += n
	t.findings = append(t.findings, findings...)
	return err
}
