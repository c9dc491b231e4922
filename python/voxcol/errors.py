"""Typed errors of the voxcol client.

Every failed call raises a VoxcolError (a grpc.RpcError): `code()` is the grpc.StatusCode and
`details()` the server's message, which names the offending field for INVALID_ARGUMENT. The
common codes have subclasses, so callers can write `except voxcol.NotFoundError`. Errors the
client finds before sending anything are plain TypeError / ValueError naming the argument.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

import grpc

__all__ = [
    "VoxcolError", "ClientClosedError", "InvalidArgumentError", "NotFoundError",
    "AlreadyExistsError", "FailedPreconditionError", "OutOfRangeError", "ResourceExhaustedError",
    "DeadlineExceededError", "UnavailableError", "UnauthenticatedError", "PermissionDeniedError",
    "CancelledError", "BatchError", "error_from_code", "error_from_rpc",
]


class VoxcolError(grpc.RpcError):
    """A call (or one query of a batch) that ended with a non-OK gRPC status.

    `code()` and `details()` follow grpc.Call; `status_code` and `message` are the same values as
    attributes (`message` exactly as the server or gRPC wrote it), `method` names the RPC
    ("QueryService.Raycast") and `target` the server's address when known.
    """

    def __init__(self, code: grpc.StatusCode, message: str, method: str = "",
                 target: str = "") -> None:
        self.status_code = code
        self.message = message
        self.method = method
        self.target = target
        super().__init__(str(self))

    def code(self) -> grpc.StatusCode:
        return self.status_code

    def details(self) -> str:
        return self.message

    def __str__(self) -> str:
        where = f"{self.method}: " if self.method else ""
        server = f" (server {self.target})" if self.target else ""
        return f"{where}{self.status_code.name}: {self.message}{server}"

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.status_code!r}, {self.message!r}, "
                f"method={self.method!r}, target={self.target!r})")


class InvalidArgumentError(VoxcolError):
    """INVALID_ARGUMENT: the message names the field."""


class NotFoundError(VoxcolError):
    """NOT_FOUND, e.g. a world that does not exist."""


class AlreadyExistsError(VoxcolError):
    """ALREADY_EXISTS, e.g. CreateWorld of an existing id."""


class FailedPreconditionError(VoxcolError):
    """FAILED_PRECONDITION, e.g. an ApplyEdits expected_version that does not match."""


class OutOfRangeError(VoxcolError):
    """OUT_OF_RANGE, e.g. a read_at version that is no longer kept."""


class ResourceExhaustedError(VoxcolError):
    """RESOURCE_EXHAUSTED: load shedding, quotas or a work budget; retry later or ask less."""


class DeadlineExceededError(VoxcolError):
    """DEADLINE_EXCEEDED: the call's deadline (the client's timeout) or the batch's passed."""


class UnavailableError(VoxcolError):
    """UNAVAILABLE: the server cannot be reached, or a stream broke."""


class UnauthenticatedError(VoxcolError):
    """UNAUTHENTICATED: a missing or unknown token."""


class PermissionDeniedError(VoxcolError):
    """PERMISSION_DENIED: the token's role does not allow the method."""


class CancelledError(VoxcolError):
    """CANCELLED: the call was cancelled (e.g. its batcher or client was closed)."""


class ClientClosedError(CancelledError):
    """A call on a client (or batcher) after close()."""

    def __init__(self, what: str = "client") -> None:
        super().__init__(grpc.StatusCode.CANCELLED, f"the voxcol {what} is closed")


class BatchError(VoxcolError):
    """A Query batch answered with a non-OK batch code; `response` is the QueryBatchResponse
    (its `edit_ack` is set when the batch's edits applied before it failed), None when the
    stream broke before the answer."""

    def __init__(self, code: grpc.StatusCode, message: str, method: str = "QueryService.Query",
                 target: str = "", response: Optional[object] = None) -> None:
        self.response = response
        super().__init__(code, message, method, target)


_BY_CODE: Dict[grpc.StatusCode, Type[VoxcolError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.OUT_OF_RANGE: OutOfRangeError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.CANCELLED: CancelledError,
}
_BY_VALUE: Dict[int, grpc.StatusCode] = {code.value[0]: code for code in grpc.StatusCode}


def status_code(value: int) -> grpc.StatusCode:
    """The grpc.StatusCode of a numeric google.rpc.Code (as in QueryResult.code)."""
    return _BY_VALUE.get(value, grpc.StatusCode.UNKNOWN)


def error_from_code(code: grpc.StatusCode, message: str, method: str = "",
                    target: str = "") -> VoxcolError:
    """The VoxcolError subclass for `code`."""
    return _BY_CODE.get(code, VoxcolError)(code, message, method, target)


def error_from_rpc(error: grpc.RpcError, method: str = "", target: str = "") -> VoxcolError:
    """Converts what grpc raised (a grpc.Call that failed) into a VoxcolError."""
    if isinstance(error, VoxcolError):
        return error
    code_of = getattr(error, "code", None)
    details_of = getattr(error, "details", None)
    code = code_of() if callable(code_of) else grpc.StatusCode.UNKNOWN
    message = details_of() if callable(details_of) else str(error)
    return error_from_code(code, message or "", method, target)
