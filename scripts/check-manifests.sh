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
#   - every ConfigMap volume refers to a ConfigMap in the same render;
#   - Pod Security "restricted" and the project's policy list (issue 40) for every pod template:
#     non-root, seccomp RuntimeDefault, no privilege escalation, read-only root filesystem, ALL
#     capabilities dropped, no host namespaces, only restricted volume types, CPU and memory
#     requests and limits, the image tagged with the project's version (CMakeLists.txt); a
#     NetworkPolicy that lets labelled clients (voxcol.dev/client=true) reach gRPC, replicas reach
#     their primaries and the monitoring namespace reach metrics; a PodDisruptionBudget.
# Then it proves the checks bite: a replica set pointed at a missing primary ordinal, a second set
# with an overlapping selector, and each policy field removed in turn must be reported.
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
version=$(sed -n 's/^project(voxcol VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
/usr/bin/python3 - "$renders" "$server" "$version" <<'EOF'
import copy, glob, os, re, subprocess, sys
import yaml

renders, server, version = sys.argv[1], sys.argv[2], sys.argv[3]
flags = None
if server:
    out = subprocess.run([server, "--helpfull"], capture_output=True, text=True).stdout
    flags = set(re.findall(r"^\s+--(\w+) \(", out, re.M))
    assert "replica_of" in flags, f"no --replica_of in {server} --helpfull"

def matches(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())

def selects(selector, labels):
    """A LabelSelector (matchLabels and matchExpressions) against a set of labels."""
    if not matches(selector.get("matchLabels", {}), labels):
        return False
    for e in selector.get("matchExpressions", []):
        key, op, values = e["key"], e["operator"], e.get("values", [])
        if op == "In" and labels.get(key) not in values: return False
        if op == "NotIn" and labels.get(key) in values: return False
        if op == "Exists" and key not in labels: return False
        if op == "DoesNotExist" and key in labels: return False
    return True

RESTRICTED_VOLUMES = {"configMap", "secret", "emptyDir", "persistentVolumeClaim", "projected",
                      "downwardAPI", "csi", "ephemeral"}

def allowed(policies, pod_labels, port, peer):
    """Whether some NetworkPolicy selecting pod_labels admits `peer` on the named port. peer is
    ("pod", labels) for a pod of the same namespace or ("namespace", labels)."""
    for np in policies:
        if not selects(np["spec"]["podSelector"], pod_labels):
            continue
        for rule in np["spec"].get("ingress", []):
            if not any(p.get("port") == port for p in rule.get("ports", [])):
                continue
            for source in rule.get("from", []):
                kind, labels = peer
                if kind == "pod" and "podSelector" in source and "namespaceSelector" not in source \
                        and selects(source["podSelector"], labels):
                    return True
                if kind == "namespace" and "namespaceSelector" in source and "podSelector" not in source \
                        and selects(source["namespaceSelector"], labels):
                    return True
    return False

def check_policy(docs):
    """Pod Security "restricted" and the deployment policy list; one message per missing field."""
    errors = []
    policies = [d for d in docs if d["kind"] == "NetworkPolicy"]
    budgets = [d for d in docs if d["kind"] == "PodDisruptionBudget"]
    for d in docs:
        if d["kind"] not in ("StatefulSet", "Deployment", "DaemonSet"):
            continue
        name = d["metadata"]["name"]
        labels = d["spec"]["template"]["metadata"]["labels"]
        pod = d["spec"]["template"]["spec"]
        psc = pod.get("securityContext", {})
        for host in ("hostNetwork", "hostPID", "hostIPC"):
            if pod.get(host):
                errors.append(f"{name}: {host} is not allowed")
        if psc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
            errors.append(f"{name}: securityContext.seccompProfile.type must be RuntimeDefault")
        for v in pod.get("volumes", []):
            kinds = set(v) - {"name"}
            if not kinds <= RESTRICTED_VOLUMES:
                errors.append(f"{name}: volume {v['name']} of type {sorted(kinds)} is not allowed")
        for c in pod.get("initContainers", []) + pod["containers"]:
            where = f"{name}/{c['name']}"
            sc = c.get("securityContext", {})
            if sc.get("allowPrivilegeEscalation") is not False:
                errors.append(f"{where}: securityContext.allowPrivilegeEscalation must be false")
            if sc.get("readOnlyRootFilesystem") is not True:
                errors.append(f"{where}: securityContext.readOnlyRootFilesystem must be true")
            if sc.get("privileged"):
                errors.append(f"{where}: securityContext.privileged is not allowed")
            caps = sc.get("capabilities", {})
            if "ALL" not in caps.get("drop", []):
                errors.append(f"{where}: securityContext.capabilities.drop must hold ALL")
            if caps.get("add"):
                errors.append(f"{where}: securityContext.capabilities.add is not allowed")
            if not (sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True):
                errors.append(f"{where}: runAsNonRoot must be true")
            if sc.get("runAsUser", psc.get("runAsUser", 0)) == 0:
                errors.append(f"{where}: runAsUser must be set and not 0")
            res = c.get("resources", {})
            for part in ("requests", "limits"):
                for r in ("cpu", "memory"):
                    if r not in res.get(part, {}):
                        errors.append(f"{where}: resources.{part}.{r} is missing")
            image = c.get("image", "")
            tag = image.rsplit(":", 1)[1] if ":" in image.split("/")[-1] else ""
            if tag != version:
                errors.append(f"{where}: image {image!r} must be tagged with the version {version}")
        if not any(selects(b["spec"]["selector"], labels) for b in budgets):
            errors.append(f"{name}: no PodDisruptionBudget selects its pods")
        if not any(selects(np["spec"]["podSelector"], labels) for np in policies):
            errors.append(f"{name}: no NetworkPolicy selects its pods")
            continue
        if not allowed(policies, labels, "grpc", ("pod", {"voxcol.dev/client": "true"})):
            errors.append(f"{name}: a pod labelled voxcol.dev/client=true cannot reach gRPC")
        if not allowed(policies, labels, "metrics",
                       ("namespace", {"kubernetes.io/metadata.name": "monitoring"})):
            errors.append(f"{name}: the monitoring namespace cannot reach metrics")
    # Replicas reach the primary they follow.
    for d in docs:
        if d["kind"] != "StatefulSet":
            continue
        args = " ".join(d["spec"]["template"]["spec"]["containers"][0].get("args", []))
        if "--replica_of=" not in args:
            continue
        replica_labels = d["spec"]["template"]["metadata"]["labels"]
        for p in docs:
            if p["kind"] == "StatefulSet" and "--replica_of=" not in " ".join(
                    p["spec"]["template"]["spec"]["containers"][0].get("args", [])):
                if not allowed(policies, p["spec"]["template"]["metadata"]["labels"], "grpc",
                               ("pod", replica_labels)):
                    errors.append(f"{d['metadata']['name']}: cannot reach primary set "
                                  f"{p['metadata']['name']} on gRPC")
    return errors

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
    for e in check(docs) + check_policy(docs):
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
# Each policy field, removed or broken in turn, is reported.
def first(docs, kind, name_part=""):
    return next(d for d in docs if d["kind"] == kind and name_part in d["metadata"]["name"])
def container(docs):
    return first(docs, "StatefulSet", "replica")["spec"]["template"]["spec"]["containers"][0]
breaks = {
    "readOnlyRootFilesystem": lambda b: container(b)["securityContext"].pop("readOnlyRootFilesystem"),
    "allowPrivilegeEscalation": lambda b: container(b)["securityContext"].pop("allowPrivilegeEscalation"),
    "capabilities.drop": lambda b: container(b)["securityContext"].pop("capabilities"),
    "seccompProfile": lambda b: first(b, "StatefulSet")["spec"]["template"]["spec"]["securityContext"].pop("seccompProfile"),
    "resources.limits.memory": lambda b: container(b)["resources"]["limits"].pop("memory"),
    "tagged with the version": lambda b: container(b).update(image="voxcol:latest"),
    "hostNetwork": lambda b: first(b, "StatefulSet")["spec"]["template"]["spec"].update(hostNetwork=True),
    "not allowed": lambda b: first(b, "StatefulSet")["spec"]["template"]["spec"]["volumes"].append({"name": "h", "hostPath": {"path": "/"}}),
    "PodDisruptionBudget": lambda b: b.remove(first(b, "PodDisruptionBudget", "replica")),
    "NetworkPolicy": lambda b: b.remove(first(b, "NetworkPolicy", "replica")),
    # commonLabels adds its label to matchLabels: a client selector written that way breaks.
    "voxcol.dev/client=true cannot reach": lambda b: first(b, "NetworkPolicy", "replica")["spec"]["ingress"][0]["from"][0].update(
        podSelector={"matchLabels": {"voxcol.dev/client": "true", "voxcol.dev/primary": "voxcol-0"}}),
    "monitoring namespace": lambda b: first(b, "NetworkPolicy", "replica")["spec"]["ingress"].pop(1),
    "cannot reach primary": lambda b: first(b, "NetworkPolicy", "voxcol")["spec"]["ingress"][0]["from"].pop(1),
}
for expected, breaker in breaks.items():
    bad = copy.deepcopy(sharded)
    breaker(bad)
    assert any(expected in e for e in check_policy(bad)), f"policy check missed: {expected}"
print(f"check-manifests: every overlay renders and passes; {2 + len(breaks)} self-test mutations were caught")
EOF
echo "check-manifests: $n kustomizations rendered"
