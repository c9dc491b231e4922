package voxcol

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// Defaults of BatcherOptions.
const (
	DefaultMaxBatchQueries     = 256
	DefaultReconnectBackoff    = 100 * time.Millisecond
	DefaultMaxReconnectBackoff = 5 * time.Second
)

// BatcherOptions configure a Batcher. Zero (or negative) fields take the defaults.
type BatcherOptions struct {
	// World the batches are about; "" means the client's world (WithWorld).
	World string
	// BatchTimeout is every batch's deadline from its arrival at the server
	// (QueryBatchRequest.timeout_ms); zero means none.
	BatchTimeout time.Duration
	// MaxBatchQueries is the largest batch Flush sends (DefaultMaxBatchQueries); more queued
	// queries go out as several batches. At most the server's --max_batch_queries.
	MaxBatchQueries int
	// After the stream broke, the next flush opens a new one, but not before this delay
	// (DefaultReconnectBackoff), doubled after every attempt that gets no answer up to
	// MaxReconnectBackoff (DefaultMaxReconnectBackoff). Until then flushes fail their queries
	// at once with codes.Unavailable instead of holding up the tick.
	ReconnectBackoff    time.Duration
	MaxReconnectBackoff time.Duration
}

// QueryAnswer is the answer to one query of a batch.
type QueryAnswer struct {
	// Result holds the result of the query's kind (Result.GetRaycast(), ...). On a query's
	// own error it holds the code and message; nil when its batch failed.
	Result *v1.QueryResult
	// Version is the world version the batch read (0 when it failed).
	Version uint64
}

// BatchAnswer is the answer to a whole batch.
type BatchAnswer struct {
	// Version is the world version every query of the batch read.
	Version uint64
	// EditAck is the ack of the batch's edits (FlushTick), nil for a batch without edits.
	EditAck *v1.EditAck
	// Raycasts holds one entry per ray of a Raycasts batch.
	Raycasts *v1.RaycastArrayResults
	// Response is the whole QueryBatchResponse (per-query results, server timing).
	Response *v1.QueryBatchResponse
}

// Batcher coalesces the queries of a game-server tick into batches on one
// QueryService.Query stream, the hot path of the API. Queue queries with Raycast, Sweep,
// Overlap, Contacts, Probe, MoveCharacters or Add during the tick, each returning a future;
// call Flush once per tick (or FlushTick to apply the tick's edits first); read the answers
// from the futures. Raycasts sends many rays as packed arrays.
//
// Every batch waits for the client's read-your-writes floor of its world (Client.Floor) or a
// higher min_version given to the flush, so it never answers from before an edit this client
// was acknowledged. Batches may be answered out of order; each future gets its own answer.
//
// When the stream breaks, unanswered futures fail with codes.Unavailable and the next flush
// opens a new stream (see BatcherOptions.ReconnectBackoff); flushing never blocks on the
// network. A Batcher is safe for concurrent use. The batcher owns the messages given to it
// until their answers are in: do not modify them meanwhile.
type Batcher struct {
	client *Client
	opts   BatcherOptions
	world  string
	ctx    context.Context    // the lifetime of every stream
	cancel context.CancelFunc // cancels them

	mu          sync.Mutex
	queue       []*v1.QueryRequest
	queued      []*QueryFuture
	conn        *queryConn // the current (or last, broken) stream; nil before the first flush
	nextBatchID uint64
	backoff     time.Duration
	nextAttempt time.Time
	inFlight    int
	closed      bool
}

// NewBatcher returns a batcher over this client's connection. Its stream opens on the first
// flush. Close it when done.
func (c *Client) NewBatcher(opts BatcherOptions) *Batcher {
	if opts.MaxBatchQueries <= 0 {
		opts.MaxBatchQueries = DefaultMaxBatchQueries
	}
	if opts.ReconnectBackoff <= 0 {
		opts.ReconnectBackoff = DefaultReconnectBackoff
	}
	if opts.MaxReconnectBackoff <= 0 {
		opts.MaxReconnectBackoff = DefaultMaxReconnectBackoff
	}
	if opts.MaxReconnectBackoff < opts.ReconnectBackoff {
		opts.MaxReconnectBackoff = opts.ReconnectBackoff
	}
	if opts.BatchTimeout < 0 {
		opts.BatchTimeout = 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Batcher{
		client:      c,
		opts:        opts,
		world:       c.worldOf(opts.World),
		ctx:         ctx,
		cancel:      cancel,
		nextBatchID: 1,
		backoff:     opts.ReconnectBackoff,
	}
}

// Add queues one query (any kind) for the next flush. Its ClientId is kept; answers are
// matched by position anyway. A nil query fails its future with codes.InvalidArgument.
func (b *Batcher) Add(query *v1.QueryRequest) *QueryFuture {
	f := newFuture[QueryAnswer]()
	if isNil(query) {
		f.fail(nilRequestError("Batcher.Add"))
		return f
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		f.fail(closedError("Batcher.Add"))
		return f
	}
	b.queue = append(b.queue, query)
	b.queued = append(b.queued, f)
	return f
}

// Raycast queues a raycast; see Client.Raycast.
func (b *Batcher) Raycast(req *v1.RaycastRequest) *QueryFuture {
	if req == nil {
		return b.Add(nil)
	}
	return b.Add(&v1.QueryRequest{Query: &v1.QueryRequest_Raycast{Raycast: req}})
}

// Sweep queues a shape sweep; see Client.Sweep.
func (b *Batcher) Sweep(req *v1.SweepRequest) *QueryFuture {
	if req == nil {
		return b.Add(nil)
	}
	return b.Add(&v1.QueryRequest{Query: &v1.QueryRequest_Sweep{Sweep: req}})
}

// Overlap queues an overlap test; see Client.Overlap.
func (b *Batcher) Overlap(req *v1.OverlapRequest) *QueryFuture {
	if req == nil {
		return b.Add(nil)
	}
	return b.Add(&v1.QueryRequest{Query: &v1.QueryRequest_Overlap{Overlap: req}})
}

// Contacts queues a contacts query; see Client.Contacts.
func (b *Batcher) Contacts(req *v1.ContactsRequest) *QueryFuture {
	if req == nil {
		return b.Add(nil)
	}
	return b.Add(&v1.QueryRequest{Query: &v1.QueryRequest_Contacts{Contacts: req}})
}

// Probe queues a broadphase probe; see Client.Probe.
func (b *Batcher) Probe(req *v1.ProbeRequest) *QueryFuture {
	if req == nil {
		return b.Add(nil)
	}
	return b.Add(&v1.QueryRequest{Query: &v1.QueryRequest_Probe{Probe: req}})
}

// MoveCharacters queues one character-controller tick; see Client.MoveCharacters.
func (b *Batcher) MoveCharacters(req *v1.MoveCharactersRequest) *QueryFuture {
	if req == nil {
		return b.Add(nil)
	}
	return b.Add(&v1.QueryRequest{Query: &v1.QueryRequest_MoveCharacters{MoveCharacters: req}})
}

// Flush sends every queued query, in batches of at most MaxBatchQueries, each waiting for
// the world's read-your-writes floor or minVersion, whichever is higher. It returns how many
// queries were sent; the others' futures have already failed (codes.Unavailable while the
// reconnect backoff holds, ErrClosed after Close).
func (b *Batcher) Flush(minVersion uint64) int {
	b.mu.Lock()
	queries, futures := b.queue, b.queued
	b.queue, b.queued = nil, nil
	b.mu.Unlock()

	minVersion = b.floor(minVersion)
	sent := 0
	for begin := 0; begin < len(queries); begin += b.opts.MaxBatchQueries {
		end := begin + b.opts.MaxBatchQueries
		if end > len(queries) {
			end = len(queries)
		}
		req := &v1.QueryBatchRequest{MinVersion: minVersion, Queries: queries[begin:end], World: b.world}
		if b.send(req, &pendingBatch{queries: futures[begin:end]}) {
			sent += end - begin
		}
	}
	return sent
}

// FlushTick sends edits and every queued query as one batch (not split): the server applies
// the edits first, durably and atomically, and the queries read exactly the version they
// produced. The batch's answer carries the EditAck, which raises the read-your-writes floor.
// Failing edits fail the batch with their code, and every query with it.
func (b *Batcher) FlushTick(edits *v1.ApplyEditsRequest, minVersion uint64) *BatchFuture {
	const op = "Batcher.FlushTick"
	if isNil(edits) {
		f := newFuture[*BatchAnswer]()
		f.fail(nilRequestError(op))
		return f
	}
	b.mu.Lock()
	queries, futures := b.queue, b.queued
	b.queue, b.queued = nil, nil
	b.mu.Unlock()

	f := newFuture[*BatchAnswer]()
	req := &v1.QueryBatchRequest{MinVersion: b.floor(minVersion), Queries: queries, Edits: edits, World: b.world}
	b.send(req, &pendingBatch{queries: futures, batch: f})
	return f
}

// Raycasts sends rays now as one batch of packed raycasts (queued queries stay queued), which
// waits for the read-your-writes floor or minVersion. The answer's Raycasts has one entry per
// ray: a bad ray fails alone (its Codes entry); arrays that do not fit together fail the batch
// with codes.InvalidArgument.
func (b *Batcher) Raycasts(rays *v1.RaycastArrays, minVersion uint64) *BatchFuture {
	f := newFuture[*BatchAnswer]()
	if isNil(rays) {
		f.fail(nilRequestError("Batcher.Raycasts"))
		return f
	}
	req := &v1.QueryBatchRequest{MinVersion: b.floor(minVersion), Raycasts: rays, World: b.world}
	b.send(req, &pendingBatch{batch: f})
	return f
}

// Send sends a batch exactly as given (a copy, with the batcher's batch id and, when it names
// no world, the batcher's world), for what the typed flushes do not express: ReadAt, a
// batch's own TimeoutMs, queries and raycasts together. Neither the floor nor BatchTimeout is
// applied. The per-query results are in the answer's Response.
func (b *Batcher) Send(req *v1.QueryBatchRequest) *BatchFuture {
	f := newFuture[*BatchAnswer]()
	if isNil(req) {
		f.fail(nilRequestError("Batcher.Send"))
		return f
	}
	req = proto.Clone(req).(*v1.QueryBatchRequest)
	if req.World == "" {
		req.World = b.world
	}
	b.send(req, &pendingBatch{batch: f, raw: true})
	return f
}

// Queued returns how many queries wait for the next flush.
func (b *Batcher) Queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// InFlight returns how many sent queries (rays of packed batches included) await their answer.
func (b *Batcher) InFlight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inFlight
}

// Close fails the queries still queued with ErrClosed, half-closes the stream and waits until
// every sent batch is answered or ctx is done; then it cancels the stream (unanswered futures
// fail with codes.Canceled). It returns the stream's final status: nil when it ended
// normally. Later calls fail with ErrClosed.
func (b *Batcher) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	futures := b.queued
	b.queue, b.queued = nil, nil
	conn := b.conn
	if conn != nil && !conn.broken {
		conn.closing = true
	}
	b.mu.Unlock()
	for _, f := range futures {
		f.fail(closedError("Batcher.Close"))
	}
	defer b.cancel()
	if conn == nil {
		return nil
	}
	conn.wakeWriter()
	select {
	case <-conn.done:
	case <-ctx.Done():
		b.cancel()
		<-conn.done
		return wrapError("Batcher.Close", ctx.Err())
	}
	return conn.err
}

// floor returns the min_version of a batch: minVersion or the world's floor, the higher.
func (b *Batcher) floor(minVersion uint64) uint64 {
	if f := b.client.Floor(b.world); f > minVersion {
		return f
	}
	return minVersion
}

// unavailable is the error of a batch that could not be sent.
func unavailable(format string, args ...any) *Error {
	return newError("QueryService.Query", codes.Unavailable, format, args...)
}
