"""Every hostile input of issue 9 through the `hlsgen` CLI: a markdown table (case | exit | message).

Each case (tests/hostile_cases.py) builds its files in a fresh temporary folder, runs one `hlsgen`
command and is judged: exit code 2 (128 + the signal for the signals: SIGINT 130, SIGTERM 143; 0 for
the umask check), exactly one line of output naming the file/node/key, no traceback or warning,
nothing left on disk. The csim cases compile a tiny MLP and build it with g++ (one shared build
cache); they are skipped without g++.

Run: nice .venv/bin/python benchmarks/hostile_inputs.py [-k SUBSTRING] [--no-csim]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from hostile_cases import CASES, have_gxx, run_case  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", help="only cases whose name contains this")
    ap.add_argument("--no-csim", action="store_true", help="skip the cases that build C-sim binaries")
    args = ap.parse_args()
    cases = [c for c in CASES if (args.k is None or args.k in c.name)
             and not (c.needs_gxx and (args.no_csim or not have_gxx()))]
    rows, bad = [], 0
    with tempfile.TemporaryDirectory(prefix="hlsgen-hostile-") as tmp:
        os.environ["HLSGEN_CSIM_CACHE"] = str(Path(tmp) / "csim-cache")
        for case in cases:
            start = time.perf_counter()
            o = run_case(case, Path(tmp) / case.name)
            seconds = time.perf_counter() - start
            bad += bool(o.problems)
            verdict = "ok" if not o.problems else "**" + "; ".join(o.problems) + "**"
            message = o.message.replace("|", "\\|").replace(tmp, "$TMP")
            message = re.sub(r"(\w)\1{19,}", lambda m: f"{m[1]}×{len(m[0])}", message)  # 300 o's
            rows.append(f"| {case.text} | {o.exit} | `{message}` | {verdict} |")
            print(f"{case.name}: exit {o.exit} in {seconds:.1f} s {verdict}", file=sys.stderr, flush=True)
    print("| case | exit | message | verdict |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"\n{len(cases) - bad} of {len(cases)} cases handled well")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
