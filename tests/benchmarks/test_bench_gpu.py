"""The GPU bench's records: every field the results need, measured on whatever machine runs it
(here the CPU: no GPU name, no GPU busy percent)."""

import json
import subprocess
import sys

import pytest
from helpers.runs import ROOT

sys.path.insert(0, str(ROOT / "benchmarks" / "speed"))
from gpu import evaluation_reached  # noqa: E402


def test_the_pong_run_stops_at_the_first_evaluation_of_18(tmp_path):
    evaluations = tmp_path / "checkpoints" / "evaluations.jsonl"
    assert not evaluation_reached(tmp_path)
    evaluations.parent.mkdir()
    evaluations.write_text('{"frames": 500000, "mean": -20.1, "std": 0.3}\n')
    assert not evaluation_reached(tmp_path)
    evaluations.write_text(evaluations.read_text() + '{"frames": 1000000, "mean": 18.0}\n')
    assert evaluation_reached(tmp_path)


@pytest.mark.slow
def test_a_layout_record_names_the_machine_and_its_rates(tmp_path):
    layout = "workers=1 envs_per_worker=2 learner_threads=1"
    cmd = [sys.executable, "benchmarks/speed/gpu.py", "--frames", "8000", "--pong-frames", "0"]
    cmd += ["--layouts", layout, "--out", str(tmp_path), "trainer.accelerator=cpu"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    record = json.loads((tmp_path / "layout0.json").read_text())
    assert record["command"].startswith("python benchmarks/speed/gpu.py --frames 8000")
    assert len(record["commit"]) == 40 and record["cores"] >= 1 and record["cpu"]
    assert record["layout"] == layout and record["frames_per_second"] > 0
    assert 0 <= record["cpu_idle_percent"] <= 100
    assert record["gpu"] is None and record["gpu_busy_percent"] is None  # no GPU here
