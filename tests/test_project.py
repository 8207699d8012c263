"""The project's promises about itself: typing, docs, README and CI agree."""

import ast
import fnmatch
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Set, Tuple

from tests.helpers import ROOT, section_headers

PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


def test_mypy_strict() -> None:
    from mypy import api

    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--no-incremental"])
    assert status == 0, out + err


def test_ruff_format_and_lint_are_clean() -> None:
    """The layout is ruff's (line length 120, pyproject.toml) and pyflakes and pycodestyle find nothing."""
    for command in (["format", "--check", "."], ["check", "."]):
        process = subprocess.run(
            [sys.executable, "-m", "ruff", *command], capture_output=True, text=True, cwd=ROOT, timeout=120
        )
        assert process.returncode == 0, process.stdout + process.stderr


def fenced_blocks(text: str) -> List[List[str]]:
    blocks: List[List[str]] = []
    current: "Optional[List[str]]" = None
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    assert current is None, "a code fence is not closed"
    return blocks


def test_every_docs_page_runs_examples() -> None:
    assert len(PAGES) > 1, "docs/ has no pages"
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if page.name != "README.md":
            assert ">>> " in text, f"{page.name} runs no example"
        for block in fenced_blocks(text):
            # Doctest reads expected output up to a blank line: without one
            # the closing fence would be expected output.
            if any(line.startswith(">>> ") for line in block):
                assert block[-1] == "", f"{page.name}: no blank line before a fence closes after {block[-1]!r}"


def extra(name: str) -> List[str]:
    """The requirements of one of pyproject.toml's optional-dependencies, as written there."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(rf"^{name} = \[(.*?)\]", pyproject, flags=re.MULTILINE | re.DOTALL)
    assert found, f"pyproject.toml has no extra {name}"
    return re.findall(r'"([^"]+)"', found.group(1))


def test_the_readme_commands_ci_and_the_extras_agree() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [block[0] for block in fenced_blocks(readme) if len(block) == 1]
    front = "python3 -m pe_reference 4 4"
    tests = 'python3 -m venv .venv && .venv/bin/python -m pip install -e ".[test]" && .venv/bin/python -m pytest'
    peers = tests.replace('".[test]"', '".[test,peers]"')
    for command in (front, tests, peers):
        assert commands.count(command) == 1, command
    # The front door, the test command and the peers' one, before anything else the README runs.
    assert readme.index(front) < readme.index(tests) < readme.index(peers) < readme.index(">>> ")
    # python3 throughout: Debian and Ubuntu have no python command.
    assert not [command for command in commands if command.startswith("python ")]
    # CI runs what the README says: .ci/readme.py reads these three and runs the fresh path and the peers'.
    listed = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "readme.py"), "--list"], capture_output=True, text=True, timeout=60
    )
    assert listed.stdout == f"front\t{front}\ntests\t{tests}\npeers\t{peers}\n", listed.stderr
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ".ci/readme.py ci" in ci
    # No peer installed by name beside the extra: the extra is the one list (CI adds pytest-xdist alone).
    assert "pip install" not in ci
    runner = (ROOT / ".ci" / "readme.py").read_text(encoding="utf-8")
    assert re.findall(r'^CI_TOOLS = "(.*)"$', runner, flags=re.MULTILINE) == ["pytest-xdist==3.8.0"]
    # Every peer a test needs is pinned in the peers extra, and nothing else is there.
    needed = set()
    for path in (ROOT / "tests").glob("*.py"):
        needed |= set(re.findall(r'(?<![.\w])need\("([a-z_]+)"\)', path.read_text(encoding="utf-8")))
    pinned = dict(requirement.split("==") for requirement in extra("peers"))
    assert {name.replace("_", "-") for name in needed} == set(pinned)
    # The README's CPU build of torch is the pinned one.
    assert f"pip install torch=={pinned['torch']} --index-url" in readme
    assert {requirement.split(" ")[0] for requirement in extra("test")} >= {"pytest", "mypy", "mpmath"}


def test_tutorial_is_a_path_of_runnable_pages() -> None:
    pages = sorted((ROOT / "docs" / "tutorial").glob("*.md"))
    assert len(pages) >= 5
    examples = sum(line.startswith(">>> ") for page in pages for line in page.read_text(encoding="utf-8").splitlines())
    assert examples >= 60
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for page in pages:
        assert f"(tutorial/{page.name})" in index
    # Each page links to the next.
    for page, following in zip(pages, pages[1:]):
        assert f"({following.name})" in page.read_text(encoding="utf-8")


def test_conformance_digest_on_this_interpreter() -> None:
    import subprocess
    import sys

    digest = ROOT / "tests" / "data" / "conformance.digest"
    process = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "conformance.py"), str(digest)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert process.returncode == 0, process.stdout + process.stderr
    assert "digest matches the stored one" in process.stdout
    assert "library: ok" in process.stdout


def test_the_stubs_name_the_public_api() -> None:
    import pe_reference

    stub = (ROOT / "stubs" / "pe_reference-stubs" / "__init__.pyi").read_text(encoding="utf-8")
    for name in pe_reference.__all__:
        assert f"def {name}(" in stub or f"class {name}" in stub or f"\n{name}: " in stub, name


# The top level of the repository when git cannot say what is tracked (no git, or not a checkout).
LAYOUT = {".ci", ".gitignore", "README.md", "benchmarks", "docs", "pe_reference.py", "pyproject.toml", "stubs", "tests"}


def git(*args: str, stdin: str = "") -> "Optional[subprocess.CompletedProcess[str]]":
    """Run git in the repository root; None when git is missing or ROOT is not the top of a checkout."""
    command = ["git", "-c", f"safe.directory={ROOT}", "-C", str(ROOT), *args]
    try:
        top = subprocess.run([*command[:5], "rev-parse", "--show-toplevel"], capture_output=True, text=True)
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != ROOT:
            return None
        process = subprocess.run(command, input=stdin, capture_output=True, text=True)
    except OSError:
        return None
    return process if process.returncode in (0, 1) else None


def ignored_by_gitignore(name: str) -> bool:
    """Whether a top-level name matches a pattern of .gitignore (the patterns it uses: names and globs)."""
    for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith(("#", "!")):
            continue
        if pattern.endswith("/") and not (ROOT / name).is_dir():
            continue
        if fnmatch.fnmatchcase(name, pattern.strip("/")):
            return True
    return False


def stray_root_entries() -> Set[str]:
    """The root's entries that are neither tracked (top-level names of git ls-files) nor ignored."""
    entries = set(os.listdir(ROOT)) - {".git"}
    tracked = git("ls-files", "-z")
    if tracked is None:
        return {name for name in entries - LAYOUT if not ignored_by_gitignore(name)}
    candidates = sorted(entries - {path.split("/")[0] for path in tracked.stdout.split("\0") if path})
    # A trailing slash for folders: git matches a pattern such as dist/ only against a folder.
    queries = [name + "/" if (ROOT / name).is_dir() else name for name in candidates]
    ignored = git("check-ignore", "--stdin", "-z", stdin="\0".join(queries) + "\0") if queries else None
    assert ignored is not None or not queries, "git check-ignore failed"
    ignored_names = {path.rstrip("/") for path in ignored.stdout.split("\0") if path} if ignored else set()
    return set(candidates) - ignored_names


def test_the_root_holds_only_the_tracked_layout() -> None:
    # Files a run leaves behind (the argument fuzzer once wrote --plot's PNGs named 1, 4,
    # 18 and bert here) are neither tracked nor ignored.
    stray = stray_root_entries()
    assert not stray, f"the repository root holds files that are neither tracked nor ignored: {sorted(stray)}"
    # Nor is any picture at the root, tracked or not: the pictures live in docs/.
    pictures = sorted(
        entry.name for entry in ROOT.iterdir() if entry.is_file() and entry.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    )
    assert not pictures, f"the repository root holds PNG images (pictures belong in docs/): {pictures}"


def test_no_colon_in_a_string_inside_an_f_string() -> None:
    # MicroPython's f-string parser takes such a ':' for the start of a format spec, and the
    # whole module fails to compile there (it did, for _describe's split(":")).
    import ast

    source = (ROOT / "pe_reference.py").read_text(encoding="utf-8")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FormattedValue):
            for inner in ast.walk(node.value):
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and ":" in inner.value:
                    found.append(getattr(inner, "lineno", 0))
    assert not found, f"lines {found}"


# ---------------------------------------------------------------------------
# How pe_reference.py reads: its section map, the formula near the top, long functions that say why
# ---------------------------------------------------------------------------


SOURCE = (ROOT / "pe_reference.py").read_text(encoding="utf-8")
LINES = SOURCE.splitlines()
TREE = ast.parse(SOURCE)


def headers() -> List[Tuple[int, str]]:
    """(first line, title) of each section header, its first line the upper rule's."""
    return [(first - 1, title) for first, title in section_headers(LINES)]


def section_map() -> List[str]:
    """The names the map after the imports lists, in order: a name, then two spaces and what it holds."""
    start = LINES.index("# The module reads top-down; each section below starts with a header like this map's lines:")
    names = []
    for line in LINES[start + 2 :]:
        if not line.startswith("#"):
            break
        match = re.match(r"^#   (\S.*?)  +\S", line)
        if match:
            names.append(match.group(1))
    return names


def test_the_section_map_names_every_header_in_order() -> None:
    titles = [title for _, title in headers()]
    names = section_map()
    assert len(names) == len(titles), (names, titles)
    for name, title in zip(names, titles):
        assert name in title, f"the map's {name!r} is not the header {title!r} in its place"


def test_a_reader_of_the_first_200_lines_sees_the_formula_computed() -> None:
    first_header_line, first_title = headers()[0]
    assert first_title == "The formula" and first_header_line < 200
    function = next(node for node in TREE.body if isinstance(node, ast.FunctionDef) and node.name == "_paper_row")
    assert function.end_lineno is not None and function.end_lineno <= 200
    used = {
        node.attr
        for node in ast.walk(function)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math"
    }
    assert {"sin", "cos"} <= used


def code_lines(function: ast.FunctionDef) -> int:
    """The function's lines without its docstring, blank lines and comment lines."""
    assert function.end_lineno is not None
    skipped = set()
    if ast.get_docstring(function) is not None:
        first = function.body[0]
        assert first.end_lineno is not None
        skipped = set(range(first.lineno, first.end_lineno + 1))
    return sum(
        1
        for number in range(function.lineno, function.end_lineno + 1)
        if number not in skipped and LINES[number - 1].strip() and not LINES[number - 1].strip().startswith("#")
    )


def test_a_function_of_more_than_60_lines_of_code_says_why_it_is_long() -> None:
    long = [node for node in ast.walk(TREE) if isinstance(node, ast.FunctionDef) and code_lines(node) > 60]
    unexplained = [
        f"{node.name} ({code_lines(node)} lines, line {node.lineno})"
        for node in long
        if "Long because" not in (ast.get_docstring(node) or "")
    ]
    assert not unexplained, f"long functions without a reason in their docstrings: {unexplained}"
    # The module has such functions (compare, the parser...): the rule is checked, not vacuous.
    assert long
