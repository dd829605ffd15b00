"""Any file that is not a checkpoint of this project is refused in one line by `train.py
ckpt_path=`/`init_from=` and `evaluate.py ckpt=`, before anything starts and whatever its bytes."""

import io
import pickle
import random
import zipfile

import pytest
import torch
from helpers.runs import ROOT

from atari_a3c.config.cli import check_command_line
from atari_a3c.config.job import check
from atari_a3c.errors import BadInput
from atari_a3c.evaluation.task import check_request


class Exploit:
    def __reduce__(self):
        return (print, ("pwned",))


def refused(key: str, path) -> str:
    """The one-line message each entry point gives for `path` under `key`."""
    config, task = {"ckpt": ("evaluate", lambda cfg, _: check_request(cfg))}.get(key, ("", check))
    conf = ROOT / "conf" / config if config else ROOT / "conf"
    with pytest.raises(BadInput) as error:
        check_command_line(conf, config or "train", task, [f"{key}={path}"])
    message = str(error.value)
    assert "\n" not in message
    return message


def torch_bytes(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


CASES = {
    "empty": (b"", "checkpoint is empty"),
    "truncated": (torch_bytes({"state_dict": torch.zeros(1000)})[:700], "truncated or not a torch"),
    "foreign": (torch_bytes({"state_dict": {}}), "not a checkpoint of this project"),
    "evil": (pickle.dumps(Exploit()), "refused by the safe loader"),
    "text": (b"hello\n", "truncated or not a torch file"),
}


@pytest.mark.parametrize("key", ["ckpt", "init_from", "ckpt_path"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_checkpoint_is_one_line(tmp_path, capsys, key, case):
    content, expected = CASES[case]
    path = tmp_path / "checkpoints" / "last.ckpt"
    path.parent.mkdir()
    path.write_bytes(content)
    assert expected in refused(key, path)
    assert "pwned" not in capsys.readouterr().out


@pytest.mark.parametrize("key", ["ckpt", "init_from"])
def test_missing_file_or_a_directory_is_one_line(tmp_path, key):
    assert "checkpoint not found" in refused(key, tmp_path / "nope.ckpt")
    assert f"checkpoint is a directory: {tmp_path} (no .ckpt in it)" in refused(key, tmp_path)


def test_random_bytes_and_other_archives_are_refused(tmp_path):
    rng = random.Random(0)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("data.txt", "not a tensor")
    blobs = [archive.getvalue(), torch_bytes([1, 2, 3]), torch_bytes(torch.ones(3))]
    blobs += [rng.randbytes(rng.randint(1, 4096)) for _ in range(20)]
    for i, blob in enumerate(blobs):
        path = tmp_path / f"{i}.ckpt"
        path.write_bytes(blob)
        for key in ("ckpt", "init_from"):
            refused(key, path)
