#!/usr/bin/env python3
"""Compares a client's conformance output with the reference's (tests/conformance/README.md).

  compare.py --scenarios DIR --reference REF_DIR --candidate CAND_DIR [--allow_skips]
  compare.py --coverage --scenarios DIR --proto_dir proto/voxcol/v1

Exit 0 when everything agrees (or every RPC is covered), 1 with one line per difference.
"""
import argparse
import glob
import json
import os
import re
import sys


DEFAULTS = (None, 0, 0.0, False, "", [], {})


def is_default(value):
    return any(value == d and type(value) is type(d) for d in DEFAULTS) or value is None


def normalize(value, ignore):
    """Drops ignored fields; turns integer strings into numbers (64-bit integers in proto3 JSON)."""
    if isinstance(value, dict):
        return {key: normalize(item, ignore) for key, item in value.items() if key not in ignore}
    if isinstance(value, list):
        return [normalize(item, ignore) for item in value]
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        return int(value)
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
        return float(value)
    return value


def differences(reference, candidate, tolerance, path, partial):
    """Yields a description of every place where the two normalized values differ. An absent
    field equals its default (proto3), so printers that omit defaults agree with those that do
    not. `partial`: only the fields the candidate has are compared (a client that exposes a
    subset of a response, such as the C ABI)."""
    if reference is None and isinstance(candidate, dict):
        reference = {}
    if candidate is None and isinstance(reference, dict):
        candidate = {}
    if reference is None and isinstance(candidate, list):
        reference = []
    if candidate is None and isinstance(reference, list):
        candidate = []
    if (reference is None and is_default(candidate)) or (candidate is None and is_default(reference)):
        return
    if isinstance(reference, dict) and isinstance(candidate, dict):
        keys = candidate.keys() if partial else reference.keys() | candidate.keys()
        for key in sorted(keys):
            yield from differences(reference.get(key), candidate.get(key), tolerance,
                                   f"{path}.{key}", partial)
        return
    if isinstance(reference, list) and isinstance(candidate, list):
        if len(reference) != len(candidate):
            yield f"{path}: {len(candidate)} items, reference {len(reference)}"
            return
        for i, (r, c) in enumerate(zip(reference, candidate)):
            yield from differences(r, c, tolerance, f"{path}[{i}]", partial)
        return
    numbers = (int, float)
    if isinstance(reference, numbers) and isinstance(candidate, numbers) and \
            not isinstance(reference, bool) and not isinstance(candidate, bool):
        if reference != candidate and not abs(reference - candidate) <= tolerance:
            yield f"{path}: {candidate}, reference {reference}"
        return
    if reference != candidate:
        yield f"{path}: {candidate!r}, reference {reference!r}"


def in_request_order(spec, responses):
    """A Query stream answers batches as they complete, so in any order: when the responses carry
    the requests' batch ids, put them in the requests' order (a runner whose batcher sets its own
    ids writes them in request order itself)."""
    wanted = [int(r.get("batchId", 0)) for r in spec["requests"]]
    got = [int(r.get("batchId", 0)) for r in responses]
    if sorted(got) != sorted(wanted) or len(set(wanted)) != len(wanted):
        return responses
    by_id = {int(r.get("batchId", 0)): r for r in responses}
    return [by_id[i] for i in wanted]


def load_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def compare(args):
    problems, skips, steps = [], 0, 0
    for scenario_path in sorted(glob.glob(os.path.join(args.scenarios, "*.json"))):
        with open(scenario_path) as f:
            scenario = json.load(f)
        name = scenario["name"]
        tolerance = scenario.get("float_tolerance", 1e-5)
        ignore = set(scenario.get("ignore", []))
        if "QueryService.Query" in (s["call"] for s in scenario["steps"]):
            ignore.add("batchId")
        ref_path = os.path.join(args.reference, name + ".jsonl")
        cand_path = os.path.join(args.candidate, name + ".jsonl")
        if not os.path.exists(cand_path):
            problems.append(f"{name}: no output from the candidate ({cand_path})")
            continue
        reference, candidate = load_lines(ref_path), load_lines(cand_path)
        if len(candidate) != len(scenario["steps"]):
            problems.append(f"{name}: {len(candidate)} steps written, the scenario has "
                            f"{len(scenario['steps'])}")
            continue
        for step, (spec, ref, cand) in enumerate(zip(scenario["steps"], reference, candidate)):
            where = f"{name} step {step} ({spec['call']})"
            steps += 1
            expected = spec.get("expect_code", 0)
            if ref.get("code") != expected:
                problems.append(f"{where}: the reference answered code {ref.get('code')} "
                                f"({ref.get('message')}), the scenario expects {expected}")
            if "skipped" in cand:
                skips += 1
                if not args.allow_skips:
                    problems.append(f"{where}: skipped ({cand['skipped']})")
                continue
            if cand.get("call") != spec["call"] or cand.get("step") != step:
                problems.append(f"{where}: the candidate wrote step {cand.get('step')} "
                                f"{cand.get('call')}")
                continue
            if cand.get("code") != ref.get("code"):
                problems.append(f"{where}: code {cand.get('code')} ({cand.get('message')}), "
                                f"reference {ref.get('code')} ({ref.get('message')})")
                continue
            if cand.get("message", "") != ref.get("message", ""):
                problems.append(f"{where}: message {cand.get('message')!r}, reference "
                                f"{ref.get('message')!r}")
            ref_responses, cand_responses = ref["responses"], cand["responses"]
            if spec["call"] == "QueryService.Query":
                ref_responses = in_request_order(spec, ref_responses)
                cand_responses = in_request_order(spec, cand_responses)
            found = list(differences(normalize(ref_responses, ignore),
                                     normalize(cand_responses, ignore), tolerance,
                                     "responses", cand.get("partial", False)))
            problems.extend(f"{where}: {d}" for d in found[:10])
    for problem in problems:
        print(problem)
    print(f"compare: {steps} steps, {skips} skipped, {len(problems)} differences "
          f"({args.candidate} against {args.reference})")
    return 1 if problems else 0


def coverage(args):
    methods = set()
    for proto in glob.glob(os.path.join(args.proto_dir, "*.proto")):
        service = None
        with open(proto) as f:
            for line in f:
                if m := re.match(r"\s*service\s+(\w+)", line):
                    service = m.group(1)
                elif (m := re.match(r"\s*rpc\s+(\w+)\s*\(", line)) and service:
                    methods.add(f"{service}.{m.group(1)}")
    covered = set()
    for scenario_path in glob.glob(os.path.join(args.scenarios, "*.json")):
        with open(scenario_path) as f:
            covered.update(step["call"] for step in json.load(f)["steps"])
    missing = sorted(methods - covered)
    unknown = sorted(covered - methods)
    for method in missing:
        print(f"coverage: no scenario calls {method}")
    for method in unknown:
        print(f"coverage: scenarios call {method}, which the proto does not have")
    print(f"coverage: {len(methods)} RPCs in the proto, {len(covered & methods)} covered")
    return 1 if missing or unknown or not methods else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", required=True)
    parser.add_argument("--reference")
    parser.add_argument("--candidate")
    parser.add_argument("--allow_skips", action="store_true")
    parser.add_argument("--coverage", action="store_true")
    parser.add_argument("--proto_dir")
    args = parser.parse_args()
    if args.coverage:
        return coverage(args)
    if not args.reference or not args.candidate:
        parser.error("--reference and --candidate are required")
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
