"""Mutation testing of pe_reference.py: a sample of small changes, each run against the tests nearest it.

Usage::

    python tests/mutation.py [--mutants 300] [--seed N] [--section WORD] [--report FILE]
                             [--equivalent FILE] [--only KEY ...] [--jobs N] [--list]

A mutant is one change to one node of the module's syntax tree, written back into the source in
place of that node's own text (every other line, comment and line number stays as it was):

* ``const``: an integer constant nudged (n -> n + 1 and n - 1; 0 -> 1; 1 -> 0 and 2), a float
  constant nudged by 10% (0.0 -> 1.0), True <-> False;
* ``cmp``: a comparison flipped (< <-> <=, > <-> >=, == <-> !=, in <-> not in, is <-> is not);
* ``op``: a binary operator swapped (+ <-> -, * <-> //, / -> *, % -> //, ** -> *, << <-> >>,
  & <-> |, ^ -> &), in an expression or an augmented assignment, and ``and`` <-> ``or``;
* ``not``: a ``not`` removed, or the test of an if, elif, while, conditional expression or
  comprehension negated;
* ``del``: a simple statement (assignment, call, raise, assert, del) replaced with ``pass``;
* ``ret``: ``return x`` replaced with ``return None``.

Left alone: docstrings and other string constants (error messages among them: the catalogue in
tests/errors_catalogue.py checks those), type annotations, the ``if TYPE_CHECKING:`` block,
f-strings, the message of a ``raise``, imports and ``pass``.

Sections are read from the module's headers, a block of three comment lines::

    # ---------------------------------------------------------------------------
    # Title
    # ---------------------------------------------------------------------------

Every top-level statement belongs to the section whose header precedes it; the lines above the
first header form the section "Module header".  Sections are what the sample and the report count by;
they may be reordered and renamed without touching this script.

The sample is stratified: each section gets a share of ``--mutants`` in proportion to its number of
candidate mutants (largest remainders; ``--minimum`` can set a floor, 0 by default); a section's
mutants are taken in the order of a hash of the seed and each mutant's key, so a seed and a source
give the same sample, and an edit changes the sample only where it changes the candidates.  Without
``--seed`` each run draws a fresh seed and prints it (and the report gives it): a sample no test was
written for, which ``--seed N`` draws again.

A mutant's tests are found by coverage, not by a map written by hand: the whole suite runs once under
coverage.py (``pip install coverage``, the ``mutation`` extra) with a context per test function, and a
mutant runs the module's own examples (``python3 -m doctest``) and the test functions that ran any of
its lines, fastest first, at most ``--most-tests`` (40).  A line run only at import (a constant, the
presets) runs no test function: its mutants take the tests of the lines that read what its statement
binds.  A line only subprocesses run (``python3 -m pe_reference`` from a test) has no test function:
its mutants run the examples alone.  The coverage run shares the test files among ``--jobs``
processes run at once (about equal in time, by an earlier run's seconds, else in bytes); a test that fails in it (under coverage.py's tracer) is
named and runs for no mutant; the run is kept in the system's temporary folder while no
file of the tree changes.

Each mutant is run in a copy of the working tree (the files git tracks and the untracked ones it
does not ignore), made once in a temporary folder before the coverage run (which runs in the
first), so that editing the tree while the script runs changes nothing it measures: the mutated pe_reference.py is written there and
``python3 -m pytest -x -q -p no:cacheprovider <its tests>`` runs in that folder with PYTHONPATH
set to it, so the tests and their subprocesses import the mutant (not an installed copy).  A mutant
is killed when the tests fail, and counted as a timeout (killed too, shown apart) when they run
longer than ``--timeout-factor`` times the seconds its tests took in the coverage run plus 20 seconds
(or than ``--timeout`` seconds).  Before the sample, a mutant that makes ``encoding()`` raise must be
killed.  ``--jobs N`` runs N mutants at once, each in its own copy; the figures are the same, only the
order of the lines printed per mutant changes.

A mutant's key names the function (qualified, ``module`` outside any), the kind, the change,
and six hex digits of a hash of the mutated line's text and of where the change starts in it, as in
``_float_parts:const:53:3fa2c1`` (``~2`` is added when one line holds the same change twice).  It
holds while other lines move; an edit of its own line gives a new key.  ``--equivalent FILE`` reads
keys in backquotes from the table lines (starting with ``|``) under a heading of FILE that says
"equivalent" (tests/mutation_report.md): those survivors are listed as equivalent and left out of
the score of non-equivalent mutants.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import glob
import hashlib
import itertools
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = "pe_reference.py"
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)  # run as a script: tests/ is on the path, the repository's root is not

from tests.helpers import section_headers  # noqa: E402  (after the path)

# The tests a mutant runs are those whose functions ran its lines in one run of the whole suite under
# coverage.py (Coverage), fastest first, at most --most-tests of them; first, the module's own examples
# as a learner runs them (python3 -m doctest), a second.
ALWAYS = ("tests/test_doctest_plain.py::test_python_m_doctest_passes[pe_reference.py]",)
# Slow tests of what no section's mutants change: left out of every run.
DESELECT = (
    "tests/test_cli.py::test_output_memory_is_one_row",  # 11 s: the memory of streaming, measured
    "tests/test_cli.py::test_ctrl_c_is_one_line_and_130",  # 3 s: a signal to a subprocess
)


class Section:
    """A titled run of top-level lines."""

    def __init__(self, title: str, first: int) -> None:
        self.title = title
        self.first = first
        self.last = first


class Mutant:
    """One change: the text from start to end (character offsets of the source) becomes text."""

    def __init__(self, node: ast.AST, start: int, end: int, text: str, kind: str, change: str) -> None:
        self.line = getattr(node, "lineno", 0)
        self.column = getattr(node, "col_offset", 0)
        self.start = start
        self.end = end
        self.text = text
        self.kind = kind
        self.change = change
        self.section = ""
        self.function = ""
        self.key = ""  # set by Finder.candidates, which sees every mutant of the module

    def place(self, offsets: Offsets) -> str:
        """Six hex digits of the line's code (its comment and the spaces around it dropped) and where the change starts.

        Line numbers are left out, so that a mutant's key holds while other lines move or comments change;
        a change to its own line's code makes a new key, and the mutant must be judged again.
        """
        line = offsets.lines[self.line - 1]
        offset = self.start - offsets.starts[self.line - 1] - (len(line) - len(line.lstrip()))
        return hashlib.sha256(f"{code_of(line)}|{offset}".encode("utf-8")).hexdigest()[:6]

    def apply(self, source: str) -> str:
        return source[: self.start] + self.text + source[self.end :]


def code_of(line: str) -> str:
    """The line without its comment and the spaces around it: a # inside a string stays."""
    quote = ""
    escaped = False
    for index, character in enumerate(line):
        if escaped:
            escaped = False
        elif quote and character == "\\":
            escaped = True
        elif quote:
            quote = "" if character == quote else quote
        elif character in "'\"":
            quote = character
        elif character == "#":
            return line[:index].strip()
    return line.strip()


def sections_of(lines: list[str]) -> list[Section]:
    """The sections of the module, from its three-line headers (tests/helpers.py's section_headers)."""
    found = [Section("Module header", 1)] + [Section(title, first - 1) for first, title in section_headers(lines)]
    for index in range(len(found) - 1):
        found[index].last = found[index + 1].first - 1
    found[-1].last = len(lines)
    return found


class Coverage:
    """Which test functions run each line of the module, and the seconds each took: one run of the suite.

    The run is coverage.py's, with a context per test function (``dynamic_context = test_function``), in
    a copy of the tree; pytest's JUnit XML gives the seconds and the tests that exist.  Its result is kept
    in the system's temporary folder under a hash of every tracked file and the interpreter, and used
    again while none changes.  Lines run only in a subprocess (``python3 -m pe_reference`` from a test) are
    attributed to no test.  Nor are lines run only at import (constants, the presets): a test that
    imports the module again would be credited with all of them, so such a test is left out of every
    line's list, and a top-level statement's mutants run the tests of the lines that read what it binds.
    """

    def __init__(self, lines: dict[int, list[str]], seconds: dict[str, float]) -> None:
        self.lines = lines
        self.seconds = seconds
        self.tree: ast.Module | None = None  # the module's, parsed once, for import_tests

    def fastest(self, lines: Iterable[int], most: int) -> list[str]:
        """The test functions that ran any of the lines, fastest first, at most ``most``."""
        found = {test for line in lines for test in self.lines.get(line, [])}
        return sorted(found, key=lambda test: (self.seconds.get(test, 0.0), test))[:most]

    def tests(self, first: int, last: int, most: int) -> list[str]:
        """The test functions that ran any of the lines first to last, fastest first, at most ``most``."""
        return self.fastest(range(first, last + 1), most)

    def import_tests(self, source: str, first: int, most: int) -> list[str]:
        """For a line run at import: the tests of the lines that read what its top-level statement binds.

        A name read only by another statement run at import (the presets, made by _make_presets) leads
        on to the lines that read what that one binds, three steps at most.
        """
        if self.tree is None:
            self.tree = ast.parse(source)
        tree = self.tree
        statements = {n.lineno: n for n in tree.body}
        loads: dict[str, list[int]] = {}
        for x in ast.walk(tree):
            if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load):
                loads.setdefault(x.id, []).append(x.lineno)

        def holder(line: int) -> ast.stmt | None:
            return next((n for n in statements.values() if n.lineno <= line <= (n.end_lineno or n.lineno)), None)

        readers: list[int] = []
        todo, seen = [holder(first)], set()
        for _ in range(3):
            lines: list[int] = []
            for statement in todo:
                if statement is None or statement.lineno in seen:
                    continue
                seen.add(statement.lineno)
                names = {x.id for x in ast.walk(statement) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
                if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
                    names = {statement.name}
                lines += [line for name in names for line in loads.get(name, [])]
            readers += lines
            todo = [holder(line) for line in lines if not self.lines.get(line)]
        return self.fastest(readers, most)

    @staticmethod
    def build(copy: str, python: str, folder: str, shards: int) -> Coverage:
        """The coverage run in the copy, its test files shared among ``shards`` processes run at once."""
        import json

        try:
            import coverage  # noqa: F401  (only to say early that it is missing)
        except ImportError:
            raise SystemExit("coverage: the mutation script needs coverage.py: pip install coverage") from None
        digest = hashlib.sha256(f"{python}|{DESELECT!r}".encode())
        for name in copied_files(copy):
            with open(os.path.join(copy, name), "rb") as handle:
                digest.update(name.encode() + b"\0" + handle.read())
        cached = os.path.join(tempfile.gettempdir(), f"pe_reference-mutation-coverage-{digest.hexdigest()[:16]}.json")
        if os.path.exists(cached):
            with open(cached, encoding="utf-8") as handle:
                kept = json.load(handle)
            return Coverage({int(k): v for k, v in kept["lines"].items()}, kept["seconds"])
        # The seconds of the newest earlier run, if any, to share the files by time rather than by size.
        earlier = sorted(
            glob.glob(os.path.join(tempfile.gettempdir(), "pe_reference-mutation-coverage-*.json")),
            key=os.path.getmtime,
        )
        seconds_before: dict[str, float] = {}
        if earlier:
            with open(earlier[-1], encoding="utf-8") as handle:
                seconds_before = json.load(handle)["seconds"]
        groups = test_shards(copy, shards, seconds_before)
        print(
            f"coverage: running the whole suite once under coverage.py, in {len(groups)} processes",
            flush=True,
        )
        environment = dict(os.environ, PYTHONPATH=copy, PYTHONDONTWRITEBYTECODE="1")
        environment.pop("PYTEST_ADDOPTS", None)
        deselected = [option for test in DESELECT for option in ("--deselect", test)]
        processes = []
        for number, files in enumerate(groups):
            data, junit, settings = (os.path.join(folder, f"{name}.{number}") for name in ("coverage", "junit", "rc"))
            with open(settings, "w", encoding="utf-8") as handle:
                handle.write(f"[run]\ndynamic_context = test_function\ndata_file = {data}\ninclude = {copy}/{MODULE}\n")
            command = [python, "-m", "coverage", "run", f"--rcfile={settings}", "-m", "pytest", "-q", "-p"]
            command += ["no:cacheprovider", f"--junitxml={junit}", *deselected, *files]
            output = open(os.path.join(folder, f"output.{number}"), "w+", encoding="utf-8")
            process = subprocess.Popen(command, cwd=copy, env=environment, stdout=output, stderr=subprocess.STDOUT)
            processes.append((process, output, data, junit))
        lines: dict[int, list[str]] = {}
        seconds: dict[str, float] = {}
        results = []
        try:
            for process, output, _, _ in processes:
                returncode = process.wait()
                output.seek(0)
                results.append((returncode, output.read()[-3000:]))
        finally:
            for process, output, _, _ in processes:  # stopped (or failed): none left running in a deleted copy
                if process.poll() is None:
                    process.kill()
                    process.wait()
                output.close()
        for (returncode, tail), (_, _, data, junit) in zip(results, processes):
            if returncode not in (0, 1) or not os.path.exists(junit):
                raise SystemExit(f"coverage: the run failed (exit {returncode}):\n{tail}")
            failed = sorted(junit_failed(junit, copy))
            if failed:
                # A test that fails under coverage.py's tracer (a measure of memory, of time) judges no mutant.
                print(f"coverage: {len(failed)} failed under coverage.py, left out: {', '.join(failed)}", flush=True)
            shard_lines, shard_seconds = Coverage.read(data, junit, copy)
            seconds.update(shard_seconds)
            for line, tests in shard_lines.items():
                lines[line] = sorted(set(lines.get(line, [])) | set(tests))
        with open(cached + ".part", "w", encoding="utf-8") as handle:
            json.dump({"lines": lines, "seconds": seconds}, handle)
        os.replace(cached + ".part", cached)  # whole or not at all, if the run is stopped
        return Coverage(lines, seconds)

    @staticmethod
    def read(data_file: str, junit: str, copy: str) -> tuple[dict[int, list[str]], dict[str, float]]:
        """Lines to pytest node ids (a test function: every parameter of it), and each one's seconds."""
        import coverage

        seconds = junit_seconds(junit, copy)
        data = coverage.CoverageData(basename=data_file)
        data.read()
        module = next(name for name in data.measured_files() if name.endswith(MODULE))
        by_line = {
            line: sorted({node_id(context, copy) for context in contexts if context} & set(seconds))
            for line, contexts in data.contexts_by_lineno(module).items()
        }
        # A test that runs the module's import again is credited with every top-level line: left out.
        with open(module, encoding="utf-8") as handle:
            top = {node.lineno for node in ast.parse(handle.read()).body}
        counts: dict[str, int] = {}
        for line in top:
            for test in by_line.get(line, []):
                counts[test] = counts.get(test, 0) + 1
        again = {test for test, count in counts.items() if count >= 0.9 * len(top)}
        lines = {line: [t for t in tests if t not in again] for line, tests in by_line.items()}
        return {line: tests for line, tests in lines.items() if tests}, seconds


def node_id(dotted: str, root: str) -> str:
    """A coverage context to a pytest node id: tests.test_api.test_encoding -> tests/test_api.py::test_encoding.

    A test class's method becomes tests/test_x.py::TestY::test_z; '' if no module of root matches.
    """
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if os.path.exists(os.path.join(root, *parts[:cut]) + ".py"):
            return "/".join(parts[:cut]) + ".py::" + "::".join(parts[cut:])
    return ""


def junit_seconds(path: str, root: str) -> dict[str, float]:
    """Each test function's seconds in pytest's JUnit XML, its parameters' summed, by node id.

    A function one of whose cases failed or raised is left out (junit_failed names them): it could not
    tell a mutant from the module.
    """
    import xml.etree.ElementTree as ElementTree

    seconds: dict[str, float] = {}
    for case in ElementTree.parse(path).iter("testcase"):
        test = node_id(case.get("classname", "") + "." + case.get("name", "").split("[")[0], root)
        if test:
            seconds[test] = seconds.get(test, 0.0) + float(case.get("time", "0"))
    failed = junit_failed(path, root)
    return {test: spent for test, spent in seconds.items() if test not in failed}


def junit_failed(path: str, root: str) -> set[str]:
    """The test functions (node ids) one of whose cases failed or raised in pytest's JUnit XML."""
    import xml.etree.ElementTree as ElementTree

    failed = set()
    for case in ElementTree.parse(path).iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed.add(node_id(case.get("classname", "") + "." + case.get("name", "").split("[")[0], root))
    return failed - {""}


class Offsets:
    """Character offsets in the source from the syntax tree's (line, UTF-8 byte column) positions."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def at(self, line: int, byte_column: int) -> int:
        text = self.lines[line - 1]
        return self.starts[line - 1] + len(text.encode("utf-8")[:byte_column].decode("utf-8"))

    def span(self, node: ast.expr | ast.stmt) -> tuple[int, int]:
        start = self.at(node.lineno, node.col_offset)
        # Parsed nodes always have their end; None only in trees built by hand.
        assert node.end_lineno is not None and node.end_col_offset is not None
        return start, self.at(node.end_lineno, node.end_col_offset)


COMPARISONS: dict[type, tuple[str, str]] = {
    ast.Lt: (r"<", "<="),
    ast.LtE: (r"<=", "<"),
    ast.Gt: (r">", ">="),
    ast.GtE: (r">=", ">"),
    ast.Eq: (r"==", "!="),
    ast.NotEq: (r"!=", "=="),
    ast.In: (r"in", "not in"),
    ast.NotIn: (r"not\s+in", "in"),
    ast.Is: (r"is", "is not"),
    ast.IsNot: (r"is\s+not", "is"),
}
OPERATORS: dict[type, tuple[str, str]] = {
    ast.Add: (r"\+", "-"),
    ast.Sub: (r"-", "+"),
    ast.Mult: (r"\*", "//"),
    ast.FloorDiv: (r"//", "*"),
    ast.Div: (r"/", "*"),
    ast.Mod: (r"%", "//"),
    ast.Pow: (r"\*\*", "*"),
    ast.LShift: (r"<<", ">>"),
    ast.RShift: (r">>", "<<"),
    ast.BitAnd: (r"&", "|"),
    ast.BitOr: (r"\|", "&"),
    ast.BitXor: (r"\^", "&"),
}
BOOLEANS: dict[type, tuple[str, str]] = {ast.And: ("and", "or"), ast.Or: ("or", "and")}


class Finder:
    """The candidate mutants of a module."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.offsets = Offsets(source)
        self.tree = ast.parse(source)
        self.found: list[Mutant] = []
        self.skipped: set[int] = set()
        self.functions: dict[int, str] = {}
        self._mark_skipped()

    def _mark_skipped(self) -> None:
        """The nodes no mutant touches: annotations, TYPE_CHECKING, f-strings, raise messages."""

        def skip(node: ast.AST) -> None:
            for inner in ast.walk(node):
                self.skipped.add(id(inner))

        for node in ast.walk(self.tree):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                skip(node)
            elif isinstance(node, ast.arg) and node.annotation is not None:
                skip(node.annotation)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.returns is not None:
                    skip(node.returns)
            elif isinstance(node, ast.AnnAssign):
                skip(node.annotation)
            elif isinstance(node, ast.JoinedStr):
                skip(node)
            elif isinstance(node, ast.Raise):
                for part in (node.exc, node.cause):
                    if part is not None:
                        skip(part)

        # The innermost function or class names a node, by its qualified name (Class.method).
        def name(node: ast.AST, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    qualified = prefix + child.name
                    for inner in ast.walk(child):
                        self.functions[id(inner)] = qualified
                    name(child, qualified + ".")
                else:
                    name(child, prefix)

        name(self.tree, "")

    def candidates(self) -> list[Mutant]:
        for node in ast.walk(self.tree):
            if id(node) in self.skipped:
                continue
            self._constant(node)
            self._comparison(node)
            self._operator(node)
            self._condition(node)
            self._statement(node)
        self.found.sort(key=lambda mutant: (mutant.start, mutant.kind, mutant.change))
        # The key: where (function, change, the line's digest), numbered when a line holds the same change twice.
        seen: dict[str, int] = {}
        for mutant in self.found:
            key = f"{mutant.function or 'module'}:{mutant.kind}:{mutant.change}:{mutant.place(self.offsets)}"
            seen[key] = seen.get(key, 0) + 1
            mutant.key = key if seen[key] == 1 else f"{key}~{seen[key]}"
        return self.found

    def _add(self, node: ast.AST, start: int, end: int, text: str, kind: str, change: str) -> None:
        mutant = Mutant(node, start, end, text, kind, change)
        mutant.function = self.functions.get(id(node), "")
        self.found.append(mutant)

    def valid(self, mutant: Mutant) -> bool:
        """Whether the mutant parses and changes the tree (one change, never a no-op); checked for the sample only.

        The top-level statement that holds the change is parsed, not the whole module: the same answer, faster.
        """
        for statement in self.tree.body:
            start, end = self.offsets.span(statement)
            start -= statement.col_offset
            if start <= mutant.start and mutant.end <= end:
                break
        else:
            return False
        original = self.source[start:end]
        changed = original[: mutant.start - start] + mutant.text + original[mutant.end - start :]
        try:
            tree = ast.parse(changed)
        except SyntaxError:
            return False
        return ast.dump(tree) != ast.dump(ast.parse(original))

    def _constant(self, node: ast.AST) -> None:
        if not isinstance(node, ast.Constant):
            return
        start, end = self.offsets.span(node)
        value = node.value
        if isinstance(value, bool):
            self._add(node, start, end, str(not value), "const", str(not value))
        elif isinstance(value, int):
            for nudged in sorted({0: [1], 1: [0, 2]}.get(value, [value + 1, value - 1])):
                self._add(node, start, end, f"({nudged})", "const", str(nudged))
        elif isinstance(value, float):
            for changed in [1.0] if value == 0.0 else [value * 1.1, value * 0.9]:
                self._add(node, start, end, f"({changed!r})", "const", repr(changed))

    def _operator_span(self, left: ast.expr, right: ast.expr, pattern: str) -> tuple[int, int] | None:
        """Where the operator written between two operands is: only brackets, spaces and comments beside it."""
        start = self.offsets.span(left)[1]
        end = self.offsets.span(right)[0]
        gap = self.source[start:end]
        # Comments become spaces, so offsets in the gap hold.
        gap = re.sub(r"#[^\n]*", lambda match: " " * len(match.group(0)), gap)
        found = re.fullmatch(r"[\s()\\]*(" + pattern + r")[\s()\\]*", gap)
        if found is None:
            return None
        return start + found.start(1), start + found.end(1)

    def _comparison(self, node: ast.AST) -> None:
        if not isinstance(node, ast.Compare):
            return
        operands = [node.left] + list(node.comparators)
        for index, operator in enumerate(node.ops):
            pattern, replacement = COMPARISONS[type(operator)]
            span = self._operator_span(operands[index], operands[index + 1], pattern)
            if span is not None:
                self._add(node, span[0], span[1], f" {replacement} ", "cmp", replacement.replace(" ", "-"))

    def _operator(self, node: ast.AST) -> None:
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            pattern, replacement = OPERATORS[type(node.op)]
            span = self._operator_span(node.left, node.right, pattern)
            if span is not None:
                self._add(node, span[0], span[1], f" {replacement} ", "op", replacement)
        elif isinstance(node, ast.AugAssign) and type(node.op) in OPERATORS:
            pattern, replacement = OPERATORS[type(node.op)]
            span = self._operator_span(node.target, node.value, pattern + "=")
            if span is not None:
                self._add(node, span[0], span[1], f" {replacement}= ", "op", replacement + "=")
        elif isinstance(node, ast.BoolOp):
            pattern, replacement = BOOLEANS[type(node.op)]
            for left, right in zip(node.values, node.values[1:]):
                span = self._operator_span(left, right, pattern)
                if span is not None:
                    self._add(node, span[0], span[1], f" {replacement} ", "op", replacement)

    def _condition(self, node: ast.AST) -> None:
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            start, end = self.offsets.span(node)
            operand_start, operand_end = self.offsets.span(node.operand)
            operand = self.source[operand_start:operand_end]
            self._add(node, start, end, f"({operand})", "not", "removed")
        tests: list[ast.expr] = []
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            tests.append(node.test)
        elif isinstance(node, ast.comprehension):
            tests.extend(node.ifs)
        for test in tests:
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                continue  # its mutant removes the not
            start, end = self.offsets.span(test)
            self._add(test, start, end, f"not ({self.source[start:end]})", "not", "negated")

    def _statement(self, node: ast.AST) -> None:
        if isinstance(node, ast.Return):
            if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
                start, end = self.offsets.span(node.value)
                # Newlines kept: a value spread over several lines keeps the lines after it in place.
                self._add(node, start, end, "None" + "\n" * self.source.count("\n", start, end), "ret", "None")
            return
        deletable = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Raise, ast.Assert, ast.Delete)
        if not isinstance(node, deletable):
            return
        if isinstance(node, ast.AnnAssign) and node.value is None:
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a docstring, or a bare string
        start, end = self.offsets.span(node)
        self._add(node, start, end, "pass" + "\n" * self.source.count("\n", start, end), "del", "pass")


def assign_sections(mutants: list[Mutant], sections: list[Section]) -> None:
    for mutant in mutants:
        for section in sections:
            if section.first <= mutant.line <= section.last:
                mutant.section = section.title
                break


def sample(
    finder: Finder, mutants: list[Mutant], sections: list[Section], total: int, minimum: int, seed: int
) -> list[Mutant]:
    """A stratified sample: shares proportional to the candidates, at least ``minimum`` a section."""
    by_section = {section.title: [m for m in mutants if m.section == section.title] for section in sections}
    by_section = {title: found for title, found in by_section.items() if found}
    # The minimum first, then the rest of the total in proportion to the candidates left (largest remainders).
    shares = {title: min(len(found), minimum) for title, found in by_section.items()}
    rest = total - sum(shares.values())
    left = {title: len(found) - shares[title] for title, found in by_section.items()}
    if rest > 0 and sum(left.values()) > 0:
        exact = {title: rest * count / sum(left.values()) for title, count in left.items()}
        for title, share in exact.items():
            shares[title] += min(left[title], int(share))
        order = sorted(exact, key=lambda title: (-(exact[title] - int(exact[title])), title))
        for title in order * 2:
            if sum(shares.values()) >= total:
                break
            if shares[title] < len(by_section[title]):
                shares[title] += 1
    chosen: list[Mutant] = []
    for title, found in sorted(by_section.items()):
        # The section's candidates in an order set by the seed and each key alone, so that an edit elsewhere
        # in the module leaves the rest of the sample as it was; the first valid ones are taken.
        shuffled = sorted(found, key=lambda mutant: hashlib.sha256(f"{seed}:{mutant.key}".encode()).hexdigest())
        picked: list[Mutant] = []
        for mutant in shuffled:
            if len(picked) == shares[title]:
                break
            if finder.valid(mutant):
                picked.append(mutant)
        chosen.extend(sorted(picked, key=lambda mutant: (mutant.start, mutant.key)))
    return chosen


def tracked_files(root: str) -> list[str]:
    process = subprocess.run(
        ["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted({line for line in process.stdout.splitlines() if line})


def copied_files(copy: str) -> list[str]:
    """The files of a copy made by copy_tree, relative to it, sorted."""
    found = []
    for directory, _, names in os.walk(copy):
        found += [os.path.relpath(os.path.join(directory, name), copy) for name in names]
    return sorted(found)


def test_shards(copy: str, shards: int, seconds: dict[str, float] | None = None) -> list[list[str]]:
    """The test files of the copy in at most ``shards`` groups of about equal time, the longest file first.

    A file's time is the sum of its tests' ``seconds`` (an earlier coverage run's), or, for a file that
    run did not have, its size in bytes at the earlier files' seconds a byte (all sizes, without one).
    """
    files = [name for name in copied_files(copy) if re.fullmatch(r"tests/test_\w+\.py", name)]
    size = {name: os.path.getsize(os.path.join(copy, name)) for name in files}
    spent = {name: 0.0 for name in files}
    for test, took in (seconds or {}).items():
        if test.split("::")[0] in spent:
            spent[test.split("::")[0]] += took
    known = [name for name in files if spent[name] > 0]
    rate = sum(spent[name] for name in known) / sum(size[name] for name in known) if known else 1.0
    weight = {name: spent[name] if spent[name] > 0 else size[name] * rate for name in files}
    groups: list[tuple[float, list[str]]] = [(0.0, []) for _ in range(max(1, min(shards, len(files))))]
    for name in sorted(files, key=lambda name: (-weight[name], name)):
        total, group = min(groups, key=lambda item: item[0])
        groups.remove((total, group))
        groups.append((total + weight[name], group + [name]))
    return [sorted(group) for _, group in groups if group]


def copy_tree(root: str, target: str) -> str:
    """A copy of the working tree under target/repo; target/shared points at root's sibling shared/."""
    copy = os.path.join(target, "repo")
    for name in tracked_files(root):
        source = os.path.join(root, name)
        if not os.path.isfile(source):
            continue
        destination = os.path.join(copy, name)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copy2(source, destination)
    # tests/test_conventions.py reads ../shared/conventions.md beside the checkout when it is there.
    shared = os.path.join(os.path.dirname(root), "shared")
    if os.path.isdir(shared):
        os.symlink(shared, os.path.join(target, "shared"))
    return copy


class Runner:
    """Runs the tests of a section in the copy, with a mutated module or the original."""

    def __init__(self, copy: str, source: str, python: str) -> None:
        self.copy = copy
        self.source = source
        self.python = python
        self.environment = dict(os.environ, PYTHONPATH=copy, PYTHONDONTWRITEBYTECODE="1")
        self.environment.pop("PYTEST_ADDOPTS", None)

    def write(self, text: str) -> None:
        with open(os.path.join(self.copy, MODULE), "w", encoding="utf-8") as handle:
            handle.write(text)

    def run(self, tests: Sequence[str], timeout: float | None) -> tuple[str, float, str]:
        """('passed' | 'failed' | 'timeout' | 'error', seconds, the output's last lines)."""
        deselected = [option for test in DESELECT for option in ("--deselect", test)]
        command = [self.python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *deselected, *tests]
        began = time.monotonic()
        # Its own session, so that a timeout kills the whole group: the tests' own children
        # (python3 -m pe_reference ...) would otherwise run on with a looping mutant.
        process = subprocess.Popen(
            command,
            cwd=self.copy,
            env=self.environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, _ = process.communicate()
            return "timeout", time.monotonic() - began, str(stdout or "")[-400:]
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)  # any child left behind by a finished run
            except ProcessLookupError:
                pass
        seconds = time.monotonic() - began
        tail = "\n".join((stdout + stderr).strip().splitlines()[-3:])
        if process.returncode == 0:
            return "passed", seconds, tail
        if process.returncode in (1, 2, 3):
            return "failed", seconds, tail
        if process.returncode == 5:
            return "passed", seconds, tail  # no test collected: nothing could catch the mutant
        if process.returncode == 4 and "found no collectors for" in stdout + stderr:
            # A test file that imports the module unmutated could not import the mutant (it fails at
            # import, or in a table made at import): pytest names its tests as not found.  Killed.
            return "failed", seconds, tail
        if process.returncode == 4 and "while loading conftest" in stdout + stderr:
            # The same, where tests/conftest.py imports the module: pytest cannot start.  Killed.
            return "failed", seconds, tail
        if process.returncode < 0:
            # Killed by a signal: the mutant crashed the interpreter or exhausted its memory.  Killed.
            return "failed", seconds, tail
        return "error", seconds, tail


def equivalent_keys(path: str | None) -> dict[str, str]:
    """Mutant keys in backquotes on the table lines under a heading that says "equivalent"."""
    if path is None:
        return {}
    keys: dict[str, str] = {}
    inside = False
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#"):
                inside = "equivalent" in line.lower()
            elif inside and line.startswith("|"):
                for key in re.findall(r"`([\w.]+:[a-z]+:[^`:]+:[0-9a-f]{6}(?:~\d+)?)`", line):
                    keys[key] = line.strip()
    return keys


def source_line(source: str, line: int) -> str:
    return source.splitlines()[line - 1].strip()


def changed_lines(source: str, mutant: Mutant) -> str:
    """The mutated text of the mutant's first line."""
    mutated = mutant.apply(source)
    return mutated.splitlines()[mutant.line - 1].strip()


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python tests/mutation.py", description=__doc__.split("\n")[0])
    parser.add_argument("--mutants", type=int, default=300, help="mutants to sample in all (default 300)")
    parser.add_argument(
        "--minimum", type=int, default=0, help="mutants at least in each section (default 0: in proportion alone)"
    )
    parser.add_argument(
        "--seed", type=int, help="the sample's seed (default: a fresh one, printed, to give again for the same sample)"
    )
    parser.add_argument("--section", action="append", default=[], help="run only sections whose title has WORD")
    parser.add_argument("--only", action="append", default=[], help="run only the mutant with this key")
    parser.add_argument("--report", help="write the figures and the survivors to this Markdown file")
    parser.add_argument("--equivalent", help="a report whose table lines name equivalent mutants by key")
    parser.add_argument(
        "--timeout-factor", type=float, default=3.0, help="timeout: this times its tests' seconds unmutated + 20 s"
    )
    parser.add_argument(
        "--most-tests",
        type=int,
        default=40,
        help="test functions a mutant runs at most, the fastest of those that ran its lines",
    )
    parser.add_argument(
        "--timeout", type=float, help="a fixed timeout in seconds instead of one from the tests' seconds"
    )
    parser.add_argument("--list", action="store_true", help="print the sections and the sample; run none")
    parser.add_argument("--clean", action="store_true", help="the coverage run and the self-check only")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs pytest")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="mutants (and coverage processes) run at once, each in its own copy (default 1; at most the cores)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(argv)
    if args.seed is None:
        # A fresh sample each run, so that the tests cannot be fitted to one; printed below and in the report.
        args.seed = random.SystemRandom().randrange(1, 10**9)
    with open(os.path.join(ROOT, MODULE), encoding="utf-8") as handle:
        source = handle.read()
    sections = sections_of(source.splitlines())
    finder = Finder(source)
    mutants = finder.candidates()
    assign_sections(mutants, sections)
    if args.section:
        # The sections asked for are sampled alone: --mutants is shared among them.
        words = [word.lower() for word in args.section]
        sections = [section for section in sections if any(word in section.title.lower() for word in words)]
        mutants = [m for m in mutants if any(word in m.section.lower() for word in words)]
    chosen = sample(finder, mutants, sections, args.mutants, args.minimum, args.seed)
    if args.only:
        wanted = set(args.only)
        chosen = [m for m in chosen if m.key in wanted] + [m for m in mutants if m.key in wanted and m not in chosen]
    candidates_of = {section.title: sum(1 for m in mutants if m.section == section.title) for section in sections}
    print(
        f"{len(mutants)} candidate mutants, {len(chosen)} chosen (seed {args.seed}: --seed {args.seed} samples them again)"
    )
    for section in sections:
        picked = sum(1 for m in chosen if m.section == section.title)
        print(
            f"  {section.title!r}: lines {section.first}-{section.last}, {candidates_of[section.title]} candidates, {picked} chosen"
        )
    if args.list:
        for mutant in chosen:
            print(f"{mutant.key}  [{mutant.section}] {mutant.function}: {changed_lines(source, mutant)}")
        return 0
    equivalent = equivalent_keys(args.equivalent)
    with tempfile.TemporaryDirectory(prefix="mutation-") as folder:
        # Every copy first, then the coverage run in the first: an edit of the tree while the run goes on
        # changes nothing it measures.
        # The coverage run has a copy of its own: the files the suite leaves behind stay out of the mutants'.
        copies = [copy_tree(ROOT, os.path.join(folder, f"job{job}")) for job in range(max(1, args.jobs) + 1)]
        for copy in copies:
            with open(os.path.join(copy, MODULE), encoding="utf-8") as handle:
                if handle.read() != source:
                    print(f"{MODULE} changed while it was being copied: run again", file=sys.stderr)
                    return 2
        covered = Coverage.build(copies.pop(), args.python, folder, args.jobs)

        def tests_of(mutant: Mutant) -> list[str]:
            """The module's examples, and the test functions that ran the mutant's lines (or read what they make)."""
            last = source.count("\n", 0, mutant.end) + 1
            found = covered.tests(mutant.line, last, args.most_tests)
            if not found or not mutant.function:  # run at import: no test function ran it
                found = sorted(set(found) | set(covered.import_tests(source, mutant.line, args.most_tests)))
            return list(ALWAYS) + found

        def timeout_of(tests: list[str]) -> float:
            if args.timeout is not None:
                return float(args.timeout)
            return float(args.timeout_factor) * sum(covered.seconds.get(test, 1.0) for test in tests) + 20

        runner = Runner(copies[0], source, args.python)
        runner.write(source)
        if not self_check(runner, source, tests_of):
            return 2
        if args.clean:
            return 0
        runners = [runner] + [Runner(copy, source, args.python) for copy in copies[1:]]
        free: queue.Queue[Runner] = queue.Queue()
        for each in runners:
            free.put(each)
        lock = threading.Lock()
        finished = itertools.count(1)

        def judge(mutant: Mutant) -> tuple[str, float, str]:
            """Runs one mutant in a free copy; the copies are as many as the jobs."""
            own = free.get()
            try:
                own.write(mutant.apply(source))
                tests = tests_of(mutant)
                outcome, seconds, tail = own.run(tests, timeout_of(tests))
                own.write(source)
            finally:
                free.put(own)
            with lock:
                announce(next(finished), mutant, outcome, seconds, tail)
            return outcome, seconds, tail

        def announce(number: int, mutant: Mutant, outcome: str, seconds: float, tail: str) -> None:
            """One line per mutant as it ends (an error is told after all have run, with its output)."""
            if outcome == "error":
                return
            mark = {"failed": "killed", "timeout": "TIMEOUT", "passed": "SURVIVED"}[outcome]
            if mutant.key in equivalent and outcome == "passed":
                mark = "survived (equivalent)"
            print(
                f"[{number}/{len(chosen)}] {mark:8} {seconds:5.1f}s {mutant.key} [{mutant.section}] "
                f"{mutant.function}: {changed_lines(source, mutant)}",
                flush=True,
            )
            # Which test killed it: pytest's summary line, so that a kill by a broken test shows.
            failed = [line for line in tail.splitlines() if line.startswith(("FAILED", "ERROR"))]
            if outcome == "failed" and failed:
                print(f"    {failed[0][:200]}", flush=True)

        began = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(runners)) as pool:
            outcomes = list(pool.map(judge, chosen))
        for mutant, (outcome, _, tail) in zip(chosen, outcomes):
            if outcome == "error":
                print(tail)
                print(f"pytest could not run for mutant {mutant.key}", file=sys.stderr)
                return 2
        # In the sample's order, whatever order the jobs finished in.
        results = [(mutant, outcome, seconds) for mutant, (outcome, seconds, _) in zip(chosen, outcomes)]
        runner.write(source)
    elapsed = time.monotonic() - began
    text = summary(results, sections, equivalent, source, args, elapsed)
    print(text)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as handle:
            handle.write(text)
    return 0


def self_check(runner: Runner, source: str, tests_of: Callable[[Mutant], list[str]]) -> bool:
    """A mutant that makes encoding() raise is killed: the tests import the copy, not an installed module."""
    tree = ast.parse(source)
    offsets = Offsets(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "encoding":
            first = node.body[1] if isinstance(node.body[0], ast.Expr) else node.body[0]
            start, end = offsets.span(first)
            lines = source.count("\n", start, end)
            mutated = source[:start] + "raise RuntimeError('mutation self-check')" + "\n" * lines + source[end:]
            break
    else:
        print("self-check: no function encoding() at the top level", file=sys.stderr)
        return False
    probe = Mutant(first, start, end, "raise RuntimeError('mutation self-check')", "del", "raise")
    runner.write(mutated)
    outcome, _, _ = runner.run(tests_of(probe), None)
    runner.write(source)
    print(f"self-check: a mutant whose encoding() raises is {'killed' if outcome == 'failed' else outcome}")
    if outcome != "failed":
        print("the tests do not import the mutated copy", file=sys.stderr)
        return False
    return True


def summary(
    results: list[tuple[Mutant, str, float]],
    sections: list[Section],
    equivalent: dict[str, str],
    source: str,
    args: argparse.Namespace,
    elapsed: float,
) -> str:
    """The figures per section and the survivors, as Markdown."""
    lines = [
        "# Mutation run",
        "",
        f"`python tests/mutation.py --mutants {args.mutants} --minimum {args.minimum} --seed {args.seed}"
        + "".join(f" --section '{word}'" for word in args.section)
        + "".join(f" --only {key}" for key in args.only)
        + (f" --timeout {args.timeout:g}" if args.timeout is not None else "")
        + f" --most-tests {args.most_tests} --timeout-factor {args.timeout_factor:g}"
        + (f" --jobs {args.jobs}" if args.jobs > 1 else "")
        + "`"
        + f" ({len(results)} mutants, {elapsed / 60:.1f} minutes)",
        "",
        "| Section | Mutants | Killed | Timeouts | Survived | Equivalent | Score | Score (non-equivalent) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def row(title: str, of: list[tuple[Mutant, str, float]]) -> str:
        killed = sum(1 for _, outcome, _ in of if outcome == "failed")
        timeouts = sum(1 for _, outcome, _ in of if outcome == "timeout")
        survived = [m for m, outcome, _ in of if outcome == "passed"]
        same = sum(1 for m in survived if m.key in equivalent)
        total = len(of)
        score = 100.0 * (killed + timeouts) / total if total else 100.0
        real = total - same
        real_score = 100.0 * (killed + timeouts) / real if real else 100.0
        return (
            f"| {title} | {total} | {killed} | {timeouts} | {len(survived) - same} | {same} | "
            f"{score:.0f}% | {real_score:.0f}% |"
        )

    for section in sections:
        of = [r for r in results if r[0].section == section.title]
        if of:
            lines.append(row(section.title, of))
    lines.append(row("**All**", results))
    lines += ["", "## Survivors", ""]
    lines += ["| Key | Section | Function | Original | Mutated | Equivalent |", "|---|---|---|---|---|---|"]
    for mutant, outcome, _ in results:
        if outcome == "passed":
            original = source_line(source, mutant.line).replace("|", "\\|")
            mutated = changed_lines(source, mutant).replace("|", "\\|")
            same = "yes" if mutant.key in equivalent else ""
            lines.append(
                f"| `{mutant.key}` | {mutant.section} | {mutant.function} | `{original}` | `{mutated}` | {same} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
