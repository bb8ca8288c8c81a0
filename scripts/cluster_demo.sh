#!/usr/bin/env bash
# The whole folio cluster on this machine, on loopback: moto's S3 server (127.0.0.1:9000), a Ray head and two
# worker nodes, two API replicas (127.0.0.1:8100 and :8101). Ingests the small sample PDFs through Ray into
# s3://folio/demo, asks both replicas the same question, then runs until Ctrl-C (--exit: stops after that).
# Options: --replicas N --workers N --s3-port P --api-port P --exit   (docs/scaling.md)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import ray, moto, boto3" 2>/dev/null; then
    FOLIO_EXTRAS="${FOLIO_EXTRAS:+$FOLIO_EXTRAS,}cluster" bash scripts/setup.sh
fi
exec .venv/bin/python -m folio.api.cluster.local "$@"
