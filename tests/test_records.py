"""What the repository ships names no machine: no absolute path in any file under
agents/checkpoints/ or docs/ (checkpoints, sidecars, run records, pages), and the commands the
tools record name paths relative to the folder they ran in."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from train.cli import shown

ROOT = Path(__file__).resolve().parents[1]
ABSOLUTE = re.compile(rb"(?<![\w.])/(?:root|work|home|tmp|Users|mnt|var/folders)/[\w.-]")
SHIPPED = sorted(p for folder in ("agents/checkpoints", "docs") for p in (ROOT / folder).rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".png", ".svg", ".ico"))


def test_no_shipped_file_holds_an_absolute_path():
    found = [f"{p.relative_to(ROOT)}: {m.group(0).decode(errors='replace')}..." for p in SHIPPED
             for m in [ABSOLUTE.search(p.read_bytes())] if m]
    assert SHIPPED and not found, "\n".join(found)


@pytest.mark.parametrize("word, want", [("runs/a", "runs/a"), ("--out=runs/a", "--out=runs/a"), ("--game", "--game")])
def test_recorded_words_inside_the_folder_are_relative(word, want, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert shown(word) == want
    assert shown(str(tmp_path / word)) == want if "=" not in word and not word.startswith("--") else True
    assert shown(f"--out={tmp_path / 'runs' / 'a'}") == "--out=runs/a"
    assert shown("/elsewhere/x.pt") == "/elsewhere/x.pt"  # outside the folder: as given


def test_docs_data_holds_small_text_records_only():
    """Run records in docs/data/ are small text files (CSV, JSON, Markdown, commands); checkpoints,
    arrays and figures stay out (their commands make them again)."""
    files = [p for p in (ROOT / "docs" / "data").rglob("*") if p.is_file()]
    binary = [str(p.relative_to(ROOT)) for p in files if p.suffix not in (".csv", ".json", ".md", ".txt", ".sh")]
    assert not binary, binary
    assert sum(p.stat().st_size for p in files) <= 2 * 2**20
