"""Prints the installed version of each direct dependency of atari-a3c, extras included."""

import re
from importlib.metadata import PackageNotFoundError, requires, version

names = sorted({re.match(r"[A-Za-z0-9._-]+", req).group() for req in requires("atari-a3c")})
for name in names:
    if name == "atari-a3c":
        continue
    try:
        print(f"  {name}=={version(name)}")
    except PackageNotFoundError:
        print(f"  {name} (not installed)")
