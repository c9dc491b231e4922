package voxcol

import "context"

// Future is an answer that arrives later: the Batcher returns one per query and per batch.
// It is completed exactly once, also when the stream breaks (codes.Unavailable) or the batcher
// is closed (ErrClosed); it is safe for concurrent use.
type Future[T any] struct {
	done  chan struct{}
	value T
	err   error
}

// QueryFuture is the answer to one query queued on a Batcher.
type QueryFuture = Future[QueryAnswer]

// BatchFuture is the answer to a whole batch (Batcher.FlushTick, Raycasts, Send).
type BatchFuture = Future[*BatchAnswer]

func newFuture[T any]() *Future[T] { return &Future[T]{done: make(chan struct{})} }

// complete sets the answer and wakes the waiters; called once per future.
func (f *Future[T]) complete(value T, err error) {
	f.value, f.err = value, err
	close(f.done)
}

// fail completes f with err and T's zero value.
func (f *Future[T]) fail(err error) {
	var zero T
	f.complete(zero, err)
}

// Done is closed once the answer is in, for use in a select.
func (f *Future[T]) Done() <-chan struct{} { return f.done }

// Wait blocks until the answer is in or ctx is done. When the server answered with an error
// code (a query's own, or its batch's) the error is an *Error and the answer is returned too,
// as far as there is one (for a batch: the whole response).
func (f *Future[T]) Wait(ctx context.Context) (T, error) {
	select {
	case <-f.done:
		return f.value, f.err
	default:
	}
	select {
	case <-f.done:
		return f.value, f.err
	case <-ctx.Done():
		var zero T
		return zero, wrapError("Future.Wait", ctx.Err())
	}
}
