"""Who a client is on the wire: the creator bytes of its SignatureHeaders and its signatures.

Fabric (v1.4) identifies a creator by a serialized msp.SerializedIdentity (MSP id + PEM
certificate) and checks an ECDSA signature over the SHA-256 of the signed bytes, refusing
signatures whose S is above half the curve order. ordeal's model of the orderer checks
writers by creator id only, so its identity is a bare name and signs nothing.

An identity also carries the TLS material its client connects with (`tls`, None for plain
gRPC): in a Fabric network the signing identity and the TLS key pair are the client's two
credentials, and every OsnClient made for an identity should present both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from fabric.tls import ClientTls
from osn.wire.msp import identities_pb2

# Order of the P-256 group; Fabric's low-S rule: s <= n >> 1.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
P256_HALF_ORDER = P256_ORDER >> 1


class Identity(Protocol):
    @property
    def msp_id(self) -> str: ...

    @property
    def creator(self) -> bytes:
        """What goes into SignatureHeader.creator."""
        ...

    def sign(self, message: bytes) -> bytes: ...

    @property
    def tls(self) -> ClientTls | None:
        """How this client connects: None for plain gRPC."""
        ...


@dataclass(frozen=True)
class NamedIdentity:
    """The model's identity: the creator is the utf-8 name; signatures are empty."""

    name: str
    msp_id: str = ""
    tls: ClientTls | None = None

    @property
    def creator(self) -> bytes:
        return self.name.encode("utf-8")

    def sign(self, message: bytes) -> bytes:
        return b""


def low_s(der_signature: bytes) -> bytes:
    """The signature in Fabric's low-S form (s > n/2 becomes n - s), DER-encoded."""
    r, s = decode_dss_signature(der_signature)
    if s > P256_HALF_ORDER:
        s = P256_ORDER - s
    return encode_dss_signature(r, s)


@dataclass(frozen=True)
class MspIdentity:
    """A signing identity from an MSP folder in cryptogen's layout (X.509 cert + EC P-256 key)."""

    msp_id: str
    cert_pem: bytes
    key: ec.EllipticCurvePrivateKey = field(repr=False)
    tls: ClientTls | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.key, ec.EllipticCurvePrivateKey) or self.key.curve.name != "secp256r1":
            raise ValueError("the private key is not an EC P-256 key")
        if self.key.public_key() != self.certificate.public_key():
            raise ValueError("the private key does not belong to the certificate")

    @classmethod
    def load(cls, msp_id: str, msp_dir: Path, tls: ClientTls | None = None) -> "MspIdentity":
        """signcerts/*.pem is the certificate; keystore/*_sk (PKCS#8 PEM) holds its key."""
        msp_dir = Path(msp_dir)
        certs = sorted((msp_dir / "signcerts").glob("*.pem"))
        if len(certs) != 1:
            raise ValueError(f"{msp_dir}/signcerts: expected one *.pem, found {len(certs)}")
        cert_pem = certs[0].read_bytes()
        public = x509.load_pem_x509_certificate(cert_pem).public_key()
        keys = sorted((msp_dir / "keystore").glob("*_sk"))
        for path in keys:
            key = serialization.load_pem_private_key(path.read_bytes(), password=None)
            if isinstance(key, ec.EllipticCurvePrivateKey) and key.public_key() == public:
                return cls(msp_id, cert_pem, key, tls)
        raise ValueError(f"{msp_dir}/keystore: no *_sk key of the certificate in {certs[0].name} "
                         f"(among {len(keys)} keys)")

    @cached_property
    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.cert_pem)

    @cached_property
    def creator(self) -> bytes:
        return identities_pb2.SerializedIdentity(mspid=self.msp_id, id_bytes=self.cert_pem).SerializeToString()

    def sign(self, message: bytes) -> bytes:
        """ECDSA P-256 over SHA-256(message), DER, low-S (Fabric's verifier rejects high S)."""
        return low_s(self.key.sign(message, ec.ECDSA(hashes.SHA256())))
