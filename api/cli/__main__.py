"""``python -m folio.api.cli``: the ``folio`` command from a checkout or an environment without the script."""

from folio.api.cli import main

raise SystemExit(main())
