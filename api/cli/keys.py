"""``folio keys``: add, list and revoke API keys in the keys file (``api/keys.py``).

The file is ``--file``, else ``$FOLIO_KEYS_FILE``. A running server picks changes up on its next
request (it re-reads the file when it changes), so rotating a key is ``add`` then ``revoke``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from folio.api.cli.common import EXIT_FAILED, EXIT_USAGE, add_command, add_json_arg, say

# Function-level imports: each command imports what it runs, so that `folio --help` and the light commands start
# without loading torch, LanceDB or PyMuPDF.

def _keys_path(args: argparse.Namespace) -> Path | None:
    from folio.settings import Settings

    raw = args.file or Settings().security.keys_file
    if not raw:
        say("folio: no keys file: pass --file PATH or set FOLIO_KEYS_FILE")
        return None
    return Path(raw)


def cmd_keys_add(args: argparse.Namespace) -> int:
    from folio.api.keys import add_key

    path = _keys_path(args)
    if path is None:
        return EXIT_USAGE
    collections = [c.strip() for c in args.collections.split(",") if c.strip()]
    if not collections:
        say("folio: --collections needs at least one name (or *)")
        return EXIT_USAGE
    record, secret = add_key(path, collections, args.access)
    if args.json:
        print(json.dumps({**record.model_dump(mode="json"), "secret": secret}, indent=2))
    else:
        print(f"key {record.id}: {args.access} access to {', '.join(record.collections)}")
        print(f"secret (shown once, only its hash is stored in {path}):")
        print(secret)
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    from folio.api.keys import read_keys

    path = _keys_path(args)
    if path is None:
        return EXIT_USAGE
    keys = read_keys(path)
    if args.json:
        rows: list[dict[str, Any]] = [k.model_dump(mode="json", exclude={"sha256"}) for k in keys]
        print(json.dumps({"data": rows, "count": len(rows)}, indent=2))
        return 0
    if not keys:
        print(f"no keys in {path}")
        return 0
    print(f"{'id':10} {'access':6}  {'created':19}  collections")
    for k in keys:
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(k.created_at)) if k.created_at else "-"
        print(f"{k.id:10} {k.access:6}  {created:19}  {', '.join(k.collections)}")
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    from folio.api.keys import revoke_key

    path = _keys_path(args)
    if path is None:
        return EXIT_USAGE
    if not revoke_key(path, args.key_id):
        say(f"folio: no key {args.key_id} in {path}")
        return EXIT_FAILED
    print(f"revoked {args.key_id}")
    return 0


def register(sub: Any) -> None:
    """Add ``keys add|list|revoke`` to ``folio``'s subcommands."""
    keys = add_command(
        sub, "keys", "API keys scoped to collections (add, list, revoke)",
        "Manage the keys file a server reads (FOLIO_KEYS_FILE): each key reads, or reads and writes, some "
        "collections. A running server sees changes at once.",
        "folio keys add --collections finance,legal --access write --file keys.json",
        "folio keys list --file keys.json",
        "folio keys revoke 3f2a9c1b --file keys.json",
    )
    ksub = keys.add_subparsers(dest="keys_command", required=True)

    def file_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("--file", default=None, metavar="PATH", help="keys file (default: $FOLIO_KEYS_FILE)")

    p = ksub.add_parser("add", help="create a key; prints its secret once")
    p.add_argument(
        "--collections", required=True, metavar="A,B", help="comma-separated collections, or * for every one"
    )
    p.add_argument("--access", choices=("read", "write"), default="read", help="read (default) or write")
    add_json_arg(p, "the new key")
    file_arg(p)
    p.set_defaults(func=cmd_keys_add)

    p = ksub.add_parser("list", help="list keys (ids, access, collections; never secrets)")
    add_json_arg(p, "the keys")
    file_arg(p)
    p.set_defaults(func=cmd_keys_list)

    p = ksub.add_parser("revoke", help="remove a key (a running server stops accepting it at once)")
    p.add_argument("key_id", metavar="ID", help="the key's id (folio keys list shows them)")
    file_arg(p)
    p.set_defaults(func=cmd_keys_revoke)
