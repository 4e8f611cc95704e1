"""Suite-wide set-up for parallel runs (`make test` runs `pytest -n JOBS --dist loadgroup`; docs/testing.md).

* Scheduling groups (pytest-xdist `--dist loadgroup`): a test that uses a module- or class-scoped fixture
  (a compiled design, a Verilator build) is grouped with its whole file, so that fixture is built by one
  worker only; every other test is scheduled on its own, which balances the workers.
* Order: the expensive work first (the C-sim fuzz shards, then tests/fuzz, tests/sim, tests/examples,
  tests/docs, tests/browser, then the many short tests/unit cases), so that no long test starts last
  while the other worker idles. The order inside a file is kept.
* The examples' generated files: with workers, the controlling process runs every make_model.py once
  before the workers start (tests/example_models.py), so no worker rewrites a file another reads.
* Caches: every worker shares the build caches under $HLSGEN_CACHE / $XDG_CACHE_HOME/hlsgen; their
  entries appear by atomic rename or under a per-entry flock (hlsgen/cache.py), and each test writes its
  projects under its own tmp_path (per worker: pytest-of-USER/pytest-N/popen-gwK/).
"""

from __future__ import annotations

import os

import pytest
from example_models import FRESH, regenerate_all

SHARED_SCOPES = ("module", "class", "package")
FIRST = ("tests/fuzz/test_fuzz.py::test_csim_slice", "tests/fuzz/", "tests/sim/", "tests/examples/", "tests/docs/",
         "tests/browser/")


def pytest_sessionstart(session: pytest.Session) -> None:
    """With workers (xdist's controller, before it starts them): regenerate the examples' files once."""
    config = session.config
    if getattr(config, "workerinput", None) is None and config.pluginmanager.has_plugin("dsession"):
        regenerate_all()
        os.environ[FRESH] = str(os.getpid())  # inherited by the workers


def _rank(nodeid: str) -> int:
    return next((i for i, prefix in enumerate(FIRST) if nodeid.startswith(prefix)), len(FIRST))


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if any(d[-1].scope in SHARED_SCOPES for d in defs if d) and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0].removeprefix("tests/")))
    items.sort(key=lambda item: _rank(item.nodeid))  # stable: a file's tests keep their order
