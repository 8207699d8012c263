"""Run the README's commands as a newcomer would, time them, and judge pytest's summary.

The README (the front door and the test command) and docs/development.md (the peers' command) are the
one place the commands are written: this script reads their one-line shell blocks and runs them word
for word, with ``python3`` the interpreter chosen here.

    python3 .ci/readme.py --list                 the commands it finds, one per line
    python3 .ci/readme.py fresh [--python PY]... a new clone in a temporary folder (no ../shared beside
                                                 it), the front door and the test command there, in a
                                                 new virtual environment: what a fresh machine does
    python3 .ci/readme.py peers                  the peers' command in this checkout (../shared beside
                                                 it, as CI lays it): every test runs, none may skip
    python3 .ci/readme.py ci [--python PY]...     both at once, as CI runs them: each test once, on the
                                                 fresh path or, if it did not pass there, with the peers

A run fails (exit 1) when a command fails, when pytest's summary counts an error or a failure, or when
a test skips for a reason other than a missing peer ("needs ..."); in the peers run, when anything
skips. It prints each command's time and the skips grouped by reason. Several --python run at once.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Each command by name, the page that writes it, and the text that identifies it among its one-line shell blocks.
MARKERS = (
    ("front", "README.md", "-m pe_reference 4 4"),
    ("tests", "README.md", '".[test]"'),
    ("peers", "docs/development.md", '".[test,peers]"'),
)


def readme_commands() -> Dict[str, str]:
    """The commands by name: the one-line blocks of ```sh fences of their page that hold their marker."""
    found: Dict[str, str] = {}
    for name, page, marker in MARKERS:
        with open(os.path.join(ROOT, page), encoding="utf-8") as file:
            blocks = re.findall(r"^```sh\n(.*)\n```$", file.read(), flags=re.MULTILINE)
        matches = [block for block in blocks if marker in block and block.startswith("python3 ")]
        if len(matches) != 1:
            raise SystemExit(f"readme.py: {page} must have one 'python3' command with {marker}, found {matches}")
        found[name] = matches[0]
    return found


def summary(output: str) -> Tuple[str, Dict[str, int]]:
    """pytest's closing line and its skips by reason, from the -rs lines of its short summary.

    The closing line may stand between rows of = or alone (-q); a skip's place may lack its line number.
    """
    output = re.sub(r"\x1b\[[0-9;]*m", "", output)
    lines = [
        line.strip("= ")
        for line in output.splitlines()
        if re.match(r"^=* ?\d+ (passed|failed|skipped|deselected|errors?|xfailed|xpassed)\b.* in [0-9.]+s", line)
    ]
    skips: Dict[str, int] = {}
    for count, reason in re.findall(r"^SKIPPED \[(\d+)\] \S+?(?::\d+)?: (.*)$", output, flags=re.MULTILINE):
        skips[reason] = skips.get(reason, 0) + int(count)
    return (lines[-1] if lines else ""), skips


def judge(label: str, status: int, output: str, skips_allowed: bool) -> List[str]:
    """The problems of one pytest run: a failing status, errors or failures counted, skips not allowed."""
    closing, skips = summary(output)
    print(f"-- {label}: {closing or 'no pytest summary'}")
    for reason, count in sorted(skips.items(), key=lambda item: (-item[1], item[0])):
        print(f"   {count:4d} skipped: {reason}")
    problems = []
    if status != 0:
        problems.append(f"{label}: exit status {status}")
    if not closing or re.search(r"\b(failed|error|errors)\b", closing) or " passed" not in closing:
        problems.append(f"{label}: the summary is not all passed: {closing!r}")
    counted = re.search(r"(\d+) skipped", closing)
    if counted and int(counted.group(1)) != sum(skips.values()):
        problems.append(f"{label}: {counted.group(1)} skipped, but {sum(skips.values())} listed with a reason")
    for reason in skips:
        if not skips_allowed:
            problems.append(f"{label}: a test skipped: {reason}")
        elif not reason.startswith("needs "):
            problems.append(f"{label}: a test skipped for a reason other than a missing peer: {reason}")
    return problems


def start(
    command: str, cwd: str, python: str, log: str, pytest_options: str = ""
) -> "Tuple[subprocess.Popen[bytes], str]":
    """``command`` started in bash, ``python3`` being ``python``, its output to log: (process, bin folder).

    python3 is a script that runs the interpreter by its own path, not a link to it: a venv made through a
    link would keep the link's folder as its home, and that folder is gone once the command ends.
    """
    bin_dir = tempfile.mkdtemp(prefix="pe_reference-bin-")
    wrapper = os.path.join(bin_dir, "python3")
    with open(wrapper, "w", encoding="utf-8") as file:
        file.write(f"#!/bin/sh\nexec '{python}' \"$@\"\n")
    os.chmod(wrapper, 0o755)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), PY_COLORS="0")
    env.pop("PYTHONPATH", None)
    env.pop("PYTEST_ADDOPTS", None)
    if pytest_options:
        env["PYTEST_ADDOPTS"] = pytest_options
    with open(log, "w", encoding="utf-8") as out:
        process = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    return process, bin_dir


#: The longest a command may run, in seconds (the fresh path takes about 2 minutes, the peers' about 5).
TIMEOUT = 1800


def finish(process: "subprocess.Popen[bytes]", bin_dir: str, log: str) -> Tuple[int, str]:
    """Wait for a started command, at most TIMEOUT seconds: (its status, its output); -9 when it was stopped."""
    try:
        status = process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        status = process.wait()
    shutil.rmtree(bin_dir)
    with open(log, encoding="utf-8", errors="replace") as file:
        return status, file.read()


def interpreter(name: str) -> str:
    """The interpreter that ``name`` runs (through a pyenv shim, say), as its own sys.executable."""
    found = shutil.which(name) if os.sep not in name else name
    if not found:
        raise SystemExit(f"readme.py: --python {name!r} is not on PATH")
    asked = subprocess.run([found, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True)
    if asked.returncode != 0 or not asked.stdout.strip():
        raise SystemExit(f"readme.py: --python {name!r} does not run: {asked.stderr.strip()}")
    return asked.stdout.strip()


def timed(command: str, cwd: str, python: str, log: str) -> Tuple[int, float, str]:
    """Run ``command`` to its end: (status, seconds, output)."""
    began = time.perf_counter()
    status, output = finish(*start(command, cwd, python, log), log)
    return status, time.perf_counter() - began, output


def start_fresh(
    pythons: List[str], work: str, first_options: str = "", other_options: str = ""
) -> "Tuple[List[str], List[Tuple[str, str, float, Tuple[subprocess.Popen[bytes], str]]]]":
    """A new clone per interpreter, the front door in each, then their test commands started at once.

    first_options go to the first interpreter's pytest through PYTEST_ADDOPTS, other_options to the
    others' (the command stays word for word). Returns (problems, [(label, log, start time, started process)]).
    """
    commands = readme_commands()
    problems: List[str] = []
    clones: List[Tuple[str, str, str]] = []
    for python in sorted(set(pythons), key=pythons.index):
        asked = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
        )
        label = f"CPython {asked.stdout.strip()} ({python})"
        clone = os.path.join(work, f"python{len(clones)}", "pe_reference")
        cloned = subprocess.run(["git", "clone", "--quiet", ROOT, clone], capture_output=True, text=True)
        if asked.returncode != 0 or cloned.returncode != 0:
            problems.append(f"{label}: could not run it or clone into {clone}: {asked.stderr}{cloned.stderr}".strip())
            continue
        clones.append((label, python, clone))
    if not clones:
        problems.append("no interpreter to run the fresh path with")
    started: "List[Tuple[str, str, float, Tuple[subprocess.Popen[bytes], str]]]" = []
    for label, python, clone in clones:
        print(f"== fresh clone, {label}: {clone}", flush=True)
        status, seconds, output = timed(commands["front"], clone, python, os.path.join(clone, "..", "front.log"))
        first = output.splitlines()[0] if output else "nothing printed"
        print(f"-- {label}, the front door: {seconds:.2f} s, status {status}, first line {first!r}")
        if status != 0 or not first.startswith("pos  0 sin_0"):
            problems.append(f"{label}: the front door failed")
        log = os.path.join(clone, "..", "tests.log")
        options = first_options if not started else other_options
        started.append((label, log, time.perf_counter(), start(commands["tests"], clone, python, log, options)))
    return problems, started


def finish_fresh(started: "Tuple[str, str, float, Tuple[subprocess.Popen[bytes], str]]") -> Tuple[List[str], str]:
    """Wait for one fresh test command; print its time and verdict: (its problems, its output)."""
    label, log, began, (process, bin_dir) = started
    status, output = finish(process, bin_dir, log)
    seconds = time.perf_counter() - began
    pytest_seconds = re.findall(r" in ([0-9.]+)s", summary(output)[0])
    spent = f", pytest {float(pytest_seconds[-1]):.0f} s of it" if pytest_seconds else ""
    print(f"-- {label}, the test command: {seconds:.0f} s in all{spent} (log {os.path.normpath(log)})", flush=True)
    return judge(label, status, output, skips_allowed=True), output


def fresh(pythons: List[str], keep: Optional[str]) -> int:
    """The README's first two commands in a new clone per interpreter; their times and verdicts.

    Every clone is made first; then the front door runs in each, then the test commands of all at once.
    """
    work = tempfile.mkdtemp(prefix="pe_reference-fresh-", dir=keep)
    problems, started = start_fresh(pythons, work)
    for each in started:
        problems += finish_fresh(each)[0]
    if not keep and not problems:
        shutil.rmtree(work)
    for problem in problems:
        print("FAILED", problem)
    return 1 if problems else 0


def peers(python: str) -> int:
    """The README's peers command in this checkout; every test runs."""
    command = readme_commands()["peers"]
    print(f"== the peers' command in {ROOT}: {command}", flush=True)
    log = os.path.join(tempfile.mkdtemp(prefix="pe_reference-peers-"), "peers.log")
    status, seconds, output = timed(command, ROOT, python, log)
    print(output[-3000:] if status else "", end="")
    print(f"-- the peers' command: {seconds:.0f} s (log {log})")
    problems = judge("peers", status, output, skips_allowed=False)
    for problem in problems:
        print("FAILED", problem)
    return 1 if problems else 0


#: What CI adds to the peers' environment: pytest-xdist, to run the peers' tests on every CPU.
CI_TOOLS = "pytest-xdist==3.8.0"


def ci(pythons: List[str]) -> int:
    """The fresh path and the peers' tests at once, each test run once with the peers or without.

    The fresh path runs as ``fresh`` does, the first interpreter's pytest listing the tests that passed
    (-rA), the others' leaving the tests marked at_size to it. Meanwhile the peers' command installs in this checkout (its pytest left for later), with
    pytest-xdist. Then the tests the peers' environment collects that did not pass on the fresh path
    (those that need a peer, ../shared or a board build, and the cases only the peers make) run
    there on every CPU; none may skip. The other interpreters' fresh runs end last.
    """
    work = tempfile.mkdtemp(prefix="pe_reference-ci-")
    command = readme_commands()["peers"]
    install, test = command.rsplit(" && ", 1)
    python = pythons[0]
    print(f"== the peers' install in {ROOT}: {install}", flush=True)
    install_log = os.path.join(work, "install.log")
    installing = start(f"{install} && .venv/bin/python -m pip install {CI_TOOLS}", ROOT, python, install_log)
    began = time.perf_counter()
    # The other interpreters leave the memory measures at size (at_size, a fifth of the fresh run's time)
    # to the first: CI's two cores are its limit.
    problems, started = start_fresh(pythons, work, first_options="-rA", other_options="-m 'not at_size'")
    if not started:
        for problem in problems:
            print("FAILED", problem)
        return 1
    first_problems, first_output = finish_fresh(started[0])
    problems += first_problems
    passed = set(re.findall(r"^PASSED (\S.*?)\s*$", first_output, flags=re.MULTILINE))
    status, output = finish(*installing, install_log)
    print(f"-- the peers' install: status {status}, done {time.perf_counter() - began:.0f} s after it began")
    if status != 0:
        print(output[-3000:])
        problems.append("the peers' install failed")
    else:
        listed = subprocess.run(
            [".venv/bin/python", "-m", "pytest", "--collect-only", "-q"], cwd=ROOT, capture_output=True, text=True
        )
        collected = [line for line in listed.stdout.splitlines() if "::" in line]
        rest = [node for node in collected if node not in passed]
        print(f"== the peers' tests: {len(collected)} collected, {len(rest)} not passed on the fresh path", flush=True)
        if listed.returncode != 0 or not rest or not passed:
            problems.append(f"the peers' collection failed or left nothing to run: {listed.stderr[-2000:]}")
        else:
            log = os.path.join(work, "peers.log")
            arguments = " ".join("'" + node.replace("'", "'\\''") + "'" for node in rest)
            status, seconds, output = timed(f"{test} -n auto {arguments}", ROOT, python, log)
            print(output[-3000:] if status else "", end="")
            print(f"-- the peers' tests: {seconds:.0f} s (log {log})", flush=True)
            problems += judge("peers", status, output, skips_allowed=False)
            ran = re.search(r"(\d+) passed", summary(output)[0])
            if ran and int(ran.group(1)) != len(rest):
                problems.append(f"peers: {ran.group(1)} passed of the {len(rest)} given")
    for each in started[1:]:
        problems += finish_fresh(each)[0]
    print(f"-- fresh path and peers' tests: {time.perf_counter() - began:.0f} s")
    for problem in problems:
        print("FAILED", problem)
    if not problems:
        shutil.rmtree(work)
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=["fresh", "peers", "ci"])
    parser.add_argument("--list", action="store_true", help="print the README's commands by name and stop")
    parser.add_argument("--python", action="append", help="the interpreter that python3 stands for (repeatable)")
    parser.add_argument("--keep", help="fresh: make the clones in a new folder inside this one, and keep them")
    args = parser.parse_args()
    if args.list:
        for name, command in readme_commands().items():
            print(f"{name}\t{command}")
        return 0
    pythons = [interpreter(name) for name in (args.python or ["python3"])]
    if args.mode == "fresh":
        return fresh(pythons, args.keep)
    if args.mode == "peers":
        return peers(pythons[0])
    if args.mode == "ci":
        return ci(pythons)
    parser.error("give a mode (fresh or peers) or --list")
    return 2


if __name__ == "__main__":
    sys.exit(main())
