package voxcol

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// GetWorldInfo returns the bounds, voxel size, generator and current version of the request's
// world (WorldService.GetWorldInfo).
func (c *Client) GetWorldInfo(ctx context.Context, req *v1.GetWorldInfoRequest, opts ...grpc.CallOption) (*v1.GetWorldInfoResponse, error) {
	return unary(ctx, c, "WorldService.GetWorldInfo", req, c.worlds.GetWorldInfo, opts)
}

// CreateWorld creates the world req.World, generated from req.Settings or copied from
// req.TemplateWorld (WorldService.CreateWorld; admin role). The client's own world is never
// filled in here: req.World is the new world's id.
func (c *Client) CreateWorld(ctx context.Context, req *v1.CreateWorldRequest, opts ...grpc.CallOption) (*v1.WorldSummary, error) {
	return unaryAsIs(ctx, c, "WorldService.CreateWorld", req, c.worlds.CreateWorld, opts)
}

// DeleteWorld deletes the world req.World (WorldService.DeleteWorld; admin role). req.World
// must be set: the client's world is never filled in here.
func (c *Client) DeleteWorld(ctx context.Context, req *v1.DeleteWorldRequest, opts ...grpc.CallOption) (*v1.DeleteWorldResponse, error) {
	return unaryAsIs(ctx, c, "WorldService.DeleteWorld", req, c.worlds.DeleteWorld, opts)
}

// ListWorlds lists every world of the server, sorted by id (WorldService.ListWorlds).
func (c *Client) ListWorlds(ctx context.Context, req *v1.ListWorldsRequest, opts ...grpc.CallOption) (*v1.ListWorldsResponse, error) {
	return unary(ctx, c, "WorldService.ListWorlds", req, c.worlds.ListWorlds, opts)
}

// GetReplicaStatus reports how far a read replica is behind its primary
// (ReplicaService.GetReplicaStatus; admin role). A server that is not a replica answers
// codes.FailedPrecondition.
func (c *Client) GetReplicaStatus(ctx context.Context, req *v1.GetReplicaStatusRequest, opts ...grpc.CallOption) (*v1.GetReplicaStatusResponse, error) {
	return unary(ctx, c, "ReplicaService.GetReplicaStatus", req, c.replica.GetReplicaStatus, opts)
}

// unaryAsIs is unary for requests whose `world` field must not take the client's world.
func unaryAsIs[Req, Resp proto.Message](ctx context.Context, c *Client, op string, req Req,
	call func(context.Context, Req, ...grpc.CallOption) (Resp, error), opts []grpc.CallOption) (Resp, error) {
	return invoke(ctx, c, op, req, req, call, opts)
}
