"""What several test modules share: the repository's root, the optional peers, a subprocess environment, running the command line."""

import ast
import io
import os
import re
import struct
from pathlib import Path
from typing import Any, Dict, List, Tuple, Union

import pytest

from pe_reference import _Source, compare, encoding, main

ROOT = Path(__file__).resolve().parent.parent

#: What installs the tests' optional peers (numpy, torch, the frameworks): the README's second test command.
PEERS_INSTALL = 'pip install -e ".[test,peers]"'

#: What a skip for each peer says to install; a peer that has no entry says PEERS_INSTALL alone.
PEER_NOTES = {"torch": " (the CPU build: see the README)"}


def section_headers(lines: List[str]) -> List[Tuple[int, str]]:
    """(line number, title) of each section header of pe_reference.py: a title between two rules of dashes.

    The one definition of a section, for the layout tests and the mutation script.
    """
    rule = re.compile(r"# -{20,}\s*$")
    found = []
    for index in range(len(lines) - 2):
        if rule.match(lines[index]) and rule.match(lines[index + 2]):
            title = lines[index + 1]
            if title.startswith("# ") and not rule.match(title):
                found.append((index + 2, title[2:].strip()))
    return found


def need(name: str) -> Any:
    """The optional peer ``name`` (numpy, torch, a framework), imported; without it the test skips.

    The skip's reason names the peer and the command that installs it, so a run on a machine with
    nothing but the test tools lists what it left out and why (pytest -rs, set in pyproject.toml).
    """
    return pytest.importorskip(name, reason=f"needs {name}: {PEERS_INSTALL}{PEER_NOTES.get(name, '')}")


class _Peer:
    """A peer imported when a test first uses it: that test skips without it, the module's others still run.

    Only inside a test: used at a module's top level or in a parametrize list, it would skip the whole module.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            raise AttributeError(attribute)  # pytest's questions while it collects (fixture markers) import nothing
        if self._module is None:
            self._module = need(self._name)  # once imported, kept
        return getattr(self._module, attribute)


def peer(name: str) -> Any:
    """The optional peer ``name``, imported on first use (see need): for a module whose tests use it only in part."""
    return _Peer(name)


def printed_call(text: str) -> Tuple[int, int, Dict[str, Any]]:
    """The encoding() call a diagnosis prints, read back: (seq_len, d_model, its keywords)."""
    start = text.index("encoding(")
    end = text.index(")", start)
    while True:  # the first ")" that closes the call (a keyword's value may hold one)
        try:
            node = ast.parse(text[start : end + 1])
            break
        except SyntaxError:
            end = text.index(")", end + 1)
    call = node.body[0]
    assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
    seq_len, d_model = (ast.literal_eval(argument) for argument in call.value.args)
    return seq_len, d_model, {keyword.arg or "": ast.literal_eval(keyword.value) for keyword in call.value.keywords}


def assert_call_reproduces(text: str, table: Any, **data: Any) -> None:
    """The call a diagnosis prints computes a table of the same shape, and the table passes compare() with its options.

    A diagnosis that names damage prints the call that computes the table without it: compare() with its
    options then names the same damage and nothing else.  ``data`` holds what the check was given
    (positions one by one, which the call names without writing out).
    """
    seq_len, d_model, keywords = printed_call(text.replace("positions=positions", "positions=None"))
    if "positions" in keywords:
        keywords["positions"] = data["positions"]
    assert (len(encoding(seq_len, d_model, **keywords)), d_model) == (len(table), len(table[0])), text
    report = compare(table, **keywords)
    if "without the damage" in text:
        damage = text.split("except for ", 1)[1].split(". The call")[0]
        assert not report.ok and report.diagnosis is not None and damage in report.diagnosis, (text, str(report))
    else:
        assert report.ok, (text, str(report))


def subprocess_environment() -> Dict[str, str]:
    """The environment of a child Python that must import this checkout's pe_reference."""
    return dict(os.environ, PYTHONPATH=str(ROOT))


def run_main(capsys: "pytest.CaptureFixture[str]", *args: str) -> Tuple[int, str, str]:
    """``main(args)`` in this process: (exit status, standard output, standard error)."""
    try:
        status = main(list(args))
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def npy(header: Union[str, bytes], data: bytes, version: int = 1) -> bytes:
    """A .npy file built by hand, as the format's documentation describes: the header (str: Latin-1) padded
    so that the data starts at a multiple of 64 bytes, after a preamble of 10 bytes (version 1) or 12 (2, 3)."""
    text = header.encode("latin-1") if isinstance(header, str) else header
    preamble = 10 if version == 1 else 12
    text += b" " * ((64 - (preamble + len(text) + 1) % 64) % 64) + b"\n"
    length = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + length + text + data


# Files --check must refuse with one line and exit status 2: (name, content, what the message says).
HOSTILE: List[Tuple[str, bytes, str]] = [
    ("empty.csv", b"", "the table is empty"),
    ("blank.csv", b"\n\n \n", "the table is empty"),
    ("header-only.csv", b"sin_0,cos_0\n", "the table is empty"),
    ("nan-like.csv", b"0.0,1.0\nnan0,1.0\n", "line 2, field 1 is not a number: 'nan0'"),
    ("nul.csv", b"0.0,1.0\n0.5,\x001.0\n", "line 2 holds a NUL character"),
    ("dotless-i.csv", "\u0131nf,1.0\n".encode(), "line 1, field 1 is not a number: '\u0131nf'"),
    ("underscore.csv", b"1_0,1\n", "line 1, field 1 is not a number: '1_0'"),
    ("control.csv", b"\x1f0,1\n", "line 1, field 1 is not a number: '\\x1f0'"),
    ("words.csv", b"0.0,1.0\nzero,one\n", "line 2, field 1 is not a number: 'zero'"),
    ("ragged.csv", b"0.0,1.0\n0.5\n", "ragged table: line 2 has 1 values, the first has 2"),
    ("latin1.csv", b"0.0,\xe91.0\n", "is neither a .npy file nor UTF-8 text"),
    ("bool.json", b"[[true, 1.0]]", "[0][0] must be a number, got True"),
    ("string.json", b'[["0.5"]]', "[0][0] must be a number, got '0.5'"),
    ("flat.json", b"[0.0, 1.0]", "row 0 must be an array of numbers, got float"),
    ("object.json", b'{"a": 1}', "JSON must be an array of arrays of numbers, got dict"),
    ("ragged.json", b"[[0.0, 1.0], [0.0]]", "ragged table: row 1 has 1 values, the first has 2"),
    ("empty.json", b"[]", "the table is empty"),
    ("empty-row.json", b"[[]]", "row 0 is empty"),
    ("broken.json", b"[[0.0, 1.0]", "not valid JSON"),
    ("deep.json", b"[" * 100000 + b"]" * 100000, "JSON nested too deeply"),
    ("magic.npy", b"\x93NUMPX\x01\x00" + b"\x00" * 100, "is not a .npy file"),
    ("short.npy", b"\x93NUMPY\x01", "is not a .npy file"),
    ("version.npy", b"\x93NUMPY\x09\x00\x10\x00" + b" " * 16, "unsupported .npy version 9.0"),
    ("long-header.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", 1 << 30) + b"{", "header of 1073741824 bytes"),
    ("cut-header.npy", b"\x93NUMPY\x01\x00\x40\x00{'descr'", "the .npy header is cut short"),
    ("code.npy", npy("__import__('os').system('echo pwned')", b""), "the .npy header is not a Python literal"),
    ("list-header.npy", npy("[1, 2]", b""), "must have exactly descr, fortran_order and shape"),
    (
        "object.npy",
        npy("{'descr': '|O', 'fortran_order': False, 'shape': (2, 2), }", b"\x80\x04" * 8),
        "object arrays are refused",
    ),
    (
        "int.npy",
        npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), }", b"\x00" * 8),
        "dtype must be float16, float32 or float64",
    ),
    (
        "struct.npy",
        npy("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1, 1), }", b"\x00" * 8),
        "structured arrays are refused",
    ),
    (
        "order.npy",
        npy("{'descr': '<f8', 'fortran_order': 1, 'shape': (1, 1), }", b"\x00" * 8),
        "fortran_order must be True or False",
    ),
    (
        "3d.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1), }", b"\x00" * 8),
        "a table must be 2-D, got shape (1, 1, 1)",
    ),
    (
        "1d.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", b"\x00" * 32),
        "a table must be 2-D, got shape (4,)",
    ),
    (
        "negative.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (-1, 4), }", b""),
        "shape must be a tuple of non-negative integers",
    ),
    (
        "absurd.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 1000000000000), }", b"\x00" * 8),
        "data cut short: 8 bytes",
    ),
    (
        "absurd-fortran.npy",
        npy("{'descr': '<f8', 'fortran_order': True, 'shape': (1000000000000, 1000000000000), }", b"\x00" * 8),
        "more than the limit of 67108864",
    ),
    ("zero.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }", b""), "the table is empty"),
    (
        "truncated.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", b"\x00" * 31),
        "data cut short: 31 bytes, shape (2, 2) of <f8 needs 32",
    ),
    (
        "extra.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", b"\x00" * 9),
        "followed by extra bytes",
    ),
    ("garbage.bin", bytes(range(256)) * 4, "is neither a .npy file nor UTF-8 text"),
]


def parse(data: bytes, name: str, source: str = "") -> "_Source":
    """The table in data as --check reads a file named source (its kind by name or content)."""
    return _Source(name, None, io.BytesIO(data)).scan(source.lower())
