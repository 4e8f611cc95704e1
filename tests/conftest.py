"""Suite-wide set-up for parallel runs (`make test` runs `pytest -n JOBS --dist loadfile`; docs/testing.md).

* Scheduling (pytest-xdist, `--dist loadfile`, refined here by `pytest_xdist_make_scheduler`): the tests of
  one file run on one worker, so a module-scoped fixture (a compiled design, a Verilator build) is built
  once; only the tests listed in SPLIT (the C-sim fuzz shards) are scheduled one by one, on any worker.
  (xdist's `loadgroup` cannot be used: its groups are silently ignored under pytest 9, whose items no
  longer take xdist's rewritten `_nodeid`.)
* Order (`--no-loadscope-reorder` keeps it): the expensive work first (the C-sim fuzz shards, then
  tests/fuzz, tests/sim, tests/examples, tests/docs, tests/browser, then the many short tests/unit files),
  so that no long test starts last while the other worker idles. The order inside a file is kept.
* The examples' generated files: with workers, the controlling process runs every make_model.py once
  before the workers start (tests/example_models.py), so no worker rewrites a file another reads.
* Caches: every worker shares the build caches under $HLSGEN_CACHE / $XDG_CACHE_HOME/hlsgen; their
  entries appear by atomic rename or under a per-entry flock (hlsgen/support/cache.py), and each test writes its
  projects under its own tmp_path (per worker: pytest-of-USER/pytest-N/popen-gwK/).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from example_models import FRESH, regenerate_all

FIRST = ("tests/fuzz/test_fuzz.py::test_csim_slice", "tests/fuzz/", "tests/sim/", "tests/examples/", "tests/docs/",
         "tests/browser/")
SPLIT = ("tests/fuzz/test_fuzz.py::test_csim_slice[",)  # independent tests worth a worker each


def pytest_sessionstart(session: pytest.Session) -> None:
    """With workers (xdist's controller, before it starts them): regenerate the examples' files once."""
    config = session.config
    if getattr(config, "workerinput", None) is None and config.pluginmanager.has_plugin("dsession"):
        regenerate_all()
        os.environ[FRESH] = str(os.getpid())  # inherited by the workers


def _rank(nodeid: str) -> int:
    return next((i for i, prefix in enumerate(FIRST) if nodeid.startswith(prefix)), len(FIRST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: _rank(item.nodeid))  # stable: a file's tests keep their order


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile`, except that the SPLIT tests are units of their own."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if nodeid.startswith(SPLIT) else super()._split_scope(nodeid)

    return FileScheduling(config, log)
