"""Run unchanged PyTorch programs on dispatchcore: ``import torch`` answered by dispatchcore.

What lives here:

* ``install()`` / ``uninstall()``: an import hook (a ``sys.meta_path`` finder) under which ``import
  torch``, ``import torch.nn.functional as F``, ``from torch import optim``, ``import
  torch.utils.data`` ... resolve to dispatchcore and its submodules. The mapping is by name and
  generic: ``torch.X.Y`` is ``dispatchcore.X.Y``, for whatever submodules dispatchcore has when the
  program asks (no list of modules lives here).
* A clear error for the first torch API dispatchcore does not model: ``import torch.fft`` raises
  ``UnmodelledModuleError`` and ``torch.foo`` raises ``UnmodelledAttributeError``, both
  ``UnmodelledAPIError``s whose message names the API and the line of the program that used it:
  ``dispatchcore does not model torch.fft (imported by script.py line 3)``.
* ``run_path(path, args)``: run a script as ``__main__`` with the hook installed for that run only,
  with Python's exit status and traceback (``python -m dispatchcore run script.py``), and two
  observers of the run: ``OpCounter`` (operator calls by op and by the key whose kernel ran, for
  ``--log-ops``) and ``CallWindow`` (the dispatch trace of a window of top-level calls, for
  ``--trace``).

Invariant: the program sees ``torch.X`` as a *view* of ``dispatchcore.X`` (a module object named
``torch.X`` whose attributes are looked up on ``dispatchcore.X``); dispatchcore's own modules are
never modified, so nothing the program does to ``torch`` (``torch.foo = ...``) leaks into
dispatchcore, and ``uninstall()`` puts ``sys.modules`` and ``sys.meta_path`` back exactly as they
were: every ``torch``/``torch.*`` entry is removed and any real torch that was there is restored.
(dispatchcore submodules imported meanwhile stay imported, as any import does.)

Real torch already imported: ``install()`` hides it (its ``sys.modules`` entries are set aside and
put back by ``uninstall()``) and warns with ``RealTorchShadowedWarning``: names already bound to real
torch keep pointing at it, and tensors of the two libraries do not mix. A fresh process (``python
-m dispatchcore run``) never has real torch imported.

A dispatchcore name that means something else in torch is refused rather than handed out:
``torch.trace`` is torch's matrix trace, while ``dispatchcore.trace`` is the dispatch tracer.

PyTorch has no counterpart (it *is* torch); the hook follows the import protocol of PEP 451
(``importlib.abc.MetaPathFinder``/``Loader``), and the run follows ``runpy.run_path``.

Example:
    >>> import dispatchcore.compat as compat
    >>> with compat.install():
    ...     import torch
    ...     import torch.nn.functional as F
    ...     y = F.relu(torch.tensor([-1.0, 2.0]))
    >>> y.tolist()
    [0.0, 2.0]
    >>> type(y).__module__
    'dispatchcore.tensor'
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys
import threading
import traceback
import types
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "CallWindow",
    "Installation",
    "OpCounter",
    "RealTorchShadowedWarning",
    "UnmodelledAPIError",
    "UnmodelledAttributeError",
    "UnmodelledModuleError",
    "install",
    "is_installed",
    "run_path",
    "uninstall",
]

_PACKAGE = "dispatchcore"
_MISSING = object()

# dispatchcore names whose torch namesake is a different thing: torch name -> (the dispatchcore
# object's qualified name, what torch means by it). Refused, so that a program never silently gets
# the other meaning.
_DIFFERENT_MEANING: dict[str, tuple[str, str]] = {
    "torch.trace": ("dispatchcore.trace.trace", "torch.trace is the matrix trace (here x.trace() or "
                                                "ops.aten.trace); dispatchcore.trace is the dispatch tracer"),
}


# --- errors ----------------------------------------------------------------------------------------
class UnmodelledAPIError(Exception):
    """A torch API that dispatchcore does not model, with the program line that used it.

    ``api`` is the torch name (``"torch.fft"``), ``where`` the place in the program
    (``"script.py line 3"``, or ``""`` when no program frame was found).
    """

    api: str = ""
    where: str = ""


class UnmodelledModuleError(UnmodelledAPIError, ModuleNotFoundError):
    """``import torch.X`` (or ``from torch import X``) where dispatchcore has no ``X``.

    Example:
        >>> import dispatchcore.compat as compat
        >>> with compat.install():
        ...     try:
        ...         import torch.fft
        ...     except compat.UnmodelledModuleError as e:
        ...         print(e.api)
        torch.fft
    """

    def __init__(self, api: str, where: str, note: str = "") -> None:
        self.api, self.where = api, where
        ModuleNotFoundError.__init__(self, _message(api, where, "imported by", note),
                                     name=_PACKAGE + api[len("torch"):])


class UnmodelledAttributeError(UnmodelledAPIError, AttributeError):
    """``torch.X.foo`` where ``dispatchcore.X`` has no ``foo``; still an ``AttributeError`` for ``hasattr``.

    Example:
        >>> import dispatchcore.compat as compat
        >>> with compat.install():
        ...     import torch
        ...     hasattr(torch, "not_an_api")
        False
    """

    def __init__(self, api: str, where: str, owner: Any = None, note: str = "") -> None:
        self.api, self.where = api, where
        AttributeError.__init__(self, _message(api, where, "used by", note), name=api.rpartition(".")[2], obj=owner)


class RealTorchShadowedWarning(RuntimeWarning):
    """``install()`` hid a real torch that was already imported in this process."""


def _message(api: str, where: str, verb: str, note: str) -> str:
    text = f"dispatchcore does not model {api}"
    if note:
        text += f" ({note})"
    return text + (f" ({verb} {where})" if where else "")


_HERE = os.path.abspath(__file__)


def _program_location() -> str:
    """``file line N`` of the nearest frame outside this module and the import machinery."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename != _HERE and not filename.startswith("<frozen importlib"):
            shown = os.path.relpath(filename) if os.path.isabs(filename) else filename
            if shown.startswith(".."):
                shown = filename
            return f"{shown} line {frame.f_lineno}"
        frame = frame.f_back
    return ""


# --- torch.X as a view of dispatchcore.X ------------------------------------------------------------
class _TorchModule(types.ModuleType):
    """``torch.X`` as the program sees it: ``dispatchcore.X``'s attributes, a clear error for the rest.

    Attributes the program sets land on the view (dispatchcore is untouched); attribute reads the
    view does not hold go to ``dispatchcore.X``, and submodules come back as views themselves.
    """

    def __init__(self, torch_name: str, target: types.ModuleType, registry: _Registry) -> None:
        super().__init__(torch_name, target.__doc__)
        self.__dict__["_compat_target"] = target
        self.__dict__["_compat_registry"] = registry
        if getattr(target, "__file__", None):
            self.__dict__["__file__"] = target.__file__
        if hasattr(target, "__path__"):  # a package: import machinery looks for __path__
            self.__dict__["__path__"] = list(target.__path__)

    def __getattr__(self, name: str) -> Any:
        target: types.ModuleType = self.__dict__["_compat_target"]
        registry: _Registry = self.__dict__["_compat_registry"]
        api = f"{self.__name__}.{name}"
        value = getattr(target, name, _MISSING)
        if value is _MISSING:  # no except block around the raise: the error chains nothing
            if name.startswith("__") and name.endswith("__"):  # protocol probes: no API message
                raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
            value = registry.submodule(target, name)
            if value is None:
                raise UnmodelledAttributeError(api, _program_location(), self)
        refused = _DIFFERENT_MEANING.get(api)
        if refused is not None and _qualified(value) == refused[0]:
            raise UnmodelledAttributeError(api, _program_location(), self, refused[1])
        if isinstance(value, types.ModuleType):
            return registry.view(value)
        return value

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self.__dict__["_compat_target"])) | set(self.__dict__))

    def __repr__(self) -> str:
        return f"<module {self.__name__!r} (dispatchcore compat view of {self.__dict__['_compat_target'].__name__!r})>"


def _qualified(value: Any) -> str:
    if isinstance(value, types.ModuleType):
        return value.__name__
    return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"


class _Registry:
    """The views of one installation, by torch name (so ``torch.nn`` is one object everywhere)."""

    def __init__(self) -> None:
        self.views: dict[str, _TorchModule] = {}
        self.lock = threading.RLock()

    def view(self, module: types.ModuleType) -> Any:
        name = module.__name__
        if name != _PACKAGE and not name.startswith(_PACKAGE + "."):
            return module  # not dispatchcore's (numpy, math, ...): as it is
        torch_name = "torch" + name[len(_PACKAGE):]
        with self.lock:
            view = self.views.get(torch_name)
            if view is None or view.__dict__["_compat_target"] is not module:
                view = self.views[torch_name] = _TorchModule(torch_name, module, self)
            return view

    def submodule(self, package: types.ModuleType, name: str) -> types.ModuleType | None:
        """``package.name`` imported if it is a submodule that exists (torch imports its eagerly)."""
        if not hasattr(package, "__path__") or not name.isidentifier():
            return None
        full = f"{package.__name__}.{name}"
        if full in sys.modules:
            return sys.modules[full]
        try:
            spec = importlib.util.find_spec(full)
        except (ImportError, ValueError):
            return None
        return importlib.import_module(full) if spec is not None else None

    def resolve(self, torch_name: str) -> _TorchModule:
        """The view for an imported name ``torch[.X...]``, or ``UnmodelledModuleError``."""
        target_name = _PACKAGE + torch_name[len("torch"):]
        refused = _DIFFERENT_MEANING.get(torch_name)
        if refused is not None and refused[0].startswith(target_name + "."):
            raise UnmodelledModuleError(torch_name, _program_location(), refused[1])
        module = sys.modules.get(target_name)
        if module is None:
            parent, _, child = target_name.rpartition(".")
            found = self.submodule(sys.modules[parent], child) if parent in sys.modules else None
            if found is None:
                raise UnmodelledModuleError(torch_name, _program_location())
            module = found
        view = self.view(module)
        if not isinstance(view, _TorchModule):  # sys.modules holds something that is not dispatchcore's
            raise UnmodelledModuleError(torch_name, _program_location())
        return view


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``torch`` and every ``torch.*`` import with a view of the dispatchcore module of that name.

    It answers *every* torch name: returning None for one would let the path finder look for it in
    dispatchcore's directory (``torch.__path__``) and load a second copy of a dispatchcore module.
    """

    def __init__(self, registry: _Registry) -> None:
        self.registry = registry

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        view = self.registry.resolve(fullname)
        return importlib.util.spec_from_loader(fullname, self, is_package="__path__" in view.__dict__)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.registry.views[spec.name]

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the view forwards to a dispatchcore module that is already imported."""


# --- install / uninstall ----------------------------------------------------------------------------
class Installation:
    """What ``install()`` returns: a context manager that uninstalls on exit if this call installed.

    ``with install():`` nests: an inner block inside an outer installation leaves it installed.
    """

    def __init__(self, owner: bool) -> None:
        self.owner = owner

    def __enter__(self) -> Installation:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.owner:
            uninstall()

    def __repr__(self) -> str:
        return f"<dispatchcore.compat installation ({'owner' if self.owner else 'nested'})>"


class _State:
    def __init__(self, finder: _TorchFinder, hidden: dict[str, types.ModuleType]) -> None:
        self.finder = finder
        self.hidden = hidden


_state: _State | None = None
_state_lock = threading.Lock()


def _is_torch_name(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


def install() -> Installation:
    """Make ``import torch`` (and every ``torch.*``) resolve to dispatchcore until ``uninstall()``.

    Idempotent: installing again changes nothing (the returned handle then does not uninstall).
    A real torch already imported is hidden and restored by ``uninstall()``, with a
    ``RealTorchShadowedWarning``.

    Example:
        >>> import dispatchcore.compat as compat
        >>> _ = compat.install()
        >>> import torch
        >>> torch.ones(2).tolist(), compat.is_installed()
        ([1.0, 1.0], True)
        >>> compat.uninstall()
        >>> compat.is_installed()
        False
    """
    global _state
    with _state_lock:
        if _state is not None:
            return Installation(owner=False)
        if "torch" in sys.modules:  # warned before anything changes: a warning raised as an error leaves no hook
            warnings.warn("dispatchcore.compat.install(): real torch was already imported; it is hidden until "
                          "uninstall(), and names already bound to it (an earlier `import torch`) still point at "
                          "real torch, whose tensors do not mix with dispatchcore's", RealTorchShadowedWarning,
                          stacklevel=2)
        hidden = {name: module for name, module in sys.modules.items() if _is_torch_name(name)}
        for name in hidden:
            del sys.modules[name]
        finder = _TorchFinder(_Registry())
        sys.meta_path.insert(0, finder)
        _state = _State(finder, hidden)
    return Installation(owner=True)


def uninstall() -> None:
    """Remove the hook; ``sys.modules``' torch entries and ``sys.meta_path`` are as before ``install()``.

    A no-op when not installed. Views the program still holds keep working (they forward to
    dispatchcore); new ``import torch`` statements get real torch again, if it is installed.
    """
    global _state
    with _state_lock:
        state, _state = _state, None
        if state is None:
            return
        sys.meta_path[:] = [f for f in sys.meta_path if f is not state.finder]
        for name in [name for name in sys.modules if _is_torch_name(name)]:
            del sys.modules[name]
        sys.modules.update(state.hidden)


def is_installed() -> bool:
    """Whether ``install()`` is in effect."""
    return _state is not None


# --- observers of a run: listeners on the dispatch trace's hops --------------------------------------
_listeners: list[Callable[[Any], None]] = []
_previous_live: list[Any] = []


def _trace_module() -> Any:
    """``dispatchcore.trace`` the module (the package attribute of that name is the ``trace`` class)."""
    return importlib.import_module(_PACKAGE + ".trace")


def _notify(hop: Any) -> None:
    for listener in list(_listeners):
        listener(hop)
    if _previous_live and _previous_live[0] is not None:
        _previous_live[0](hop)


def _listen(listener: Callable[[Any], None]) -> None:
    """Call ``listener(hop)`` for every hop from now on (the trace's live hook, chained)."""
    _trace = _trace_module()
    with _trace._lock:
        if not _listeners:
            _previous_live[:] = [_trace._live]
            _trace._live = _notify
        _listeners.append(listener)


def _unlisten(listener: Callable[[Any], None]) -> None:
    _trace = _trace_module()
    with _trace._lock:
        if listener in _listeners:
            _listeners.remove(listener)
            if not _listeners and _trace._live is _notify:
                _trace._live = _previous_live[0] if _previous_live else None
                _previous_live.clear()


class OpCounter:
    """Count the kernels that run while the block runs, by operator and by the dispatch key they ran at.

    ``calls[op]`` counts calls into the dispatcher (from the program or from composite and autograd
    kernels); ``kernels[(op, key)]`` counts every hop, i.e. every kernel that ran: a call at
    AutogradCPU and its redispatch to CPU are two. All threads are counted. Every kernel runs
    behind the tracer's wrapper meanwhile, which slows the program down.

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore.compat import OpCounter
        >>> x = dc.ones(2, requires_grad=True)
        >>> with OpCounter() as counts:
        ...     _ = x * 2
        >>> counts.calls["aten::mul.Tensor"], counts.kernels[("aten::mul.Tensor", "CPU")]
        (1, 1)
    """

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.kernels: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def _hop(self, hop: Any) -> None:
        if hop.kind == "backward":  # a frame of the autograd engine: no operator, no kernel
            return
        with self._lock:
            self.kernels[(hop.op, hop.key.name)] += 1
            if hop.kind == "call":
                self.calls[hop.op] += 1

    def __enter__(self) -> OpCounter:
        _trace = _trace_module()
        _trace.enable()
        _listen(self._hop)
        return self

    def __exit__(self, *exc: Any) -> None:
        _trace = _trace_module()
        _unlisten(self._hop)
        _trace.disable()

    def table(self) -> str:
        """The counts as a table: one row per operator, one column per key (highest priority first)."""
        from .keys import DispatchKey, to_backend_component, to_functionality_key

        def priority(name: str) -> tuple[int, int]:
            key = DispatchKey.parse(name)
            return int(to_functionality_key(key)), int(to_backend_component(key))

        if not self.kernels:
            return "no operator ran"
        keys = sorted({key for _, key in self.kernels}, key=priority, reverse=True)
        ops = sorted({op for op, _ in self.kernels}, key=lambda op: (-self.calls[op], op))
        width = max(len("operator"), *(len(op) for op in ops))
        widths = [max(len(k), 6) for k in keys]
        lines = [f"{'operator':<{width}}  {'calls':>7}  " + "  ".join(f"{k:>{w}}" for k, w in zip(keys, widths))]
        for op in ops:
            cells = [str(self.kernels[(op, k)]) if self.kernels[(op, k)] else "." for k in keys]
            lines.append(f"{op:<{width}}  {self.calls[op]:>7}  "
                         + "  ".join(f"{c:>{w}}" for c, w in zip(cells, widths)))
        totals = [str(sum(n for (_, key), n in self.kernels.items() if key == k)) for k in keys]
        lines.append(f"{'total':<{width}}  {sum(self.calls.values()):>7}  "
                     + "  ".join(f"{c:>{w}}" for c, w in zip(totals, widths)))
        header = (f"{sum(self.calls.values())} operator calls ({len(ops)} operators), "
                  f"{sum(self.kernels.values())} kernels ran; by the key each kernel ran at:")
        return header + "\n" + "\n".join(lines)


class CallWindow:
    """Record the dispatch trace of a window of top-level operator calls: ``calls`` of them after ``skip``.

    A top-level call is one the program makes (not one a kernel makes inside it); each comes with
    everything nested under it: redispatches, the calls its kernels make, guards, version bumps,
    autograd nodes. A backward pass counts as one: its ``[backward]`` frame holds the calls the
    autograd engine makes. Calls before the window are dropped as they finish; after the window the
    recording stops. ``trace`` is the recorded ``dispatchcore.trace.Trace``, for its renderers.
    Only the thread that enters the window is recorded.

    Example:
        >>> import dispatchcore as dc
        >>> from dispatchcore.compat import CallWindow
        >>> x = dc.ones(2)
        >>> with CallWindow(calls=1, skip=1) as window:
        ...     a, b, c = x + 1, x * 2, x - 3
        >>> [h.op for h in window.trace.roots]
        ['aten::mul.Tensor']
    """

    def __init__(self, calls: int, skip: int = 0) -> None:
        if calls < 1 or skip < 0:
            raise ValueError(f"CallWindow needs calls >= 1 and skip >= 0, got calls={calls}, skip={skip}")
        self.calls, self.skip = calls, skip
        self.seen = 0  # top-level calls so far
        self._context: Any = None
        self._recording: Any = None
        self._previous_root_seq = -1
        self.trace: Any = None

    def __enter__(self) -> CallWindow:
        from .trace import trace

        self._context = trace()
        self._recording = self._context.__enter__()
        _listen(self._hop)
        return self

    def _hop(self, hop: Any) -> None:
        rec = self._recording
        if rec is None or not rec.roots or rec.roots[-1] is not hop:
            return  # not a top-level call recorded by this window
        index = self.seen
        self.seen += 1
        if index <= self.skip:  # drop what came before (keeping top-level events since the last root)
            del rec.roots[:-1]
            rec.events[:] = [e for e in rec.events if e.hop is None and e.seq > self._previous_root_seq]
            self._previous_root_seq = hop.seq
        if index >= self.skip + self.calls:
            rec.roots.pop()
            self._close()

    def _close(self) -> None:
        if self._context is None:
            return
        context, self._context = self._context, None
        _unlisten(self._hop)
        context.__exit__(None, None, None)
        self.trace = self._finish(self._recording)
        self._recording = None

    def _finish(self, rec: Any) -> Any:
        from .trace import Trace

        window = Trace()
        if self.seen > self.skip:  # else the window was never reached: an empty trace
            kept = {id(h) for root in rec.roots for h in root.walk()}
            window.roots = list(rec.roots)
            window.events = [e for e in rec.events if e.hop is None or id(e.hop) in kept]
        return window

    def __exit__(self, *exc: Any) -> None:
        self._close()

    def __repr__(self) -> str:
        return f"<CallWindow calls={self.calls} skip={self.skip} seen={self.seen}>"


# --- running a script --------------------------------------------------------------------------------
def _program_traceback(exc: BaseException, path: str) -> str:
    """Python's traceback for an exception the program raised, without the runner's own frames."""
    tb = exc.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != path:
        tb = tb.tb_next
    # no frame of the script (a SyntaxError in it): the exception alone, as Python shows it
    report = traceback.TracebackException(type(exc), exc, tb)
    if isinstance(exc, UnmodelledAPIError):  # the error is about the program's line: end there
        report.stack = traceback.StackSummary.from_list(
            [f for f in report.stack if os.path.abspath(f.filename) != _HERE and not f.filename.startswith("<frozen")])
    return "".join(report.format())


def run_path(path: str, args: Sequence[str] = ()) -> int:
    """Run the script at ``path`` as ``__main__`` with ``torch`` resolved to dispatchcore; its exit status.

    As ``python path args...`` would: ``sys.argv`` is ``[path, *args]``, ``sys.path[0]`` the
    script's directory, ``sys.exit(n)`` gives ``n``, an uncaught exception prints its traceback to
    stderr and gives 1 (``KeyboardInterrupt`` 130). The hook is installed for the run only (and
    left alone if it was installed already); ``sys.argv`` and ``sys.path`` are restored afterwards.

    Example:
        >>> import pathlib, tempfile
        >>> from dispatchcore.compat import run_path
        >>> script = pathlib.Path(tempfile.mkdtemp()) / "demo.py"
        >>> _ = script.write_text("import torch; print(torch.arange(3).tolist())")
        >>> run_path(str(script))
        [0, 1, 2]
        0
    """
    full = os.path.abspath(path)
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *args]
    if sys.path:
        sys.path[0] = os.path.dirname(full)
    else:
        sys.path.append(os.path.dirname(full))
    try:
        with install():
            runpy.run_path(full, run_name="__main__")
        return 0
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code
        print(e.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        sys.stderr.write(_program_traceback(e, full))
        return 130
    except Exception as e:  # noqa: BLE001 - the program's uncaught exception, reported as Python does
        sys.stderr.write(_program_traceback(e, full))
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        sys.stdout.flush()

