#!/usr/bin/env bash
# Renders every kustomization under deploy/k8s offline (`kubectl kustomize`, no cluster needed) and
# checks, in each whole deployment (base/ and every overlays/*), what the placement and replica
# design relies on (docs/operations.md, "Read replicas and
# placement on Kubernetes"):
#   - every StatefulSet has a headless Service of its serviceName selecting exactly its pods, and
#     no two StatefulSets select each other's pods;
#   - every replica set's --replica_of (with $(VAR) from the container env substituted) names an
#     existing primary pod "<set>-<ordinal>.<service>:<grpc port>" with ordinal < the primary
#     set's replicas, and the set carries voxcol.dev/primary=<set>-<ordinal>;
#   - with a server binary: every --flag in the args is one the server accepts;
#   - every ConfigMap volume refers to a ConfigMap in the same render.
# Then it proves the checks bite: a replica set pointed at a missing primary ordinal, and a second
# set with an overlapping selector, must each be reported.
# usage: scripts/check-manifests.sh [path/to/voxcol_server]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v kubectl >/dev/null || { echo "check-manifests: kubectl missing (scripts/install-deps.sh)" >&2; exit 1; }
server=${1:-}
renders=$(mktemp -d)
trap 'rm -rf "$renders"' EXIT
n=0
while IFS= read -r file; do
  dir=$(dirname "$file")
  out="$renders/$(echo "$dir" | tr / _).yaml"
  if ! kubectl kustomize "$dir" >"$out" 2>"$out.err"; then
    grep -v "Warning: '" "$out.err" >&2
    echo "check-manifests: kubectl kustomize $dir failed" >&2
    exit 1
  fi
  n=$((n + 1))
done < <(find deploy/k8s -name kustomization.yaml | sort)
/usr/bin/python3 - "$renders" "$server" <<'EOF'
import copy, glob, os, re, subprocess, sys
import yaml

renders, server = sys.argv[1], sys.argv[2]
flags = None
if server:
    out = subprocess.run([server, "--helpfull"], capture_output=True, text=True).stdout
    flags = set(re.findall(r"^\s+--(\w+) \(", out, re.M))
    assert "replica_of" in flags, f"no --replica_of in {server} --helpfull"

def matches(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())

def check(docs):
    errors = []
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
    sets = by_kind.get("StatefulSet", {})
    services = by_kind.get("Service", {})
    configmaps = by_kind.get("ConfigMap", {})
    for name, s in sets.items():
        pod_labels = s["spec"]["template"]["metadata"]["labels"]
        selector = s["spec"]["selector"]["matchLabels"]
        if not matches(selector, pod_labels):
            errors.append(f"{name}: selector does not match its pod labels")
        svc = services.get(s["spec"].get("serviceName"))
        if svc is None or svc["spec"].get("clusterIP") != "None":
            errors.append(f"{name}: serviceName must be a headless Service in the render")
        elif not matches(svc["spec"]["selector"], pod_labels):
            errors.append(f"{name}: Service {svc['metadata']['name']} does not select its pods")
        for other, o in sets.items():
            if other != name and matches(selector, o["spec"]["template"]["metadata"]["labels"]):
                errors.append(f"{name}: selector also matches the pods of {other}")
        pod = s["spec"]["template"]["spec"]
        for v in pod.get("volumes", []):
            if "configMap" in v and v["configMap"]["name"] not in configmaps:
                errors.append(f"{name}: ConfigMap {v['configMap']['name']} is not in the render")
        for c in pod["containers"]:
            env = {e["name"]: e.get("value", "") for e in c.get("env", [])}
            args = [re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), a)
                    for a in c.get("args", [])]
            for a in args:
                flag = re.match(r"--(\w+)", a)
                if flags is not None and flag and flag.group(1) not in flags:
                    errors.append(f"{name}: the server has no flag --{flag.group(1)}")
            primary = [a.split("=", 1)[1] for a in args if a.startswith("--replica_of=")]
            if not primary:
                continue
            m = re.fullmatch(r"(.+)-(\d+)\.([^.:]+):(\d+)", primary[0])
            if not m:
                errors.append(f"{name}: --replica_of={primary[0]} is not <set>-<n>.<service>:<port>")
                continue
            pset, ordinal, psvc, port = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))
            p = sets.get(pset)
            if p is None or any(a.startswith("--replica_of") for a in p["spec"]["template"]["spec"]["containers"][0].get("args", [])):
                errors.append(f"{name}: --replica_of names {pset}, which is not a primary set here")
                continue
            if ordinal >= p["spec"].get("replicas", 1):
                errors.append(f"{name}: follows {pset}-{ordinal}, but {pset} has {p['spec'].get('replicas', 1)} pods")
            if psvc != p["spec"]["serviceName"]:
                errors.append(f"{name}: --replica_of uses service {psvc}, {pset} is under {p['spec']['serviceName']}")
            ports = [pt["containerPort"] for pt in p["spec"]["template"]["spec"]["containers"][0]["ports"] if pt["name"] == "grpc"]
            if ports != [port]:
                errors.append(f"{name}: --replica_of port {port}, the primary's grpc port is {ports}")
            if pod_labels.get("voxcol.dev/primary") != f"{pset}-{ordinal}":
                errors.append(f"{name}: label voxcol.dev/primary must be {pset}-{ordinal}")
    return errors

failed = False
sharded = None
# Whole deployments: the base and each overlay (replica/ and replicas-of-N/ are building blocks,
# rendered above only to prove they build).
for path in sorted(glob.glob(os.path.join(renders, "*.yaml"))):
    if not re.search(r"deploy_k8s_(base|overlays_[^_]+)\.yaml$", path):
        continue
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    for e in check(docs):
        print(f"check-manifests: {os.path.basename(path)}: {e}", file=sys.stderr)
        failed = True
    if path.endswith("overlays_sharded.yaml"):
        sharded = docs
if failed:
    sys.exit(1)
# The checks bite.
assert sharded is not None, "no sharded overlay rendered"
def replica_env(docs):
    for d in docs:
        for c in d.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
            for e in c.get("env", []):
                if e["name"] == "VOXCOL_PRIMARY":
                    return e
bad = copy.deepcopy(sharded)
replica_env(bad)["value"] = "voxcol-7.voxcol:50051"
assert any("has 3 pods" in e or "must be" in e for e in check(bad)), "missing primary ordinal not caught"
bad = copy.deepcopy(sharded)
twin = copy.deepcopy([d for d in bad if d["kind"] == "StatefulSet"][0])
twin["metadata"]["name"] = "voxcol-twin"
bad.append(twin)
assert any("also matches" in e for e in check(bad)), "overlapping selectors not caught"
print("check-manifests: every overlay renders and passes; the self-test mutations were caught")
EOF
echo "check-manifests: $n kustomizations rendered"
