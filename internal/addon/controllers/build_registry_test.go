package controllers_test

import (
	"context"
	"sync"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/buildcontroller"
	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
)

// fakeRegistry plays the image registry for the envtest suites: every
// image a build reports exists until it is deleted. (HTTPRegistry itself
// is tested against an HTTPS server in buildcontroller/registry_test.go; the e2e uses a
// real registry.)
type fakeRegistry struct {
	mu      sync.Mutex
	deleted map[string]bool
	// deletes are the images deleted, in order.
	deletes []string
}

func newFakeRegistry() *fakeRegistry { return &fakeRegistry{deleted: map[string]bool{}} }

func (f *fakeRegistry) Exists(_ context.Context, ref osbuild.ImageRef, _ buildcontroller.RegistryAuth) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.deleted[ref.String()], nil
}

func (f *fakeRegistry) Delete(_ context.Context, ref osbuild.ImageRef, _ buildcontroller.RegistryAuth) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.deleted[ref.String()] {
		f.deleted[ref.String()] = true
		f.deletes = append(f.deletes, ref.String())
	}
	return nil
}

// deletedImages returns the images deleted so far.
func (f *fakeRegistry) deletedImages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.deletes...)
}
