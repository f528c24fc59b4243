// Command fake-buildah plays the build of the add-on's Job backend in the
// e2e suite: installed as /bin/bash in an image (the Job runs
// `/bin/bash -c <buildah script>`), it checks that the build's inputs are
// mounted, "pushes" nothing, and reports the digest sha256(<TAG>) as its
// termination message, where the BuildController reads a real build's
// digest. It is a stand-in: no registry or buildah can run here.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	tag, context := os.Getenv("TAG"), os.Getenv("CONTEXT")
	if tag == "" || context == "" {
		fail("TAG and CONTEXT must be set, as the BuildController's Job sets them")
	}
	entries, err := os.ReadDir(filepath.Join(context, "machineconfig"))
	if err != nil || len(entries) == 0 {
		fail(fmt.Sprintf("the build inputs are not mounted in %s/machineconfig: %v", context, err))
	}
	for _, env := range []string{"PULL_AUTH", "PUSH_AUTH"} {
		if _, err := os.Stat(os.Getenv(env)); err != nil {
			fail(fmt.Sprintf("%s: %v", env, err))
		}
	}
	sum := sha256.Sum256([]byte(tag))
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if err := os.WriteFile("/dev/termination-log", []byte(digest), 0o644); err != nil {
		fail(err.Error())
	}
	fmt.Printf("fake build of %s from %d inputs: %s\n", tag, len(entries), digest)
}

func fail(msg string) {
	_ = os.WriteFile("/dev/termination-log", []byte(msg), 0o644)
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}
