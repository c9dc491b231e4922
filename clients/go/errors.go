package voxcol

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrClosed is the cause of every error returned after Client.Close (or Batcher.Close): the
// call was not made. Test for it with errors.Is(err, voxcol.ErrClosed).
var ErrClosed = errors.New("voxcol: client is closed")

// Error is the error every method of this package returns: a gRPC status code and message,
// and the operation that failed. The server's messages name the offending field (for example
// "direction must be non-zero and finite"); errors found before any call is made (a nil
// request, a closed client, a bad option) carry codes.InvalidArgument or codes.Canceled.
//
// Error works with the standard helpers:
//
//   - errors.As(err, &e) with e a *voxcol.Error gives the code and message;
//   - errors.Is(err, context.DeadlineExceeded) and errors.Is(err, context.Canceled) hold for
//     the codes DeadlineExceeded and Canceled, whether the client or the server gave up;
//   - errors.Is(err, &voxcol.Error{Code: codes.NotFound}) matches any error with that code
//     (set Op as well to match only that operation);
//   - errors.Is(err, voxcol.ErrClosed) for calls on a closed client or batcher;
//   - status.Code(err) and status.FromError(err) of google.golang.org/grpc/status, through
//     GRPCStatus.
type Error struct {
	// Op is what failed: the RPC as "Service.Method" (e.g. "QueryService.Raycast"), or
	// "Dial", or the batcher step ("Query batch").
	Op      string
	Code    codes.Code
	Message string
	// err is the underlying error, if any: the gRPC status error, ErrClosed or a context error.
	err error
}

// Error implements the error interface: "voxcol: Op: Code: Message".
func (e *Error) Error() string {
	if e.Op == "" {
		return fmt.Sprintf("voxcol: %s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("voxcol: %s: %s: %s", e.Op, e.Code, e.Message)
}

// Unwrap returns the underlying error (see Error), or nil.
func (e *Error) Unwrap() error { return e.err }

// Is reports whether e matches target: a *Error template with the same Code (and the same Op,
// if the template sets one), or context.DeadlineExceeded / context.Canceled for those codes.
func (e *Error) Is(target error) bool {
	switch target {
	case context.DeadlineExceeded:
		return e.Code == codes.DeadlineExceeded
	case context.Canceled:
		return e.Code == codes.Canceled
	}
	if t, ok := target.(*Error); ok {
		return t.Code == e.Code && (t.Op == "" || t.Op == e.Op) && (t.Message == "" || t.Message == e.Message)
	}
	return false
}

// GRPCStatus returns e as a gRPC status, so that status.Code(err) and status.FromError(err)
// work on errors of this package.
func (e *Error) GRPCStatus() *status.Status { return status.New(e.Code, e.Message) }

// Code returns the gRPC code of err: codes.OK for nil, the code of a *Error or gRPC status
// error anywhere in its chain, DeadlineExceeded or Canceled for the context errors, else
// codes.Unknown.
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var s interface{ GRPCStatus() *status.Status }
	if errors.As(err, &s) {
		return s.GRPCStatus().Code()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Unknown
}

// newError returns an *Error for op with code and message and no underlying error.
func newError(op string, code codes.Code, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Message: fmt.Sprintf(format, args...)}
}

// closedError is the error of an operation attempted on a closed client or batcher.
func closedError(op string) *Error {
	return &Error{Op: op, Code: codes.Canceled, Message: "client is closed", err: ErrClosed}
}

// nilRequestError is the error of a call given a nil request.
func nilRequestError(op string) *Error {
	return newError(op, codes.InvalidArgument, "request must not be nil")
}

// wrapError converts err, as returned by a gRPC stub, into an *Error for op. A nil err stays
// nil and an *Error is returned as it is.
func wrapError(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if s, ok := status.FromError(err); ok {
		return &Error{Op: op, Code: s.Code(), Message: s.Message(), err: err}
	}
	// Not a status: the context ended before the stub made one, or a local failure.
	return &Error{Op: op, Code: Code(err), Message: err.Error(), err: err}
}

// statusError returns the *Error for a code and message carried inside a response (a batch's
// or a query's code), or nil for code 0.
func statusError(op string, code int32, message string) error {
	if code == 0 {
		return nil
	}
	return &Error{Op: op, Code: codes.Code(code), Message: message}
}
