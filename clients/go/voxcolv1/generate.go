// Package voxcolv1 holds the generated protobuf messages and gRPC stubs of the voxcol.v1 API
// (proto/voxcol/v1 at the repository root).
//
// The *.pb.go files are generated, not kept in version control: run `go generate ./voxcolv1`
// (protoc, protoc-gen-go and protoc-gen-go-grpc on the PATH) or ../offline.sh, which does it
// before every command. Most programs use the typed client in the parent package instead of
// these stubs directly.
package voxcolv1

//go:generate sh gen.sh
