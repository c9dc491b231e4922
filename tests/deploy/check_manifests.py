#!/usr/bin/env python3
"""Checks that the Dockerfile, the Kubernetes manifests and the compose file agree with each other
and with the flags the real voxcol_server binary accepts, so none of them can drift silently.

usage: check_manifests.py --server PATH/voxcol_server --root REPO [--self-test]

--self-test also proves the checker bites: it re-runs the checks on copies with a drifted probe port,
a renamed flag, a changed EXPOSE and a renamed ConfigMap flag, and fails unless each is caught.
"""
import argparse
import copy
import json
import re
import subprocess
import sys

import yaml


def server_flags(binary):
    out = subprocess.run([binary, "--helpfull"], capture_output=True, text=True).stdout
    flags = set(re.findall(r"^\s+--(\w+) \(", out, re.M))
    if "data_dir" not in flags:
        raise SystemExit(f"could not read flags from {binary} --helpfull")
    return flags


def parse_dockerfile(text):
    # Only the final (runtime) stage matters for the shipped image.
    stage = text[text.rindex("\nFROM "):]
    d = {}
    d["expose"] = [int(p) for p in re.findall(r"^EXPOSE\s+(\d+)", stage, re.M)]
    d["volume"] = json.loads(re.search(r"^VOLUME\s+(\[.*\])", stage, re.M).group(1))
    d["entrypoint"] = json.loads(re.search(r"^ENTRYPOINT\s+(\[.*\])", stage, re.M).group(1))
    d["cmd"] = json.loads(re.search(r"^CMD\s+(\[.*\])", stage, re.M).group(1))
    d["uid"] = int(re.search(r"useradd[^\n]*--uid\s+(\d+)", stage).group(1))
    hc = re.search(r"^HEALTHCHECK(?:[^\n]*\\\n)*[^\n]*", stage, re.M).group(0)
    d["healthcheck"] = json.loads(re.search(r"CMD\s+(\[.*\])", hc).group(1))
    return d


def flag_args(args):
    """['--a=1', '--b'] -> {'a': '1', 'b': None}; non-flag words are ignored."""
    out = {}
    for a in args:
        m = re.match(r"--(\w+)(?:=(.*))?$", a)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def load(root):
    with open(f"{root}/Dockerfile") as f:
        docker = parse_dockerfile(f.read())
    k8s = {}
    for name in ("configmap", "statefulset", "service"):
        with open(f"{root}/deploy/k8s/base/{name}.yaml") as f:
            k8s[name] = yaml.safe_load(f)
    with open(f"{root}/deploy/compose.yaml") as f:
        compose = yaml.safe_load(f)
    return {"docker": docker, "k8s": k8s, "compose": compose}


def check(cfg, flags):
    errors = []

    def need(cond, message):
        if not cond:
            errors.append(message)

    def known(args, where):
        for name in flag_args(args):
            need(name in flags, f"{where}: unknown server flag --{name}")

    # Dockerfile
    d = cfg["docker"]
    need(d["entrypoint"] == ["voxcol_server"], "Dockerfile: ENTRYPOINT must be voxcol_server")
    known(d["cmd"], "Dockerfile CMD")
    cmd = flag_args(d["cmd"])
    need(cmd.get("data_dir") in d["volume"], "Dockerfile: --data_dir is not the VOLUME")
    need("listen" in cmd and port_of(cmd["listen"]) in d["expose"], "Dockerfile: --listen port is not EXPOSEd")
    need("metrics_listen" in cmd and port_of(cmd["metrics_listen"]) in d["expose"],
         "Dockerfile: --metrics_listen port is not EXPOSEd")
    hc = flag_args(d["healthcheck"])
    need(d["healthcheck"][0] == "voxcol" and d["healthcheck"][-1] == "health", "Dockerfile: HEALTHCHECK must run `voxcol ... health`")
    need("server" in hc and port_of(hc["server"]) in d["expose"], "Dockerfile: HEALTHCHECK port is not EXPOSEd")

    # Kubernetes
    k = cfg["k8s"]
    sts, svc, cm = k["statefulset"], k["service"], k["configmap"]
    pod = sts["spec"]["template"]["spec"]
    c = pod["containers"][0]
    known(c["args"], "statefulset args")
    args = flag_args(c["args"])
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    grpc_port = ports.get("grpc")
    need(grpc_port in d["expose"], "statefulset: containerPort grpc is not the image's EXPOSE")
    need("listen" in args and port_of(args["listen"]) == grpc_port, "statefulset: --listen port != containerPort")
    need("metrics_listen" in args and port_of(args["metrics_listen"]) == ports.get("metrics"),
         "statefulset: --metrics_listen port != containerPort metrics")
    annotations = sts["spec"]["template"]["metadata"].get("annotations", {})
    need(str(annotations.get("prometheus.io/port")) == str(ports.get("metrics")),
         "statefulset: prometheus.io/port annotation != containerPort metrics")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        p = c.get(probe, {}).get("grpc", {}).get("port")
        command = c.get(probe, {}).get("exec", {}).get("command", [])
        if command:  # the image's CLI (TLS): `voxcol ... --server=HOST:PORT ... health`
            server = flag_args(command).get("server")
            p = port_of(server) if server else None
            need(command[0] == "voxcol" and command[-1] == "health", f"statefulset: {probe} must run `voxcol ... health`")
        need(p == grpc_port, f"statefulset: {probe} grpc port {p} != containerPort {grpc_port}")
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    # TLS and tokens come from Secret volumes (references; no key is committed).
    secret_paths = [mounts[v["name"]].rstrip("/") + "/" for v in pod.get("volumes", []) if "secret" in v and v["name"] in mounts]
    for flag in ("tls_cert", "tls_key", "auth_tokens"):
        path = args.get(flag) or ""
        need(any(path.startswith(sp) for sp in secret_paths), f"statefulset: --{flag} is not a file of a mounted Secret")
    claims = [t["metadata"]["name"] for t in sts["spec"].get("volumeClaimTemplates", [])]
    need(any(mounts.get(n) == args.get("data_dir") for n in claims), "statefulset: --data_dir is not a volumeClaimTemplate mount")
    need(args.get("data_dir") in d["volume"], "statefulset: --data_dir differs from the image's VOLUME")
    need(pod["securityContext"].get("runAsUser") == d["uid"], "statefulset: runAsUser != the image's user id")
    need("requests" in c.get("resources", {}) and "limits" in c["resources"], "statefulset: resources need requests and limits")
    # The flag file comes from the ConfigMap, and its flags exist too.
    flagfile = args.get("flagfile")
    config_volumes = {v["name"]: v["configMap"]["name"] for v in pod.get("volumes", []) if "configMap" in v}
    found = None
    for vol, cm_name in config_volumes.items():
        path = mounts.get(vol)
        if flagfile and path and flagfile.startswith(path.rstrip("/") + "/"):
            found = (cm_name, flagfile[len(path.rstrip("/")) + 1:])
    need(found is not None and found[0] == cm["metadata"]["name"] and found[1] in cm["data"],
         "statefulset: --flagfile is not a key of the mounted ConfigMap")
    cm_flags = {}
    if found and found[1] in cm.get("data", {}):
        lines = [l.strip() for l in cm["data"][found[1]].splitlines() if l.strip()]
        known(lines, "configmap flags")
        cm_flags = flag_args(lines)
    grace = float(cm_flags.get("shutdown_grace_seconds") or 5)
    need(pod.get("terminationGracePeriodSeconds", 30) > grace, "statefulset: terminationGracePeriodSeconds must exceed --shutdown_grace_seconds")
    labels = sts["spec"]["template"]["metadata"]["labels"]
    need(all(labels.get(key) == v for key, v in svc["spec"]["selector"].items()), "service: selector does not match the pod labels")
    for p in svc["spec"]["ports"]:
        t = p["targetPort"]
        need(t in ports or t in ports.values(), f"service: targetPort {t} is not a container port")
    need(any(p["targetPort"] in ("grpc", grpc_port) for p in svc["spec"]["ports"]), "service: no port targets grpc")

    # Compose: every service (the primary and its replica).
    services = cfg["compose"]["services"]
    secrets = cfg["compose"].get("secrets", {})
    for name, s in services.items():
        known(s["command"], f"compose {name} command")
        cargs = flag_args(s["command"])
        container_ports = [int(str(p).split(":")[-1]) for p in s["ports"]]
        need("listen" in cargs and port_of(cargs["listen"]) in container_ports, f"compose {name}: --listen port is not published")
        need("metrics_listen" in cargs and port_of(cargs["metrics_listen"]) in container_ports,
             f"compose {name}: --metrics_listen port is not published")
        need(all(p in d["expose"] for p in container_ports), f"compose {name}: published port is not the image's EXPOSE")
        targets = [v.split(":")[1] for v in s["volumes"]]
        need(cargs.get("data_dir") in targets, f"compose {name}: --data_dir is not a mounted volume")
        test = s["healthcheck"]["test"]
        need(test[-1] == "health" and port_of(flag_args(test)["server"]) == port_of(cargs["listen"]), f"compose {name}: healthcheck port != --listen port")
        # Every /run/secrets/<x> a flag reads is a secret of the service, defined at the top.
        for value in list(cargs.values()) + [a.split("=", 1)[1] for a in test if "=" in a]:
            if str(value).startswith("/run/secrets/"):
                secret = value[len("/run/secrets/"):]
                need(secret in s.get("secrets", []) and secret in secrets,
                     f"compose {name}: {value} is not a secret of the service")
        if "replica_of" in cargs:
            host, port = cargs["replica_of"].rsplit(":", 1)
            primary = services.get(host)
            need(primary is not None and port_of(flag_args(primary["command"])["listen"]) == int(port),
                 f"compose {name}: --replica_of={cargs['replica_of']} is not a service's gRPC port")
    return errors


def self_test(cfg, flags):
    def drift_probe(c):
        probe = c["k8s"]["statefulset"]["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
        if "grpc" in probe:
            probe["grpc"]["port"] = 50052
        else:
            probe["exec"]["command"] = [a.replace(":50051", ":50052") for a in probe["exec"]["command"]]

    def drift_flag(c):
        args = c["k8s"]["statefulset"]["spec"]["template"]["spec"]["containers"][0]["args"]
        args[:] = [a.replace("--data_dir=", "--datadir=") for a in args]

    def drift_expose(c):
        c["docker"]["expose"] = [6000]

    def drift_configmap(c):
        cm = c["k8s"]["configmap"]["data"]
        key = next(iter(cm))
        cm[key] = cm[key].replace("--max_ray_distance", "--max_ray_length")

    def drift_secret(c):
        pod = c["k8s"]["statefulset"]["spec"]["template"]["spec"]
        pod["volumes"] = [v for v in pod["volumes"] if "secret" not in v]

    def drift_metrics(c):
        ports = c["k8s"]["statefulset"]["spec"]["template"]["spec"]["containers"][0]["ports"]
        for p in ports:
            if p["name"] == "metrics":
                p["containerPort"] = 9465

    def drift_replica_of(c):
        cmd = c["compose"]["services"]["voxcol-replica"]["command"]
        cmd[:] = [a.replace("--replica_of=voxcol:50051", "--replica_of=voxcol:50061") for a in cmd]

    def drift_compose_secret(c):
        c["compose"]["services"]["voxcol-replica"]["secrets"].remove("voxcol_replica_token")

    failures = []
    for name, mutate in [("probe port", drift_probe), ("flag name", drift_flag),
                         ("EXPOSE", drift_expose), ("ConfigMap flag", drift_configmap),
                         ("metrics port", drift_metrics), ("Secret volume", drift_secret),
                         ("compose replica's primary", drift_replica_of),
                         ("compose secret", drift_compose_secret)]:
        c = copy.deepcopy(cfg)
        mutate(c)
        if not check(c, flags):
            failures.append(f"self-test: a drifted {name} was not detected")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    flags = server_flags(a.server)
    cfg = load(a.root)
    errors = check(cfg, flags)
    if a.self_test:
        errors += self_test(cfg, flags)
    for e in errors:
        print("MISMATCH:", e)
    print(f"{len(errors)} mismatches")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
