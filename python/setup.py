"""Build step of the voxcol Python package: generates the voxcol.v1 protobuf and gRPC stubs.

The stubs (voxcol/v1/*_pb2.py, *_pb2.pyi, *_pb2_grpc.py) are written into the build directory
from the .proto files ($VOXCOL_PROTO_DIR; else ./proto, where the sdist carries them; else the
repository's ../proto), so they always match the server's API and are never committed. The sdist
copies the repository's .proto files into ./proto, so it builds on its own. The compiler is
Debian's protoc with grpc_python_plugin (protobuf-compiler, protobuf-compiler-grpc), or
grpc_tools.protoc when that is new enough.
"""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = pathlib.Path(__file__).resolve().parent
PROTOS = ["types", "world_service", "body_service", "query_service", "edit_service", "admin_service", "replica_service"]


def has_protos(root: pathlib.Path) -> bool:
    return all((root / "voxcol" / "v1" / f"{name}.proto").is_file() for name in PROTOS)


def proto_dir() -> pathlib.Path:
    if "VOXCOL_PROTO_DIR" in os.environ:
        candidates = [pathlib.Path(os.environ["VOXCOL_PROTO_DIR"])]
    else:
        candidates = [HERE / "proto", HERE.parent / "proto"]  # the sdist's, the repository's
    for root in candidates:
        if has_protos(root):
            return root
    sys.exit(f"voxcol: no voxcol/v1/{{{','.join(PROTOS)}}}.proto under "
             f"{' or '.join(map(str, candidates))} (set VOXCOL_PROTO_DIR)")


def protoc_command() -> list:
    protoc = shutil.which("protoc")
    plugin = shutil.which("grpc_python_plugin")
    if protoc and plugin:
        return [protoc, f"--plugin=protoc-gen-grpc_python={plugin}"]
    # pip's grpcio-tools; Debian 12's python3-grpc-tools (1.14) is too old for proto3 `optional`.
    return [sys.executable, "-m", "grpc_tools.protoc"]


def generate(out_dir: pathlib.Path) -> None:
    root = proto_dir()
    package = out_dir / "voxcol" / "v1"
    package.mkdir(parents=True, exist_ok=True)
    sources = [str(root / "voxcol" / "v1" / f"{name}.proto") for name in PROTOS]
    command = protoc_command() + [
        f"-I{root}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
    ] + sources
    subprocess.run(command, check=True)
    (package / "__init__.py").write_text(
        '"""Generated voxcol.v1 protobuf messages and gRPC stubs."""\n')


class BuildWithStubs(build_py):
    def run(self):
        super().run()
        generate(pathlib.Path(self.build_lib))

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        package = pathlib.Path(self.build_lib) / "voxcol" / "v1"
        generated = ["__init__.py"] + [f"{n}_pb2{s}" for n in PROTOS
                                       for s in (".py", ".pyi", "_grpc.py")]
        return outputs + [str(package / name) for name in generated]


class SdistWithProtos(sdist):
    """The sdist carries the .proto files (in ./proto) so that it builds without the repository."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        source = proto_dir()
        target = pathlib.Path(base_dir) / "proto" / "voxcol" / "v1"
        target.mkdir(parents=True, exist_ok=True)
        for name in PROTOS:
            shutil.copyfile(source / "voxcol" / "v1" / f"{name}.proto", target / f"{name}.proto")


setup(cmdclass={"build_py": BuildWithStubs, "sdist": SdistWithProtos})
