// Package images checks the images `make images` writes (docker-archive
// tarballs in out/images) against what the release runs: every image a
// released manifest or a chart's defaults name must exist with exactly that
// tag, for linux/amd64, with an executable entrypoint and a non-root user.
//
// The checks of the built artifacts need the build tag `images` (make
// test-images); without it only the unit tests of the helpers below run, so
// `go test ./...` does not depend on images being built.
package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
)

// Image is one image of a docker archive.
type Image struct {
	// Tags are the references the archive names it by (manifest.json RepoTags).
	Tags []string
	// ID is the digest of the config blob: the image ID runtimes show, which
	// stays the same when containerd imports the archive.
	ID     string
	Config Config
	// Files is the image's file system (layers applied in order), keyed by
	// absolute path.
	Files map[string]File
}

// Config is the part of an image's config that the checks read.
type Config struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User       string   `json:"User"`
		Entrypoint []string `json:"Entrypoint"`
		Cmd        []string `json:"Cmd"`
	} `json:"config"`
}

// File is one entry of the image's file system.
type File struct {
	Type     byte // tar.TypeReg, tar.TypeDir, tar.TypeSymlink, ...
	Mode     int64
	UID, GID int
	Size     int64
	Linkname string
}

type manifestEntry struct {
	Config   string   `json:"Config"`
	RepoTags []string `json:"RepoTags"`
	Layers   []string `json:"Layers"`
}

// ReadArchive reads a docker archive (what `docker save` and imgbuild write,
// and `ctr images import` reads).
func ReadArchive(r io.Reader) ([]Image, error) {
	blobs := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading archive: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", hdr.Name, err)
		}
		blobs[path.Clean(hdr.Name)] = b
	}
	raw, ok := blobs["manifest.json"]
	if !ok {
		return nil, errors.New("no manifest.json: not a docker archive")
	}
	var entries []manifestEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	if len(entries) == 0 {
		return nil, errors.New("manifest.json lists no image")
	}
	var images []Image
	for i, e := range entries {
		cfgRaw, ok := blobs[path.Clean(e.Config)]
		if !ok || e.Config == "" {
			return nil, fmt.Errorf("image %d: config %q not in the archive", i, e.Config)
		}
		sum := sha256.Sum256(cfgRaw)
		img := Image{Tags: e.RepoTags, ID: "sha256:" + hex.EncodeToString(sum[:]), Files: map[string]File{}}
		if err := json.Unmarshal(cfgRaw, &img.Config); err != nil {
			return nil, fmt.Errorf("image %d: config: %w", i, err)
		}
		for _, l := range e.Layers {
			b, ok := blobs[path.Clean(l)]
			if !ok {
				return nil, fmt.Errorf("image %d: layer %q not in the archive", i, l)
			}
			if err := applyLayer(img.Files, b); err != nil {
				return nil, fmt.Errorf("image %d: layer %s: %w", i, l, err)
			}
		}
		images = append(images, img)
	}
	return images, nil
}

// applyLayer adds a (possibly gzipped) layer tar to files, honouring
// whiteouts (.wh.<name> deletes name; .wh..wh..opq empties the directory).
func applyLayer(files map[string]File, layer []byte) error {
	var r io.Reader = bytes.NewReader(layer)
	if len(layer) >= 2 && layer[0] == 0x1f && layer[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		defer func() { _ = zr.Close() }() // reading: Close reports nothing Read did not
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := path.Clean("/" + hdr.Name)
		dir, base := path.Split(p)
		switch {
		case base == ".wh..wh..opq":
			prefix := path.Clean(dir) + "/"
			for k := range files {
				if strings.HasPrefix(k, prefix) {
					delete(files, k)
				}
			}
			continue
		case strings.HasPrefix(base, ".wh."):
			gone := path.Join(dir, strings.TrimPrefix(base, ".wh."))
			delete(files, gone)
			for k := range files {
				if strings.HasPrefix(k, gone+"/") {
					delete(files, k)
				}
			}
			continue
		}
		files[p] = File{Type: hdr.Typeflag, Mode: hdr.Mode & 0o7777, UID: hdr.Uid, GID: hdr.Gid, Size: hdr.Size, Linkname: hdr.Linkname}
	}
}

// ReadArchiveFile reads the docker archive at path.
func ReadArchiveFile(file string) ([]Image, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	imgs, err := ReadArchive(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return imgs, nil
}

// ParseUser reads an image's User ("uid", "uid:gid", "" for root). Names
// cannot be resolved without the image's /etc/passwd, and our images have
// none, so they are an error.
func ParseUser(user string) (uid, gid int, err error) {
	if user == "" {
		return 0, 0, nil
	}
	u, g, hasGroup := strings.Cut(user, ":")
	if uid, err = strconv.Atoi(u); err != nil || uid < 0 {
		return 0, 0, fmt.Errorf("user %q: want a numeric uid[:gid] (a name needs /etc/passwd in the image)", user)
	}
	gid = uid
	if hasGroup {
		if gid, err = strconv.Atoi(g); err != nil || gid < 0 {
			return 0, 0, fmt.Errorf("user %q: want a numeric gid", user)
		}
	}
	return uid, gid, nil
}

// Executable reports whether uid:gid may execute f, following symlinks
// within files (at most a few hops).
func Executable(files map[string]File, p string, uid, gid int) error {
	for hops := 0; ; hops++ {
		f, ok := files[p]
		if !ok {
			return fmt.Errorf("%s does not exist in the image", p)
		}
		if f.Type == tar.TypeSymlink {
			if hops == 8 {
				return fmt.Errorf("%s: too many symlinks", p)
			}
			t := f.Linkname
			if !path.IsAbs(t) {
				t = path.Join(path.Dir(p), t)
			}
			p = path.Clean(t)
			continue
		}
		if f.Type != tar.TypeReg {
			return fmt.Errorf("%s is not a regular file (tar type %q)", p, f.Type)
		}
		var bit int64
		switch {
		case uid == 0:
			bit = 0o111
		case f.UID == uid:
			bit = 0o100
		case f.GID == gid:
			bit = 0o010
		default:
			bit = 0o001
		}
		if f.Mode&bit == 0 {
			return fmt.Errorf("%s (mode %04o, owner %d:%d) is not executable by %d:%d", p, f.Mode, f.UID, f.GID, uid, gid)
		}
		return nil
	}
}
