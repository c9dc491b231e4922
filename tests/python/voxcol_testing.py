"""Helpers of the Python client's tests: a real voxcol_server per test class, a throwaway CA.

Not a test module (unittest discovers test_*.py only). VOXCOL_SERVER and VOXCOL_CLI name the
binaries (run_python_tests.sh sets them).
"""

import ctypes
import hashlib
import json
import math
import os
import signal
import subprocess
import tempfile
import time
import unittest
from typing import Dict, List, Optional, Sequence

import voxcol


def _die_with_this_process():
    """In the server's child process: SIGKILL it when the test process dies (PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


class Server:
    """A voxcol_server on 127.0.0.1 with its own data directory; restart() keeps port and data."""

    def __init__(self, directory: str, flags: Sequence[str] = ()):
        self.directory = directory
        self.flags = list(flags)
        self.port = 0
        self.process: Optional[subprocess.Popen] = None
        self.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        port_file = os.path.join(self.directory, "port")
        if os.path.exists(port_file):
            os.remove(port_file)
        log = open(os.path.join(self.directory, "server.log"), "a")
        self.process = subprocess.Popen(
            [os.environ["VOXCOL_SERVER"], f"--listen=127.0.0.1:{self.port}",
             f"--port_file={port_file}", "--metrics_listen=127.0.0.1:0",
             f"--data_dir={self.directory}/data", f"--backup_root={self.directory}/backups",
             "--world_size=128,96,128"] + self.flags,
            stderr=log, preexec_fn=_die_with_this_process)
        log.close()
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"voxcol_server did not start (see {self.directory})")
            if os.path.exists(port_file):
                with open(port_file) as f:
                    text = f.read().strip()
                if text:
                    self.port = int(text)
                    return
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


class ServerTestCase(unittest.TestCase):
    """One fresh server per test class (more flags in SERVER_FLAGS) and a client on it."""

    SERVER_FLAGS: List[str] = []

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="voxcol-py-test-")
        cls.server = Server(cls.tmp.name, cls.server_flags())
        cls.address = cls.server.address
        cls.client = cls.connect()
        cls.info = cls.client.world_info()
        b = cls.info.bounds
        cls.top = b.max.y - 0.5
        cls.height = b.max.y - b.min.y - 1

    @classmethod
    def server_flags(cls) -> List[str]:
        return list(cls.SERVER_FLAGS)

    @classmethod
    def connect(cls, **options) -> voxcol.Client:
        return voxcol.connect(cls.address, **options)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()
        cls.tmp.cleanup()

    def column(self, dx: int, dz: int):
        """The centre line (x, z) of voxel column (dx, dz) counted from the world's middle."""
        b, size = self.info.bounds, self.info.voxel_size
        vx = math.floor(0.5 * (b.min.x + b.max.x) / size) + dx
        vz = math.floor(0.5 * (b.min.z + b.max.z) / size) + dz
        return (vx + 0.5) * size, (vz + 0.5) * size

    def voxel(self, x: float, y: float, z: float, world: str = ""):
        """(material, occupancy) of the voxel holding point (x, y, z), from ReadVoxels."""
        size = self.info.voxel_size
        v = (math.floor(x / size), math.floor(y / size), math.floor(z / size))
        read = self.client.read_voxels(v, (v[0] + 1, v[1] + 1, v[2] + 1), world=world)
        return read.voxels.materials[0], read.voxels.occupancies[0]

    def surface_from_voxels(self, x: float, z: float, world: str = "") -> float:
        """Where the smooth surface crosses the centre line of a voxel column, from its voxels
        (the same derivation as test_client.py: the solid occupancy at voxel centres, iso-level
        127.5, linear between the two centres around the first crossing from the top; good to
        0.1 voxel)."""
        size = self.info.voxel_size
        vx, vz = math.floor(x / size), math.floor(z / size)
        lo, hi = self.info.voxel_bounds.min.y, self.info.voxel_bounds.max.y
        voxels = self.client.read_voxels((vx, lo, vz), (vx + 1, hi, vz + 1), world=world).voxels

        def solid(y):
            if y >= hi or voxels.materials[y - lo] < 2:
                return 0
            return voxels.occupancies[y - lo]

        y = next(y for y in range(hi - 1, lo - 1, -1) if solid(y) >= 128)
        return (y + 0.5 + (solid(y) - 127.5) / (solid(y) - solid(y + 1))) * size

    def cli_json(self, *args: str) -> Dict:
        """The CLI's --json answer (an independent client: the C++ SDK)."""
        out = subprocess.run([os.environ["VOXCOL_CLI"], *args, f"--server={self.address}",
                              "--json"], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)


def make_tls_files(directory: str, tokens: Dict[str, str], dns_name: str = "voxcol.test"):
    """A throwaway CA (openssl), a server certificate it signs for `dns_name` only (not for
    127.0.0.1, so clients must name it with server_name), and a token file holding the SHA-256
    of each token with its role: {token: role}. Returns (ca.crt, server.crt, server.key, tokens)
    paths."""
    def path(name):
        return os.path.join(directory, name)

    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=voxcol-test-ca", "-keyout", path("ca.key"), "-out", path("ca.crt"))
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={dns_name}", "-keyout",
            path("server.key"), "-out", path("server.csr"))
    with open(path("san.ext"), "w") as f:
        f.write(f"subjectAltName=DNS:{dns_name}\n")
    openssl("x509", "-req", "-in", path("server.csr"), "-CA", path("ca.crt"), "-CAkey",
            path("ca.key"), "-CAcreateserial", "-days", "2", "-extfile", path("san.ext"),
            "-out", path("server.crt"))
    with open(path("tokens"), "w") as f:
        for i, (token, role) in enumerate(tokens.items()):
            f.write(f"{hashlib.sha256(token.encode()).hexdigest()} {role} tester-{i}\n")
    return path("ca.crt"), path("server.crt"), path("server.key"), path("tokens")
