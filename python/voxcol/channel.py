"""How a client reaches the server: plaintext, TLS, mutual TLS, and a bearer token.

The same options as the C++ SDK's ChannelSecurity (client/voxcol_client.h).
"""

from __future__ import annotations

import dataclasses
import os
from typing import List, Optional, Tuple, Union

import grpc

Pem = Union[bytes, str]

# Messages are not size-limited (ReadVoxels answers up to 2 bytes x 4M voxels), as in the C++ SDK.
_CHANNEL_OPTIONS: List[Tuple[str, object]] = [
    ("grpc.max_receive_message_length", -1),
    ("grpc.max_send_message_length", -1),
]


def _pem(value: Optional[Pem], name: str) -> Optional[bytes]:
    if value is None or value == b"" or value == "":
        return None
    if isinstance(value, str):
        value = value.encode()
    if not isinstance(value, bytes):
        raise TypeError(f"{name}: expected PEM text (bytes or str), got {type(value).__name__}")
    if b"-----BEGIN" not in value:
        raise ValueError(f"{name}: not PEM text (no -----BEGIN line); to read a file use "
                         f"voxcol.read_pem(path)")
    return value


def read_pem(path: Union[str, "os.PathLike[str]"]) -> bytes:
    """The contents of a PEM file (a CA bundle, a certificate or a private key)."""
    with open(path, "rb") as f:
        return f.read()


@dataclasses.dataclass(frozen=True)
class ChannelSecurity:
    """TLS and token options of a connection.

    Plaintext by default. TLS when `tls` is set or any PEM is given: the server is verified
    against `ca_pem` (else the system roots); mutual TLS with `cert_pem` and `key_pem`;
    `server_name` is the name expected in the server's certificate (default: the target's host).
    `token` is sent as `authorization: Bearer <token>` on every call (the server's
    --auth_tokens; its role must allow the method).
    """

    tls: bool = False
    ca_pem: Optional[Pem] = None
    cert_pem: Optional[Pem] = None
    key_pem: Optional[Pem] = None
    server_name: str = ""
    token: str = ""

    def uses_tls(self) -> bool:
        return bool(self.tls or self.ca_pem or self.cert_pem or self.key_pem)

    def metadata(self) -> Tuple[Tuple[str, str], ...]:
        """The call metadata every call of the client carries."""
        if not self.token:
            return ()
        return (("authorization", f"Bearer {self.token}"),)

    def validate(self) -> None:
        if not isinstance(self.token, str):
            raise TypeError(f"token: expected a str, got {type(self.token).__name__}")
        if any(c in self.token for c in "\r\n") or self.token != self.token.strip():
            raise ValueError("token: must not contain line breaks or surrounding spaces")
        if not isinstance(self.server_name, str):
            raise TypeError(f"server_name: expected a str, got {type(self.server_name).__name__}")
        if bool(self.cert_pem) != bool(self.key_pem):
            raise ValueError("mutual TLS needs both cert_pem and key_pem")


def make_channel(target: str, security: ChannelSecurity = ChannelSecurity(),
                 options: Optional[List[Tuple[str, object]]] = None,
                 credentials: Optional[grpc.ChannelCredentials] = None) -> grpc.Channel:
    """A channel to `target` ("HOST:PORT") with unlimited message sizes and `security` (or
    ready-made gRPC `credentials` instead of its TLS options)."""
    if not isinstance(target, str) or not target:
        raise TypeError(f"target: expected 'HOST:PORT', got {target!r}")
    security.validate()
    channel_options = list(_CHANNEL_OPTIONS) + list(options or [])
    if security.server_name:
        channel_options.append(("grpc.ssl_target_name_override", security.server_name))
    if credentials is not None:
        if security.uses_tls():
            raise TypeError("pass either credentials or TLS options (tls, ca_pem, ...)")
        return grpc.secure_channel(target, credentials, options=channel_options)
    if not security.uses_tls():
        return grpc.insecure_channel(target, options=channel_options)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=_pem(security.ca_pem, "ca_pem"),
        private_key=_pem(security.key_pem, "key_pem"),
        certificate_chain=_pem(security.cert_pem, "cert_pem"))
    return grpc.secure_channel(target, credentials, options=channel_options)
