"""The client's side of TLS to the OSNs (osn/tls.py has the rules and the server's side):
what it trusts and, for mutual TLS, the key pair it presents and the hash that binds a
Deliver to the connection."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import grpc

from osn.tls import cert_hash


@dataclass(frozen=True)
class ClientTls:
    """What a client trusts (the OSNs' TLS CA) and, for mutual TLS, the key pair it presents."""

    root_certs: bytes
    cert_pem: bytes | None = None
    key_pem: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if (self.cert_pem is None) != (self.key_pem is None):
            raise ValueError("a client TLS certificate needs its key, and a key its certificate")

    @classmethod
    def load(cls, tls_dir: Path, mutual: bool = True) -> "ClientTls":
        """cryptogen's layout: tls/ca.crt, tls/client.crt and tls/client.key."""
        tls_dir = Path(tls_dir)
        root = (tls_dir / "ca.crt").read_bytes()
        if not mutual:
            return cls(root)
        return cls(root, (tls_dir / "client.crt").read_bytes(), (tls_dir / "client.key").read_bytes())

    @cached_property
    def binding_hash(self) -> bytes:
        """The tls_cert_hash a Deliver carries: the certificate's hash, or b"" without one."""
        return cert_hash(self.cert_pem) if self.cert_pem else b""

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(root_certificates=self.root_certs, private_key=self.key_pem,
                                            certificate_chain=self.cert_pem)
