"""The README's and the docs' links lead somewhere: every relative link names a file of
the repository, and every ``#anchor`` a heading of the page it points into (the API
reference once sent readers to a "Planned" section that was gone)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+['\"][^)]*['\"])?\)")


def slug(heading):
    """A heading's anchor as GitHub makes it.

    >>> slug("## `nbtape.extend`: adding a function!"), slug("# What is in the box")
    ('nbtapeextend-adding-a-function', 'what-is-in-the-box')
    """
    text = heading.lstrip("#").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {slug(line) for line in text.splitlines() if line.startswith("#")}


def broken_links(page):
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    bad = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue                              # http(s), mailto: not checked offline
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no heading #{anchor} in {dest.name}")
    return bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_leads_somewhere(page):
    assert not broken_links(page), f"{page.name}: " + "; ".join(broken_links(page))


def test_a_link_to_a_missing_section_is_caught(tmp_path):
    page = tmp_path / "api.md"
    page.write_text("# API\n\n## Values\n\nSee [Values](#values), [Planned](#planned), "
                    "[gone](gone.md).\n", encoding="utf-8")
    assert broken_links(page) == ["#planned: no heading #planned in api.md",
                                  "gone.md: no such file"]
