"""Read-your-writes floors, one per world (as the C++ RoutedClient keeps them)."""

from __future__ import annotations

import threading
from typing import Dict

DEFAULT_WORLD = "default"


class ReadFloors:
    """The newest acknowledged edit version per world ("" and "default" are the same world).

    A Query batch that waits for its world's floor (min_version) sees every edit this client
    had acknowledged there, also on a read replica. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._floors: Dict[str, int] = {}

    def get(self, world: str) -> int:
        return self._floors.get(world or DEFAULT_WORLD, 0)

    def raise_to(self, version: int, world: str) -> None:
        key = world or DEFAULT_WORLD
        with self._lock:
            if version > self._floors.get(key, 0):
                self._floors[key] = version
