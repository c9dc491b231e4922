package voxcol

import (
	"context"

	"google.golang.org/grpc"

	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// Raycast casts one ray and returns its first hit, or every surface crossing with AllHits
// (QueryService.Raycast). Many rays a tick are cheaper through a Batcher (Batcher.Raycasts).
func (c *Client) Raycast(ctx context.Context, req *v1.RaycastRequest, opts ...grpc.CallOption) (*v1.RaycastResponse, error) {
	return unary(ctx, c, "QueryService.Raycast", req, c.queries.Raycast, opts)
}

// Sweep moves a shape along a line and returns where it first meets the terrain
// (QueryService.Sweep).
func (c *Client) Sweep(ctx context.Context, req *v1.SweepRequest, opts ...grpc.CallOption) (*v1.SweepResponse, error) {
	return unary(ctx, c, "QueryService.Sweep", req, c.queries.Sweep, opts)
}

// Overlap tests a posed shape against the terrain and the water, exactly
// (QueryService.Overlap).
func (c *Client) Overlap(ctx context.Context, req *v1.OverlapRequest, opts ...grpc.CallOption) (*v1.OverlapResponse, error) {
	return unary(ctx, c, "QueryService.Overlap", req, c.queries.Overlap, opts)
}

// Contacts returns the contact manifold of a posed shape with the terrain, and its water
// contact (QueryService.Contacts).
func (c *Client) Contacts(ctx context.Context, req *v1.ContactsRequest, opts ...grpc.CallOption) (*v1.ContactsResponse, error) {
	return unary(ctx, c, "QueryService.Contacts", req, c.queries.Contacts, opts)
}

// Probe asks whether geometry may be in a box or sphere, at broadphase precision
// (QueryService.Probe).
func (c *Client) Probe(ctx context.Context, req *v1.ProbeRequest, opts ...grpc.CallOption) (*v1.ProbeResponse, error) {
	return unary(ctx, c, "QueryService.Probe", req, c.queries.Probe, opts)
}

// MoveCharacters runs one tick of the character controller for every move of the request
// (QueryService.MoveCharacters).
func (c *Client) MoveCharacters(ctx context.Context, req *v1.MoveCharactersRequest, opts ...grpc.CallOption) (*v1.MoveCharactersResponse, error) {
	return unary(ctx, c, "QueryService.MoveCharacters", req, c.queries.MoveCharacters, opts)
}

// ValidateHit judges a client's shot against the terrain as of the version it saw (lag
// compensation, QueryService.ValidateHit).
func (c *Client) ValidateHit(ctx context.Context, req *v1.ValidateHitRequest, opts ...grpc.CallOption) (*v1.ValidateHitResponse, error) {
	return unary(ctx, c, "QueryService.ValidateHit", req, c.queries.ValidateHit, opts)
}

// FindPath asks for the shortest walkable path of an agent profile (QueryService.FindPath); the
// path's own outcome (OK, NO_PATH, START_OFF_MESH, ...) is the response's Status.
func (c *Client) FindPath(ctx context.Context, req *v1.FindPathRequest, opts ...grpc.CallOption) (*v1.FindPathResponse, error) {
	return unary(ctx, c, "QueryService.FindPath", req, c.queries.FindPath, opts)
}

// GetNavMesh returns the navmesh polygons of a box's tiles, for drawing (QueryService.GetNavMesh).
func (c *Client) GetNavMesh(ctx context.Context, req *v1.GetNavMeshRequest, opts ...grpc.CallOption) (*v1.GetNavMeshResponse, error) {
	return unary(ctx, c, "QueryService.GetNavMesh", req, c.queries.GetNavMesh, opts)
}

// WatchPaths opens a path watching stream (QueryService.WatchPaths): Send watch and unwatch
// requests, Recv events (REGISTERED, BLOCKED, SHORTER, UNWATCHED, REFUSED) until io.EOF.
// CloseSend half-closes: the server ends the stream once the requests' events are written.
// Watches name their world in PathWatch.Path.World (empty: the default world).
func (c *Client) WatchPaths(ctx context.Context, opts ...grpc.CallOption) (v1.QueryService_WatchPathsClient, error) {
	const op = "QueryService.WatchPaths"
	if err := c.precheck(ctx, op, &v1.WatchPathsRequest{}); err != nil {
		return nil, err
	}
	stream, err := c.queries.WatchPaths(ctx, opts...)
	if err != nil {
		return nil, c.callError(op, err)
	}
	return stream, nil
}

// UpdateBodies applies one game tick's body changes, all or nothing (BodyService.UpdateBodies).
// Bodies are session state: not stored, not replicated; a replica keeps the bodies sent to it.
func (c *Client) UpdateBodies(ctx context.Context, req *v1.UpdateBodiesRequest, opts ...grpc.CallOption) (*v1.UpdateBodiesResponse, error) {
	return unary(ctx, c, "BodyService.UpdateBodies", req, c.bodies.UpdateBodies, opts)
}

// ListBodies lists the live bodies at the latest tick and the tick window (BodyService.ListBodies).
func (c *Client) ListBodies(ctx context.Context, req *v1.ListBodiesRequest, opts ...grpc.CallOption) (*v1.ListBodiesResponse, error) {
	return unary(ctx, c, "BodyService.ListBodies", req, c.bodies.ListBodies, opts)
}
