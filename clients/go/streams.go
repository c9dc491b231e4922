package voxcol

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// recvError converts the error of a stream's Recv: io.EOF (the stream ended with OK) stays
// io.EOF, anything else becomes an *Error.
func (c *Client) recvError(op string, err error) error {
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	return c.callError(op, err)
}

// Subscription is an open change feed (EditService.Subscribe): one SubscribeResponse per
// committed batch that changed the subscribed region, in version order. Call Recv in a loop
// and Close when done. To resume after an error, subscribe again with FromVersion set to the
// version of the last response processed.
type Subscription struct {
	client *Client
	stream v1.EditService_SubscribeClient
	cancel context.CancelFunc
}

// Subscribe opens the change feed described by req. The stream has no client deadline: it
// lives until ctx is done or Close is called.
func (c *Client) Subscribe(ctx context.Context, req *v1.SubscribeRequest, opts ...grpc.CallOption) (*Subscription, error) {
	const op = "EditService.Subscribe"
	if err := c.precheck(ctx, op, req); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.edits.Subscribe(ctx, withWorld(c, req), opts...)
	if err != nil {
		cancel()
		return nil, c.callError(op, err)
	}
	return &Subscription{client: c, stream: stream, cancel: cancel}, nil
}

// Recv returns the next change, blocking until it comes. It returns an *Error when the feed
// ends (codes.OutOfRange: resubscribe or resync, codes.ResourceExhausted: this subscriber fell
// behind, codes.Unavailable: the server shut down, codes.Canceled after Close).
func (s *Subscription) Recv() (*v1.SubscribeResponse, error) {
	resp, err := s.stream.Recv()
	if err != nil {
		return nil, s.client.recvError("EditService.Subscribe", err)
	}
	return resp, nil
}

// Close cancels the feed. It is idempotent.
func (s *Subscription) Close() { s.cancel() }

// EditStream is an open EditService.EditStream: many edit batches in flight on one stream,
// applied in send order and answered one EditStreamResponse each, in that order. One goroutine
// may Send while another calls Recv. Acks raise the client's read-your-writes floors.
type EditStream struct {
	client *Client
	stream v1.EditService_EditStreamClient
	cancel context.CancelFunc

	mu     sync.Mutex
	worlds []string // the world of every batch sent and not yet answered, in send order
}

// EditStream opens an edit stream that lives until ctx is done, Close is called, or the stream
// ends after CloseSend.
func (c *Client) EditStream(ctx context.Context, opts ...grpc.CallOption) (*EditStream, error) {
	const op = "EditService.EditStream"
	if err := c.precheck(ctx, op, &v1.EditStreamRequest{}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.edits.EditStream(ctx, opts...)
	if err != nil {
		cancel()
		return nil, c.callError(op, err)
	}
	return &EditStream{client: c, stream: stream, cancel: cancel}, nil
}

// Send queues one batch: req.BatchId is echoed in its response, req.Edits holds the
// primitives and options exactly as for ApplyEdits. An empty req.World takes the client's
// world. After a broken stream, resend unacknowledged batches with their idempotency keys on
// a new stream: batches the server had applied come back with Replayed set.
func (s *EditStream) Send(req *v1.EditStreamRequest) error {
	const op = "EditService.EditStream"
	if isNil(req) {
		return nilRequestError(op)
	}
	req = withWorld(s.client, req)
	world := req.GetWorld()
	if world == "" {
		world = req.GetEdits().GetWorld()
	}
	s.mu.Lock()
	s.worlds = append(s.worlds, world)
	s.mu.Unlock()
	if err := s.stream.Send(req); err != nil {
		if errors.Is(err, io.EOF) {
			// The stream ended; Recv returns why.
			return &Error{Op: op, Code: codes.Unavailable, Message: "edit stream ended; Recv returns its status", err: err}
		}
		return s.client.callError(op, err)
	}
	return nil
}

// Recv returns the response to the oldest unanswered batch: its ack, or its error (the stream
// goes on). It returns io.EOF once the stream ended normally after CloseSend, an *Error when
// it broke.
func (s *EditStream) Recv() (*v1.EditStreamResponse, error) {
	resp, err := s.stream.Recv()
	if err != nil {
		return nil, s.client.recvError("EditService.EditStream", err)
	}
	s.mu.Lock()
	var world string
	if len(s.worlds) > 0 {
		world, s.worlds = s.worlds[0], s.worlds[1:]
	}
	s.mu.Unlock()
	s.client.observeAck(world, resp.GetAck())
	return resp, nil
}

// CloseSend half-closes the stream: the server answers the batches sent so far, then Recv
// returns io.EOF.
func (s *EditStream) CloseSend() error {
	return s.client.callError("EditService.EditStream", s.stream.CloseSend())
}

// Close cancels the stream; batches not yet answered may or may not have been applied.
func (s *EditStream) Close() { s.cancel() }
