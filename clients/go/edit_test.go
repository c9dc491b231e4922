package voxcol_test

import (
	"context"
	"errors"
	"io"
	"math"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	voxcol "github.com/voxcol/voxcol/clients/go"
	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// voxelAt reads the material of the voxel holding p (voxel size 1).
func voxelAt(t *testing.T, c *voxcol.Client, world string, p *v1.Vec3) (material, occupancy byte, version uint64) {
	t.Helper()
	x, y, z := int32(math.Floor(float64(p.X))), int32(math.Floor(float64(p.Y))), int32(math.Floor(float64(p.Z)))
	r, err := c.ReadVoxels(testContext(t), &v1.ReadVoxelsRequest{World: world, Region: &v1.VoxelBox{
		Min: &v1.Int3{X: x, Y: y, Z: z}, Max: &v1.Int3{X: x + 1, Y: y + 1, Z: z + 1}}})
	if err != nil {
		t.Fatalf("ReadVoxels: %v", err)
	}
	return r.Voxels.Materials[0], r.Voxels.Occupancies[0], r.Version
}

// A tick batch applies its edits first and its queries read exactly the version they made.
func TestFlushTickWithEdits(t *testing.T) {
	c := dial(t, sharedServer(t).Addr)
	ctx := testContext(t)
	world := newWorld(t, c)
	ray := down(0.5, 0.5)
	ray.World = world
	before, err := c.Raycast(ctx, ray)
	if err != nil || !before.Hit {
		t.Fatalf("Raycast before: %v %v", before, err)
	}
	ground := before.First.Position
	if m, _, _ := voxelAt(t, c, world, vec(ground.X, ground.Y-0.5, ground.Z)); m < 2 {
		t.Fatalf("the voxel under the hit is material %d, not solid", m)
	}

	b := c.NewBatcher(voxcol.BatcherOptions{World: world})
	defer b.Close(ctx)
	after := b.Raycast(down(0.5, 0.5))
	carve := &v1.ApplyEditsRequest{Primitives: []*v1.EditPrimitive{{Primitive: &v1.EditPrimitive_FillBall{
		FillBall: &v1.FillBallRequest{Center: ground, Radius: 4, Material: 0}}}}}
	tick, err := b.FlushTick(carve, 0).Wait(ctx)
	if err != nil {
		t.Fatalf("FlushTick: %v", err)
	}
	if tick.EditAck == nil || tick.EditAck.Version != before.Version+1 || tick.Version != tick.EditAck.Version {
		t.Fatalf("tick: ack %v, batch version %d; want ack version %d read by the batch", tick.EditAck, tick.Version, before.Version+1)
	}
	if got := c.Floor(world); got != tick.EditAck.Version {
		t.Errorf("Floor(%s) = %d after the tick, want %d", world, got, tick.EditAck.Version)
	}
	if got := c.Floor(""); got != 0 {
		t.Errorf("the default world's floor moved to %d", got)
	}
	a, err := after.Wait(ctx)
	if err != nil {
		t.Fatalf("the tick's raycast: %v", err)
	}
	if a.Version != tick.EditAck.Version {
		t.Errorf("the tick's raycast read version %d, want %d", a.Version, tick.EditAck.Version)
	}
	hit := a.Result.GetRaycast()
	if !hit.Hit || hit.First.Distance < before.First.Distance+3 {
		t.Errorf("after carving a radius-4 ball at the hit the ray stops at %v, before at %v", hit.First.GetDistance(), before.First.Distance)
	}
	// Independent facts: the unary call agrees, and the voxel that was hit is now air.
	unary, err := c.Raycast(ctx, ray)
	if err != nil {
		t.Fatal(err)
	}
	if unary.Version != a.Version {
		t.Errorf("unary raycast read version %d, the tick %d", unary.Version, a.Version)
	}
	// A batch reports its version once, in the batch (QueryAnswer.Version), not per result.
	unary.Version = hit.Version
	mustEqual(t, "tick raycast vs unary", hit, unary)
	if m, occ, v := voxelAt(t, c, world, vec(ground.X, ground.Y-0.5, ground.Z)); m != 0 || occ != 0 || v != tick.Version {
		t.Errorf("voxel under the old hit: material %d occupancy %d at version %d, want air at %d", m, occ, v, tick.Version)
	}

	// Failing edits fail the batch and its queries with their code.
	q := b.Raycast(down(0.5, 0.5))
	badEdit := &v1.ApplyEditsRequest{Primitives: []*v1.EditPrimitive{{Primitive: &v1.EditPrimitive_FillBall{
		FillBall: &v1.FillBallRequest{Center: ground, Radius: -1}}}}}
	if _, err := b.FlushTick(badEdit, 0).Wait(ctx); voxcol.Code(err) != codes.InvalidArgument || !containsAll(err.Error(), "radius") {
		t.Errorf("tick with a bad edit: %v", err)
	}
	if _, err := q.Wait(ctx); voxcol.Code(err) != codes.InvalidArgument {
		t.Errorf("query of the failed tick: %v", err)
	}
}

// Batches wait for the client's read-your-writes floor: the version of its last EditAck.
func TestReadYourWrites(t *testing.T) {
	srv := sharedServer(t)
	c := dial(t, srv.Addr)
	other := dial(t, srv.Addr) // another game server editing the same world
	ctx := testContext(t)
	world := newWorld(t, c)

	ack, err := c.FillBall(ctx, &v1.FillBallRequest{World: world, Center: vec(10, 0, 10), Radius: 2, Material: 2})
	if err != nil {
		t.Fatal(err)
	}
	if c.Floor(world) != ack.Version || other.Floor(world) != 0 {
		t.Fatalf("floors after FillBall: %d (want %d), other client %d (want 0)", c.Floor(world), ack.Version, other.Floor(world))
	}

	// Raise the floor past the world's version: the batch waits until another client's edit
	// makes that version, and reads it.
	c.RaiseFloor(world, ack.Version+1)
	c.RaiseFloor(world, 1) // never lowers
	b := c.NewBatcher(voxcol.BatcherOptions{World: world})
	defer b.Close(ctx)
	f := b.Raycast(down(10.5, 10.5))
	start := time.Now()
	b.Flush(0)
	time.Sleep(150 * time.Millisecond)
	select {
	case <-f.Done():
		t.Fatal("the batch was answered before the world reached its floor")
	default:
	}
	// Digs out the ball c built, so that it changes voxels and makes a version (an edit that
	// changes nothing makes none).
	ack2, err := other.FillBall(ctx, &v1.FillBallRequest{World: world, Center: vec(10, 0, 10), Radius: 2, Material: 0})
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.Wait(ctx)
	if err != nil {
		t.Fatalf("batch after the floor was reached: %v", err)
	}
	if a.Version != ack2.Version || ack2.Version != ack.Version+1 {
		t.Errorf("batch read version %d, the edit made %d (floor %d)", a.Version, ack2.Version, ack.Version+1)
	}
	if time.Since(start) < 150*time.Millisecond {
		t.Errorf("answered after %v, before the edit", time.Since(start))
	}

	// A floor the world never reaches fails the batch (after --max_min_version_wait_ms).
	c.RaiseFloor(world, ack2.Version+100)
	if _, err := b.Raycast(down(0, 0)).Wait(ctxAfterFlush(t, b)); voxcol.Code(err) != codes.FailedPrecondition {
		t.Errorf("batch below an unreachable floor: got %v, want FailedPrecondition", err)
	}
}

func ctxAfterFlush(t *testing.T, b *voxcol.Batcher) context.Context {
	b.Flush(0)
	return testContext(t)
}

// Every other RPC through the typed client: worlds, voxels, regions, checkpoints, the change
// feed and the edit stream.
func TestEditAndAdminRPCs(t *testing.T) {
	srv := sharedServer(t)
	c := dial(t, srv.Addr)
	ctx := testContext(t)
	world := newWorld(t, c)
	named := dial(t, srv.Addr, voxcol.WithWorld(world)) // requests without a world go to `world`

	info, err := named.GetWorldInfo(ctx, &v1.GetWorldInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.ListWorlds(ctx, &v1.ListWorldsRequest{SkipResidentBytes: true})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range list.Worlds {
		found = found || w.World == world
	}
	if !found || info.Version != 0 {
		t.Fatalf("world %s listed %v, version %d", world, found, info.Version)
	}

	sub, err := named.Subscribe(ctx, &v1.SubscribeRequest{FromVersion: proto64(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	// Two batches on one edit stream, answered in order; a bad one fails alone.
	es, err := named.EditStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	block := func(x float32) *v1.ApplyEditsRequest {
		return &v1.ApplyEditsRequest{Primitives: []*v1.EditPrimitive{{Primitive: &v1.EditPrimitive_FillBlock{
			FillBlock: &v1.FillBlock{Center: vec(x, 30, 0), Size: vec(2, 2, 2), Material: 2}}}}}
	}
	for i, req := range []*v1.EditStreamRequest{
		{BatchId: 11, Edits: block(0)},
		{BatchId: 12, Edits: &v1.ApplyEditsRequest{}},
		{BatchId: 13, Edits: block(8)},
	} {
		if err := es.Send(req); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
	}
	if err := es.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var acks []*v1.EditAck
	for _, wantID := range []uint64{11, 12, 13} {
		r, err := es.Recv()
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if r.BatchId != wantID {
			t.Fatalf("response for batch %d, want %d", r.BatchId, wantID)
		}
		if wantID == 12 {
			if r.GetError().GetCode() != int32(codes.InvalidArgument) {
				t.Errorf("empty batch: %v", r)
			}
			continue
		}
		acks = append(acks, r.GetAck())
	}
	if _, err := es.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("Recv after the last answer: %v, want io.EOF", err)
	}
	if acks[0].GetVersion() != 1 || acks[1].GetVersion() != 2 || named.Floor(world) != 2 {
		t.Errorf("acks %v, floor %d", acks, named.Floor(world))
	}
	for _, want := range []uint64{1, 2} {
		change, err := sub.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if change.Version != want || len(change.Changes) == 0 {
			t.Errorf("change feed: version %d with %d chunks, want version %d", change.Version, len(change.Changes), want)
		}
	}
	m, _, _ := voxelAt(t, c, world, vec(8, 30, 0))
	if m != 2 {
		t.Errorf("the streamed block is material %d, want rock", m)
	}

	// WriteVoxels, ReadVoxels, ExportRegion and ImportRegion round-trip.
	region := &v1.VoxelBox{Min: &v1.Int3{X: 20, Y: 20, Z: 20}, Max: &v1.Int3{X: 22, Y: 21, Z: 22}}
	wack, err := named.WriteVoxels(ctx, &v1.WriteVoxelsRequest{Voxels: &v1.VoxelData{Region: region,
		Materials: []byte{2, 3, 4, 5}, Occupancies: []byte{255, 255, 128, 255}}})
	if err != nil {
		t.Fatal(err)
	}
	read, err := named.ReadVoxels(ctx, &v1.ReadVoxelsRequest{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	if string(read.Voxels.Materials) != "\x02\x03\x04\x05" || read.Version != wack.Version || named.Floor(world) != wack.Version {
		t.Errorf("ReadVoxels after WriteVoxels: %v at %d, wrote at %d", read.Voxels.Materials, read.Version, wack.Version)
	}
	exported, err := named.ExportRegion(ctx, &v1.ExportRegionRequest{Box: region})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := named.WriteVoxels(ctx, &v1.WriteVoxelsRequest{Voxels: &v1.VoxelData{Region: region,
		Materials: make([]byte, 4), Occupancies: make([]byte, 4)}}); err != nil {
		t.Fatal(err)
	}
	iack, err := named.ImportRegion(ctx, &v1.ImportRegionRequest{Region: exported.Region})
	if err != nil {
		t.Fatal(err)
	}
	read, err = named.ReadVoxels(ctx, &v1.ReadVoxelsRequest{Region: region})
	if err != nil || string(read.Voxels.Materials) != "\x02\x03\x04\x05" || named.Floor(world) != iack.Version {
		t.Errorf("after ImportRegion: %v %v, floor %d, ack %d", read, err, named.Floor(world), iack.Version)
	}

	cp, err := named.CreateCheckpoint(ctx, &v1.CreateCheckpointRequest{Dir: "cp-" + world})
	if err != nil || cp.Version < iack.Version {
		t.Errorf("CreateCheckpoint: %v %v", cp, err)
	}
	v, err := named.ValidateHit(ctx, &v1.ValidateHitRequest{Origin: vec(8, 40, 0), Direction: vec(0, -1, 0),
		Claim: &v1.ValidateHitRequest_ClaimedHit{ClaimedHit: vec(8, 31, 0)}, Tolerance: 0.5})
	if err != nil || v.Verdict != v1.HitVerdict_HIT_VERDICT_CONFIRMED {
		t.Errorf("ValidateHit on the streamed block's top: %v %v", v, err)
	}
	if _, err := c.GetReplicaStatus(ctx, &v1.GetReplicaStatusRequest{}); voxcol.Code(err) != codes.FailedPrecondition {
		t.Errorf("GetReplicaStatus on a primary: %v, want FailedPrecondition", err)
	}
	if _, err := c.DeleteWorld(ctx, &v1.DeleteWorldRequest{World: world}); err != nil {
		t.Fatal(err)
	}
	if _, err := named.GetWorldInfo(ctx, &v1.GetWorldInfoRequest{}); voxcol.Code(err) != codes.NotFound {
		t.Errorf("GetWorldInfo of the deleted world: %v, want NotFound", err)
	}
}

func proto64(v uint64) *uint64 { return &v }
