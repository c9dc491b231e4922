package main

import (
	"context"
	"encoding/json"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	voxcol "github.com/voxcol/voxcol/clients/go"
	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// unaryCall parses a step's request and makes the call through the client library.
type unaryCall func(ctx context.Context, request json.RawMessage) (proto.Message, error)

// call adapts a typed client method (Req must be a pointer message type).
func call[Req proto.Message, Resp proto.Message](newReq func() Req,
	method func(context.Context, Req, ...grpc.CallOption) (Resp, error)) unaryCall {
	return func(ctx context.Context, raw json.RawMessage) (proto.Message, error) {
		req := newReq()
		if err := parse(raw, req); err != nil {
			return nil, err
		}
		return method(ctx, req)
	}
}

// unaryCalls maps every unary RPC of voxcol.v1, as "Service.Method", to c's method.
func unaryCalls(c *voxcol.Client) map[string]unaryCall {
	return map[string]unaryCall{
		"WorldService.GetWorldInfo":       call(func() *v1.GetWorldInfoRequest { return new(v1.GetWorldInfoRequest) }, c.GetWorldInfo),
		"WorldService.CreateWorld":        call(func() *v1.CreateWorldRequest { return new(v1.CreateWorldRequest) }, c.CreateWorld),
		"WorldService.DeleteWorld":        call(func() *v1.DeleteWorldRequest { return new(v1.DeleteWorldRequest) }, c.DeleteWorld),
		"WorldService.ListWorlds":         call(func() *v1.ListWorldsRequest { return new(v1.ListWorldsRequest) }, c.ListWorlds),
		"QueryService.Raycast":            call(func() *v1.RaycastRequest { return new(v1.RaycastRequest) }, c.Raycast),
		"QueryService.Sweep":              call(func() *v1.SweepRequest { return new(v1.SweepRequest) }, c.Sweep),
		"QueryService.Overlap":            call(func() *v1.OverlapRequest { return new(v1.OverlapRequest) }, c.Overlap),
		"QueryService.Contacts":           call(func() *v1.ContactsRequest { return new(v1.ContactsRequest) }, c.Contacts),
		"QueryService.Probe":              call(func() *v1.ProbeRequest { return new(v1.ProbeRequest) }, c.Probe),
		"QueryService.MoveCharacters":     call(func() *v1.MoveCharactersRequest { return new(v1.MoveCharactersRequest) }, c.MoveCharacters),
		"QueryService.ValidateHit":        call(func() *v1.ValidateHitRequest { return new(v1.ValidateHitRequest) }, c.ValidateHit),
		"QueryService.FindPath":           call(func() *v1.FindPathRequest { return new(v1.FindPathRequest) }, c.FindPath),
		"QueryService.GetNavMesh":         call(func() *v1.GetNavMeshRequest { return new(v1.GetNavMeshRequest) }, c.GetNavMesh),
		"BodyService.UpdateBodies":        call(func() *v1.UpdateBodiesRequest { return new(v1.UpdateBodiesRequest) }, c.UpdateBodies),
		"BodyService.ListBodies":          call(func() *v1.ListBodiesRequest { return new(v1.ListBodiesRequest) }, c.ListBodies),
		"EditService.FillBall":            call(func() *v1.FillBallRequest { return new(v1.FillBallRequest) }, c.FillBall),
		"EditService.ApplyEdits":          call(func() *v1.ApplyEditsRequest { return new(v1.ApplyEditsRequest) }, c.ApplyEdits),
		"EditService.ReadVoxels":          call(func() *v1.ReadVoxelsRequest { return new(v1.ReadVoxelsRequest) }, c.ReadVoxels),
		"EditService.WriteVoxels":         call(func() *v1.WriteVoxelsRequest { return new(v1.WriteVoxelsRequest) }, c.WriteVoxels),
		"AdminService.CreateCheckpoint":   call(func() *v1.CreateCheckpointRequest { return new(v1.CreateCheckpointRequest) }, c.CreateCheckpoint),
		"AdminService.ExportRegion":       call(func() *v1.ExportRegionRequest { return new(v1.ExportRegionRequest) }, c.ExportRegion),
		"AdminService.ImportRegion":       call(func() *v1.ImportRegionRequest { return new(v1.ImportRegionRequest) }, c.ImportRegion),
		"ReplicaService.GetReplicaStatus": call(func() *v1.GetReplicaStatusRequest { return new(v1.GetReplicaStatusRequest) }, c.GetReplicaStatus),
	}
}
