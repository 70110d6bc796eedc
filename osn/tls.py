"""TLS on the OSNs' gRPC, as Fabric v1.4 deploys it: the server presents a certificate from
its org's TLS CA, and with mutual TLS (General.TLS.ClientAuthRequired) the client presents
one too.

Mutual TLS adds one rule above the handshake: a Deliver request must carry the SHA-256 of the
client's TLS certificate (DER) in its channel header's `tls_cert_hash`, and an orderer answers
BAD_REQUEST to one whose hash is missing or is not that of the certificate the connection
presented (Fabric's comm.NewBindingInspector). It binds the signed request to the connection,
so a request captured from one client cannot be replayed over another's. Broadcast has no
such rule in 1.4. Both sides follow it: ordeal's client (fabric/tls.py, taken from the
Identity) and the model (server.py, deliver.py).

Everything is PEM bytes, read once from files (cryptogen's `tls/` folders) and held here.
"""
from __future__ import annotations

import hashlib
import ssl
from dataclasses import dataclass, field

import grpc


def cert_hash(cert_pem: bytes) -> bytes:
    """SHA-256 of the certificate's DER bytes: what Fabric compares with tls_cert_hash. (The
    standard library's PEM reader: the model's image has no `cryptography`.)"""
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(cert_pem.decode("ascii"))).digest()


@dataclass(frozen=True)
class ServerTls:
    """An OSN's TLS: its key pair, and with client_auth_required the CAs a client's
    certificate must chain to."""

    cert_pem: bytes
    key_pem: bytes = field(repr=False)
    client_root_certs: bytes | None = None
    client_auth_required: bool = False

    def __post_init__(self) -> None:
        if self.client_auth_required and not self.client_root_certs:
            raise ValueError("mutual TLS needs the client root CAs")

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials([(self.key_pem, self.cert_pem)], root_certificates=self.client_root_certs,
                                           require_client_auth=self.client_auth_required)


def peer_cert_hash(context: grpc.ServicerContext) -> bytes:
    """The hash of the certificate the calling client presented on this connection (b"" if none)."""
    pems = (context.auth_context() or {}).get("x509_pem_cert") or []
    return cert_hash(pems[0]) if pems else b""


def binding_error(context: grpc.ServicerContext, claimed: bytes) -> str | None:
    """Fabric's mutual-TLS binding rule for one request whose header claims `claimed`: why it
    fails, or None when it holds."""
    if not claimed:
        return "client didn't include its TLS cert hash"
    actual = peer_cert_hash(context)
    if not actual:
        return "client didn't send a TLS certificate"
    if actual != claimed:
        return "claimed TLS cert hash is different than the actual TLS cert hash"
    return None
