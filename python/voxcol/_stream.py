"""One QueryService.Query stream with a reader thread: the transport of QueryStream and
QueryBatcher. Internal."""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Optional, Sequence, Tuple

import grpc

from voxcol.errors import VoxcolError, error_from_rpc
from voxcol.v1 import query_service_pb2 as query_pb

METHOD = "QueryService.Query"
_END = object()  # ends the request iterator: half-close


class QueryConnection:
    """A Query call fed from a queue; `on_response` runs on the reader thread for every batch
    response, then `on_end` once with the stream's error (None when it ended OK)."""

    def __init__(self, call: Callable[..., Any], metadata: Sequence[Tuple[str, str]],
                 target: str, on_response: Callable[[query_pb.QueryBatchResponse], None],
                 on_end: Callable[[Optional[VoxcolError]], None],
                 timeout: Optional[float] = None) -> None:
        self._requests: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._target = target
        self._on_response = on_response
        self._on_end = on_end
        # Guarded by the owner's write lock: set (under it) before on_end fails the pending
        # batches, so a batch registered while it is False is always answered or failed.
        self.finished = False
        self.error: Optional[VoxcolError] = None
        self._finish_lock: Optional[threading.Lock] = None
        self._call = call(iter(self._requests.get, _END), metadata=metadata, timeout=timeout)
        self._reader = threading.Thread(target=self._read, name="voxcol-query-stream",
                                        daemon=True)

    def start(self, finish_lock: threading.Lock) -> None:
        self._finish_lock = finish_lock
        self._reader.start()

    def write(self, request: query_pb.QueryBatchRequest) -> None:
        self._requests.put(request)

    def half_close(self) -> None:
        self._requests.put(_END)

    def cancel(self) -> None:
        self._call.cancel()

    def join(self, timeout: Optional[float] = None) -> bool:
        if self._reader.is_alive() and self._reader is not threading.current_thread():
            self._reader.join(timeout)
        return not self._reader.is_alive()

    def _read(self) -> None:
        error: Optional[VoxcolError] = None
        try:
            for response in self._call:
                self._on_response(response)
        except grpc.RpcError as e:
            error = error_from_rpc(e, METHOD, self._target)
        assert self._finish_lock is not None
        with self._finish_lock:
            self.finished = True
            self.error = error
        # grpc's request thread may wait for the next request: let it end.
        self._requests.put(_END)
        self._on_end(error)
