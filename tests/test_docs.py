"""The README and docs/ are for users: short, no work-process words, every link inside the repo resolves."""

from __future__ import annotations

import re
import sys
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


# Words about how the docs were made, or about the computer they were written on, instead of facts
# about the software. "target" alone is an ML word (a target network, an imitation target).
PROCESS_TALK = [r"\bearlier target", r"\btargets?:", r"\btarget \(", r"\|\s*target\s*\|", r"that evening",
                r"\bthis machine\b", r"\bthe (?:project's|development|quiet|loaded|shared|2-core) machine\b",
                r"\b(?:quiet|busy|heavily shared) machine", r"\bother jobs\b", r"\bjob of ours\b",
                r"\bof ours running\b", r"\bthe run before this release\b", r"\bseeds/"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_user_docs_state_facts_not_process(page):
    text = page.read_text(encoding="utf-8")
    for pattern in PROCESS_TALK:
        found = re.search(pattern, text, re.IGNORECASE)
        assert not found, f"{page.name}: {found.group(0)!r} (line {text.count(chr(10), 0, found.start()) + 1})"


def test_changelog_names_the_package_version():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    version = re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE).group(1)
    first = re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.MULTILINE).group(1)
    assert first == version, f"CHANGELOG's newest entry is {first}, pyproject says {version}"


def test_license_and_rules_ship_with_the_code():
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert "## 4. Not Your Ma's Jong" in (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")


# --- Every ```python block of README.md and docs/*.md runs --------------------------------------
#
# The blocks of one page run in order in one fresh interpreter and share one namespace (a page may
# define an agent in one block and benchmark it in the next), in a scratch directory, so what a
# snippet writes is thrown away. A block whose first line is a comment naming a file (`# bots.py`)
# is also written to that file, so that later blocks and commands can import it. An HTML comment
# on the line before a block changes how it runs:
#
#   <!-- snippet: skip REASON -->         not run (say why: needs a cluster, runs for minutes, ...)
#   <!-- snippet: needs MODULE -->        run only when MODULE imports (an optional extra)
#   <!-- snippet: quick OLD -> NEW -->    run with OLD replaced by NEW (cuts a budget)
#
# Several markers share one comment, separated by "; " (`needs sb3_contrib; quick 20_000 -> 64`).
#   <!-- snippet: before COMMAND -->      run a shell command in the scratch directory first (one shown above it)

FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"<!--\s*snippet:\s*(.*?)\s*-->")
FILE_LINE = re.compile(r"#\s*([\w.-]+\.py)\s*$")
SNIPPET_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def python_blocks(page: Path) -> list[dict]:
    """Every ```python block of a page: its source, first line number and markers."""
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start(1)) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        markers = [m.strip() for m in re.split(r";\s*(?=(?:skip|needs|quick|before)\b)", marker.group(1))] if marker else []
        blocks.append({"source": match.group(1), "line": line, "markers": markers})
    return blocks


def runnable(page: Path) -> tuple[list[dict], list[str]]:
    """The blocks to run (markers applied) and why others were left out."""
    import importlib.util

    run, left_out = [], []
    for block in python_blocks(page):
        source, skip, before = block["source"], None, []
        for marker in block["markers"]:
            kind, _, arg = marker.partition(" ")
            if kind == "skip":
                assert arg, f"{page.name}:{block['line']}: a skipped snippet says why"
                skip = arg
            elif kind == "needs":
                if importlib.util.find_spec(arg) is None:
                    skip = f"needs {arg}"
            elif kind == "quick":
                old, sep, new = arg.partition(" -> ")
                assert sep and old in source, f"{page.name}:{block['line']}: quick {arg!r} does not apply"
                source = source.replace(old, new)
            elif kind == "before":
                before.append(arg)
            else:
                raise AssertionError(f"{page.name}:{block['line']}: unknown snippet marker {marker!r}")
        if skip:
            left_out.append(f"line {block['line']}: {skip}")
        else:
            first = source.split("\n", 1)[0]
            file = FILE_LINE.fullmatch(first)
            run.append({"source": source, "line": block["line"], "file": file.group(1) if file else None,
                        "before": before})
    return run, left_out


RUNNER = r"""
import json, subprocess, sys, traceback
page, blocks = sys.argv[1], json.loads(sys.stdin.read())
namespace = {"__name__": "__main__"}
sys.path.insert(0, ".")  # files written by a block import as modules, as from a script beside them
for block in blocks:
    for command in block["before"]:
        if subprocess.run(command, shell=True).returncode:
            sys.exit(f"{page}:{block['line']}: the command before the snippet failed: {command}")
    if block["file"]:
        with open(block["file"], "w", encoding="utf-8") as f:
            f.write(block["source"])
    # Blank lines first, so that a traceback's line numbers are the page's own.
    code = compile("\n" * (block["line"] - 1) + block["source"], page, "exec")
    try:
        exec(code, namespace)
    except BaseException:
        traceback.print_exc()
        print(f"snippet at {page}:{block['line']} failed", file=sys.stderr)
        sys.exit(1)
"""


@pytest.mark.parametrize("page", [p for p in SNIPPET_PAGES if python_blocks(p)], ids=lambda p: p.name)
def test_every_python_snippet_runs(page, tmp_path):
    import json
    import os
    import subprocess
    import sys

    blocks, left_out = runnable(page)
    if not blocks:
        pytest.skip("; ".join(left_out))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.setdefault("MPLBACKEND", "Agg")
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(page.relative_to(ROOT))], input=json.dumps(blocks),
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]


def test_snippet_markers_are_understood():
    # A marker that names a missing module skips; an unknown marker or a quick that does not apply fails loudly.
    page = Path(__file__)
    fake = [{"source": "x = 20_000\n", "line": 1, "markers": ["quick 20_000 -> 5"]},
            {"source": "import nope\n", "line": 3, "markers": ["needs surely_not_a_module_cardzoo"]},
            {"source": "# bots.py\nclass A: pass\n", "line": 5, "markers": []}]
    original = python_blocks
    try:
        globals()["python_blocks"] = lambda _page: fake
        run, left_out = runnable(page)
        assert [b["source"] for b in run] == ["x = 5\n", "# bots.py\nclass A: pass\n"]
        assert run[1]["file"] == "bots.py" and left_out == ["line 3: needs surely_not_a_module_cardzoo"]
        globals()["python_blocks"] = lambda _page: [{"source": "y = 1\n", "line": 1, "markers": ["quick 2 -> 3"]}]
        with pytest.raises(AssertionError, match="does not apply"):
            runnable(page)
        globals()["python_blocks"] = lambda _page: [{"source": "y = 1\n", "line": 1, "markers": ["frobnicate"]}]
        with pytest.raises(AssertionError, match="unknown snippet marker"):
            runnable(page)
    finally:
        globals()["python_blocks"] = original


# --- The tutorials run --------------------------------------------------------------------------
#
# Every notebook in docs/tutorials/ runs top to bottom in a fresh kernel, with CARDZOO_QUICK=1
# cutting its budgets (the same as `CARDZOO_QUICK=1 pytest --nbmake docs/tutorials`).

TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.ipynb"))


def test_there_are_seven_tutorials_and_each_opens_with_the_install_cell():
    import json

    assert len(TUTORIALS) == 7, [t.name for t in TUTORIALS]
    for path in TUTORIALS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = "".join(cells[0]["source"])
        assert cells[0]["cell_type"] == "code" and 'find_spec("envs") is None' in first, path.name
        assert "download.pytorch.org/whl/cpu" in first and "CARDZOO_QUICK" in first, path.name
        assert all(not c.get("outputs") for c in cells if c["cell_type"] == "code"), f"{path.name}: saved with outputs"


def test_tutorials_install_and_link_from_the_project_urls():
    # On Colab a notebook stands alone: its install cell is a form field whose default is
    # pyproject's Repository, and its links go to the site (Documentation), never ../page.md.
    import json
    import tomllib

    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    field = f'CARDZOO_SOURCE = "git+{urls["Repository"]}"  # @param {{type:"string"}}'
    for path in TUTORIALS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        assert field in "".join(cells[0]["source"]).splitlines(), path.name
        text = "".join("".join(c["source"]) for c in cells)
        links = re.findall(r"\]\(([^)\s]+)\)", text)
        assert not [t for t in links if t.startswith("../")], path.name
        if ".invalid/" in urls["Documentation"] and urls["Documentation"] in text:  # said plainly, up front
            assert "placeholder" in "".join(cells[1]["source"]), path.name
        for target in links:
            if target.startswith("http") and "cardzoo" in target:
                assert target.startswith(urls["Documentation"]), (path.name, target)
                page = target[len(urls["Documentation"]):].split("#")[0]
                assert (ROOT / "docs" / page.replace(".html", ".md")).is_file(), (path.name, target)


def _install_cell(tmp_path, monkeypatch, source=None, files=()):
    """Run the tutorials' install cell as on a machine without cardzoo (with torch), in `tmp_path`
    holding `files`, with CARDZOO_SOURCE set to `source`: the pip commands it runs and what it prints."""
    import contextlib
    import importlib.util
    import io
    import json
    import subprocess

    cell = "".join(json.loads(TUTORIALS[0].read_text(encoding="utf-8"))["cells"][0]["source"])
    monkeypatch.chdir(tmp_path)
    for name in files:
        (tmp_path / name).write_bytes(b"")
    if source is None:
        monkeypatch.delenv("CARDZOO_SOURCE", raising=False)
    else:
        monkeypatch.setenv("CARDZOO_SOURCE", source)
    real_find_spec, calls, out = importlib.util.find_spec, [], io.StringIO()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "envs" else real_find_spec(name, *a))
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append(cmd[5:]))  # after python -m pip install -q
    with contextlib.redirect_stdout(out):
        exec(compile(cell, "install cell", "exec"), {})
    return calls, out.getvalue()


def test_the_install_cell_takes_an_uploaded_wheel_a_wheel_url_or_a_pip_url(tmp_path, monkeypatch):
    wheel = "cardzoo-0.6.0-py3-none-any.whl"
    calls, out = _install_cell(tmp_path, monkeypatch, files=[wheel, "other-1.0-py3-none-any.whl"])
    assert calls == [[wheel]] and out == f"installed cardzoo from {wheel}\n"  # found without setting anything
    url = f"https://example.org/files/{wheel}"
    assert _install_cell(tmp_path, monkeypatch, source=url)[0] == [[url]]
    drive = f"/content/drive/MyDrive/{wheel}"
    assert _install_cell(tmp_path, monkeypatch, source=drive)[0] == [[drive]]
    git = "git+https://example.org/cardzoo.git"
    assert _install_cell(tmp_path, monkeypatch, source=git)[0] == [[f"cardzoo @ {git}"]]


def test_the_install_cell_says_what_to_do_when_it_has_only_the_placeholder(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match="upload its wheel .cardzoo-\\*.whl. to this folder, or set CARDZOO_SOURCE"):
        _install_cell(tmp_path / "empty", monkeypatch)


def test_the_wheel_a_teacher_builds_holds_what_the_tutorials_use(tmp_path):
    # docs/tutorials/index.md: a course on Colab without a public repository runs from this wheel.
    import shutil
    import subprocess
    import zipfile

    source = tmp_path / "source"  # a copy: building writes build/ and *.egg-info beside the sources
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for package in ("envs", "agents", "train", "experiments"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           str(source), "-w", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    names = zipfile.ZipFile(next(tmp_path.glob("cardzoo-*.whl"))).namelist()
    for needed in ("envs/neu_v0.py", "agents/checkpoints/neu_4p.pt", "experiments/solve.py", "train/ppo.py",
                   "experiments/web/static/index.html"):
        assert needed in names, needed


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_runs(path, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    if "sb3" in path.stem:
        pytest.importorskip("sb3_contrib")
    monkeypatch.setenv("CARDZOO_QUICK", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(path, as_version=4)
    # Run in a scratch folder, so that whatever a tutorial writes is thrown away.
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()


# --- The documentation site builds strictly ------------------------------------------------------

def test_the_site_builds_strictly(tmp_path):
    # --strict turns every warning into a failure: a dead link, a missing anchor, a page left out
    # of the navigation, a docstring mkdocstrings cannot render.
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("material")
    pytest.importorskip("mkdocs_jupyter")
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "docs" / "site" / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    site = tmp_path / "site"
    assert "running total" in (site / "api" / "neu.html").read_text(encoding="utf-8")  # the shim's docstring
    assert len(list((site / "tutorials").glob("*.ipynb"))) == 7
    # The tutorials are pages (not JSON downloads), linked as pages from their index.
    index = (site / "tutorials" / "index.html").read_text(encoding="utf-8")
    for notebook in (ROOT / "docs" / "tutorials").glob("*.ipynb"):
        page = (site / "tutorials" / f"{notebook.stem}.html").read_text(encoding="utf-8")
        assert "envs" in page and f'href="{notebook.stem}.html"' in index
    # Self-contained: no page fetches web fonts; the fonts are the system's, with CJK fallbacks.
    pages = list(site.rglob("*.html"))
    assert not [p.name for p in pages if "fonts.googleapis" in p.read_text(encoding="utf-8")]
    css = (site / "assets" / "cardzoo.css").read_text(encoding="utf-8")
    assert "--md-text-font" in css and "Noto Sans CJK JP" in css and "Hiragino Sans" in css
    # Each env page links its rules section.
    for number, game in enumerate(("not_for_me", "deadfall", "neu", "not_your_mas_jong"), 1):
        page = (site / "api" / f"{game}.html").read_text(encoding="utf-8")
        assert re.search(rf'<a href="\.\./RULES\.html#{number}-[^"]*">docs/RULES\.md §{number}</a>', page), game


# --- Maps that stay true ----------------------------------------------------------------------
GAMES = ("not_for_me", "deadfall", "neu", "not_your_mas_jong")


def _layout_lines() -> dict[str, str]:
    """docs/index.md's layout block: each folder's text (its line and the lines under it)."""
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    out, folder = {}, None
    for line in block.splitlines():
        head = line.split()[0] if line and not line[0].isspace() else None
        if head:
            folder = head.rstrip("/")
            out[folder] = line[len(head):]
        elif folder:
            out[folder] += " " + line
    return out


def test_the_layout_names_every_module_of_the_product():
    lines = _layout_lines()
    missing = []
    for path in sorted(p for floor in ("envs", "agents", "train", "experiments") for p in (ROOT / floor).rglob("*.py")):
        folder, name = path.parent.relative_to(ROOT).as_posix(), path.stem
        if name == "__init__" or "__pycache__" in path.parts:
            continue
        words = set(re.findall(r"[\w<>]+", lines.get(folder, "")))
        generic = name.replace(next((g for g in GAMES if name.startswith(g)), "\0"), "<game>")
        if name not in words and generic not in words:
            missing.append(f"{folder}/{name}.py")
    assert not missing, "docs/index.md's layout does not name: " + ", ".join(missing)


def test_the_training_page_has_a_row_for_every_train_module():
    text = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    table = text.split("| file | what it holds |", 1)[1].split("\n\n", 1)[0]
    missing = [p.name for p in sorted((ROOT / "train").glob("*.py")) if p.name != "__init__.py" and f"train/{p.name}" not in table]
    assert not missing, "docs/training.md's module table lacks: " + ", ".join(missing)
