#!/bin/sh
# The cluster passes osn.json in ORDEAL_CONFIG; written at every start like the other nodes.
set -e
mkdir -p /etc/ordeal /var/lib/ordeal
printf '%s\n' "$ORDEAL_CONFIG" > /etc/ordeal/osn.json
exec /opt/osn-venv/bin/python -m osn.server --config /etc/ordeal/osn.json
