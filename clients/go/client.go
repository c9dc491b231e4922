package voxcol

import (
	"context"
	"crypto/tls"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// DefaultWorld is the world a request with an empty `world` field is about.
const DefaultWorld = "default"

// Client is a connection to a voxcol server: one gRPC channel and a typed method per RPC of
// the voxcol.v1 services (WorldService, QueryService, EditService, AdminService,
// ReplicaService). It is safe for concurrent use. Make one with Dial and Close it when done.
//
// Every unary call gets the client's timeout (WithTimeout) as deadline, and fills in the
// client's world (WithWorld) when the request names none. The client remembers, per world, the
// version of the newest EditAck it received (its read-your-writes floor, see Floor); the
// batchers it makes wait for that version before they answer.
type Client struct {
	conn    *grpc.ClientConn
	world   string
	timeout time.Duration

	worlds  v1.WorldServiceClient
	queries v1.QueryServiceClient
	edits   v1.EditServiceClient
	admin   v1.AdminServiceClient
	replica v1.ReplicaServiceClient
	bodies  v1.BodyServiceClient

	closed atomic.Bool

	floorMu sync.Mutex
	floors  map[string]uint64 // by world id (DefaultWorld for "")
}

// Dial makes a client for the gRPC target, e.g. "127.0.0.1:50051" or "dns:///voxcol:50051".
// Like grpc.Dial it does not wait for the connection: a server that cannot be reached makes
// the calls fail with codes.Unavailable. Without WithTLS or WithTLSConfig the connection is
// plaintext (the server accepts that only on loopback, unless started with --insecure).
//
// Dial fails with codes.InvalidArgument for an empty target, a CA bundle without
// certificates, a token without TLS, or another bad option.
func Dial(target string, opts ...Option) (*Client, error) {
	const op = "Dial"
	o := options{timeout: DefaultTimeout}
	for _, opt := range opts {
		if opt == nil {
			return nil, newError(op, codes.InvalidArgument, "nil Option")
		}
		opt(&o)
	}
	if len(o.optionErrs) > 0 {
		return nil, newError(op, codes.InvalidArgument, "%s", strings.Join(o.optionErrs, "; "))
	}
	if strings.TrimSpace(target) == "" {
		return nil, newError(op, codes.InvalidArgument, "target must not be empty")
	}
	if o.token != "" && !o.tls {
		return nil, newError(op, codes.InvalidArgument,
			"WithToken needs TLS (WithTLS or WithTLSConfig): a bearer token is never sent in plaintext")
	}
	dialOpts := []grpc.DialOption{
		// ReadVoxels answers hold up to 2 bytes for each of --max_region_voxels (4 Mi) voxels.
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30), grpc.MaxCallSendMsgSize(1<<30)),
	}
	if o.tls {
		config := o.tlsConfig
		if config == nil {
			config = &tls.Config{MinVersion: tls.VersionTLS12}
			if o.caPEM != nil {
				pool, ok := certPool(o.caPEM)
				if !ok {
					return nil, newError(op, codes.InvalidArgument, "WithTLS: the CA PEM holds no certificate")
				}
				config.RootCAs = pool
			}
		}
		dialOpts = append(dialOpts, grpc.WithTransportCredentials(credentials.NewTLS(config)))
	} else {
		dialOpts = append(dialOpts, grpc.WithInsecure()) //nolint:staticcheck // grpc 1.33 has no insecure.NewCredentials
	}
	if o.token != "" {
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(bearerToken(o.token)))
	}
	dialOpts = append(dialOpts, o.dialOpts...)
	conn, err := grpc.Dial(target, dialOpts...)
	if err != nil {
		return nil, wrapError(op, err)
	}
	return &Client{
		conn:    conn,
		world:   o.world,
		timeout: o.timeout,
		worlds:  v1.NewWorldServiceClient(conn),
		queries: v1.NewQueryServiceClient(conn),
		edits:   v1.NewEditServiceClient(conn),
		admin:   v1.NewAdminServiceClient(conn),
		replica: v1.NewReplicaServiceClient(conn),
		bodies:  v1.NewBodyServiceClient(conn),
		floors:  make(map[string]uint64),
	}, nil
}

// Close closes the connection. Calls in progress end with codes.Canceled; later calls fail
// with ErrClosed without reaching the network. Close is idempotent.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	return wrapError("Close", c.conn.Close())
}

// World returns the world requests of this client are about when they name none ("" for the
// server's default world).
func (c *Client) World() string { return c.world }

// Conn returns the underlying gRPC connection, for the generated stubs of package voxcolv1 or
// health checks. It is closed by Close.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Floor returns the read-your-writes floor of world ("" is the default world): the highest
// version of an EditAck this client received for it (from FillBall, ApplyEdits, WriteVoxels,
// ImportRegion, EditStream or a batcher's FlushTick), or one given to RaiseFloor. Batchers
// send it as the batches' min_version, so their answers never predate the client's own edits,
// also on servers that apply edits asynchronously (read replicas).
func (c *Client) Floor(world string) uint64 {
	c.floorMu.Lock()
	defer c.floorMu.Unlock()
	return c.floors[worldKey(world)]
}

// RaiseFloor raises the read-your-writes floor of world to version (it never lowers it), e.g.
// to a version learnt from another client or from a Subscribe message.
func (c *Client) RaiseFloor(world string, version uint64) {
	c.floorMu.Lock()
	defer c.floorMu.Unlock()
	if k := worldKey(world); version > c.floors[k] {
		c.floors[k] = version
	}
}

// observeAck raises the floor of world to ack's version.
func (c *Client) observeAck(world string, ack *v1.EditAck) {
	if ack != nil {
		c.RaiseFloor(world, ack.GetVersion())
	}
}

// worldOf returns the world a request naming `world` is about for this client.
func (c *Client) worldOf(world string) string {
	if world == "" {
		return c.world
	}
	return world
}

func worldKey(world string) string {
	if world == "" {
		return DefaultWorld
	}
	return world
}

// withWorld returns req, or a copy of it naming the client's world when req names none and
// the client has one. req's type must have a string field `world`.
func withWorld[M proto.Message](c *Client, req M) M {
	if c.world == "" {
		return req
	}
	m := req.ProtoReflect()
	fd := m.Descriptor().Fields().ByName("world")
	if fd == nil || m.Get(fd).String() != "" {
		return req
	}
	named := proto.Clone(req).(M)
	named.ProtoReflect().Set(fd, protoreflect.ValueOfString(c.world))
	return named
}

// isNil reports whether msg is a nil message (a typed nil pointer included).
func isNil(msg proto.Message) bool {
	return msg == nil || !msg.ProtoReflect().IsValid()
}

// unary makes one unary call op with the client's deadline and world.
func unary[Req, Resp proto.Message](ctx context.Context, c *Client, op string, req Req,
	call func(context.Context, Req, ...grpc.CallOption) (Resp, error), opts []grpc.CallOption) (Resp, error) {
	if isNil(req) {
		var zero Resp
		return zero, c.precheck(ctx, op, req)
	}
	return invoke(ctx, c, op, req, withWorld(c, req), call, opts)
}

// invoke checks req and sends send (req or its copy naming the client's world) with the
// client's deadline.
func invoke[Req, Resp proto.Message](ctx context.Context, c *Client, op string, req, send Req,
	call func(context.Context, Req, ...grpc.CallOption) (Resp, error), opts []grpc.CallOption) (Resp, error) {
	var zero Resp
	if err := c.precheck(ctx, op, req); err != nil {
		return zero, err
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	resp, err := call(ctx, send, opts...)
	if err != nil {
		return zero, c.callError(op, err)
	}
	return resp, nil
}

// check returns the error of a call that must not be made: a closed client, a nil context or a
// nil request.
func (c *Client) precheck(ctx context.Context, op string, req proto.Message) error {
	if c.closed.Load() {
		return closedError(op)
	}
	if ctx == nil {
		return newError(op, codes.InvalidArgument, "context must not be nil")
	}
	if isNil(req) {
		return nilRequestError(op)
	}
	return nil
}

// callError wraps the error of a call, marking calls cut short by Close with ErrClosed.
func (c *Client) callError(op string, err error) error {
	if c.closed.Load() && Code(err) == codes.Canceled {
		return closedError(op)
	}
	return wrapError(op, err)
}
