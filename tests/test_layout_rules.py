"""How pe_reference.py reads: its section map, the formula near the top, and long functions that say why."""

import ast
import re
from typing import List, Tuple

from tests.helpers import ROOT
from tests.mutation import sections_of

SOURCE = (ROOT / "pe_reference.py").read_text(encoding="utf-8")
LINES = SOURCE.splitlines()
TREE = ast.parse(SOURCE)


def headers() -> List[Tuple[int, str]]:
    """(first line, title) of each section header, as the mutation script reads them (not the module's top)."""
    return [(section.first, section.title) for section in sections_of(LINES)[1:]]


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
