package voxcol_test

import (
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"

	voxcol "github.com/voxcol/voxcol/clients/go"
	"github.com/voxcol/voxcol/clients/go/internal/servertest"
	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// fastReconnect makes the gRPC channel retry a lost server every 100-500 ms instead of
// gRPC's default (1 s growing to 2 min), to keep the test short.
var fastReconnect = voxcol.WithDialOptions(grpc.WithConnectParams(grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.5, MaxDelay: 500 * time.Millisecond},
	MinConnectTimeout: time.Second,
}))

// After the server restarts, the batcher's next flush opens a new stream; meanwhile flushes
// fail at once with Unavailable.
func TestBatcherReconnectsAfterRestart(t *testing.T) {
	srv := servertest.StartT(t)
	c := dial(t, srv.Addr, fastReconnect)
	ctx := testContext(t)
	b := c.NewBatcher(voxcol.BatcherOptions{ReconnectBackoff: 50 * time.Millisecond, MaxReconnectBackoff: 200 * time.Millisecond})
	defer b.Close(ctx)
	f := b.Raycast(down(0.5, 0.5))
	b.Flush(0)
	before, err := f.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}

	srv.Stop()
	f = b.Raycast(down(0.5, 0.5))
	b.Flush(0)
	if _, err := f.Wait(ctx); voxcol.Code(err) != codes.Unavailable {
		t.Fatalf("flush while the server is down: %v, want Unavailable", err)
	}
	// With a long backoff, a second flush right after a failed attempt fails without waiting.
	slow := c.NewBatcher(voxcol.BatcherOptions{ReconnectBackoff: time.Minute})
	defer slow.Close(ctx)
	first := slow.Raycast(down(0.5, 0.5))
	slow.Flush(0)
	if _, err := first.Wait(ctx); voxcol.Code(err) != codes.Unavailable {
		t.Fatalf("first flush to a stopped server: %v", err)
	}
	start := time.Now()
	second := slow.Raycast(down(0.5, 0.5))
	if sent := slow.Flush(0); sent != 0 {
		t.Errorf("Flush during the backoff sent %d queries", sent)
	}
	if _, err := second.Wait(ctx); voxcol.Code(err) != codes.Unavailable || !containsAll(err.Error(), "backoff") || time.Since(start) > 100*time.Millisecond {
		t.Errorf("flush during the backoff: %v after %v, want an immediate Unavailable naming the backoff", err, time.Since(start))
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		f := b.Raycast(down(0.5, 0.5))
		b.Flush(0)
		a, err := f.Wait(ctx)
		if err == nil {
			mustEqual(t, "raycast after the restart", a.Result, before.Result)
			break
		}
		if voxcol.Code(err) != codes.Unavailable || time.Now().After(deadline) {
			t.Fatalf("no answer after the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TLS with the test CA and a bearer token; the server rejects missing or wrong credentials.
func TestTLSAndToken(t *testing.T) {
	dir := t.TempDir()
	files, err := servertest.MakeTLS(dir)
	if err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens")
	if err := servertest.WriteTokens(tokens, map[string]string{"s3cret-admin": "admin ops", "s3cret-query": "query game"}); err != nil {
		t.Fatal(err)
	}
	srv := servertest.StartT(t, "--tls_cert="+files.CertFile, "--tls_key="+files.KeyFile, "--auth_tokens="+tokens)
	ctx := testContext(t)

	c := dial(t, srv.Addr, voxcol.WithTLS(files.CAPEM), voxcol.WithToken("s3cret-admin"))
	want, err := c.Raycast(ctx, down(0.5, 0.5))
	if err != nil {
		t.Fatalf("Raycast over TLS with a token: %v", err)
	}
	b := c.NewBatcher(voxcol.BatcherOptions{})
	defer b.Close(ctx)
	f := b.Raycast(down(0.5, 0.5))
	b.Flush(0)
	if a, err := f.Wait(ctx); err != nil || !a.Result.GetRaycast().Hit || a.Result.GetRaycast().First.Distance != want.First.Distance {
		t.Errorf("batched raycast over TLS: %v %v, unary %v", a.Result, err, want)
	}
	if _, err := c.FillBall(ctx, &v1.FillBallRequest{Center: vec(0, 0, 0), Radius: 1, Material: 2}); err != nil {
		t.Errorf("FillBall with the admin token: %v", err)
	}

	query := dial(t, srv.Addr, voxcol.WithTLS(files.CAPEM), voxcol.WithToken("s3cret-query"))
	if _, err := query.Raycast(ctx, down(0.5, 0.5)); err != nil {
		t.Errorf("Raycast with the query token: %v", err)
	}
	if _, err := query.FillBall(ctx, &v1.FillBallRequest{Center: vec(0, 0, 0), Radius: 1, Material: 2}); voxcol.Code(err) != codes.PermissionDenied {
		t.Errorf("FillBall with the query token: %v, want PermissionDenied", err)
	}
	for name, opts := range map[string][]voxcol.Option{
		"no token":    {voxcol.WithTLS(files.CAPEM)},
		"wrong token": {voxcol.WithTLS(files.CAPEM), voxcol.WithToken("guess")},
	} {
		cl := dial(t, srv.Addr, opts...)
		if _, err := cl.Raycast(ctx, down(0.5, 0.5)); voxcol.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: %v, want Unauthenticated", name, err)
		}
	}
	other, err := servertest.MakeTLS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string][]voxcol.Option{
		"another CA":   {voxcol.WithTLS(other.CAPEM), voxcol.WithToken("s3cret-admin")},
		"system roots": {voxcol.WithTLS(nil), voxcol.WithToken("s3cret-admin")},
		"plaintext":    {},
		"wrong name":   {voxcol.WithTLSConfig(&tls.Config{RootCAs: pool(t, files.CAPEM), ServerName: "voxcol.example"})},
	} {
		cl := dial(t, srv.Addr, opts...)
		if _, err := cl.Raycast(ctx, down(0.5, 0.5)); voxcol.Code(err) != codes.Unavailable {
			t.Errorf("%s: %v, want Unavailable", name, err)
		}
	}
}

// Calls on a closed client or batcher fail with ErrClosed, without reaching the network.
func TestClosedClient(t *testing.T) {
	srv := sharedServer(t)
	c, err := voxcol.Dial(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	b := c.NewBatcher(voxcol.BatcherOptions{})
	if _, err := c.Raycast(ctx, down(0.5, 0.5)); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = c.Raycast(ctx, down(0.5, 0.5))
	if !errors.Is(err, voxcol.ErrClosed) || voxcol.Code(err) != codes.Canceled {
		t.Errorf("Raycast on a closed client: %v", err)
	}
	if _, err := c.Subscribe(ctx, &v1.SubscribeRequest{}); !errors.Is(err, voxcol.ErrClosed) {
		t.Errorf("Subscribe on a closed client: %v", err)
	}
	f := b.Raycast(down(0.5, 0.5))
	if sent := b.Flush(0); sent != 0 {
		t.Errorf("Flush on a closed client sent %d", sent)
	}
	if _, err := f.Wait(ctx); !errors.Is(err, voxcol.ErrClosed) {
		t.Errorf("batched raycast on a closed client: %v", err)
	}

	// A closed batcher on an open client.
	c2 := dial(t, srv.Addr)
	b2 := c2.NewBatcher(voxcol.BatcherOptions{})
	sent := b2.Raycast(down(0.5, 0.5))
	b2.Flush(0)
	unsent := b2.Raycast(down(0.5, 0.5))
	if err := b2.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := sent.Wait(ctx); err != nil {
		t.Errorf("Close did not wait for the flushed query: %v", err)
	}
	if _, err := unsent.Wait(ctx); !errors.Is(err, voxcol.ErrClosed) {
		t.Errorf("query queued at Close: %v", err)
	}
	if _, err := b2.Raycast(down(0.5, 0.5)).Wait(ctx); !errors.Is(err, voxcol.ErrClosed) {
		t.Errorf("query after Close: %v", err)
	}
}

// A server that cannot be reached makes calls and batches fail with Unavailable.
func TestUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := dial(t, addr, voxcol.WithTimeout(5*time.Second))
	ctx := testContext(t)
	start := time.Now()
	_, err = c.Raycast(ctx, down(0.5, 0.5))
	if voxcol.Code(err) != codes.Unavailable {
		t.Fatalf("Raycast to %s: %v, want Unavailable", addr, err)
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("Raycast took %v to fail, want fail-fast", time.Since(start))
	}
	b := c.NewBatcher(voxcol.BatcherOptions{})
	defer b.Close(ctx)
	f := b.Raycast(down(0.5, 0.5))
	b.Flush(0)
	if _, err := f.Wait(ctx); voxcol.Code(err) != codes.Unavailable {
		t.Errorf("batched raycast to %s: %v, want Unavailable", addr, err)
	}
}

// Bad arguments are answered with InvalidArgument before any call.
func TestBadArguments(t *testing.T) {
	for name, opts := range map[string][]voxcol.Option{
		"token without TLS": {voxcol.WithToken("t")},
		"CA without certs":  {voxcol.WithTLS([]byte("not a certificate"))},
		"negative timeout":  {voxcol.WithTimeout(-time.Second)},
		"nil option":        {nil},
		"nil TLS config":    {voxcol.WithTLSConfig(nil)},
	} {
		if _, err := voxcol.Dial("127.0.0.1:1", opts...); voxcol.Code(err) != codes.InvalidArgument {
			t.Errorf("Dial with %s: %v, want InvalidArgument", name, err)
		}
	}
	if _, err := voxcol.Dial(" "); voxcol.Code(err) != codes.InvalidArgument {
		t.Errorf("Dial with an empty target: %v", err)
	}

	c := dial(t, sharedServer(t).Addr)
	ctx := testContext(t)
	var e *voxcol.Error
	if _, err := c.Raycast(ctx, nil); !errors.As(err, &e) || e.Code != codes.InvalidArgument || e.Op != "QueryService.Raycast" {
		t.Errorf("Raycast(nil): %v", err)
	}
	if _, err := c.ApplyEdits(ctx, nil); voxcol.Code(err) != codes.InvalidArgument {
		t.Errorf("ApplyEdits(nil): %v", err)
	}
	if _, err := c.CreateWorld(ctx, nil); voxcol.Code(err) != codes.InvalidArgument {
		t.Errorf("CreateWorld(nil): %v", err)
	}
	if _, err := c.GetWorldInfo(nil, &v1.GetWorldInfoRequest{}); voxcol.Code(err) != codes.InvalidArgument {
		t.Errorf("GetWorldInfo(nil ctx): %v", err)
	}
	if _, err := c.Subscribe(ctx, nil); voxcol.Code(err) != codes.InvalidArgument {
		t.Errorf("Subscribe(nil): %v", err)
	}
	b := c.NewBatcher(voxcol.BatcherOptions{})
	defer b.Close(ctx)
	for name, f := range map[string]*voxcol.QueryFuture{"Add": b.Add(nil), "Raycast": b.Raycast(nil), "Probe": b.Probe(nil)} {
		if _, err := f.Wait(ctx); voxcol.Code(err) != codes.InvalidArgument {
			t.Errorf("%s(nil): %v", name, err)
		}
	}
	for name, f := range map[string]*voxcol.BatchFuture{"FlushTick": b.FlushTick(nil, 0), "Raycasts": b.Raycasts(nil, 0), "Send": b.Send(nil)} {
		if _, err := f.Wait(ctx); voxcol.Code(err) != codes.InvalidArgument {
			t.Errorf("%s(nil): %v", name, err)
		}
	}
	if b.Queued() != 0 {
		t.Errorf("nil queries were queued: %d", b.Queued())
	}
	// Packed arrays that do not fit together fail the batch, naming the field.
	_, err := b.Raycasts(&v1.RaycastArrays{Origins: []float32{0, 40, 0, 1, 40}, Directions: []float32{0, -1, 0}, MaxDistances: []float32{90}}, 0).Wait(ctx)
	if voxcol.Code(err) != codes.InvalidArgument || !containsAll(err.Error(), "raycasts.") {
		t.Errorf("mismatched packed arrays: %v", err)
	}
}
