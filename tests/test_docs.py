"""The README and docs/ are for users: short, no work-process words, every link inside the repo resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
# Markdown links and images: [text](target) and <img src="target">.
LINK = re.compile(r"\]\(([^)\s]+)\)|<img[^>]*\bsrc=\"([^\"]+)\"")


def test_readme_is_short_and_has_the_test_command():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "<!-- test-command -->" in text


@pytest.mark.parametrize("page", [ROOT / "README.md", ROOT / "CHANGELOG.md"], ids=lambda p: p.name)
def test_no_work_process_words(page):
    text = page.read_text(encoding="utf-8")
    for pattern in (r"\bissue \d+", r"\bthis round\b", r"\bstop \d+", r"\.\./shared/"):
        assert not re.search(pattern, text, re.IGNORECASE), f"{page.name}: {pattern!r}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    text = page.read_text(encoding="utf-8")
    for match in LINK.finditer(text):
        target = match.group(1) or match.group(2)
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue  # external URL or an anchor on the same page
        path = (page.parent / target.split("#", 1)[0]).resolve()
        assert path.exists(), f"{page.relative_to(ROOT)} links to missing {target}"


def test_license_and_rules_ship_with_the_code():
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert "## 4. Not Your Ma's Jong" in (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
