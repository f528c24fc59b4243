package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/localnode"
)

// resolveNodeDefaults fills in the node size's directories from the
// repository's layout: bin/ for the binaries, bin/images for the node's own
// images, out/images (the managers' images) when it exists.
func resolveNodeDefaults(c config) (config, error) {
	if c.binDir != "" && c.nodeImages != "" && c.images != "" {
		return c, nil
	}
	root, err := envtest.FindRepoRoot()
	if err != nil {
		return c, fmt.Errorf("finding the repository for the default --bin-dir, --node-images and --images (or pass them): %w", err)
	}
	if c.binDir == "" {
		c.binDir = filepath.Join(root, "bin")
	}
	if c.nodeImages == "" {
		c.nodeImages = filepath.Join(root, "bin", "images")
	}
	if c.images == "" {
		c.images = "none"
		if st, err := os.Stat(filepath.Join(root, "out", "images")); err == nil && st.IsDir() {
			c.images = filepath.Join(root, "out", "images")
		}
	}
	for _, p := range []*string{&c.binDir, &c.nodeImages} {
		if *p, err = filepath.Abs(*p); err != nil {
			return c, err
		}
	}
	if c.images != "none" {
		if c.images, err = filepath.Abs(c.images); err != nil {
			return c, err
		}
	}
	return c, nil
}

// crdObjects are the CRDs --crds asks for.
func crdObjects(c config) ([]client.Object, error) {
	if c.crds == "none" {
		return nil, nil
	}
	paths, err := envtest.ResolvePaths(envtest.Options{BinDir: c.binDir, UpstreamCRDs: c.upstreamCRDs})
	if err != nil {
		return nil, err
	}
	var crds []envtest.CRD
	switch c.crds {
	case "all":
		crds, err = paths.AllCRDs()
	case "consumed":
		crds, err = envtest.ConsumedCRDs(paths.ConsumedCRDs, paths.UpstreamCRDs)
	default:
		return nil, fmt.Errorf("--crds %q: want none, consumed or all", c.crds)
	}
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(crds))
	for _, crd := range crds {
		o := crd.Object.DeepCopy()
		o.ResourceVersion = ""
		out = append(out, o)
	}
	return out, nil
}

func serveNode(c config, sig <-chan os.Signal) error {
	// The pid file comes first: a start takes a while, and `down` must be
	// able to stop it meanwhile.
	if err := os.WriteFile(c.pidFile(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	defer func() {
		_ = os.Remove(c.readyFile())
		_ = os.Remove(c.pidFile())
	}()
	c, err := resolveNodeDefaults(c)
	if err != nil {
		return err
	}
	requested, err := localnode.NewInstance(c.instance, c.port)
	if err != nil {
		return err
	}
	l := localnode.Layout{Dir: c.stateDir}
	recorded, has, err := localnode.LoadState(l)
	if err != nil {
		return err
	}
	inst, err := localnode.ReconcileInstance(requested, c.portGiven, recorded, has)
	if err != nil {
		return err
	}
	ports, err := localnode.ResolveHostPorts(c.hostPorts, c.cloudsYAML)
	if err != nil {
		return err
	}
	objs, err := crdObjects(c)
	if err != nil {
		return err
	}
	var imageDirs []string
	if c.images != "none" {
		imageDirs = append(imageDirs, c.images)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		s := <-sig
		fmt.Printf("received %s, stopping\n", s)
		cancel()
	}()
	return localnode.Run(ctx, localnode.Options{
		Instance:      inst,
		Layout:        l,
		Kubeconfig:    c.kubeconfig,
		BinDir:        c.binDir,
		NodeImagesDir: c.nodeImages,
		ImageDirs:     imageDirs,
		HostPorts:     ports,
		Objects:       objs,
		Timeout:       c.timeout,
		Out:           os.Stdout,
	}, func(summary string) error {
		fmt.Print(summary)
		return os.WriteFile(c.readyFile(), []byte(summary), 0o600)
	})
}

// downNode removes what the graceful stop may have left and checks that
// nothing of the instance remains.
func downNode(c config) error {
	l := localnode.Layout{Dir: c.stateDir}
	st, ok, err := localnode.LoadState(l)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no node state (%s) in %s", l.StateFile(), c.stateDir)
	}
	cleanupErr := localnode.Cleanup(st.Instance, l, st.NetNSInode, c.keepData)
	left := localnode.Leftovers(st.Instance, l, st.NetNSInode, c.keepData)
	if len(left) > 0 {
		return fmt.Errorf("left behind after down:\n  - %s\n(cleanup: %w)", strings.Join(left, "\n  - "), cleanupErr)
	}
	if cleanupErr != nil {
		return cleanupErr
	}
	what := "no process, mount, network namespace, cgroup, CNI cache entry, shim socket or container log link of the node is left"
	if c.keepData {
		fmt.Printf("leftover check: %s; data kept in %s for a warm start\n", what, l.DataDir())
	} else {
		fmt.Printf("leftover check: %s; %s removed\n", what, c.stateDir)
	}
	return nil
}

// nodeStatus lists the node's processes and whether each is alive.
func nodeStatus(c config) string {
	pids, err := localnode.ReadPIDs(localnode.Layout{Dir: c.stateDir})
	if err != nil {
		return ""
	}
	names := make([]string, 0, len(pids))
	for n := range pids {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		state := "running"
		if !localnode.Alive(pids[n]) {
			state = "EXITED"
		}
		fmt.Fprintf(&b, "  %-28s pid %-7d %s\n", n, pids[n], state)
	}
	return b.String()
}
