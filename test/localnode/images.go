package localnode

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// The node's own images, built by `make node-images` with bin/imgbuild.
const (
	PauseImageFile   = "pause.tar"
	CoreDNSImageFile = "coredns.tar"
)

// NodeImageFiles must be in the node images directory.
var NodeImageFiles = []string{PauseImageFile, CoreDNSImageFile}

// ImageTarball is what a docker-archive tarball holds: its tags and the
// digest of its image config (the image ID the CRI reports).
type ImageTarball struct {
	Path     string
	Tags     []string
	ConfigID string
}

// maxMetadataSize bounds what is kept in memory while reading a tarball:
// manifest.json and the image configs are small, layers are not.
const maxMetadataSize = 4 << 20

// ReadImageTarball reads the tags and config digest of a docker-archive
// tarball (`docker save`, go-containerregistry's tarball, bin/imgbuild).
// Tags are normalized as containerd names them (docker.io/library/...).
func ReadImageTarball(p string) (ImageTarball, error) {
	f, err := os.Open(p)
	if err != nil {
		return ImageTarball{}, err
	}
	defer func() { _ = f.Close() }()
	small := map[string][]byte{}
	tr := tar.NewReader(bufio.NewReader(f))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ImageTarball{}, fmt.Errorf("%s: %w", p, err)
		}
		if h.Typeflag != tar.TypeReg || h.Size > maxMetadataSize {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return ImageTarball{}, fmt.Errorf("%s: %w", p, err)
		}
		small[path.Clean(h.Name)] = b
	}
	var manifest []struct {
		Config   string
		RepoTags []string
	}
	raw, ok := small["manifest.json"]
	if !ok {
		return ImageTarball{}, fmt.Errorf("%s: no manifest.json: not a docker-archive image", p)
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return ImageTarball{}, fmt.Errorf("%s: bad manifest.json: %w", p, err)
	}
	if len(manifest) == 0 {
		return ImageTarball{}, fmt.Errorf("%s: bad manifest.json: no image", p)
	}
	if len(manifest) > 1 {
		return ImageTarball{}, fmt.Errorf("%s: %d images in one tarball; one is supported", p, len(manifest))
	}
	cfg, ok := small[path.Clean(manifest[0].Config)]
	if !ok {
		return ImageTarball{}, fmt.Errorf("%s: config %s not found", p, manifest[0].Config)
	}
	sum := sha256.Sum256(cfg)
	out := ImageTarball{Path: p, ConfigID: "sha256:" + hex.EncodeToString(sum[:])}
	for _, t := range manifest[0].RepoTags {
		out.Tags = append(out.Tags, NormalizeImageRef(t))
	}
	if len(out.Tags) == 0 {
		return ImageTarball{}, fmt.Errorf("%s: the image has no tag; pods could not name it", p)
	}
	return out, nil
}

// NormalizeImageRef spells a reference the way containerd stores it:
// a registry host is added when the first component is not one
// ("nginx:1" -> "docker.io/library/nginx:1"), and ":latest" when no tag or
// digest is given.
func NormalizeImageRef(ref string) string {
	name := ref
	first, rest, hasSlash := strings.Cut(ref, "/")
	if !hasSlash {
		name = "docker.io/library/" + ref
	} else if !strings.ContainsAny(first, ".:") && first != "localhost" {
		name = "docker.io/" + first + "/" + rest
	}
	last := name[strings.LastIndex(name, "/")+1:]
	if !strings.Contains(last, ":") && !strings.Contains(last, "@") {
		name += ":latest"
	}
	return name
}

// Ctr runs containerd's ctr against one containerd in the CRI's namespace.
type Ctr struct {
	Socket string
}

func (c Ctr) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.Socket, "--namespace", "k8s.io"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// imageConfigs maps each image name in containerd to its config digest.
func (c Ctr) imageConfigs(ctx context.Context, names []string) (map[string]string, error) {
	out, err := c.run(ctx, "images", "ls")
	if err != nil {
		return nil, err
	}
	targets := parseImageList(out)
	configs := map[string]string{}
	for _, n := range names {
		target, ok := targets[n]
		if !ok {
			continue
		}
		m, err := c.run(ctx, "content", "get", target)
		if err != nil {
			continue // treated as absent: the import repairs it
		}
		var manifest struct {
			Config struct {
				Digest string `json:"digest"`
			} `json:"config"`
		}
		if json.Unmarshal(m, &manifest) == nil && manifest.Config.Digest != "" {
			configs[n] = manifest.Config.Digest
		}
	}
	return configs, nil
}

// parseImageList reads `ctr images ls`: REF TYPE DIGEST SIZE PLATFORMS LABELS.
func parseImageList(out []byte) map[string]string {
	res := map[string]string{}
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 3 || !strings.HasPrefix(f[2], "sha256:") {
			continue
		}
		res[f[0]] = f[2]
	}
	return res
}

// ImportResult says what happened to one tarball.
type ImportResult struct {
	Tarball  ImageTarball
	Imported bool
}

// ImportImages imports every tarball into containerd, skipping those whose
// every tag already names the same image config: re-importing an
// unchanged image costs one `ctr content get`.
func (c Ctr) ImportImages(ctx context.Context, tarballs []string) ([]ImportResult, error) {
	var infos []ImageTarball
	var names []string
	for _, p := range tarballs {
		info, err := ReadImageTarball(p)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
		names = append(names, info.Tags...)
	}
	present, err := c.imageConfigs(ctx, names)
	if err != nil {
		return nil, err
	}
	var res []ImportResult
	for _, info := range infos {
		r := ImportResult{Tarball: info}
		for _, t := range info.Tags {
			if present[t] != info.ConfigID {
				r.Imported = true
			}
		}
		if r.Imported {
			if _, err := c.run(ctx, "images", "import", info.Path); err != nil {
				return res, fmt.Errorf("importing %s: %w", info.Path, err)
			}
		}
		res = append(res, r)
	}
	return res, nil
}

// TarballsIn lists the *.tar files of dir, sorted; a missing dir has none.
func TarballsIn(dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	m, err := filepath.Glob(filepath.Join(dir, "*.tar"))
	sort.Strings(m)
	return m, err
}
