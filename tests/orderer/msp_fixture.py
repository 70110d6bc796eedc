"""A small MSP folder in cryptogen's layout, made with `cryptography`: a self-signed P-256
certificate in signcerts/<name>-cert.pem and its PKCS#8 key in keystore/<hex>_sk."""
from __future__ import annotations

import datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def make_msp_dir(root: Path, common_name: str = "User1@org1.example.com",
                 extra_keys: int = 0) -> tuple[Path, x509.Certificate]:
    """The MSP folder and its certificate; `extra_keys` unrelated keys are put beside the right one."""
    msp = root / "msp"
    (msp / "signcerts").mkdir(parents=True)
    (msp / "keystore").mkdir()
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=365))
            .sign(key, hashes.SHA256()))
    (msp / "signcerts" / f"{common_name}-cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    for i, k in enumerate([ec.generate_private_key(ec.SECP256R1()) for _ in range(extra_keys)] + [key]):
        pem = k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
        (msp / "keystore" / f"{i:02d}{'ab' * 31}_sk").write_bytes(pem)
    return msp, cert
