"""The test suite's own switches: variables that change what a test run does, not what folio does.

They are not folio settings (``folio.settings`` does not know them). ``tests/conftest.py`` imports this
module first; it reads them once and removes them from the environment, so that folio, and every process a
test starts, never sees them (nor warns about an unknown ``FOLIO_`` variable). ``docs/configuration.md``
lists them from ``SWITCHES`` (``scripts/gen_config_docs.py``).
"""

from __future__ import annotations

import os

# name: (default, what it does)
SWITCHES = {
    "FOLIO_GEN_TEST_DATA": ("unset", "`1` regenerates golden files (the OpenAPI snapshot) instead of comparing"),
    "FOLIO_HYPOTHESIS_EXAMPLES": ("60", "examples per Hypothesis property of the assembly"),
    "FOLIO_KILL_ITERATIONS": ("3", "kill points in the kill -9 loop (past the three fixed ones: random)"),
}
_VALUES = {name: os.environ.pop(name) for name in SWITCHES if name in os.environ}


def switch(name: str) -> str | None:
    """The value the run was started with, or None."""
    if name not in SWITCHES:
        raise KeyError(f"{name} is not a test switch (tests/switches.py)")
    return _VALUES.get(name)
