"""Run many jobs, each as if in a fresh interpreter that has just imported dispatchcore.

The doc pages (``test_docs.py``) and the lessons' notebooks (``test_notebooks.py``) must each run
in a fresh interpreter, so that what one leaves behind cannot help or hurt another. Starting one
costs ~1 s of imports, and there are ~50 of them. So a few worker interpreters import dispatchcore
and the job's module once, then ``fork`` a child per job: each child starts from the state a
fresh interpreter has right after ``import dispatchcore``, runs one job, writes its JSON result
and exits. Where ``os.fork`` is missing (Windows), every job gets an interpreter of its own.

Loaded by file path, as ``_browser.py``. Run as a script by :func:`run_all`:
``python _fresh.py MODULE.py FUNCTION OUTDIR INDEX=ARG ...``.
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def run_all(module: Path, function: str, args: list[str], timeout: float = 600) -> list[Any]:
    """``module.function(arg)`` for each arg, each in a fresh interpreter; the JSON results in order.

    A job that raises gives ``{"error": <traceback>}``; a worker that dies takes its jobs' results
    with it, and they read ``{"error": <the worker's exit status and output>}``.
    """
    workers = max(1, min(8, os.cpu_count() or 1, len(args))) if hasattr(os, "fork") else len(args)
    shares = [[(i, a) for i, a in enumerate(args) if i % workers == w] for w in range(workers)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    results: list[Any] = [None] * len(args)
    with tempfile.TemporaryDirectory() as out:

        def work(share: list[tuple[int, str]]) -> None:
            command = [sys.executable, __file__, str(module), function, out, *(f"{i}={a}" for i, a in share)]
            proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
            for i, _ in share:
                path = Path(out) / f"{i}.json"
                results[i] = (json.loads(path.read_text()) if path.exists() else
                              {"error": f"the worker exited {proc.returncode}\n{proc.stdout}{proc.stderr}"})

        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            for done in [pool.submit(work, share) for share in shares]:
                done.result()
    return results


def _run_one(job: Any, arg: str, result: Path) -> None:
    try:
        value = job(arg)
    except BaseException:  # noqa: BLE001 - the job's failure is the result the test reads
        value = {"error": traceback.format_exc()}
    sys.stdout.flush()
    sys.stderr.flush()
    result.write_text(json.dumps(value))


def _main(module_path: str, function: str, out: str, jobs: list[str]) -> None:
    import dispatchcore  # noqa: F401 - what every child starts from

    spec = importlib.util.spec_from_file_location(f"_fresh_{Path(module_path).stem}", module_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    job = getattr(module, function)
    for item in jobs:
        index, _, arg = item.partition("=")
        result = Path(out) / f"{index}.json"
        if not hasattr(os, "fork"):  # run_all gave this interpreter one job: it is that job's fresh one
            _run_one(job, arg, result)
            continue
        pid = os.fork()
        if pid == 0:  # the child: one job, then out without running the worker's exit handlers
            status = 0
            try:
                _run_one(job, arg, result)
            except BaseException:  # noqa: BLE001 - e.g. the result cannot be written: the parent reports it
                status = 1
            os._exit(status)
        _, status = os.waitpid(pid, 0)
        if not result.exists():  # the job ended its process (os._exit, a signal) before returning
            result.write_text(json.dumps({"error": f"the job's process ended with wait status {status} "
                                                   "before returning"}))


if __name__ == "__main__":
    _main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
