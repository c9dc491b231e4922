package voxcol

import (
	"context"

	"google.golang.org/grpc"

	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// FillBall fills (or with material 0 carves) a ball and returns the version it produced
// (EditService.FillBall). The ack raises the world's read-your-writes floor (Floor).
func (c *Client) FillBall(ctx context.Context, req *v1.FillBallRequest, opts ...grpc.CallOption) (*v1.EditAck, error) {
	ack, err := unary(ctx, c, "EditService.FillBall", req, c.edits.FillBall, opts)
	if err == nil {
		c.observeAck(c.worldOf(req.GetWorld()), ack)
	}
	return ack, err
}

// ApplyEdits applies a batch of primitives atomically as one version (EditService.ApplyEdits).
// With an idempotency key a retry is answered with the original ack (Replayed). The ack raises
// the world's read-your-writes floor.
func (c *Client) ApplyEdits(ctx context.Context, req *v1.ApplyEditsRequest, opts ...grpc.CallOption) (*v1.EditAck, error) {
	ack, err := unary(ctx, c, "EditService.ApplyEdits", req, c.edits.ApplyEdits, opts)
	if err == nil {
		c.observeAck(c.worldOf(req.GetWorld()), ack)
	}
	return ack, err
}

// ReadVoxels returns a box of voxels as packed arrays, all of one version
// (EditService.ReadVoxels).
func (c *Client) ReadVoxels(ctx context.Context, req *v1.ReadVoxelsRequest, opts ...grpc.CallOption) (*v1.ReadVoxelsResponse, error) {
	return unary(ctx, c, "EditService.ReadVoxels", req, c.edits.ReadVoxels, opts)
}

// WriteVoxels overwrites a box of voxels as one new version (EditService.WriteVoxels). The ack
// raises the world's read-your-writes floor.
func (c *Client) WriteVoxels(ctx context.Context, req *v1.WriteVoxelsRequest, opts ...grpc.CallOption) (*v1.EditAck, error) {
	ack, err := unary(ctx, c, "EditService.WriteVoxels", req, c.edits.WriteVoxels, opts)
	if err == nil {
		c.observeAck(c.worldOf(req.GetWorld()), ack)
	}
	return ack, err
}

// CreateCheckpoint writes an online backup of the server's store into a new directory inside
// its --backup_root (AdminService.CreateCheckpoint; admin role).
func (c *Client) CreateCheckpoint(ctx context.Context, req *v1.CreateCheckpointRequest, opts ...grpc.CallOption) (*v1.CreateCheckpointResponse, error) {
	return unary(ctx, c, "AdminService.CreateCheckpoint", req, c.admin.CreateCheckpoint, opts)
}

// ExportRegion reads a box of voxels as a packed region (AdminService.ExportRegion; admin
// role).
func (c *Client) ExportRegion(ctx context.Context, req *v1.ExportRegionRequest, opts ...grpc.CallOption) (*v1.ExportRegionResponse, error) {
	return unary(ctx, c, "AdminService.ExportRegion", req, c.admin.ExportRegion, opts)
}

// ImportRegion writes a packed region back as one edit batch (AdminService.ImportRegion; admin
// role). The ack raises the world's read-your-writes floor.
func (c *Client) ImportRegion(ctx context.Context, req *v1.ImportRegionRequest, opts ...grpc.CallOption) (*v1.EditAck, error) {
	ack, err := unary(ctx, c, "AdminService.ImportRegion", req, c.admin.ImportRegion, opts)
	if err == nil {
		c.observeAck(c.worldOf(req.GetWorld()), ack)
	}
	return ack, err
}
