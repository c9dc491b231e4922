// Package voxcol is the Go client of voxcol, the collision and query service for editable
// voxel terrain: raycasts, shape sweeps, overlaps, contacts, broadphase probes, character
// movement and hit validation against terrain that game servers edit at run time.
//
// Dial returns a Client with one method per RPC of the voxcol.v1 API (the generated messages
// are in package voxcolv1); a Batcher coalesces the queries of a game-server tick into batches
// on the QueryService.Query stream and returns a future per query:
//
//	client, err := voxcol.Dial("127.0.0.1:50051")
//	if err != nil { ... }
//	defer client.Close()
//
//	down, err := client.Raycast(ctx, &v1.RaycastRequest{
//		Origin: &v1.Vec3{X: 0.5, Y: 40, Z: 0.5}, Direction: &v1.Vec3{Y: -1}, MaxDistance: 90})
//
//	batcher := client.NewBatcher(voxcol.BatcherOptions{})
//	defer batcher.Close(ctx)
//	hit := batcher.Raycast(ray)
//	tick := batcher.FlushTick(edits, 0) // the tick's edits, then its queries, as one batch
//	answer, err := hit.Wait(ctx)
//
// Errors are *Error values carrying the gRPC code and the server's message; see Error for how
// to test them with errors.Is and errors.As. The README next to this file has a longer tour.
package voxcol
