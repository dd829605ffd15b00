"""Every path that README.md and docs/ name exists: links, and repository paths in the text."""

import re

import pytest
from helpers.runs import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")  # a markdown link's target
# a path in the repository named in the text: under one of its top-level folders
NAMED = re.compile(r"(?<![\w./-])((?:benchmarks|src|conf|docs|tests|\.ci)/[\w./*<>-]*[\w/*>])")


def named_paths(doc) -> set[str]:
    """The repository paths `doc` names, relative to the root (placeholders left out)."""
    text = doc.read_text()
    paths = set()
    for target in LINK.findall(text):
        target = target.split("#")[0]
        if target and "://" not in target and not target.startswith("mailto:"):
            paths.add(str((doc.parent / target).resolve().relative_to(ROOT.resolve())))
    for path in NAMED.findall(text):
        if "<" not in path and "*" not in path:
            paths.add(path.rstrip("/."))
    return paths


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_path_a_page_names_exists(doc):
    missing = sorted(p for p in named_paths(doc) if not (ROOT / p).exists())
    assert not missing, f"{doc.relative_to(ROOT)} names paths that do not exist: {missing}"
