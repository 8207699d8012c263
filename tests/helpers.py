"""What several test modules share: running the command line in-process."""

from typing import Tuple

import pytest

from pe_reference import main


def run_main(capsys: "pytest.CaptureFixture[str]", *args: str) -> Tuple[int, str, str]:
    """``main(args)`` in this process: (exit status, standard output, standard error)."""
    try:
        status = main(list(args))
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err
