"""The doctests as a learner runs them: python3 -m doctest FILE, from the repository root.

pytest runs the same examples, but python3 -m doctest has no option flag and no conftest:
an example that passes only under pytest would fail for a reader.
"""

import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers import ROOT

FILES = [ROOT / "pe_reference.py", ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


@pytest.mark.parametrize("path", FILES, ids=[path.relative_to(ROOT).as_posix() for path in FILES])
def test_python_m_doctest_passes(path: Path) -> None:
    name = path.relative_to(ROOT).as_posix()
    process = subprocess.run([sys.executable, "-m", "doctest", name], capture_output=True, text=True, cwd=ROOT)
    assert process.returncode == 0, (
        f"python3 -m doctest {name} exits {process.returncode}:\n{process.stdout}{process.stderr}"
    )
