"""The throughput bench refuses, before any work, peers it cannot run."""

import subprocess
import sys

from helpers.runs import ROOT


def test_peers_that_cannot_run_stop_the_bench_before_it_measures_anything(tmp_path):
    missing = str(tmp_path / "no-such-python")
    cmd = [sys.executable, "benchmarks/speed/throughput.py", "--peers", "--peer-python", missing]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "--peers" in out.stderr and "repeat" not in out.stdout
