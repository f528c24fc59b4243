// Command imgbuild turns local files (static binaries, manifests) into a
// single-layer linux/amd64 image and writes it as a docker-archive tarball,
// which `ctr images import` and `docker load` accept. There is no registry on
// this machine, so this is how the local cluster gets its images.
//
//	imgbuild --out manager.tar --tag ocp-capi.local/manager:v0.1.0 \
//	    --entrypoint /manager --file bin/manager:/manager
//
// The output is reproducible: file times, the image's creation time and the
// layer order are fixed, so an unchanged input gives the same digest and the
// cluster does not see a new image.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// file is one entry of the layer: src on this machine, dst in the image.
type file struct {
	src, dst string
	mode     int64
}

func main() {
	var tags, files, entrypoint, args, env, labels listFlag
	out := flag.String("out", "", "the tarball to write (required)")
	user := flag.String("user", "65532:65532", "the user the image runs as (non-root by default)")
	workdir := flag.String("workdir", "/", "working directory")
	flag.Var(&tags, "tag", "image reference, e.g. ocp-capi.local/manager:v0.1.0 (repeatable, at least one)")
	flag.Var(&files, "file", "src:dst[:mode] to put into the image; mode is octal, default 0755 (repeatable)")
	flag.Var(&entrypoint, "entrypoint", "entrypoint word (repeatable, in order)")
	flag.Var(&args, "arg", "default argument word (repeatable, in order)")
	flag.Var(&env, "env", "KEY=VALUE (repeatable)")
	flag.Var(&labels, "label", "KEY=VALUE image label (repeatable)")
	flag.Parse()

	if err := run(*out, *user, *workdir, tags, files, entrypoint, args, env, labels); err != nil {
		fmt.Fprintln(os.Stderr, "imgbuild:", err)
		os.Exit(1)
	}
}

func run(out, user, workdir string, tags, files, entrypoint, args, env, labels []string) error {
	if out == "" || len(tags) == 0 || len(files) == 0 {
		return errors.New("--out, --tag and --file are required")
	}
	entries, err := parseFiles(files)
	if err != nil {
		return err
	}
	layerBytes, err := layerTar(entries)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	})
	if err != nil {
		return fmt.Errorf("layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cfg.Config = v1.Config{
		Entrypoint: entrypoint,
		Cmd:        args,
		User:       user,
		WorkingDir: workdir,
		Env:        append([]string{"PATH=/usr/local/bin:/usr/bin:/bin:/"}, env...),
		Labels:     map[string]string{},
	}
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("--label %q: want KEY=VALUE", l)
		}
		cfg.Config.Labels[k] = v
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}

	refs := map[name.Reference]v1.Image{}
	for _, t := range tags {
		ref, err := name.NewTag(t, name.WeakValidation)
		if err != nil {
			return fmt.Errorf("--tag %q: %w", t, err)
		}
		refs[ref] = img
	}
	tmp := out + ".tmp"
	if err := tarball.MultiRefWriteToFile(tmp, refs); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s %s\n", out, strings.Join(tags, ","), digest)
	return nil
}

func parseFiles(specs []string) ([]file, error) {
	var fs []file
	for _, s := range specs {
		parts := strings.Split(s, ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || !strings.HasPrefix(parts[1], "/") {
			return nil, fmt.Errorf("--file %q: want src:/absolute/dst[:mode]", s)
		}
		f := file{src: parts[0], dst: path.Clean(parts[1]), mode: 0o755}
		if len(parts) == 3 {
			m, err := strconv.ParseInt(parts[2], 8, 32)
			if err != nil {
				return nil, fmt.Errorf("--file %q: mode: %w", s, err)
			}
			f.mode = m
		}
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].dst < fs[j].dst })
	return fs, nil
}

// layerTar builds the layer: parent directories, the files, and a
// world-writable /tmp, all owned by root with a fixed time.
func layerTar(files []file) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	seen := map[string]bool{}
	dir := func(d string, mode int64) error {
		if d == "." || d == "/" || seen[d] {
			return nil
		}
		seen[d] = true
		return tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(d, "/") + "/", Typeflag: tar.TypeDir, Mode: mode, ModTime: epoch})
	}
	if err := dir("/tmp", 0o1777); err != nil {
		return nil, err
	}
	for _, f := range files {
		var parents []string
		for d := path.Dir(f.dst); d != "/"; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if err := dir(d, 0o755); err != nil {
				return nil, err
			}
		}
		data, err := os.ReadFile(f.src)
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{Name: strings.TrimPrefix(f.dst, "/"), Typeflag: tar.TypeReg, Mode: f.mode, Size: int64(len(data)), ModTime: epoch}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
