package voxcol

import (
	"context"
	"errors"
	"io"
	"time"

	"google.golang.org/grpc/codes"

	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// pendingBatch is a sent batch waiting for its response.
type pendingBatch struct {
	queries []*QueryFuture // one per query, in request order
	batch   *BatchFuture   // nil for Flush batches
	raw     bool           // Send: sent as given (no BatchTimeout)
	size    int            // queries and rays counted in Batcher.inFlight
}

// fail completes every future of p with err.
func (p *pendingBatch) fail(err error) {
	for _, f := range p.queries {
		f.fail(err)
	}
	if p.batch != nil {
		p.batch.fail(err)
	}
}

// queryConn is one Query stream: a writer goroutine that opens it and sends the outbox, and a
// reader goroutine that completes the futures.
type queryConn struct {
	b      *Batcher
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{} // capacity 1: the outbox has work, or closing was set

	// Guarded by b.mu.
	pending map[uint64]*pendingBatch // by batch id; every batch in outbox is here too
	outbox  []*v1.QueryBatchRequest  // batches to send, in order
	broken  bool                     // the stream ended: it takes no more batches
	closing bool                     // half-close once the outbox is sent

	done chan struct{} // closed once the stream ended and its pending batches failed
	err  error         // the stream's final status (nil: ended normally); set before done
}

// send queues req on the current stream, opening one if needed, with pending for its answer.
// It returns false, failing pending, when the batch cannot be sent.
func (b *Batcher) send(req *v1.QueryBatchRequest, pending *pendingBatch) bool {
	pending.size = len(req.Queries) + len(req.GetRaycasts().GetOrigins())/3
	b.mu.Lock()
	if b.closed || b.client.closed.Load() {
		b.mu.Unlock()
		pending.fail(closedError("QueryService.Query"))
		return false
	}
	conn := b.connLocked(time.Now())
	if conn == nil {
		wait := time.Until(b.nextAttempt).Round(time.Millisecond)
		b.mu.Unlock()
		pending.fail(unavailable("query stream broke; reconnecting in %v (backoff)", wait))
		return false
	}
	req.BatchId = b.nextBatchID
	b.nextBatchID++
	if b.opts.BatchTimeout > 0 && !pending.raw {
		req.TimeoutMs = uint32((b.opts.BatchTimeout + time.Millisecond - 1) / time.Millisecond)
	}
	conn.pending[req.BatchId] = pending
	conn.outbox = append(conn.outbox, req)
	b.inFlight += pending.size
	b.mu.Unlock()
	conn.wakeWriter()
	return true
}

// connLocked returns the stream to send on (b.mu held): the current one, or a new one when
// there is none or it broke and the backoff allows; nil while the backoff holds.
func (b *Batcher) connLocked(now time.Time) *queryConn {
	if b.conn != nil && !b.conn.broken {
		return b.conn
	}
	if b.conn != nil && now.Before(b.nextAttempt) {
		return nil
	}
	b.nextAttempt = now.Add(b.backoff)
	if b.backoff *= 2; b.backoff > b.opts.MaxReconnectBackoff {
		b.backoff = b.opts.MaxReconnectBackoff
	}
	ctx, cancel := context.WithCancel(b.ctx)
	conn := &queryConn{
		b:       b,
		ctx:     ctx,
		cancel:  cancel,
		wake:    make(chan struct{}, 1),
		pending: make(map[uint64]*pendingBatch),
		done:    make(chan struct{}),
	}
	b.conn = conn
	go conn.write()
	return conn
}

func (c *queryConn) wakeWriter() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// write opens the stream, starts the reader and sends the outbox until the stream ends or is
// half-closed.
func (c *queryConn) write() {
	b := c.b
	stream, err := b.client.queries.Query(c.ctx)
	if err != nil {
		c.finish(err)
		return
	}
	go c.read(stream)
	for {
		select {
		case <-c.wake:
		case <-c.ctx.Done():
			return
		}
		b.mu.Lock()
		batches, closing, broken := c.outbox, c.closing, c.broken
		c.outbox = nil
		b.mu.Unlock()
		if broken {
			return
		}
		for _, req := range batches {
			if err := stream.Send(req); err != nil {
				// The stream is gone; the reader gets its status and fails the pending batches.
				return
			}
		}
		if closing {
			_ = stream.CloseSend()
			return
		}
	}
}

// read completes the futures as responses arrive, then finishes the stream.
func (c *queryConn) read(stream v1.QueryService_QueryClient) {
	for {
		resp, err := stream.Recv()
		if err != nil {
			c.finish(err)
			return
		}
		c.deliver(resp)
	}
}

// deliver completes the futures of the batch resp answers.
func (c *queryConn) deliver(resp *v1.QueryBatchResponse) {
	const op = "QueryService.Query"
	b := c.b
	b.mu.Lock()
	p := c.pending[resp.BatchId]
	if p != nil {
		delete(c.pending, resp.BatchId)
		b.inFlight -= p.size
	}
	b.backoff = b.opts.ReconnectBackoff // the stream works: the next break retries soon
	b.mu.Unlock()
	if p == nil {
		return
	}
	if resp.EditAck != nil {
		b.client.observeAck(b.world, resp.EditAck)
	}
	batchErr := statusError(op, resp.Code, resp.Message)
	for i, f := range p.queries {
		switch {
		case batchErr != nil:
			f.fail(batchErr)
		case i >= len(resp.Results):
			f.fail(newError(op, codes.Internal, "batch response has %d results for %d queries", len(resp.Results), len(p.queries)))
		default:
			r := resp.Results[i]
			f.complete(QueryAnswer{Result: r, Version: resp.Version}, statusError(op, r.Code, r.Message))
		}
	}
	if p.batch != nil {
		p.batch.complete(&BatchAnswer{
			Version:  resp.Version,
			EditAck:  resp.EditAck,
			Raycasts: resp.Raycasts,
			Response: resp,
		}, batchErr)
	}
}

// finish ends the stream with err (from opening it or from Recv) and fails its pending
// batches: with codes.Unavailable when the stream ended normally or broke, with ErrClosed when
// the client or batcher was closed.
func (c *queryConn) finish(err error) {
	const op = "QueryService.Query"
	b := c.b
	final := error(nil)
	failure := error(unavailable("query stream ended before the answer"))
	if !errors.Is(err, io.EOF) {
		final = b.client.callError(op, err)
		failure = final
		if Code(final) == codes.Canceled && b.ctx.Err() != nil {
			failure = closedError(op)
		}
	}
	b.mu.Lock()
	c.broken = true
	pending := c.pending
	c.pending, c.outbox = nil, nil
	for _, p := range pending {
		b.inFlight -= p.size
	}
	c.err = final
	b.mu.Unlock()
	c.cancel()
	for _, p := range pending {
		p.fail(failure)
	}
	close(c.done)
}
