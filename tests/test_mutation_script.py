"""The mutation script: keys and samples that hold while other lines move, and the tests coverage picks."""

import importlib.util
import os
import sys
from pathlib import Path
from typing import List

from tests.helpers import ROOT

SPEC = importlib.util.spec_from_file_location("mutation_script", os.path.join(ROOT, "tests", "mutation.py"))
assert SPEC is not None and SPEC.loader is not None
mutation = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(mutation)

SOURCE = """\
def frequency(i, d):
    return 10000 ** (-2 * i / d)


class Table:
    def width(self, d):
        if d % 2 == 1:
            return d + 1
        return d
"""


def keys(source: str) -> List[str]:
    return [mutant.key for mutant in mutation.Finder(source).candidates()]


def test_a_mutants_key_names_its_qualified_function_its_change_and_no_line_number() -> None:
    found = keys(SOURCE)
    assert len(found) == len(set(found))
    assert any(key.startswith("Table.width:cmp:!=:") for key in found)
    assert any(key.startswith("frequency:const:10001:") for key in found)


def test_keys_hold_when_lines_are_added_above_and_change_only_on_the_edited_line() -> None:
    moved = "ALPHA = 1\n\n\n" + SOURCE
    assert set(keys(SOURCE)) <= set(keys(moved))
    edited = SOURCE.replace("return d + 1", "return d + 2")
    before, after = set(keys(SOURCE)), set(keys(edited))
    changed = {key.split(":")[0] for key in before ^ after}
    assert changed == {"Table.width"}
    assert any(key.startswith("frequency") for key in before & after)


def test_the_sample_of_a_section_is_the_same_after_an_edit_elsewhere() -> None:
    def chosen(source: str) -> List[str]:
        finder = mutation.Finder(source)
        found = finder.candidates()
        sections = [mutation.Section("Module header", 1)]
        sections[0].last = len(source.splitlines())
        mutation.assign_sections(found, sections)
        return [mutant.key for mutant in mutation.sample(finder, found, sections, 6, 6, 14)]

    first = chosen(SOURCE)
    assert len(first) == 6 and first == chosen(SOURCE)
    # A new function adds candidates: each new one sampled displaces one old one, and no other changes.
    grown = chosen(SOURCE + "\n\ndef extra(x):\n    return x * 3 + 1\n")
    new = [key for key in grown if key.startswith("extra:")]
    assert set(grown) - set(new) <= set(first)
    assert len(set(first) - set(grown)) == len(new)


def test_a_comment_added_to_a_line_keeps_its_keys_and_a_hash_in_a_string_is_code() -> None:
    commented = SOURCE.replace("return d + 1", "return d + 1  # the next even width")
    assert keys(commented) == keys(SOURCE)
    assert mutation.code_of("x = '#' + y  # note") == "x = '#' + y"
    assert mutation.code_of('x = "a\\"#"  # note') == 'x = "a\\"#"'


def test_the_sample_is_in_proportion_to_each_sections_candidates_and_its_seed_fresh_by_default() -> None:
    # Two sections, one with three times the other's candidates: a sample of 8 takes 6 and 2.
    source = "".join(f"def f{k}(x):\n    return x + {k + 2}\n\n\n" for k in range(40))
    finder = mutation.Finder(source)
    found = finder.candidates()
    split = source.splitlines().index("def f30(x):") + 1
    first, second = mutation.Section("First", 1), mutation.Section("Second", split)
    first.last, second.last = split - 1, len(source.splitlines())
    mutation.assign_sections(found, [first, second])
    counts = [sum(1 for m in found if m.section == title) for title in ("First", "Second")]
    assert counts[0] == 3 * counts[1] > 0
    chosen = mutation.sample(finder, found, [first, second], 8, 0, 5)
    assert [sum(1 for m in chosen if m.section == title) for title in ("First", "Second")] == [6, 2]
    # Another seed, another sample of the same shares.
    other = mutation.sample(finder, found, [first, second], 8, 0, 6)
    assert {m.key for m in other} != {m.key for m in chosen}
    # No seed given: main() draws one; no floor per section unless asked.
    defaults = mutation.parse_arguments([])
    assert defaults.seed is None and defaults.minimum == 0


def test_coverage_contexts_become_node_ids_and_constants_take_the_tests_of_their_readers(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    assert mutation.node_id("tests.test_a.test_f", str(tmp_path)) == "tests/test_a.py::test_f"
    assert mutation.node_id("tests.test_a.TestG.test_g", str(tmp_path)) == "tests/test_a.py::TestG::test_g"
    assert mutation.node_id("conftest.testing_value", str(tmp_path)) == ""
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite><testcase classname="tests.test_a" name="test_f[1]" time="0.5"/>'
        '<testcase classname="tests.test_a" name="test_f[2]" time="0.25"/>'
        '<testcase classname="tests.test_a.TestG" name="test_g" time="2"/>'
        '<testcase classname="tests.test_a" name="test_h[1]" time="1"/>'
        '<testcase classname="tests.test_a" name="test_h[2]" time="1"><failure message="x"/></testcase>'
        "</testsuite></testsuites>"
    )
    # A function one of whose cases failed (in the coverage run, under its tracer) judges no mutant.
    assert mutation.junit_seconds(str(junit), str(tmp_path)) == {
        "tests/test_a.py::test_f": 0.75,
        "tests/test_a.py::TestG::test_g": 2.0,
    }
    assert mutation.junit_failed(str(junit), str(tmp_path)) == {"tests/test_a.py::test_h"}
    # A constant runs at import, a function made at import (PRESETS) too: the tests of their readers.
    source = "LIMIT = 3\n\n\ndef make():\n    return {'a': LIMIT}\n\n\nTABLE = make()\n\n\ndef use(k):\n    return TABLE[k]\n"
    covered = mutation.Coverage({5: ["t::make"], 12: ["t::use_a", "t::use_b"]}, {"t::use_a": 2.0, "t::use_b": 1.0})
    assert covered.import_tests(source, 1, 10) == ["t::make"]  # LIMIT is read in make()
    assert covered.import_tests(source, 8, 10) == ["t::use_b", "t::use_a"]  # TABLE's readers, fastest first
    assert covered.tests(11, 12, 1) == ["t::use_b"]  # at most one: the fastest


def test_the_coverage_run_shares_the_test_files_among_its_processes_each_once(tmp_path: Path) -> None:
    # Sizes 9, 7, 4, 3, 1 (kilobytes) in two processes: largest first to the smaller group, 12 and 12.
    for name, size in (("a", 9), ("b", 7), ("c", 4), ("d", 3), ("e", 1)):
        (tmp_path / "tests").mkdir(exist_ok=True)
        (tmp_path / "tests" / f"test_{name}.py").write_bytes(b"#" * 1000 * size)
    (tmp_path / "tests" / "helpers.py").write_text("")
    groups = mutation.test_shards(str(tmp_path), 2)
    assert sorted(groups) == [
        ["tests/test_a.py", "tests/test_d.py"],
        ["tests/test_b.py", "tests/test_c.py", "tests/test_e.py"],
    ]
    assert mutation.test_shards(str(tmp_path), 1) == [[f"tests/test_{name}.py" for name in "abcde"]]
    assert len(mutation.test_shards(str(tmp_path), 9)) == 5  # no more processes than files
    # By an earlier run's seconds: a took 1 s, b 30 s, c 2 s; d and e, which that run did not have, at
    # a, b and c's seconds a byte (33 s for 20 kB: 5 s and 1.7 s). b alone, the rest together.
    earlier = {
        "tests/test_a.py::t": 1.0,
        "tests/test_b.py::t": 20.0,
        "tests/test_b.py::u": 10.0,
        "tests/test_c.py::t": 2.0,
    }
    groups = mutation.test_shards(str(tmp_path), 2, earlier)
    assert sorted(groups) == [
        ["tests/test_a.py", "tests/test_c.py", "tests/test_d.py", "tests/test_e.py"],
        ["tests/test_b.py"],
    ]


def test_a_mutant_that_breaks_the_import_or_the_interpreter_is_killed_not_an_error(tmp_path: Path) -> None:
    # Two mutants seen in the wild: a preset made at import left unbound, a float helper returning None.
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "conftest.py").write_text("import pe_reference\n")
    (tmp_path / "tests" / "test_one.py").write_text(
        "import pe_reference\n\n\ndef test_one():\n    assert pe_reference.ONE == 1\n"
    )
    runner = mutation.Runner(str(tmp_path), "", sys.executable)
    outcomes = []
    # And one that makes the interpreter die of a signal, as a mutant that exhausts the memory does.
    dies = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    for module in ("ONE = 1\n", "ONE = unbound_name\n", "ONE = 2\n", dies):
        runner.write(module)
        outcomes.append(runner.run(["tests/test_one.py"], 120)[0])
    assert outcomes == ["passed", "failed", "failed", "failed"]
