package voxcol_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	voxcol "github.com/voxcol/voxcol/clients/go"
	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// The unary raycast gives the CLI's answer (an independent client: the C++ SDK) to the same ray.
func TestRaycastMatchesCLI(t *testing.T) {
	srv := sharedServer(t)
	c := dial(t, srv.Addr)
	for _, xz := range [][2]float32{{0.5, 0.5}, {-30, -10}, {17.25, 40}} {
		got, err := c.Raycast(testContext(t), down(xz[0], xz[1]))
		if err != nil {
			t.Fatalf("Raycast: %v", err)
		}
		if !got.Hit {
			t.Fatalf("ray at %v hit nothing", xz)
		}
		var want v1.RaycastResponse
		cliJSON(t, srv.Addr, &want, "raycast", fmt.Sprintf("--origin=%g,40,%g", xz[0], xz[1]),
			"--direction=0,-1,0", "--max_distance=90")
		mustEqual(t, fmt.Sprintf("raycast at %v", xz), got, &want)
	}
}

// A server-side error is an *Error with the server's code and its message naming the field.
func TestServerErrorIsTyped(t *testing.T) {
	c := dial(t, sharedServer(t).Addr)
	_, err := c.Raycast(testContext(t), &v1.RaycastRequest{Origin: vec(0, 40, 0), Direction: vec(0, 0, 0), MaxDistance: 90})
	var e *voxcol.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *voxcol.Error", err, err)
	}
	if e.Code != codes.InvalidArgument || e.Op != "QueryService.Raycast" {
		t.Errorf("got code %v op %q, want InvalidArgument QueryService.Raycast", e.Code, e.Op)
	}
	if !containsAll(e.Message, "direction") {
		t.Errorf("message %q does not name the field", e.Message)
	}
	if !errors.Is(err, &voxcol.Error{Code: codes.InvalidArgument}) || errors.Is(err, &voxcol.Error{Code: codes.NotFound}) {
		t.Errorf("errors.Is by code template is wrong for %v", err)
	}
	if status.Code(err) != codes.InvalidArgument || voxcol.Code(err) != codes.InvalidArgument {
		t.Errorf("status.Code = %v, voxcol.Code = %v", status.Code(err), voxcol.Code(err))
	}
	wrapped := fmt.Errorf("tick 7: %w", err)
	if voxcol.Code(wrapped) != codes.InvalidArgument || !errors.As(wrapped, &e) {
		t.Errorf("wrapped error lost its code: %v", wrapped)
	}
}

// Every query kind answered in one batch equals the unary call; a bad query fails alone.
func TestBatchMatchesUnary(t *testing.T) {
	c := dial(t, sharedServer(t).Addr)
	ctx := testContext(t)
	capsule := &v1.PosedShape{Shape: &v1.Shape{Kind: &v1.Shape_Capsule{Capsule: &v1.CapsuleShape{HalfHeight: 0.9, Radius: 0.4}}}, Position: vec(-30, 30, -10)}
	box := &v1.PosedShape{Shape: &v1.Shape{Kind: &v1.Shape_Box{Box: &v1.BoxShape{HalfExtents: vec(0.5, 0.5, 0.5)}}}, Position: vec(-30, 15.1, -10)}
	sphere := &v1.PosedShape{Shape: &v1.Shape{Kind: &v1.Shape_Sphere{Sphere: &v1.SphereShape{Radius: 0.5}}}, Position: vec(-30, 15.1, -10)}
	rays := []*v1.RaycastRequest{down(0.5, 0.5), down(-30, -10), down(20, 20)}
	sweep := &v1.SweepRequest{Shape: capsule, Direction: vec(0, -1, 0), Distance: 60}
	overlap := &v1.OverlapRequest{Shape: box, IncludePenetration: true}
	contacts := &v1.ContactsRequest{Shape: sphere}
	probe := &v1.ProbeRequest{Shape: &v1.ProbeRequest_Box{Box: &v1.ProbeBox{Center: vec(-30, 15, -10), HalfExtents: vec(0.5, 1, 0.5)}}}
	move := &v1.MoveCharactersRequest{Moves: []*v1.CharacterMove{{ClientId: 7, Radius: 0.4, HalfHeight: 0.9, Position: vec(-30, 20, -10), Displacement: vec(1, -3, 0)}}}
	bad := &v1.RaycastRequest{Origin: vec(0, 400, 0), Direction: vec(0, -1, 0), MaxDistance: 90}

	b := c.NewBatcher(voxcol.BatcherOptions{MaxBatchQueries: 3}) // 9 queries: 3 batches
	defer b.Close(ctx)
	var rayFutures []*voxcol.QueryFuture
	for _, r := range rays {
		rayFutures = append(rayFutures, b.Raycast(r))
	}
	fSweep, fOverlap, fContacts, fProbe, fMove := b.Sweep(sweep), b.Overlap(overlap), b.Contacts(contacts), b.Probe(probe), b.MoveCharacters(move)
	fBad := b.Raycast(bad)
	if n := b.Queued(); n != 9 {
		t.Fatalf("Queued() = %d, want 9", n)
	}
	if sent := b.Flush(0); sent != 9 {
		t.Fatalf("Flush sent %d queries, want 9", sent)
	}
	if n := b.Queued(); n != 0 {
		t.Errorf("Queued() after Flush = %d", n)
	}

	for i, f := range rayFutures {
		a, err := f.Wait(ctx)
		if err != nil {
			t.Fatalf("ray %d: %v", i, err)
		}
		want, err := c.Raycast(ctx, rays[i])
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, fmt.Sprintf("ray %d", i), a.Result.GetRaycast(), want)
		if a.Version != want.Version {
			t.Errorf("ray %d: batch version %d, unary %d", i, a.Version, want.Version)
		}
	}
	compare(t, ctx, "sweep", fSweep, func(r *v1.QueryResult) protoMsg { return r.GetSweep() }, func() (protoMsg, error) { return c.Sweep(ctx, sweep) })
	compare(t, ctx, "overlap", fOverlap, func(r *v1.QueryResult) protoMsg { return r.GetOverlap() }, func() (protoMsg, error) { return c.Overlap(ctx, overlap) })
	compare(t, ctx, "contacts", fContacts, func(r *v1.QueryResult) protoMsg { return r.GetContacts() }, func() (protoMsg, error) { return c.Contacts(ctx, contacts) })
	compare(t, ctx, "probe", fProbe, func(r *v1.QueryResult) protoMsg { return r.GetProbe() }, func() (protoMsg, error) { return c.Probe(ctx, probe) })
	compare(t, ctx, "move", fMove, func(r *v1.QueryResult) protoMsg { return r.GetMoveCharacters() }, func() (protoMsg, error) { return c.MoveCharacters(ctx, move) })

	a, err := fBad.Wait(ctx)
	if voxcol.Code(err) != codes.InvalidArgument {
		t.Fatalf("bad query: got %v, want InvalidArgument", err)
	}
	if a.Result == nil || a.Result.Code != int32(codes.InvalidArgument) || !containsAll(a.Result.Message, "origin") {
		t.Errorf("bad query's result %v does not carry the code and a message naming origin", a.Result)
	}
	_, unaryErr := c.Raycast(ctx, bad)
	if err.(*voxcol.Error).Message != unaryErr.(*voxcol.Error).Message {
		t.Errorf("batch message %q, unary message %q", err.(*voxcol.Error).Message, unaryErr.(*voxcol.Error).Message)
	}
}

// Packed raycasts answer each ray as the unary raycast does; a bad ray fails alone.
func TestPackedRaycastsMatchUnary(t *testing.T) {
	c := dial(t, sharedServer(t).Addr)
	ctx := testContext(t)
	b := c.NewBatcher(voxcol.BatcherOptions{})
	defer b.Close(ctx)
	xz := [][2]float32{{0.5, 0.5}, {-30, -10}, {63.5, -63.5}, {0, 1000}, {10, 12}}
	rays := &v1.RaycastArrays{MaxDistances: []float32{90}}
	for _, p := range xz {
		rays.Origins = append(rays.Origins, p[0], 40, p[1])
		rays.Directions = append(rays.Directions, 0, -1, 0)
	}
	ans, err := b.Raycasts(rays, 0).Wait(ctx)
	if err != nil {
		t.Fatalf("Raycasts: %v", err)
	}
	got := ans.Raycasts
	if len(got.GetCodes()) != len(xz) {
		t.Fatalf("%d codes for %d rays", len(got.GetCodes()), len(xz))
	}
	for i, p := range xz {
		want, err := c.Raycast(ctx, down(p[0], p[1]))
		if code := codes.Code(got.Codes[i]); code != voxcol.Code(err) {
			t.Errorf("ray %d: packed code %v, unary %v", i, code, err)
			continue
		}
		if err != nil {
			continue
		}
		hit := got.Flags[i]&uint32(v1.RaycastFlag_RAYCAST_FLAG_HIT) != 0
		if hit != want.Hit {
			t.Errorf("ray %d: packed hit %v, unary %v", i, hit, want.Hit)
			continue
		}
		f := want.First
		wantPos := []float32{f.GetPosition().GetX(), f.GetPosition().GetY(), f.GetPosition().GetZ()}
		wantNormal := []float32{f.GetNormal().GetX(), f.GetNormal().GetY(), f.GetNormal().GetZ()}
		wantVoxel := []int32{f.GetVoxel().GetX(), f.GetVoxel().GetY(), f.GetVoxel().GetZ()}
		if got.Distances[i] != f.GetDistance() || got.Materials[i] != f.GetMaterial() ||
			!equal(got.Positions[3*i:3*i+3], wantPos) || !equal(got.Normals[3*i:3*i+3], wantNormal) ||
			!equal(got.Voxels[3*i:3*i+3], wantVoxel) {
			t.Errorf("ray %d: packed (d %v pos %v n %v m %v vox %v), unary %v", i, got.Distances[i],
				got.Positions[3*i:3*i+3], got.Normals[3*i:3*i+3], got.Materials[i], got.Voxels[3*i:3*i+3], f)
		}
	}
	if codes.Code(got.Codes[3]) != codes.InvalidArgument || !containsAll(got.Message, "raycasts.origins[3]") {
		t.Errorf("the ray outside the world: code %d, message %q", got.Codes[3], got.Message)
	}
}

// A batch's deadline and a client's per-call timeout surface as DeadlineExceeded.
func TestDeadline(t *testing.T) {
	srv := sharedServer(t)
	// A radius-64 sphere's contacts take tens of milliseconds.
	big := &v1.ContactsRequest{Shape: &v1.PosedShape{Shape: &v1.Shape{Kind: &v1.Shape_Sphere{Sphere: &v1.SphereShape{Radius: 64}}}, Position: vec(0, 0, 0)}}

	slow := dial(t, srv.Addr) // default 10 s timeout: the query completes
	if _, err := slow.Contacts(testContext(t), big); err != nil {
		t.Fatalf("Contacts with the default timeout: %v", err)
	}
	hasty := dial(t, srv.Addr, voxcol.WithTimeout(3*time.Millisecond))
	_, err := hasty.Contacts(testContext(t), big)
	if voxcol.Code(err) != codes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Contacts with a 3 ms timeout: got %v, want DeadlineExceeded", err)
	}
	// The caller's context deadline wins over a longer client timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Millisecond)
	defer cancel()
	if _, err := slow.Contacts(ctx, big); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Contacts with a 3 ms context: got %v, want DeadlineExceeded", err)
	}
	// Wait gives up with the caller's context, the query still completes later.
	b := slow.NewBatcher(voxcol.BatcherOptions{})
	defer b.Close(testContext(t))
	f := b.Contacts(big)
	b.Flush(0)
	short, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	if _, err := f.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with a 1 ms context: got %v", err)
	}
	if _, err := f.Wait(testContext(t)); err != nil {
		t.Fatalf("the query itself: %v", err)
	}
	// A batch whose deadline (BatchTimeout) passes on the server.
	tight := slow.NewBatcher(voxcol.BatcherOptions{BatchTimeout: time.Millisecond})
	defer tight.Close(testContext(t))
	futures := []*voxcol.QueryFuture{}
	for i := 0; i < 8; i++ {
		futures = append(futures, tight.Contacts(big))
	}
	tight.Flush(0)
	if _, err := futures[7].Wait(testContext(t)); voxcol.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("batch with a 1 ms deadline: got %v, want DeadlineExceeded", err)
	}
}
