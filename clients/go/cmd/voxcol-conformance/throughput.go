package main

import (
	"context"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	voxcol "github.com/voxcol/voxcol/clients/go"
	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

const (
	raysPerBatch    = 256
	batchesInFlight = 4
	warmUp          = time.Second
)

// throughput sends 256-ray packed batches (rays straight down from y=40, 90 long, x and z
// uniform in [-60, 60) from a fixed-seed generator) through the library's Batcher with at most
// 4 in flight, and returns the rays answered per second over d after a 1 s warm-up.
func throughput(target string, d time.Duration) (float64, error) {
	client, err := voxcol.Dial(target)
	if err != nil {
		return 0, err
	}
	defer client.Close()
	ctx := context.Background()
	b := client.NewBatcher(voxcol.BatcherOptions{})
	defer b.Close(ctx)
	// One batch first, so that a server that cannot answer is an error, not a rate of 0.
	if _, err := b.Raycasts(rays(rand.New(rand.NewSource(1))), 0).Wait(ctx); err != nil {
		return 0, err
	}

	rng := rand.New(rand.NewSource(42))
	slots := make(chan struct{}, batchesInFlight)
	var (
		counting atomic.Bool
		answered atomic.Int64
		firstErr error
		errOnce  sync.Once
		wg       sync.WaitGroup
	)
	start := time.Now()
	countFrom, end := start.Add(warmUp), start.Add(warmUp+d)
	for time.Now().Before(end) {
		slots <- struct{}{}
		if !counting.Load() && !time.Now().Before(countFrom) {
			counting.Store(true)
			countFrom = time.Now()
		}
		f := b.Raycasts(rays(rng), 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			a, err := f.Wait(ctx)
			if err != nil {
				errOnce.Do(func() { firstErr = err })
				return
			}
			if counting.Load() && time.Now().Before(end) {
				answered.Add(int64(len(a.Raycasts.GetCodes())))
			}
		}()
	}
	elapsed := end.Sub(countFrom)
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(answered.Load()) / elapsed.Seconds(), nil
}

// rays makes one batch of 256 rays.
func rays(rng *rand.Rand) *v1.RaycastArrays {
	r := &v1.RaycastArrays{
		Origins:      make([]float32, 0, 3*raysPerBatch),
		Directions:   make([]float32, 0, 3*raysPerBatch),
		MaxDistances: []float32{90},
	}
	for i := 0; i < raysPerBatch; i++ {
		x, z := float32(rng.Float64()*120-60), float32(rng.Float64()*120-60)
		r.Origins = append(r.Origins, x, 40, z)
		r.Directions = append(r.Directions, 0, -1, 0)
	}
	return r
}
