// Command quickstart-env runs, for `make quickstart` (hack/quickstart.sh),
// what the e2e suites run in their own process: the assisted-service
// simulator that plays the installer, the kubelet stand-in, and the API
// server that plays the installed workload cluster, against a local
// management cluster where the providers are installed (clusterctl init).
// It also fits the installed providers to this machine (see
// localenv.FitProviders). It runs until SIGINT or SIGTERM.
//
//	quickstart-env serve --kubeconfig .mgmt/kubeconfig --namespace quickstart --cluster quickstart
//	quickstart-env crds --kubeconfig .mgmt/kubeconfig
//	quickstart-env cloud-yaml --clouds-yaml /etc/openstack/clouds.yaml --cloud local-demo
//
// It is a stand-in for assisted-service and real hosts, for a demonstration
// and tests on one machine; docs/e2e.md says what it does not do.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
	"github.com/ocp-capi/ocp-capi/test/scheme"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "cloud-yaml":
		err = cloudYAML(os.Args[2:])
	case "crds":
		err = crds(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart-env:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: quickstart-env serve|crds|cloud-yaml [flags] (-h for the flags)")
	os.Exit(2)
}

// cloudYAML prints a clouds.yaml with one cloud, for the cluster's Secret.
func cloudYAML(args []string) error {
	fs := flag.NewFlagSet("cloud-yaml", flag.ExitOnError)
	path := fs.String("clouds-yaml", "/etc/openstack/clouds.yaml", "clouds.yaml to read")
	cloud := fs.String("cloud", "local-demo", "the cloud to keep")
	_ = fs.Parse(args)
	out, err := localenv.SingleCloudYAML(*path, *cloud)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}

// crds installs the consumed CRDs (assisted-service, hive, Metal3, and
// config.openshift.io, whose Infrastructure the add-on reads at start), as
// those systems would on a real management cluster: before clusterctl init.
func crds(args []string) error {
	fs := flag.NewFlagSet("crds", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", ".mgmt/kubeconfig", "the management cluster")
	_ = fs.Parse(args)
	c, _, err := mgmtClient(*kubeconfig)
	if err != nil {
		return err
	}
	return localenv.InstallConsumedCRDs(context.Background(), c)
}

func mgmtClient(kubeconfig string) (client.Client, *runtime.Scheme, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	s := runtime.NewScheme()
	if err := scheme.AddAll(s); err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	return c, s, err
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", ".mgmt/kubeconfig", "the management cluster")
	namespace := fs.String("namespace", "quickstart", "namespace of the cluster whose workload cluster this plays")
	cluster := fs.String("cluster", "quickstart", "name of that cluster")
	assistedPort := fs.Int("assisted-port", 16444, "the simulator's HTTPS port on 127.0.0.1 (the node must forward it)")
	workloadPort := fs.Int("workload-port", 16443, "the workload API server's port on 127.0.0.1 (the node must forward it)")
	stateDir := fs.String("state-dir", ".quickstart", "where the workload API server keeps its etcd data")
	stepDelay := fs.Duration("step-delay", 2*time.Second, "the least time between two steps of a simulated installation (docs/assisted-simulator.md, Pace)")
	_ = fs.Parse(args)

	ctrl.SetLogger(zap.New())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	s := runtime.NewScheme()
	if err := scheme.AddAll(s); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	step := func(msg string) { fmt.Printf("%s quickstart-env: %s\n", time.Now().UTC().Format(time.TimeOnly), msg) }

	step("installing the CRDs of assisted-service, hive and Metal3 that the simulator plays")
	if err := localenv.InstallConsumedCRDs(ctx, c); err != nil {
		return err
	}
	nodeIP, err := localenv.NodeAddress(ctx, c)
	if err != nil {
		return err
	}
	step(fmt.Sprintf("starting the assisted-service simulator on 127.0.0.1:%d", *assistedPort))
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	sim, err := localenv.StartSimulator(simCtx, cfg, s, *assistedPort, *stepDelay)
	if err != nil {
		return err
	}
	step("fitting the installed providers to this machine (assisted-service and workload-api Services, the simulator's CA, hostNetwork for the OpenStack provider)")
	if _, err := localenv.FitProviders(ctx, c, sim.CABundle(), nodeIP, int32(*assistedPort), int32(*workloadPort), 3*time.Minute); err != nil {
		return err
	}
	step(fmt.Sprintf("starting the API server that plays cluster %s/%s on 127.0.0.1:%d", *namespace, *cluster, *workloadPort))
	wl, err := localenv.StartWorkloadCluster(*workloadPort, filepath.Join(*stateDir, "workload-etcd"))
	if err != nil {
		return err
	}
	defer func() {
		if err := wl.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "quickstart-env: stopping the workload API server:", err)
		}
	}()
	if err := os.WriteFile(filepath.Join(*stateDir, "workload.kubeconfig"), wl.HostKubeconfig, 0o600); err != nil {
		return err
	}
	if err := sim.SetWorkload(ctx, client.ObjectKey{Namespace: *namespace, Name: *cluster}, wl); err != nil {
		return err
	}
	step("ready (the workload cluster's kubeconfig for this host: " + filepath.Join(*stateDir, "workload.kubeconfig") + ")")
	<-ctx.Done()
	step("stopping")
	stopSim()
	return sim.Wait()
}
