"""Identities: an MSP identity loads cryptogen's layout and signs as Fabric 1.4 verifies
(ECDSA P-256 over SHA-256, DER, low S); the model's named identity signs nothing."""
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from fabric.identity import P256_HALF_ORDER, P256_ORDER, MspIdentity, NamedIdentity, low_s
from osn.wire.msp import identities_pb2
from tests.orderer.msp_fixture import make_msp_dir


@pytest.fixture
def msp(tmp_path):
    return make_msp_dir(tmp_path, extra_keys=2)


def test_msp_identity_creator_is_the_serialized_identity_with_the_cert_pem(msp):
    msp_dir, cert = msp
    identity = MspIdentity.load("Org1MSP", msp_dir)
    serialized = identities_pb2.SerializedIdentity.FromString(identity.creator)
    assert serialized.mspid == "Org1MSP" == identity.msp_id
    assert serialized.id_bytes == (msp_dir / "signcerts" / "User1@org1.example.com-cert.pem").read_bytes()
    assert serialized.id_bytes.startswith(b"-----BEGIN CERTIFICATE-----")
    assert identity.certificate == cert


def test_signatures_verify_with_the_certs_key_and_are_all_low_s(msp):
    msp_dir, cert = msp
    identity = MspIdentity.load("Org1MSP", msp_dir)
    for i in range(300):  # about half of raw ECDSA signatures have a high S
        message = f"message {i}".encode()
        signature = identity.sign(message)
        cert.public_key().verify(signature, message, ec.ECDSA(hashes.SHA256()))
        _, s = decode_dss_signature(signature)
        assert 0 < s <= P256_HALF_ORDER


def test_low_s_turns_a_high_s_signature_into_one_that_still_verifies(msp):
    msp_dir, cert = msp
    identity = MspIdentity.load("Org1MSP", msp_dir)
    flipped = 0
    for i in range(64):
        message = f"raw {i}".encode()
        raw = identity.key.sign(message, ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(raw)
        low = low_s(raw)
        cert.public_key().verify(low, message, ec.ECDSA(hashes.SHA256()))
        assert decode_dss_signature(low) == (r, s if s <= P256_HALF_ORDER else P256_ORDER - s)
        flipped += s > P256_HALF_ORDER
    assert flipped  # 64 signatures without one high S: about 2**-64


def test_a_keystore_without_the_certs_key_is_refused(tmp_path):
    msp_dir, _ = make_msp_dir(tmp_path)
    [other_key] = (make_msp_dir(tmp_path / "other")[0] / "keystore").glob("*_sk")
    [key] = (msp_dir / "keystore").glob("*_sk")
    key.write_bytes(other_key.read_bytes())
    with pytest.raises(ValueError, match="no \\*_sk key"):
        MspIdentity.load("Org1MSP", msp_dir)


def test_signcerts_must_hold_one_certificate(tmp_path):
    msp_dir, _ = make_msp_dir(tmp_path)
    (msp_dir / "signcerts" / "second-cert.pem").write_bytes(b"")
    with pytest.raises(ValueError, match="expected one"):
        MspIdentity.load("Org1MSP", msp_dir)


def test_named_identity_is_its_name_and_signs_nothing():
    identity = NamedIdentity("alice")
    assert (identity.msp_id, identity.creator, identity.sign(b"anything")) == ("", b"alice", b"")
