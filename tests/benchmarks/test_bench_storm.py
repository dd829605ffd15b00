"""The kill storm's reading of a run: its frames from the csv metrics, the one line it ended
with, and a summary that tells the actor budget's stop from any other exit."""

import sys

from helpers.runs import ROOT

sys.path.insert(0, str(ROOT / "benchmarks" / "faults"))
from storm import frames_reached, reason, summary  # noqa: E402


def test_frames_are_the_most_the_csv_metrics_show_even_mid_write(tmp_path):
    assert frames_reached(tmp_path) == 0
    metrics = tmp_path / "csv" / "version_0" / "metrics.csv"
    metrics.parent.mkdir(parents=True)
    metrics.write_text("charts/frames,losses/total,step\n3200.0,0.1,9\n,0.2,19\n6400.0,0.1,29\n64")
    assert frames_reached(tmp_path) == 6400


def test_the_reason_is_the_error_line_else_the_last_line_before_hydras_hint(tmp_path):
    stderr = tmp_path / "train.stderr"
    stderr.write_text("warning: x\nerror: actor-1 failed 101 times in 300 s; last: killed\nend\n")
    assert reason(stderr) == "error: actor-1 failed 101 times in 300 s; last: killed"
    stderr.write_text(
        "Traceback (most recent call last):\nEOFError: unexpected EOF\n"
        "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n"
    )
    assert reason(stderr) == "EOFError: unexpected EOF"


def test_the_summary_counts_the_budgets_stop_apart_from_other_exits():
    kept = {"ok": True, "still_training": True, "hang": False, "exit": None,
            "sigterm_exit_s": 4.0, "last_ckpt_frames": 9600, "frames_lost": 0,
            "kills": [{"kind": "fork server"}, {"kind": "forked child"}]}  # fmt: skip
    budget = {"reason": "error: actor-0 failed 101 times in 300 s; last: x", "budget": True}
    crash = {"reason": "EOFError: unexpected EOF", "budget": False}
    stopped = [kept | {"ok": False, "still_training": False, "exit": e} for e in (budget, crash)]
    result = summary([kept, *stopped])
    assert result["storms"] == 3 and result["ok"] == 1 and result["kills"] == 6
    assert result["kills_by_kind"] == {"fork server": 3, "forked child": 3}
    assert result["exits"] == 2 and result["exits_not_budget"] == 1 and result["hangs"] == 0
    assert result["exit_reasons"] == ["EOFError: unexpected EOF", budget["reason"]]
