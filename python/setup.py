"""Build step of the voxcol Python package: generates the voxcol.v1 protobuf and gRPC stubs.

The stubs (voxcol/v1/*_pb2.py, *_pb2.pyi, *_pb2_grpc.py) are written into the build directory
from the .proto files of the repository (../proto, or $VOXCOL_PROTO_DIR), so they always match the
server's API and are never committed. The compiler is Debian's protoc with grpc_python_plugin
(protobuf-compiler, protobuf-compiler-grpc), or grpc_tools.protoc when that is new enough.
"""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent
PROTOS = ["types", "world_service", "query_service", "edit_service", "admin_service", "replica_service"]


def proto_dir() -> pathlib.Path:
    root = pathlib.Path(os.environ.get("VOXCOL_PROTO_DIR", HERE.parent / "proto"))
    if not (root / "voxcol" / "v1" / "types.proto").is_file():
        sys.exit(f"voxcol: no voxcol/v1/*.proto under {root} (set VOXCOL_PROTO_DIR)")
    return root


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


setup(cmdclass={"build_py": BuildWithStubs})
