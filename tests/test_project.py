"""The project's promises about itself: typing, docs, README and CI agree."""

import ast
import fnmatch
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from tests.helpers import ROOT, need, section_headers

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


# `python` run bare (not a virtual environment's .venv/bin/python): a command Debian, Ubuntu and macOS lack.
BARE_PYTHON = re.compile(r"(?<![\w/.\\-])python\s+(-m\b|\S+\.py\b)")


def test_no_page_docstring_or_message_says_python_where_python3_is_meant() -> None:
    said = {page.name: page.read_text(encoding="utf-8") for page in PAGES}
    said["pe_reference.py"] = SOURCE
    help_text = subprocess.run(
        [sys.executable, "-m", "pe_reference", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    error = subprocess.run(
        [sys.executable, "-m", "pe_reference", "4"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    said["--help"], said["an error"] = help_text.stdout, error.stderr
    found = [
        f"{name}: {' '.join(hit.group(0).split())}" for name, text in said.items() for hit in BARE_PYTHON.finditer(text)
    ]
    assert not found, f"say python3 (or the venv's .venv/bin/python): {found}"
    # The rule finds what it looks for, across a line's wrap; a venv's interpreter and python3 pass.
    assert BARE_PYTHON.search("run `python\n-m doctest`") and BARE_PYTHON.search("`python tests/errors_catalogue.py`")
    assert not BARE_PYTHON.search(".venv/bin/python -m pytest; python3 -m pe_reference; .venv\\Scripts\\python -m pip")
    assert "python3 -m pe_reference: error: " in error.stderr and "python3 -m pe_reference" in help_text.stdout


def extra(name: str) -> List[str]:
    """The requirements of one of pyproject.toml's optional-dependencies, as written there."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(rf"^{name} = \[(.*?)\]", pyproject, flags=re.MULTILINE | re.DOTALL)
    assert found, f"pyproject.toml has no extra {name}"
    return re.findall(r'"([^"]+)"', found.group(1))


def test_the_readme_commands_ci_and_the_extras_agree() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    development = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    commands = [block[0] for block in fenced_blocks(readme) if len(block) == 1]
    front = "python3 -m pe_reference 4 4"
    tests = 'python3 -m venv .venv && .venv/bin/python -m pip install -e ".[test]" && .venv/bin/python -m pytest'
    peers = tests.replace('".[test]"', '".[test,peers]"')
    for command in (front, tests):
        assert commands.count(command) == 1, command
    # The front door and the test command, before anything else the README runs; the peers' for contributors.
    assert readme.index(front) < readme.index(tests) < readme.index(">>> ")
    assert peers not in readme and [block[0] for block in fenced_blocks(development)].count(peers) == 1
    assert "](docs/development.md)" in readme and "](development.md)" in (ROOT / "docs" / "index.md").read_text()
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
    # Every peer a test needs (need, peer, or a peers mark) is pinned in the peers extra, and nothing else is there.
    needed = set()
    for path in (ROOT / "tests").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        needed |= set(re.findall(r'(?<![.\w])(?:need|peer)\("([a-z_]+)"\)', text))
        for marked in re.findall(r"\.peers\(([^)]*)\)", text):
            needed |= set(re.findall(r'"([a-z_]+)"', marked))
    pinned = dict(requirement.split("==") for requirement in extra("peers"))
    assert {name.replace("_", "-") for name in needed} == set(pinned)
    # The contributors' page's CPU build of torch is the pinned one.
    assert f"pip install torch=={pinned['torch']} --index-url" in development
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
    # docs/vendoring.md says how many values each digest covers.
    import re

    counts = [f"{int(n):,}" for n in re.findall(r"(\d+) values, digest", process.stdout)]
    vendoring = " ".join((ROOT / "docs" / "vendoring.md").read_text(encoding="utf-8").split())
    assert f"computes {counts[0]} exact values" in vendoring and f"the {counts[1]} values in the three" in vendoring


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


# One test file a subject: what it tests, not how its tests were found (a mutation run, a peer, a review).
SUBJECTS = {
    "api": "the public functions and the fast path (their default mode), and properties of every mode",
    "boards": "MicroPython boards: the heap each use needs (docs/vendoring.md's table), the digest",
    "cli": "the command line, its fuzzed arguments and its output when the reader stops",
    "conventions": "conventions and presets, each framework's own table checked with its preset",
    "derivation": "the worked derivations",
    "diagnosis": "what the diagnosis reads from a table, on the tables the peers build",
    "doctest_plain": "every file's examples as python3 -m doctest runs them",
    "errors": "the catalogue of errors and their messages",
    "exact": "the exact kernel: correctly rounded values, numbers and formats",
    "grids": "2-D and 3-D tables: exact against mpmath, and the frameworks' own",
    "io": "the readers (--check), the writers, streaming and fuzzed files",
    "mutation_script": "the mutation script, a tool: its own tests",
    "oracle": "compare(): verdicts, bounds and the peers' tables at models' lengths",
    "pictures": "the PNG pictures",
    "project": "the repository: layout, lint, types, the module's reading order",
    "rope": "rotary embeddings: exact values, caches, the reported bugs and the frameworks' caches",
    "rope_config": "a model's config.json in place of rope()'s keywords, against transformers' own caches",
    "seeds": "the seed documents' claims",
    "tutorial_claims": "the tutorial's numbers",
}


def test_the_tests_are_one_file_a_subject_and_none_imports_a_tool() -> None:
    assert {path.stem[len("test_") :] for path in (ROOT / "tests").glob("test_*.py")} == set(SUBJECTS)
    # The mutation script is a tool; only its own tests import it (by name, or by its path in a call).
    for path in (ROOT / "tests").glob("test_*.py"):
        if path.name == "test_mutation_script.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                assert not any("mutation" in alias.name for alias in node.names), path.name
            elif isinstance(node, ast.ImportFrom):
                assert "mutation" not in (node.module or "") + " ".join(a.name for a in node.names), path.name
            elif isinstance(node, ast.Call):
                assert not any(isinstance(a, ast.Constant) and a.value == "mutation.py" for a in node.args), path.name


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


def test_no_f_string_inside_an_f_string() -> None:
    # MicroPython 1.27 (CI's) compiles an f-string nested in another's braces but fails running it (NameError
    # on its names): the "sections are not read" sentence of the multi-axis diagnosis did.
    found = []
    for node in ast.walk(ast.parse((ROOT / "pe_reference.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.FormattedValue):
            found += [getattr(inner, "lineno", 0) for inner in ast.walk(node.value) if isinstance(inner, ast.JoinedStr)]
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
    start = next(i for i, line in enumerate(LINES) if line.startswith("# The module reads top-down."))
    while LINES[start] != "#":
        start += 1
    names = []
    for line in LINES[start + 1 :]:
        if not line.startswith("#") or line == "#":
            break  # the list ends at a line of "#" alone: the pipeline's table follows
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


def test_every_function_the_map_names_is_in_the_module() -> None:
    # The map's pipeline and budget name the functions and classes where each stage lives: a name merged
    # away or renamed must leave the map too.
    start = next(i for i, line in enumerate(LINES) if line.startswith("# The module reads top-down."))
    end = next(i for i in range(start, len(LINES)) if not LINES[i].startswith("#"))
    named = set(re.findall(r"(?<![\w.])((?:[A-Z]\w*\.)?_[A-Za-z]\w*(?:\.\w+)?)", "\n".join(LINES[start:end])))
    assert {"_Source", "_scored", "_explanation", "_told"} <= named, sorted(named)  # the pipeline's table is read
    import pe_reference

    module = vars(pe_reference)
    missing = [
        name
        for name in sorted(named)
        if not hasattr(module.get(name.split(".")[0]), name.partition(".")[2] or "__name__")
    ]
    assert not missing, f"the map names {missing}, which pe_reference.py does not define"


class Definition:
    """A top-level statement of pe_reference.py that binds names: its section, its place, what it uses.

    ``uses`` holds the module's names it reads when it runs (a function's body, with its own locals
    left out); ``at_import`` those Python reads when the statement itself runs: a constant's value
    (lambdas' bodies left out), a base class, a default value.
    """

    def __init__(self, node: ast.stmt, section: str, index: int) -> None:
        self.node, self.section, self.index = node, section, index
        self.names = bound_names(node)
        self.uses: Set[str] = set()
        self.at_import: Set[str] = set()


def bound_names(node: ast.stmt) -> List[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    targets: List[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    elif isinstance(node, ast.Try):
        return [x.id for x in ast.walk(node) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)]
    return [x.id for target in targets for x in ast.walk(target) if isinstance(x, ast.Name)]


def read_names(node: ast.AST) -> Set[str]:
    return {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}


def function_uses(function: ast.AST) -> Set[str]:
    """The names a function reads that its own parameters, assignments and inner definitions do not bind."""
    local = set()
    for x in ast.walk(function):
        if isinstance(x, ast.arg):
            local.add(x.arg)
        elif isinstance(x, ast.Name) and isinstance(x.ctx, (ast.Store, ast.Del)):
            local.add(x.id)
        elif isinstance(x, (ast.FunctionDef, ast.ClassDef)) and x is not function:
            local.add(x.name)
    return read_names(function) - local


def import_time_names(node: ast.stmt) -> Set[str]:
    found: Set[str] = set()
    functions = [node] if isinstance(node, ast.FunctionDef) else []
    if isinstance(node, ast.ClassDef):
        for expression in node.bases + node.decorator_list:
            found |= read_names(expression)
        functions = [x for x in node.body if isinstance(x, ast.FunctionDef)]
        for statement in node.body:
            if not isinstance(statement, ast.FunctionDef):
                found |= read_names(statement)
    elif not functions:
        lambdas = {id(x) for lam in ast.walk(node) if isinstance(lam, ast.Lambda) for x in ast.walk(lam.body)}
        found |= {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and id(x) not in lambdas}
    for function in functions:
        assert isinstance(function, ast.FunctionDef)
        expressions: List[Optional[ast.expr]] = [*function.args.defaults, *function.args.kw_defaults]
        for default in expressions + list(function.decorator_list):
            if default is not None:
                found |= read_names(default)
    return found


def definitions() -> List[Definition]:
    """Every statement after the map that binds a module name, in file order, with what it uses."""
    starts = headers()
    found = []
    for index, node in enumerate(TREE.body):
        section = [title for first, title in starts if first < node.lineno]
        if section and bound_names(node):
            found.append(Definition(node, section[-1], index))
    names = {name for definition in found for name in definition.names}
    for definition in found:
        runs = function_uses(definition.node) if isinstance(definition.node, ast.FunctionDef) else None
        if isinstance(definition.node, ast.ClassDef):
            runs = set()
            for method in definition.node.body:
                runs |= function_uses(method) if isinstance(method, ast.FunctionDef) else read_names(method)
        definition.at_import = import_time_names(definition.node) & names
        definition.uses = ((runs if runs is not None else read_names(definition.node)) & names) - set(definition.names)
    return found


def test_no_section_uses_a_section_above_it_but_the_formula() -> None:
    # The map's claim.  The formula comes first, as the module's docstring states it; what runs at
    # import must, in Python, come after what it reads.
    found = definitions()
    where = {name: definition for definition in found for name in definition.names}
    order = [title for _, title in headers()]
    upward = [
        f"{definition.names[0]} ({definition.section}) uses {name} ({where[name].section})"
        for definition in found
        for name in sorted(definition.uses - definition.at_import)
        if where[name].section != "The formula" and order.index(where[name].section) < order.index(definition.section)
    ]
    assert not upward, upward
    # Not vacuous: most sections use a later one.
    assert sum(1 for d in found for name in d.uses if where[name].section != d.section) > 200


def test_every_function_sits_below_the_functions_that_call_it() -> None:
    # Within sections too: a function or class is defined below each function or class that reads its
    # name, but for the formula's (first) and a base class (read at import, so above its subclass).
    found = definitions()
    where = {name: definition for definition in found for name in definition.names}
    callables = (ast.FunctionDef, ast.ClassDef)
    upward = [
        f"{definition.names[0]} (line {definition.node.lineno}) uses {name} (line {where[name].node.lineno})"
        for definition in found
        if isinstance(definition.node, callables)
        for name in sorted(definition.uses - definition.at_import)
        if isinstance(where[name].node, callables)
        and where[name].section != "The formula"
        and where[name].index < definition.index
    ]
    assert not upward, upward


def test_every_method_sits_below_the_methods_of_its_class_that_call_it() -> None:
    upward = []
    for node in TREE.body:
        if not isinstance(node, ast.ClassDef):
            continue
        order = [m.name for m in node.body if isinstance(m, ast.FunctionDef)]
        for method in node.body:
            if not isinstance(method, ast.FunctionDef):
                continue
            for x in ast.walk(method):
                if (
                    isinstance(x, ast.Attribute)
                    and isinstance(x.value, ast.Name)
                    and x.value.id in ("self", "cls", node.name)
                    and x.attr in order
                    and order.index(x.attr) < order.index(method.name)
                ):
                    upward.append(f"{node.name}.{method.name} uses {x.attr}, above it")
    assert not upward, upward
    # Not vacuous: methods call methods of their class.
    assert sum(1 for x in ast.walk(TREE) if isinstance(x, ast.Attribute) and getattr(x.value, "id", "") == "self") > 500


def the_walk(function: str, parameter: str) -> List[Tuple[str, str]]:
    """The calls a parameter's value takes: each function entered once for each of its parameters the value reaches.

    From ``function``, every call with an argument that reads ``parameter`` (or a local name computed
    from it) enters the callee with the matching parameter; a call to a class enters its __init__, and
    ``self.f(...)`` or ``x.f(...)`` the method f (when one class alone has it).
    """
    functions = {}
    methods: Dict[str, List[str]] = {}
    for node in TREE.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, ast.FunctionDef):
                    functions[f"{node.name}.{method.name}"] = method
                    methods.setdefault(method.name, []).append(f"{node.name}.{method.name}")

    def callee(call: ast.Call, owner: str) -> Tuple[Optional[str], int]:
        target = call.func
        if isinstance(target, ast.Name):
            if target.id in functions:
                return target.id, 0
            return (target.id + ".__init__", 1) if target.id + ".__init__" in functions else (None, 0)
        if isinstance(target, ast.Attribute):
            if isinstance(target.value, ast.Name) and f"{target.value.id}.{target.attr}" in functions:
                return f"{target.value.id}.{target.attr}", 0
            if isinstance(target.value, ast.Name) and target.value.id == "self" and "." in owner:
                return owner.split(".")[0] + "." + target.attr, 1
            if len(methods.get(target.attr, [])) == 1:
                return methods[target.attr][0], 1
        return None, 0

    entered: List[Tuple[str, str]] = []
    followed: List[Tuple[str, str]] = []

    def enter(name: str, tracked: str) -> None:
        if (name, tracked) in entered:
            return
        entered.append((name, tracked))
        node = functions[name]
        tainted, grown = {tracked}, True
        while grown:
            grown = False
            for x in ast.walk(node):
                value = getattr(x, "value", None) if isinstance(x, (ast.Assign, ast.AugAssign, ast.AnnAssign)) else None
                if isinstance(x, ast.For):
                    value = x.iter
                if value is None or not read_names(value) & tainted:
                    continue
                targets = x.targets if isinstance(x, ast.Assign) else [x.target]  # type: ignore[attr-defined]
                new = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)} - tainted
                tainted |= new
                grown = grown or bool(new)
        calls = sorted((x for x in ast.walk(node) if isinstance(x, ast.Call)), key=lambda c: (c.lineno, c.col_offset))
        for call in calls:
            target, skip = callee(call, name)
            if target is None or target not in functions:
                continue
            arguments = functions[target].args
            parameters = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs][skip:]
            passed = [(parameters[i], a) for i, a in enumerate(call.args) if i < len(parameters)]
            passed += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
            for into, expression in passed:
                if read_names(expression) & tainted:
                    followed.append((name, target))
                    enter(target, into)

    enter(function, parameter)
    return followed


def test_a_reader_follows_encodings_d_model_down_the_file_to_the_sine() -> None:
    lines = {}
    for node in TREE.body:
        if isinstance(node, ast.FunctionDef):
            lines[node.name] = node.lineno
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, ast.FunctionDef):
                    lines[f"{node.name}.{method.name}"] = method.lineno
    followed = the_walk("encoding", "d_model")
    formula = {"_denominator", "_paper_row"}
    upward = [f"{a} (line {lines[a]}) calls {b} (line {lines[b]})" for a, b in followed if lines[b] < lines[a]]
    assert set(upward) == {
        "_fast_rows (line %d) calls _paper_row (line %d)" % (lines["_fast_rows"], lines["_paper_row"])
    }
    reached = {b for _, b in followed}
    # The walk reaches both sines (the formula's, back at the top, read first, and the exact kernel's),
    # through Convention's methods, which sit below their callers on this path too.
    assert formula & reached and "_sin_cos" in reached and "Convention._pairs" in reached and len(reached) > 40


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


def nested_functions(node: ast.AST, inside: bool = False) -> "List[Tuple[ast.FunctionDef, bool]]":
    """Every function with whether it is defined inside another function (a method is not, a closure is)."""
    found: List[Tuple[ast.FunctionDef, bool]] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef):
            found.append((child, inside))
            found += nested_functions(child, True)
        else:
            found += nested_functions(child, inside)
    return found


def test_no_function_is_over_200_lines_and_no_closure_over_40_without_its_reason() -> None:
    functions = nested_functions(TREE)
    size = {node: (node.end_lineno or node.lineno) - node.lineno + 1 for node, _ in functions}
    over = [f"{node.name} ({size[node]} lines, line {node.lineno})" for node, _ in functions if size[node] > 200]
    assert not over, f"functions over 200 lines, which no reason excuses: make their steps named functions: {over}"
    closures = [node for node, inside in functions if inside and size[node] > 40]
    unexplained = [
        f"{node.name} (line {node.lineno})"
        for node in closures
        if "Long because" not in (ast.get_docstring(node) or "")
    ]
    assert not unexplained, (
        f"closures over 40 lines without a reason: name them in their section, or say why: {unexplained}"
    )
    assert closures and max(size.values()) > 120  # the rules are checked on functions they reach


def test_checkings_quick_start_comes_first_fits_30_lines_and_runs(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "checking.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Quick start", "## Reference"], headings
    quick = text[text.index("## Quick start") : text.index("## Reference")]
    assert len(quick.rstrip("\n").splitlines()) <= 30
    code = "\n".join(fenced_blocks(quick)[0])
    assert "torch.nn.Module" in code and "assert_close(" in code and 'kind="sin"' in code and "np.save(" in code
    need("numpy")
    need("torch")
    # The block as a user pastes it: its tests pass, and the file it saves passes --check.
    namespace: Dict[str, object] = {}
    previous = os.getcwd()
    try:
        os.chdir(tmp_path)
        exec(compile(code, "checking.md's quick start", "exec"), namespace)
    finally:
        os.chdir(previous)
    tests = [name for name in namespace if name.startswith("test_")]
    assert tests == ["test_tables"]
    for name in tests:
        test = namespace[name]
        assert callable(test)
        test()
    command = re.search(r"then: (python3 -m pe_reference --check pe\.npy)", code)
    assert command, code
    check = subprocess.run(
        [sys.executable, *command.group(1).split()[1:]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=600,
    )
    assert check.returncode == 0 and "within tolerance" in check.stdout, check.stdout + check.stderr


def test_the_readmes_check_your_own_table_runs_and_says_what_it_shows(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Check your own table") : readme.index("## Use it in your own project")]
    blocks = fenced_blocks(section)
    torch_block, numpy_block, failure = "\n".join(blocks[0]), "\n".join(blocks[1]), blocks[2][0]
    assert "torch" in torch_block.splitlines()[0] and "import numpy" in numpy_block and 'kind="cos"' in numpy_block
    need("numpy")
    need("torch")
    for code in (torch_block, numpy_block):
        namespace: Dict[str, object] = {}
        exec(compile(code, "the README", "exec"), namespace)  # assert_close raises if the table fails
    # The failure shown is the one the same cache gives when checked with the default base.
    from pe_reference import assert_close

    cache = namespace["cos"]
    try:
        assert_close(cache, kind="cos")
    except AssertionError as error:
        assert str(error).splitlines()[0] == failure
    else:
        raise AssertionError("the cache passed with the default base")
