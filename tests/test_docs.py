"""The documentation holds together: the README's first screen walks a newcomer to an answer
before it sends them to docs/, and every relative link of README, CONTRIBUTING and docs/ names a
file the repository has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_first_screen_answers_before_it_links_to_docs():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    first = next(i for i, ln in enumerate(lines) if "](docs/" in ln)
    assert first < 80, f"the first link to docs/ is on line {first + 1}"
    screen = "\n".join(lines[:first])
    for step in ("scan", "pins", "check -- --tests", "--baseline", "exit"):
        assert step in screen, f"the first screen does not say {step!r}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_names_a_file_that_exists(page):
    missing = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "#", "mailto:")):
            continue
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.exists():
            missing.append(target)
    assert not missing, f"{page.name} links to files the repository does not have: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_anchor_names_a_heading_of_its_page(page):
    def anchors(p: Path) -> set[str]:
        heads = re.findall(r"^#+ (.+)$", p.read_text(encoding="utf-8"), re.M)
        return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}

    bad = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://")) or "#" not in target:
            continue
        file, anchor = target.split("#", 1)
        other = (page.parent / file).resolve() if file else page
        if other.suffix == ".md" and anchor not in anchors(other):
            bad.append(target)
    assert not bad, f"{page.name}: anchors with no heading: {bad}"


def _stage_rows() -> dict[str, str]:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)/` \|[^|]*\|(.*)\|$", text, re.M)}


def test_contributing_names_every_module_in_its_stage_row():
    """CONTRIBUTING.md's stage table is where a newcomer looks a module up: every module of a stage
    folder is named in that stage's row, and the row names no module the folder does not have."""
    rows = _stage_rows()
    package = REPO / "jaxcompat"
    stages = sorted(p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    wrong = []
    for stage in stages:
        row = rows.get(stage)
        if row is None:
            wrong.append(f"{stage}/: no row")
            continue
        have = {p.stem if p.is_file() else p.name for p in (package / stage).iterdir()
                if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}
        named = set(re.findall(r"(?:^|[,;:(] |^ )`(\w+)`", row))
        wrong += [f"{stage}/{m}: not in its row" for m in sorted(have - named)]
    assert not wrong, "CONTRIBUTING.md's stage table: " + "; ".join(wrong)
