"""The GIF of a recorded game is built from a capped stride of its frames, whatever its length."""

import imageio.v3 as iio
import numpy as np

from atari_a3c.video import first_video_to_gif


def test_a_long_game_becomes_a_gif_of_at_most_max_frames(tmp_path):
    frames = np.zeros((1000, 64, 64, 3), np.uint8)
    frames[:, :, :, 0] = np.arange(1000).reshape(-1, 1, 1) % 256  # every frame differs
    iio.imwrite(tmp_path / "game-0.mp4", frames, fps=15)
    first_video_to_gif(tmp_path, tmp_path / "game.gif", max_frames=100)
    assert len(iio.imread(tmp_path / "game.gif")) == 100
