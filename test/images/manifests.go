package images

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Container is a container of a pod template found in a manifest.
type Container struct {
	// Object is "<Kind> <namespace>/<name>" of the object that holds it.
	Object     string
	Name       string
	Image      string
	PullPolicy string
	Command    []string
	Args       []string
}

func (c Container) String() string { return fmt.Sprintf("%s container %q", c.Object, c.Name) }

// containerLists are the pod spec fields that hold containers.
var containerLists = map[string]bool{"containers": true, "initContainers": true, "ephemeralContainers": true}

// ManifestContainers returns every container of every object in a
// multi-document YAML manifest, wherever its pod spec sits (Deployment,
// Job, CronJob, Pod, ...). CRDs are skipped: their schemas describe
// containers but hold none.
func ManifestContainers(manifest []byte) ([]Container, error) {
	var out []Container
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("parsing a document: %w", err)
		}
		if obj == nil {
			continue
		}
		kind, _ := obj["kind"].(string)
		if kind == "CustomResourceDefinition" {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		ns, _ := meta["namespace"].(string)
		id := fmt.Sprintf("%s %s/%s", kind, ns, name)
		if ns == "" {
			id = fmt.Sprintf("%s %s", kind, name)
		}
		walk(obj, func(list []any) {
			for _, item := range list {
				c, ok := item.(map[string]any)
				if !ok {
					continue
				}
				image, ok := c["image"].(string)
				if !ok {
					continue
				}
				name, _ := c["name"].(string)
				policy, _ := c["imagePullPolicy"].(string)
				out = append(out, Container{Object: id, Name: name, Image: image, PullPolicy: policy,
					Command: strings1(c["command"]), Args: strings1(c["args"])})
			}
		})
	}
}

func walk(v any, found func([]any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if l, ok := x.([]any); ok && containerLists[k] {
				found(l)
				continue
			}
			walk(x, found)
		}
	case []any:
		for _, x := range v {
			walk(x, found)
		}
	}
}

func strings1(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// PullsFromRegistry reports whether a container would pull its image even
// when the node has it: policy Always, or no policy with a :latest or
// untagged image (Kubernetes then defaults to Always).
func PullsFromRegistry(c Container) bool {
	switch c.PullPolicy {
	case "Always":
		return true
	case "IfNotPresent", "Never":
		return false
	}
	ref := c.Image
	if i := strings.Index(ref, "@"); i >= 0 {
		return false
	}
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	return colon <= slash || ref[colon+1:] == "latest"
}

// Executed is the file a container runs: its command's first word, or the
// image's entrypoint when the container sets no command (args replace only
// the image's Cmd).
func Executed(c Container, img Config) (string, error) {
	if len(c.Command) > 0 {
		return c.Command[0], nil
	}
	if len(img.Config.Entrypoint) > 0 {
		return img.Config.Entrypoint[0], nil
	}
	if len(c.Args) > 0 {
		return c.Args[0], nil
	}
	if len(img.Config.Cmd) > 0 {
		return img.Config.Cmd[0], nil
	}
	return "", errors.New("neither the container nor the image names a program")
}

// ACMESolverImage is the image cert-manager's controller starts for ACME
// HTTP-01 challenges: --acme-http01-solver-image if its args set it, else
// the controller's built-in default, the acmesolver image of the
// controller's own repository and tag.
func ACMESolverImage(controller Container) (string, bool) {
	for i, a := range controller.Args {
		if v, ok := strings.CutPrefix(a, "--acme-http01-solver-image="); ok {
			return v, true
		}
		if a == "--acme-http01-solver-image" && i+1 < len(controller.Args) {
			return controller.Args[i+1], true
		}
	}
	repo, tag, ok := cutTag(controller.Image)
	if !ok || !strings.HasSuffix(repo, "-controller") {
		return "", false
	}
	return strings.TrimSuffix(repo, "-controller") + "-acmesolver:" + tag, true
}

func cutTag(ref string) (repo, tag string, ok bool) {
	colon := strings.LastIndex(ref, ":")
	if colon <= strings.LastIndex(ref, "/") {
		return "", "", false
	}
	return ref[:colon], ref[colon+1:], true
}

// ListEntry is a line of out/images/images.txt.
type ListEntry struct {
	Tag, ID string
	Size    int64
}

// ParseImageList reads images.txt: "<tag> <image ID> <size in bytes>" per
// line, # comments.
func ParseImageList(data []byte) ([]ListEntry, error) {
	var out []ListEntry
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want <tag> <image ID> <size>, got %q", i+1, line)
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("line %d: size %q is not a byte count", i+1, f[2])
		}
		if !strings.HasPrefix(f[1], "sha256:") || len(f[1]) != len("sha256:")+64 {
			return nil, fmt.Errorf("line %d: image ID %q is not a sha256 digest", i+1, f[1])
		}
		out = append(out, ListEntry{Tag: f[0], ID: f[1], Size: size})
	}
	return out, nil
}

// Refs returns the sorted distinct images of containers.
func Refs(cs []Container) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cs {
		if !seen[c.Image] {
			seen[c.Image] = true
			out = append(out, c.Image)
		}
	}
	sort.Strings(out)
	return out
}
