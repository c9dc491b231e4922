#!/usr/bin/env python3
"""Conformance runner of the C ABI (libvoxcol_c.so), through its ctypes binding
(clients/c/bindings/voxcol_native.py). The C ABI covers the game loop's calls: GetWorldInfo,
Raycast, FillBall and Query batches of packed raycasts; it answers a subset of each response's
fields, so its lines are marked "partial" (compare.py then checks only the fields it wrote).
Every other step is written as skipped. Contract: tests/conformance/README.md.

  capi_runner.py --lib LIBVOXCOL_C --target HOST:PORT --scenario FILE --out FILE
                 [--secure_target HOST:PORT --ca CA_PEM_FILE --token TOKEN]
                 [--throughput_seconds N]
"""
import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "c", "bindings"))
from voxcol_native import Native, Ray, VoxcolError  # noqa: E402


def vec(json_vec):
    return (float(json_vec.get("x", 0)), float(json_vec.get("y", 0)), float(json_vec.get("z", 0)))


def vec_json(v):
    return {"x": v.x, "y": v.y, "z": v.z}


def hit_json(hit, version):
    """The RaycastResponse fields the C ABI answers."""
    out = {"hit": bool(hit.hit), "startedInside": bool(hit.started_inside), "version": version}
    if hit.hit:
        out["first"] = {"distance": hit.distance, "position": vec_json(hit.position),
                        "material": hit.material, "voxel": vec_json(hit.voxel)}
        if not hit.started_inside:
            out["first"]["normal"] = vec_json(hit.normal)
    return out


class Runner:
    def __init__(self, native, target, ca_pem=None, token=None):
        self.native, self.target, self.ca_pem, self.token = native, target, ca_pem, token
        self.clients = {}

    def client(self, world):
        """One C ABI client per world (the world is a connect option)."""
        if world not in self.clients:
            self.clients[world] = self.native.connect(self.target, world=world or None,
                                                      token=self.token, ca_pem=self.ca_pem)
        return self.clients[world]

    def step(self, step):
        """(responses, partial) or raises Skip / VoxcolError."""
        call, request = step["call"], step.get("request", {})
        if call == "WorldService.GetWorldInfo" and set(request) <= {"world"}:
            version, lo, hi = self.client(request.get("world", "")).world_info()
            return [{"version": version, "bounds": {"min": dict(zip("xyz", lo)),
                                                    "max": dict(zip("xyz", hi))}}]
        if call == "QueryService.Raycast" and set(request) <= {"origin", "direction",
                                                               "maxDistance", "world"}:
            ray = Ray(vec(request.get("origin", {})), vec(request.get("direction", {})),
                      float(request.get("maxDistance", 0)))
            hit, version = self.client(request.get("world", "")).raycast(ray)
            return [hit_json(hit, version)]
        if call == "EditService.FillBall" and set(request) <= {"center", "radius", "material",
                                                               "world"}:
            version = self.client(request.get("world", "")).fill_ball(
                vec(request.get("center", {})), float(request.get("radius", 0)),
                int(request.get("material", 0)))
            return [{"version": version}]
        raise Skip(f"the C ABI has no {call} with fields {sorted(request)}")


class Skip(Exception):
    pass


# Calls that change the server's state: once one of them is skipped, every later step of the
# scenario would run on a different world than the reference's, so the rest is skipped too.
MUTATING = {"EditService.FillBall", "EditService.ApplyEdits", "EditService.WriteVoxels",
            "EditService.EditStream", "AdminService.ImportRegion", "WorldService.CreateWorld",
            "WorldService.DeleteWorld", "QueryService.Query"}


def run_scenario(args, native):
    with open(args.scenario) as f:
        scenario = json.load(f)
    if scenario.get("secure"):
        with open(args.ca) as f:
            runner = Runner(native, args.secure_target, ca_pem=f.read(), token=args.token)
    else:
        runner = Runner(native, args.target)
    diverged = None
    with open(args.out, "w") as out:
        for index, step in enumerate(scenario["steps"]):
            line = {"scenario": scenario["name"], "step": index, "call": step["call"]}
            try:
                if diverged:
                    raise Skip(f"after step {diverged}, which the C ABI cannot make")
                line.update(code=0, message="", responses=runner.step(step), partial=True)
            except Skip as skip:
                line["skipped"] = str(skip)
                if step["call"] in MUTATING and not diverged:
                    diverged = index
            except VoxcolError as error:
                line.update(code=error.code, message=error.message, responses=[], partial=True)
            out.write(json.dumps(line) + "\n")
    for client in runner.clients.values():
        client.close()
    return 0


def run_throughput(args, native):
    """As every runner: 256 rays straight down per batch, at most 4 batches in flight (the C ABI
    call is synchronous, so one thread per in-flight batch)."""
    import threading
    rng = random.Random(7)
    batches = [[Ray((rng.uniform(-60, 60), 40, rng.uniform(-60, 60)), (0, -1, 0), 90)
                for _ in range(256)] for _ in range(16)]
    counted = [0]
    lock = threading.Lock()
    start = time.monotonic()
    counting, end = start + 1.0, start + 1.0 + args.throughput_seconds

    def work(client, seed):
        i = seed
        while time.monotonic() < end:
            client.raycasts(batches[i % len(batches)])
            i += 1
            if time.monotonic() >= counting:
                with lock:
                    counted[0] += 256
    with native.connect(args.target) as client:
        threads = [threading.Thread(target=work, args=(client, s)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print(f"rays_per_second={counted[0] / (time.monotonic() - counting):.0f}")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--scenario")
    parser.add_argument("--out")
    parser.add_argument("--secure_target")
    parser.add_argument("--ca")
    parser.add_argument("--token")
    parser.add_argument("--throughput_seconds", type=float, default=0)
    args = parser.parse_args()
    native = Native(args.lib)
    if args.throughput_seconds > 0:
        return run_throughput(args, native)
    if not args.scenario or not args.out:
        parser.error("--scenario and --out are required")
    return run_scenario(args, native)


if __name__ == "__main__":
    sys.exit(main())
