"""The engine beside htsim (`python -m bench.htsim`, part of `make bench`): runs the shared speed
harness (scenarios a, b and c; ours, htsim, htsim with one pipe per direction; 3 interleaved
rounds) and prints its summary, when an htsim build is present. The harness and how to build it:
`../shared/bench/htsim/README.md`; point HTSIM_DIR at the folder holding `htsim_dumbbell`,
`run_bench.py` and `summarize.py` (docs/performance.md, "Against htsim")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def main() -> int:
    work = Path(os.environ.get("HTSIM_DIR", ".bench/htsim"))
    needed = ["htsim_dumbbell", "run_bench.py", "summarize.py"]
    missing = [f for f in needed if not (work / f).exists()]
    if missing:
        print(f"htsim: {', '.join(missing)} not in {work} (HTSIM_DIR); skipped (../shared/bench/htsim/README.md)")
        return 0
    (work / "results.jsonl").unlink(missing_ok=True)
    env = dict(os.environ, SPEED_DIR=str(work), PROJECT_PY=sys.executable, ROUNDS=os.environ.get("ROUNDS", "3"))
    subprocess.run([sys.executable, str(work / "run_bench.py"), "a", "b", "c"], cwd=work, env=env, check=True)
    return subprocess.run([sys.executable, str(work / "summarize.py")], cwd=work, check=True).returncode


if __name__ == "__main__":
    raise SystemExit(main())
