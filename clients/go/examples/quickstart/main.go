// Command quickstart connects to a voxcol server, casts a ray, runs one game tick (an edit
// and queries as one batch) and reads the change from the feed.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	voxcol "github.com/voxcol/voxcol/clients/go"
	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

func main() {
	target := "127.0.0.1:50051"
	if len(os.Args) > 1 {
		target = os.Args[1]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Connect. Add voxcol.WithTLS(caPEM) and voxcol.WithToken(token) for a secured server.
	client, err := voxcol.Dial(target, voxcol.WithTimeout(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	// A unary raycast straight down.
	ray := &v1.RaycastRequest{Origin: &v1.Vec3{X: 0.5, Y: 40, Z: 0.5}, Direction: &v1.Vec3{Y: -1}, MaxDistance: 90}
	down, err := client.Raycast(ctx, ray)
	if err != nil {
		log.Fatal(err)
	}
	ground := down.GetFirst().GetPosition()
	fmt.Printf("ground at y %.3f, world version %d\n", ground.GetY(), down.Version)

	// Follow the changes from this version on.
	feed, err := client.Subscribe(ctx, &v1.SubscribeRequest{FromVersion: &down.Version})
	if err != nil {
		log.Fatal(err)
	}
	defer feed.Close()

	// One tick: queue the tick's queries, then send them with its edits as one batch. The
	// queries see exactly the version the edits made.
	batcher := client.NewBatcher(voxcol.BatcherOptions{})
	defer batcher.Close(ctx)
	again := batcher.Raycast(ray)
	near := batcher.Probe(&v1.ProbeRequest{Shape: &v1.ProbeRequest_Sphere{
		Sphere: &v1.ProbeSphere{Center: ground, Radius: 1}}})
	dig := &v1.ApplyEditsRequest{Primitives: []*v1.EditPrimitive{{Primitive: &v1.EditPrimitive_FillBall{
		FillBall: &v1.FillBallRequest{Center: ground, Radius: 3, Material: 0}}}}} // material 0 carves
	tick, err := batcher.FlushTick(dig, 0).Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	a, err := again.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	b, err := near.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("tick at version %d: ground now at y %.3f, probe may touch solid: %v\n",
		tick.EditAck.GetVersion(), a.Result.GetRaycast().GetFirst().GetPosition().GetY(),
		b.Result.GetProbe().GetMayTouchSolid())

	// Later flushes wait for that version anyway (read-your-writes): client.Floor("") == it.
	change, err := feed.Recv()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("the feed saw version %d, %d chunks changed\n", change.Version, len(change.Changes))
}
