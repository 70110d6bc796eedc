"""A Fabric network's material for one cluster, made at boot with Fabric's own tools:
crypto material from `cryptogen`, the system channel's genesis block and one
channel-creation transaction per channel from `configtxgen`.

Both tools read YAML; their inputs are written as JSON, which YAML reads as it is.
The result is one folder (`Material.root`):

    genesis.block                 the system channel's block 0 (OrdererType kafka)
    channels/<channel>.tx         unsigned CONFIG_UPDATE envelopes, to be signed by the client admin
    orderers/<node>/msp           each orderer's local MSP
    orderers/<node>/tls           its TLS key pair (server.crt, server.key; ca.crt its org's TLS CA)
    clients/admin/msp, clients/user/msp    the client org's admin and user
    admins/orderer/msp, .../tls   the orderer org's admin: signs channel config updates of the
                                  Orderer group (BatchSize, BatchTimeout, ConsensusType: mod_policy
                                  Admins), and reads a channel in maintenance mode
    clients/<who>/tls             their TLS key pairs (client.crt, client.key)
    tlsca/orderer.pem, tlsca/client.pem    the two orgs' TLS CAs: what clients trust in an
                                  orderer, and what an orderer trusts in a client (mutual TLS)
    kafka/<broker>/keystore.p12   with `broker_sans`: each broker's TLS key pair, as the
                                  PKCS#12 keystore Kafka's listener reads (KEYSTORE_PASSWORD)
    tlsca/kafka.pem               the brokers' TLS CA, what the orderers trust in a broker; a
                                  broker trusts tlsca/orderer.pem, the orderers' own TLS CA,
                                  since an orderer presents its TLS key pair to Kafka too

`generate_crypto` makes only cryptogen's part, for ordeal's model of the orderer, which reads
no genesis block but serves TLS from the same material when the variant asks for it.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from collections.abc import Mapping
from pathlib import Path

from ground.variant import Variant

ORDERER_MSP, CLIENT_MSP = "OrdererMSP", "ClientMSP"
ORDERER_DOMAIN, CLIENT_DOMAIN, KAFKA_DOMAIN = "orderer.ordeal", "client.ordeal", "kafka.ordeal"
# Kafka's file keystores must have a password; this material lives and dies with its run.
KEYSTORE_PASSWORD = "ordeal-kafka"
SYSTEM_CHANNEL = "ordeal-sys"
CONSORTIUM = "Ordeal"
GENESIS_PROFILE, CHANNEL_PROFILE = "OrdealGenesis", "OrdealChannel"


class MaterialError(RuntimeError):
    """cryptogen or configtxgen refused; the message carries their last words."""


@dataclass(frozen=True)
class Material:
    root: Path

    @property
    def genesis_block(self) -> Path:
        return self.root / "genesis.block"

    def channel_tx(self, channel: str) -> Path:
        return self.root / "channels" / f"{channel}.tx"

    def orderer_msp(self, node: str) -> Path:
        return self.root / "orderers" / node / "msp"

    def client_msp(self, who: str) -> Path:
        """`who`: "admin" (signs channel creation) or "user" (broadcasts and delivers)."""
        return self.root / "clients" / who / "msp"

    def orderer_tls(self, node: str) -> Path:
        return self.root / "orderers" / node / "tls"

    def orderer_admin_msp(self) -> Path:
        return self.root / "admins" / "orderer" / "msp"

    def orderer_admin_tls(self) -> Path:
        return self.root / "admins" / "orderer" / "tls"

    def client_tls(self, who: str) -> Path:
        return self.root / "clients" / who / "tls"

    def tls_ca(self, org: str) -> Path:
        """`org`: "orderer" (signed the orderers' server certificates), "client", or "kafka"
        (the brokers', made only with `broker_sans`)."""
        return self.root / "tlsca" / f"{org}.pem"

    def broker_keystore(self, broker: str) -> Path:
        return self.root / "kafka" / broker / "keystore.p12"


def _signature(rule: str) -> dict:
    return {"Type": "Signature", "Rule": rule}


def _implicit(rule: str) -> dict:
    return {"Type": "ImplicitMeta", "Rule": rule}


def _org_policies(msp: str) -> dict:
    return {"Readers": _signature(f"OR('{msp}.member')"), "Writers": _signature(f"OR('{msp}.member')"),
            "Admins": _signature(f"OR('{msp}.admin')")}


META_POLICIES = {"Readers": _implicit("ANY Readers"), "Writers": _implicit("ANY Writers"),
                 "Admins": _implicit("MAJORITY Admins")}


def crypto_config(orderers: list[str], sans: Mapping[str, list[str]] | None = None,
                  broker_sans: Mapping[str, list[str]] | None = None) -> dict:
    """cryptogen's input: one orderer org with one orderer per node, one client org with an
    admin and one user (no peers: nothing here endorses). `sans`: more names or IP addresses
    an orderer's TLS certificate is valid for (clients dial the OSNs by IP address).
    `broker_sans`: broker name -> its addresses, for an org of Kafka brokers of its own (the
    orderers reach the brokers by address and check the certificate against it)."""
    sans = sans or {}
    brokers = [{"Name": "Kafka", "Domain": KAFKA_DOMAIN,
                "Specs": [{"Hostname": name, "SANS": list(ips)} for name, ips in broker_sans.items()]}
               ] if broker_sans else []
    return {
        "OrdererOrgs": [{"Name": "Orderer", "Domain": ORDERER_DOMAIN,
                         "Specs": [{"Hostname": name, "SANS": list(sans.get(name, []))} for name in orderers]},
                        *brokers],
        "PeerOrgs": [{"Name": "Client", "Domain": CLIENT_DOMAIN, "Template": {"Count": 0},
                      "Users": {"Count": 1}}],
    }


def configtx(variant: Variant, orderers: list[str], kafka_brokers: list[str], crypto: Path,
             orderer_type: str = "kafka", raft_endpoints: Mapping[str, str] | None = None) -> dict:
    """configtxgen's input: the genesis profile (orderer org, Kafka consensus, the variant's
    batch settings, a consortium of the client org) and the channel profile. `orderer_type`
    "etcdraft" makes every orderer a consenter, reached at its `raft_endpoints` entry
    ("host:port", a name or address its TLS certificate is valid for); "solo" serves tests
    that run Fabric's orderer without Kafka."""
    o = variant.orderer
    orderer_org = {"Name": "OrdererOrg", "ID": ORDERER_MSP, "Policies": _org_policies(ORDERER_MSP),
                   "MSPDir": str(crypto / "ordererOrganizations" / ORDERER_DOMAIN / "msp")}
    client_org = {"Name": "ClientOrg", "ID": CLIENT_MSP, "Policies": _org_policies(CLIENT_MSP),
                  "MSPDir": str(crypto / "peerOrganizations" / CLIENT_DOMAIN / "msp")}
    orderer = {
        "OrdererType": orderer_type,
        "Addresses": [f"{name}:7050" for name in orderers],
        "BatchTimeout": f"{o.batch_timeout_ms}ms",
        "BatchSize": {"MaxMessageCount": o.max_message_count,
                      "AbsoluteMaxBytes": f"{o.absolute_max_bytes}",
                      "PreferredMaxBytes": f"{o.preferred_max_bytes}"},
        "Kafka": {"Brokers": kafka_brokers},
        **({"EtcdRaft": _etcdraft(orderers, raft_endpoints or {}, crypto)} if orderer_type == "etcdraft" else {}),
        "Organizations": [orderer_org],
        "Policies": {**META_POLICIES, "BlockValidation": _implicit("ANY Writers")},
        "Capabilities": {"V1_4_2": True},
    }
    channel = {"Policies": META_POLICIES, "Capabilities": {"V1_4_3": True}}
    return {
        "Profiles": {
            GENESIS_PROFILE: {**channel, "Orderer": orderer,
                              "Consortiums": {CONSORTIUM: {"Organizations": [client_org]}}},
            CHANNEL_PROFILE: {**channel, "Consortium": CONSORTIUM,
                              "Application": {"Organizations": [client_org], "Policies": META_POLICIES,
                                              "Capabilities": {"V1_4_2": True}}},
        },
    }


def _etcdraft(orderers: list[str], endpoints: Mapping[str, str], crypto: Path) -> dict:
    """Raft's consenter set: each orderer's TLS certificate serves both ways (cryptogen makes
    it for server and client authentication). Options are Fabric's sample defaults."""
    missing = [name for name in orderers if name not in endpoints]
    if missing:
        raise MaterialError(f"etcdraft needs an endpoint for every orderer; none for {', '.join(missing)}")
    tls = crypto / "ordererOrganizations" / ORDERER_DOMAIN / "orderers"
    consenters = []
    for name in orderers:
        host, port = endpoints[name].rsplit(":", 1)
        cert = str(tls / f"{name}.{ORDERER_DOMAIN}" / "tls" / "server.crt")
        consenters.append({"Host": host, "Port": int(port), "ClientTLSCert": cert, "ServerTLSCert": cert})
    return {"Consenters": consenters,
            "Options": {"TickInterval": "500ms", "ElectionTick": 10, "HeartbeatTick": 1, "MaxInflightBlocks": 5,
                        "SnapshotIntervalSize": "20 MB"}}


def _run(tool: Path, args: list[str], cfg: Path) -> None:
    done = subprocess.run([str(tool), *args], capture_output=True, text=True, timeout=120,
                          env={"FABRIC_CFG_PATH": str(cfg), "PATH": "/usr/bin:/bin"})
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise MaterialError(f"{tool.name} {args[0]} failed ({done.returncode}): {tail}")


def _cryptogen(orderers: list[str], sans: Mapping[str, list[str]] | None, tools: Path, work: Path,
               broker_sans: Mapping[str, list[str]] | None = None) -> Path:
    work.mkdir(parents=True)
    (work / "crypto-config.yaml").write_text(json.dumps(crypto_config(orderers, sans, broker_sans), indent=1))
    crypto = work / "crypto"
    _run(tools / "bin" / "cryptogen", ["generate", f"--config={work / 'crypto-config.yaml'}",
                                       f"--output={crypto}"], work)
    return crypto


def _keep_crypto(crypto: Path, orderers: list[str], material: Material, brokers: list[str] = ()) -> None:
    """Copy what the nodes and clients use out of cryptogen's tree (never a CA's key)."""
    orgs = crypto / "ordererOrganizations" / ORDERER_DOMAIN
    for name in orderers:
        node = orgs / "orderers" / f"{name}.{ORDERER_DOMAIN}"
        shutil.copytree(node / "msp", material.orderer_msp(name))
        shutil.copytree(node / "tls", material.orderer_tls(name))
    shutil.copytree(orgs / "users" / f"Admin@{ORDERER_DOMAIN}" / "msp", material.orderer_admin_msp())
    shutil.copytree(orgs / "users" / f"Admin@{ORDERER_DOMAIN}" / "tls", material.orderer_admin_tls())
    users = crypto / "peerOrganizations" / CLIENT_DOMAIN / "users"
    for who, user in (("admin", f"Admin@{CLIENT_DOMAIN}"), ("user", f"User1@{CLIENT_DOMAIN}")):
        shutil.copytree(users / user / "msp", material.client_msp(who))
        shutil.copytree(users / user / "tls", material.client_tls(who))
    material.tls_ca("orderer").parent.mkdir()
    for org, domain, kind in (("orderer", ORDERER_DOMAIN, "ordererOrganizations"),
                              ("client", CLIENT_DOMAIN, "peerOrganizations")):
        shutil.copyfile(crypto / kind / domain / "tlsca" / f"tlsca.{domain}-cert.pem", material.tls_ca(org))
    if brokers:
        kafka = crypto / "ordererOrganizations" / KAFKA_DOMAIN
        shutil.copyfile(kafka / "tlsca" / f"tlsca.{KAFKA_DOMAIN}-cert.pem", material.tls_ca("kafka"))
    for name in brokers:
        tls = kafka / "orderers" / f"{name}.{KAFKA_DOMAIN}" / "tls"
        keystore = material.broker_keystore(name)
        keystore.parent.mkdir(parents=True)
        keystore.write_bytes(_pkcs12(name, (tls / "server.key").read_bytes(), (tls / "server.crt").read_bytes(),
                                     (tls / "ca.crt").read_bytes()))


def _pkcs12(name: str, key_pem: bytes, cert_pem: bytes, ca_pem: bytes) -> bytes:
    """A PKCS#12 keystore of one key pair and its CA, for a Kafka listener. Why not Kafka's PEM
    keystore: from a file it needs an encrypted PKCS#8 key, which cryptogen does not write.
    The legacy 3DES/SHA-1 encryption is the one every JDK reads; the store guards nothing
    the material volume does not already hold in the clear."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    encryption = (serialization.PrivateFormat.PKCS12.encryption_builder()
                  .kdf_rounds(50_000).key_cert_algorithm(pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC)
                  .hmac_hash(hashes.SHA1()).build(KEYSTORE_PASSWORD.encode()))
    return pkcs12.serialize_key_and_certificates(
        name.encode(), serialization.load_pem_private_key(key_pem, password=None),
        x509.load_pem_x509_certificate(cert_pem), [x509.load_pem_x509_certificate(ca_pem)], encryption)


def generate_crypto(orderers: list[str], tools: Path, root: Path,
                    sans: Mapping[str, list[str]] | None = None,
                    broker_sans: Mapping[str, list[str]] | None = None) -> Material:
    """Only the MSP and TLS material under `root` (which must not exist yet), with cryptogen."""
    work = root / ".work"
    crypto = _cryptogen(orderers, sans, tools, work, broker_sans)
    material = Material(root)
    _keep_crypto(crypto, orderers, material, list(broker_sans or {}))
    shutil.rmtree(work)
    return material


def generate(variant: Variant, orderers: list[str], kafka_brokers: list[str], tools: Path, root: Path,
             sans: Mapping[str, list[str]] | None = None, orderer_type: str = "kafka",
             raft_endpoints: Mapping[str, str] | None = None,
             broker_sans: Mapping[str, list[str]] | None = None) -> Material:
    """Make the whole network's material under `root` (which must not exist yet) with the
    binaries in `tools` (bin/cryptogen, bin/configtxgen)."""
    work = root / ".work"
    crypto = _cryptogen(orderers, sans, tools, work, broker_sans)
    (work / "configtx.yaml").write_text(json.dumps(configtx(variant, orderers, kafka_brokers, crypto, orderer_type,
                                                                 raft_endpoints), indent=1))
    configtxgen = tools / "bin" / "configtxgen"
    material = Material(root)
    _run(configtxgen, ["-profile", GENESIS_PROFILE, "-channelID", SYSTEM_CHANNEL,
                       "-outputBlock", str(material.genesis_block)], work)
    (root / "channels").mkdir()
    for channel in variant.orderer.channels:
        _run(configtxgen, ["-profile", CHANNEL_PROFILE, "-channelID", channel,
                           "-outputCreateChannelTx", str(material.channel_tx(channel))], work)
    _keep_crypto(crypto, orderers, material, list(broker_sans or {}))
    shutil.rmtree(work)
    return material
