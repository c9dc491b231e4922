package voxcol_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	voxcol "github.com/voxcol/voxcol/clients/go"
	"github.com/voxcol/voxcol/clients/go/internal/servertest"
	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// shared is one server for the tests that do not stop or reconfigure it. Tests that edit use
// worlds of their own (newWorld), so they do not disturb each other.
var shared struct {
	once sync.Once
	dir  string // the shared server's data directory, removed after the tests
	srv  *servertest.Server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

func sharedServer(t *testing.T) *servertest.Server {
	t.Helper()
	bin := servertest.Binary(t)
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "voxcol-go-test-")
		if err != nil {
			shared.err = err
			return
		}
		shared.dir = dir
		shared.srv, shared.err = servertest.Start(bin, dir)
	})
	if shared.err != nil {
		t.Fatalf("starting the shared server: %v", shared.err)
	}
	return shared.srv
}

func dial(t *testing.T, addr string, opts ...voxcol.Option) *voxcol.Client {
	t.Helper()
	c, err := voxcol.Dial(addr, opts...)
	if err != nil {
		t.Fatalf("Dial(%s): %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var worldSeq atomic.Int64

// newWorld creates a fresh generated world (the same terrain as the default world) for a test
// that edits, and returns its id.
func newWorld(t *testing.T, c *voxcol.Client) string {
	t.Helper()
	id := fmt.Sprintf("t%d-%s", worldSeq.Add(1), strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")))
	if len(id) > 64 {
		id = id[:64]
	}
	if _, err := c.CreateWorld(testContext(t), &v1.CreateWorldRequest{World: id, Source: &v1.CreateWorldRequest_Settings{Settings: &v1.WorldSettings{}}}); err != nil {
		t.Fatalf("CreateWorld(%s): %v", id, err)
	}
	return id
}

func vec(x, y, z float32) *v1.Vec3 { return &v1.Vec3{X: x, Y: y, Z: z} }

// down is a ray straight down from height 40 at (x, z).
func down(x, z float32) *v1.RaycastRequest {
	return &v1.RaycastRequest{Origin: vec(x, 40, z), Direction: vec(0, -1, 0), MaxDistance: 90}
}

// cliJSON runs the voxcol CLI with --json against addr and parses its output into msg.
func cliJSON(t *testing.T, addr string, msg proto.Message, args ...string) {
	t.Helper()
	cli := servertest.CLI(t)
	out, err := exec.Command(cli, append([]string{"--server=" + addr, "--json"}, args...)...).Output()
	if err != nil {
		t.Fatalf("voxcol %s: %v", strings.Join(args, " "), err)
	}
	if err := protojson.Unmarshal(out, msg); err != nil {
		t.Fatalf("parsing the CLI's JSON %q: %v", out, err)
	}
}

func mustEqual(t *testing.T, what string, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Errorf("%s differs:\n got  %v\n want %v", what, got, want)
	}
}

type protoMsg = proto.Message

// compare waits for f and checks its result (picked by got) equals the unary call's answer.
func compare(t *testing.T, ctx context.Context, name string, f *voxcol.QueryFuture,
	got func(*v1.QueryResult) protoMsg, want func() (protoMsg, error)) {
	t.Helper()
	a, err := f.Wait(ctx)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	w, err := want()
	if err != nil {
		t.Fatalf("unary %s: %v", name, err)
	}
	mustEqual(t, name, got(a.Result), w)
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func pool(t *testing.T, pem []byte) *x509.CertPool {
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		t.Fatal("bad PEM")
	}
	return p
}
