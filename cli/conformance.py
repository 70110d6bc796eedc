"""`ordeal conformance`: prove the OSN model faithful to Fabric's real orderer.

Boots a variant that runs Fabric's orderer (batch settings narrowed so that every kind of
cut happens, see harness/conformance.py); first the reverse direction on the last channel
(the model's consenter writes its partition while the real orderers are down; restarted,
they must cut the model's blocks), then a faulted ordering load, each channel's Kafka
partition replayed through the model and compared block by block. Prints the counts;
exit 0 when every block is equal, 1 on the first difference (printed with both sides and the
offsets involved), 2 on a usage error.
"""
from __future__ import annotations

import argparse
import json


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("conformance", help="replay Fabric's Kafka log through the OSN model, block by block")
    p.add_argument("--variant", default="fabric-recommended", help="a variant running fabric-1.4.12")
    p.add_argument("--txs", type=int, default=2400, help="txs to broadcast (at least; default 2400)")
    p.add_argument("--seed", type=int, default=14)
    p.add_argument("--keep-batch-settings", action="store_true",
                   help="use the variant's own batch settings instead of the narrowed ones")
    p.add_argument("--config-updates", action="store_true",
                   help="channel config updates in pairs among the txs, so that Fabric re-validates and "
                        "re-submits (config blocks compared too)")
    p.add_argument("--no-reverse", action="store_true",
                   help="skip the other direction (the model writes a fresh channel's partition first, "
                        "real orderers started afterwards must cut the model's blocks)")
    p.add_argument("--json", action="store_true", help="print the counts as JSON too")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from harness import conformance
    from clusters.cluster import Cluster
    from ground.variant import VariantError, load_variant
    from ground.errors import UsageError

    try:
        variant = load_variant(args.variant)
    except VariantError as exc:
        raise UsageError(str(exc)) from None
    if variant.orderer.implementation != "fabric-1.4.12":
        raise UsageError(f"variant {variant.name} runs the {variant.orderer.implementation} orderer; "
                         "conformance needs Fabric's (fabric-1.4.12)")
    if args.txs < 1:
        raise UsageError("--txs must be at least 1")
    if not args.keep_batch_settings:
        variant = conformance.conformance_variant(variant)
    cluster = Cluster.up(variant)
    try:
        reverse = None if args.no_reverse else conformance.reverse(cluster, seed=args.seed + 1)
        result = conformance.run(cluster, txs=args.txs, seed=args.seed, config_updates=args.config_updates)
    finally:
        cluster.down()
    if reverse is not None:
        print(reverse.summary())
    print(result.summary())
    if args.json:
        print(json.dumps(result.counts()))
    return 0 if result.equal and (reverse is None or reverse.equal) else 1
