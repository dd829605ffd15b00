"""Run as a script: start one child the way actors and evaluations start (the fork server,
`become_child`), print its pid, and wait. The child is busy, reading nothing from its parent."""

import time

from atari_a3c.actors.child_process import become_child, context


def busy() -> None:
    become_child()
    time.sleep(120)


if __name__ == "__main__":
    child = context().Process(target=busy, daemon=True)
    child.start()
    print(child.pid, flush=True)
    time.sleep(120)
