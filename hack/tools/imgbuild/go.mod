// imgbuild writes container images as docker-archive tarballs from local
// files, so the local cluster's containerd can import them without a registry.
module github.com/ocp-capi/ocp-capi/hack/tools/imgbuild

go 1.26.0

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
)
