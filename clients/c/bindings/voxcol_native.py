"""ctypes binding of libvoxcol_c.so (clients/c/voxcol_c.h): the C ABI from Python, without a
compiled extension. Usage:

    from voxcol_native import Native, Ray
    native = Native("/usr/local/lib/libvoxcol_c.so")
    with native.connect("127.0.0.1:50051") as client:
        hit = client.raycast(Ray((0.5, 40, 0.5), (0, -1, 0), 90))

Run as a script (python3 voxcol_native.py LIB TARGET) for a self-check against a server: a
raycast, the same rays as one batch, an edit read back with min_version, and a bad argument.
"""
import ctypes
import sys


class Vec3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float), ("z", ctypes.c_float)]


class Int3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int32), ("y", ctypes.c_int32), ("z", ctypes.c_int32)]


class Options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("target", ctypes.c_char_p),
        ("world", ctypes.c_char_p),
        ("token", ctypes.c_char_p),
        ("ca_pem", ctypes.c_char_p),
        ("server_name", ctypes.c_char_p),
        ("tls", ctypes.c_int32),
        ("timeout_ms", ctypes.c_uint32),
    ]


class Ray(ctypes.Structure):
    _fields_ = [("origin", Vec3), ("direction", Vec3), ("max_distance", ctypes.c_float)]

    def __init__(self, origin=(0, 0, 0), direction=(0, -1, 0), max_distance=100.0):
        super().__init__(Vec3(*origin), Vec3(*direction), max_distance)


class RayHit(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_int32),
        ("hit", ctypes.c_int32),
        ("started_inside", ctypes.c_int32),
        ("distance", ctypes.c_float),
        ("position", Vec3),
        ("normal", Vec3),
        ("material", ctypes.c_uint32),
        ("voxel", Int3),
    ]


class VoxcolError(Exception):
    """A call answered with a gRPC status code other than OK; .code is that number."""

    def __init__(self, code, message):
        super().__init__(f"code {code}: {message}")
        self.code = code
        self.message = message


class Native:
    """The loaded library: its functions with their C signatures."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        P = ctypes.POINTER
        client_p = ctypes.c_void_p
        lib.voxcol_abi_version.restype = ctypes.c_int32
        lib.voxcol_last_error.restype = ctypes.c_char_p
        lib.voxcol_options_init.argtypes = [P(Options)]
        lib.voxcol_connect.argtypes = [P(Options), P(client_p)]
        lib.voxcol_close.argtypes = [client_p]
        lib.voxcol_world_info.argtypes = [client_p, P(ctypes.c_uint64), P(Vec3), P(Vec3)]
        lib.voxcol_raycast.argtypes = [client_p, P(Ray), P(RayHit), P(ctypes.c_uint64)]
        lib.voxcol_raycasts.argtypes = [client_p, P(Ray), ctypes.c_size_t, ctypes.c_uint64,
                                        P(RayHit), P(ctypes.c_uint64)]
        lib.voxcol_fill_ball.argtypes = [client_p, Vec3, ctypes.c_float, ctypes.c_uint32,
                                         P(ctypes.c_uint64)]
        for name in ("voxcol_connect", "voxcol_world_info", "voxcol_raycast", "voxcol_raycasts",
                     "voxcol_fill_ball"):
            getattr(lib, name).restype = ctypes.c_int
        self.lib = lib

    def check(self, code):
        if code != 0:
            raise VoxcolError(code, self.lib.voxcol_last_error().decode())

    def connect(self, target, world=None, token=None, ca_pem=None, timeout_ms=0):
        options = Options()
        self.lib.voxcol_options_init(ctypes.byref(options))
        options.target = target.encode()
        options.world = world.encode() if world else None
        options.token = token.encode() if token else None
        options.ca_pem = ca_pem.encode() if ca_pem else None
        options.timeout_ms = timeout_ms
        handle = ctypes.c_void_p()
        self.check(self.lib.voxcol_connect(ctypes.byref(options), ctypes.byref(handle)))
        return Client(self, handle)


class Client:
    def __init__(self, native, handle):
        self._native = native
        self._lib = native.lib
        self._handle = handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._handle:
            self._lib.voxcol_close(self._handle)
            self._handle = None

    def _live(self):
        if not self._handle:
            raise VoxcolError(9, "the client is closed")  # FAILED_PRECONDITION
        return self._handle

    def world_info(self):
        version, lo, hi = ctypes.c_uint64(), Vec3(), Vec3()
        self._native.check(self._lib.voxcol_world_info(
            self._live(), ctypes.byref(version), ctypes.byref(lo), ctypes.byref(hi)))
        return version.value, (lo.x, lo.y, lo.z), (hi.x, hi.y, hi.z)

    def raycast(self, ray):
        hit, version = RayHit(), ctypes.c_uint64()
        self._native.check(self._lib.voxcol_raycast(
            self._live(), ctypes.byref(ray), ctypes.byref(hit), ctypes.byref(version)))
        return hit, version.value

    def raycasts(self, rays, min_version=0):
        """One batch on the client's Query stream; returns (hits, version)."""
        count = len(rays)
        array = (Ray * count)(*rays)
        hits = (RayHit * count)()
        version = ctypes.c_uint64()
        self._native.check(self._lib.voxcol_raycasts(
            self._live(), array, count, min_version, hits, ctypes.byref(version)))
        return list(hits), version.value

    def fill_ball(self, center, radius, material):
        version = ctypes.c_uint64()
        self._native.check(self._lib.voxcol_fill_ball(
            self._live(), Vec3(*center), radius, material, ctypes.byref(version)))
        return version.value


def self_check(lib_path, target):
    native = Native(lib_path)
    assert native.lib.voxcol_abi_version() == 1
    with native.connect(target) as client:
        rays = [Ray((-60.5 + (i * 37) % 120, 40.0, -60.5 + (i * 53) % 120), (0, -1, 0), 90)
                for i in range(64)]
        hits, version = client.raycasts(rays)
        assert sum(h.hit for h in hits) > 32, "downward rays should mostly hit"
        for i in range(0, 64, 9):
            single, single_version = client.raycast(rays[i])
            assert single_version == version
            assert (single.hit, single.distance) == (hits[i].hit, hits[i].distance), i
        ground = next(h for h in hits if h.hit and not h.started_inside)
        edit = client.fill_ball((ground.position.x, ground.position.y, ground.position.z), 3.0, 0)
        assert client.world_info()[0] == edit
        index = hits.index(ground)
        after, seen = client.raycasts([rays[index]], min_version=edit)
        assert seen >= edit
        assert not after[0].hit or after[0].distance > ground.distance + 2, "the carve is not seen"
        try:
            client.raycast(Ray((0.5, 0.5, 0.5), (0, 0, 0), 10))
            raise AssertionError("a zero direction was accepted")
        except VoxcolError as error:
            assert error.code == 3 and "direction" in error.message, error
    try:
        client.raycast(rays[0])
        raise AssertionError("a closed client answered")
    except VoxcolError as error:
        assert error.code == 9, error
    print(f"voxcol_native.py: all checks passed ({sum(h.hit for h in hits)} of 64 rays hit, "
          f"edit at version {edit})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: voxcol_native.py LIBVOXCOL_C TARGET")
    self_check(sys.argv[1], sys.argv[2])
