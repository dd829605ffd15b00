"""Recorded games: numbered as their replays are; the GIF is built from a capped stride of the
first game's frames, whatever its length, and ends on its final frame (the final score)."""

import imageio.v3 as iio
import numpy as np

from atari_a3c.evaluation.video import first_video_to_gif, number_videos


def test_a_long_game_becomes_a_gif_of_at_most_max_frames_ending_on_the_last(tmp_path):
    frames = np.zeros((1000, 64, 64, 3), np.uint8)
    frames[:, :, :, 0] = np.arange(1000).reshape(-1, 1, 1) % 200  # every frame differs
    frames[-1] = 255  # the final score
    iio.imwrite(tmp_path / "game-1.mp4", frames, fps=15)
    first_video_to_gif(tmp_path, tmp_path / "game.gif", max_frames=100)
    gif = iio.imread(tmp_path / "game.gif")
    assert 90 <= len(gif) <= 100
    assert gif[-1].mean() > 240


def test_videos_are_numbered_from_1_as_the_replays_are(tmp_path):
    for episode in (0, 1, 10):
        (tmp_path / f"game-episode-{episode}.mp4").write_bytes(b"")
    number_videos(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game-1.mp4", "game-11.mp4", "game-2.mp4"]
