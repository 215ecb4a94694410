"""Function schemas: the parsed form of ``ns::name.overload(Type arg=default, ...) -> Returns``.

Invariant: ``str(parse_schema(s)) == str(torch._C.parse_schema(s))`` for every ``s`` torch
accepts, and bad input raises ``SchemaError`` with torch's message, source line and caret.
Mirrors ``aten/src/ATen/core/function_schema.h`` (values, printing, argument binding) and
``torch/csrc/jit/frontend/function_schema_parser.cpp`` with its lexer and type parser.
"""

from __future__ import annotations

import math
import operator
import re
import sys
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any, NoReturn

import attrs
import numpy as np

from .dtypes import device as _device
from .dtypes import dtype as _dtype
from .errors import SchemaError, tp_name
from .layouts import layout as _layout
from .layouts import memory_format as _memory_format

__all__ = [
    "NO_DEFAULT",
    "AliasInfo",
    "Argument",
    "BaseType",
    "ContainerType",
    "FunctionSchema",
    "ListType",
    "OperatorName",
    "OptionalType",
    "PythonArgParser",
    "PythonSignature",
    "Return",
    "SchemaType",
    "TupleType",
    "fitting_classes",
    "parse_schema",
    "parse_schema_or_name",
    "python_default",
]

# torch 2.13 wheels are built in CI under this directory; its internal asserts quote it.
_TORCH_SRC = "/__w/pytorch/pytorch/"


class _NoDefault:
    """Type of ``NO_DEFAULT``; a single instance exists."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
"""``Argument.default`` for an argument without a default (``None`` is a real default)."""


# --------------------------------------------------------------------------------------------
# Types. ``str()`` gives the schema spelling; ``_annotation()`` the spelling torch uses in
# binding errors (``Optional[Tensor]``, ``List[int]``, ``number``).
# --------------------------------------------------------------------------------------------


@attrs.frozen
class BaseType:
    """A named type: ``Tensor``, ``int``, ``SymInt``, ``Scalar``, ``ScalarType``, ``t``, ...

    Example:
        >>> str(BaseType("Tensor"))
        'Tensor'
    """

    name: str

    def __str__(self) -> str:
        return self.name


@attrs.frozen
class OptionalType:
    """``T?``: a value of type ``T`` or ``None``.

    Example:
        >>> str(OptionalType(BaseType("Tensor")))
        'Tensor?'
    """

    elem: SchemaType

    def __str__(self) -> str:
        return f"{self.elem}?"


@attrs.frozen
class ListType:
    """``T[]``, or ``T[N]`` when ``size`` is set (only an argument's outermost list has a size).

    Example:
        >>> str(ListType(BaseType("int"), 2)), str(ListType(OptionalType(BaseType("Tensor"))))
        ('int[2]', 'Tensor?[]')
    """

    elem: SchemaType
    size: int | None = None

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.size is None else self.size}]"


@attrs.frozen
class TupleType:
    """``(T1, T2, ...)``, a tuple type (rare in operator schemas).

    Example:
        >>> str(TupleType((BaseType("int"), BaseType("str"))))
        '(int, str)'
    """

    elems: tuple[SchemaType, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.elems)) + ")"


@attrs.frozen
class ContainerType:
    """``Dict(K, V)``, ``Union(A, B, ...)``, ``Future(T)``, ``Await(T)`` or ``RRef(T)``.

    Example:
        >>> str(ContainerType("Dict", (BaseType("str"), BaseType("Tensor"))))
        'Dict(str, Tensor)'
    """

    kind: str
    elems: tuple[SchemaType, ...]

    def __str__(self) -> str:
        return f"{self.kind}(" + ", ".join(map(str, self.elems)) + ")"


SchemaType = BaseType | OptionalType | ListType | TupleType | ContainerType

_TENSOR = BaseType("Tensor")
_INT = BaseType("int")
_SYMINT = BaseType("SymInt")
_INT_NAMES = frozenset({"int", "SymInt"})

# The schema type names torch 2.13's parser knows (``SchemaTypeParser::parseBaseType``). Two
# are spellings of ``int``; ``None`` is ``NoneType``. 2.13 no longer knows ``Dimname``.
_BASE_TYPES: dict[str, BaseType] = {
    name: BaseType(name)
    for name in (
        "Generator", "ScalarType", "Layout", "MemoryFormat", "Storage", "QScheme", "Quantizer",
        "Device", "Stream", "Scalar", "str", "float", "complex", "int", "SymInt", "bool",
        "SymBool", "NoneType", "Capsule", "Any", "AnyClassType", "AnyEnumType",
    )
}
_BASE_TYPES.update(ConstQuantizerPtr=_INT, DeviceIndex=_INT, **{"None": BaseType("NoneType")})

# torch keeps a "fake" type next to the real one: these are ints to the binder and the default
# parser, and error messages spell them that way (``Expected a value of type 'int'``).
_FAKE_INT = frozenset({"SymInt", "ScalarType", "Layout", "MemoryFormat"})
_ANNOTATION = {"Scalar": "number", "SymBool": "bool", **{name: "int" for name in _FAKE_INT}}


def _annotation(t: SchemaType) -> str:
    """``Type::repr_str()`` of the fake type, as binding errors print it."""
    if isinstance(t, BaseType):
        return _ANNOTATION.get(t.name, t.name)
    if isinstance(t, OptionalType):
        return f"Optional[{_annotation(t.elem)}]"
    if isinstance(t, ListType):
        return f"List[{_annotation(t.elem)}]"
    kind = "Tuple" if isinstance(t, TupleType) else t.kind
    return f"{kind}[" + ", ".join(map(_annotation, t.elems)) + "]"


def _default_kind(t: SchemaType) -> str:
    """The fake type's kind, which picks how ``parseDefaultValue`` reads a default."""
    if isinstance(t, OptionalType):
        return "Optional"
    if isinstance(t, ListType):
        return "List"
    if isinstance(t, BaseType):
        return "int" if t.name in _FAKE_INT else t.name
    return "other"


# --------------------------------------------------------------------------------------------
# Alias annotations, arguments, returns, operator names
# --------------------------------------------------------------------------------------------


@attrs.frozen
class AliasInfo:
    """An alias annotation: ``Tensor(a)``, ``Tensor(a!)``, ``Tensor(a -> *)``.

    ``before``/``after`` are alias sets in the order torch's hash set iterates them, which for
    the small sets schemas use is reverse insertion order: ``(a|b)`` prints as ``(b|a)``.
    ``contained`` holds the annotations of a list's elements (``Tensor(a!)[]``); the list's own
    annotation then has no sets and copies ``is_write``. Mirrors ``ATen/core/alias_info.h``.

    Example:
        >>> str(AliasInfo(("a",), ("*",))), str(AliasInfo(("a",), ("a",), is_write=True))
        ('(a -> *)', '(a!)')
    """

    before: tuple[str, ...]
    after: tuple[str, ...]
    is_write: bool = False
    contained: tuple[AliasInfo, ...] = ()

    def __str__(self) -> str:
        text = "(" + "|".join(self.before) + ("!" if self.is_write else "")
        if set(self.before) != set(self.after):
            text += " -> " + "|".join(self.after)
        return text + ")"


@attrs.frozen
class Argument:
    """One schema argument: ``Type(alias)? name=default``.

    ``type`` is the type as written (``SymInt`` stays ``SymInt``). ``default`` is the parsed
    Python value (``int[2] k=1`` stores ``[1, 1]``, ``ScalarType dt=float`` stores ``6``,
    ``Device d="cpu"`` stores ``"cpu"``) or ``NO_DEFAULT``. It is excluded from the hash
    because lists are unhashable; use ``python_default`` for a copy that is safe to mutate.

    Example:
        >>> arg = parse_schema("f(Tensor(a!) self, int[2] k=1) -> ()").arguments[1]
        >>> str(arg), arg.default, arg.has_default, arg.dispatch_kind
        ('int[2] k=1', [1, 1], True, None)
    """

    name: str
    type: SchemaType
    default: Any = attrs.field(default=NO_DEFAULT, hash=False)
    kwarg_only: bool = False
    alias_info: AliasInfo | None = None

    @property
    def has_default(self) -> bool:
        """Whether the schema gives this argument a default."""
        return self.default is not NO_DEFAULT

    @property
    def is_write(self) -> bool:
        """Whether the argument is annotated as written to (``Tensor(a!)``, ``Tensor(a!)[]``)."""
        return self.alias_info is not None and self.alias_info.is_write

    @property
    def dispatch_kind(self) -> str | None:
        """``"tensor"``, ``"optional"`` or ``"list"`` for the dispatch argument types, else None.

        These are the types ``DispatchKeyExtractor::isDispatchType`` accepts: ``Tensor``,
        ``Tensor?``, ``Tensor[]`` and ``Tensor?[]`` (of any fixed size).
        """
        return _dispatch_kind(self.type)

    def __str__(self) -> str:
        return _format_argument(self.type, self.alias_info, self.name, self.default)


@attrs.frozen
class Return:
    """One schema return: ``Type(alias)`` with an optional name (``Tensor values``).

    Example:
        >>> [str(r) for r in parse_schema("f(Tensor x) -> (Tensor a, Tensor(b!))").returns]
        ['Tensor a', 'Tensor(b!)']
    """

    name: str | None
    type: SchemaType
    alias_info: AliasInfo | None = None

    def __str__(self) -> str:
        return _format_argument(self.type, self.alias_info, self.name or "", NO_DEFAULT)


@attrs.frozen
class OperatorName:
    """``ns::name.overload``; ``namespace`` may be ``""``, ``overload_name == ""`` is the default.

    Example:
        >>> name = OperatorName.parse("aten::add.Tensor")
        >>> name.namespace, name.name, name.overload_name, str(name)
        ('aten', 'add', 'Tensor', 'aten::add.Tensor')
    """

    namespace: str
    name: str
    overload_name: str = ""

    @classmethod
    def parse(cls, text: str) -> OperatorName:
        """Parse ``[ns::]name[.overload]`` (``torch::jit::parseName``).

        Raises:
            SchemaError: on a syntax error, or when ``text`` is a whole schema.
        """
        parsed = parse_schema_or_name(text)
        if not isinstance(parsed, OperatorName):
            raise SchemaError("Tried to parse an operator name but function schema was given")
        return parsed

    @property
    def unqualified(self) -> str:
        """``ns::name`` without the overload, as torch's ``schema.name()`` prints it."""
        return f"{self.namespace}::{self.name}" if self.namespace else self.name

    def __str__(self) -> str:
        return self.unqualified + (f".{self.overload_name}" if self.overload_name else "")


def _dispatch_kind(t: SchemaType) -> str | None:
    if t == _TENSOR:
        return "tensor"
    if t == OptionalType(_TENSOR):
        return "optional"
    if isinstance(t, ListType) and t.elem in (_TENSOR, OptionalType(_TENSOR)):
        return "list"
    return None


# --------------------------------------------------------------------------------------------
# Printing (``operator<<`` for Argument, FunctionSchema and IValue)
# --------------------------------------------------------------------------------------------


def _format_argument(t: SchemaType, alias: AliasInfo | None, name: str, default: Any) -> str:
    """``Type(alias)? name=default``, exactly as c10's ``operator<<(Argument)`` prints it."""
    is_optional = isinstance(t, OptionalType)
    inner = t.elem if isinstance(t, OptionalType) else t
    if isinstance(inner, ListType):
        # A list prints its element type, the elements' alias annotation, then its size.
        text = str(inner.elem)
        if alias is not None and alias.contained:
            text += str(alias.contained[0])
        text += f"[{'' if inner.size is None else inner.size}]"
    else:
        text = str(inner)
    if alias is not None and alias.before:
        text += str(alias)
    if is_optional:
        text += "?"
    if name:
        text += " " + name
    if default is not NO_DEFAULT:
        text += "=" + _format_default(t, default)
    return text


def _format_default(t: SchemaType, value: Any) -> str:
    inner = t.elem if isinstance(t, OptionalType) else t
    if inner == BaseType("str") and isinstance(value, str):
        return _quote(value)
    # native_functions.yaml writes ``int[2] stride=1``, so torch prints repeated ints that way
    if isinstance(t, ListType) and t.elem == _INT and len(value) > 1 and len(set(value)) == 1:
        return _format_value(value[0])
    return _format_value(value)


def _format_value(value: Any) -> str:
    """``operator<<(IValue)``: strings unquoted, doubles as ``1.`` or ``%.17g``."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return _format_double(value)
    if isinstance(value, complex):
        sign = "+" if value.imag >= 0 else "-"
        return f"{_format_double(value.real)}{sign}{_format_double(abs(value.imag))}j"
    if isinstance(value, list):
        return "[" + ", ".join(map(_format_value, value)) + "]"
    return str(value)


def _format_double(d: float) -> str:
    normal_or_zero = math.isfinite(d) and (d == 0 or abs(d) >= sys.float_info.min)
    if normal_or_zero and -(2**63) <= d < 2**63 and int(d) == d:
        return f"{int(d)}."  # -0.0 prints as "0.": the int cast drops the sign
    return f"{d:.17g}"  # std::setprecision(max_digits10)


def _quote(text: str) -> str:
    """``c10::printQuotedString``: byte-wise, with C escapes and 3-digit octal for the rest."""
    out = ['"']
    for byte in text.encode():
        char = chr(byte)
        if char in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[char])
        elif 0x1F < byte < 0x7F:
            out.append(char)
        else:
            # c10 does this arithmetic on a signed char, so bytes >= 0x80 give odd digits
            s = byte - 256 if byte >= 0x80 else byte
            d2, s = _c_mod(s, 8), _c_div(s, 8)
            d1, s = _c_mod(s, 8), _c_div(s, 8)
            out.append("\\" + "".join(chr(48 + d) for d in (s, d1, d2)))
    return "".join(out) + '"'


_QUOTE_ESCAPES = {
    "\\": "\\\\", "'": "\\'", '"': '\\"', "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n",
    "\r": "\\r", "\t": "\\t", "\v": "\\v",
}


def _c_div(a: int, b: int) -> int:
    return int(a / b)  # C division truncates toward zero


def _c_mod(a: int, b: int) -> int:
    return a - b * _c_div(a, b)


# --------------------------------------------------------------------------------------------
# FunctionSchema
# --------------------------------------------------------------------------------------------


@attrs.frozen
class FunctionSchema:
    """A parsed operator schema; ``str()`` prints it exactly as torch does.

    Construction validates like c10's ``FunctionSchema::checkSchema``: a positional argument
    without a default may not follow one with a default (list types excepted, for BC).

    Example:
        >>> s = parse_schema("aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, "
        ...                  "Tensor(a!) out) -> Tensor(a!)")
        >>> s.qualified_name, s.is_mutable, [a.name for a in s.kwarg_only]
        ('aten::add.out', True, ['alpha', 'out'])
        >>> s.dispatch_arguments
        ((0, 'self', 'tensor', False), (1, 'other', 'tensor', False), (3, 'out', 'tensor', True))
    """

    name: OperatorName
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]
    is_vararg: bool = False
    is_varret: bool = False
    # (index, name, dispatch_kind, kwarg_only) per dispatch argument; derived once, see below
    _dispatch_arguments: tuple[tuple[int, str, str, bool], ...] = attrs.field(
        init=False, repr=False, eq=False, hash=False
    )
    # per argument, the classes whose values fit without a closer look (None: any value, or a
    # dispatch argument, which the caller checks); derived once, see values_fit
    _fits: tuple[frozenset[type] | None, ...] = attrs.field(init=False, repr=False, eq=False, hash=False)
    _index: dict[str, int] = attrs.field(init=False, repr=False, eq=False, hash=False)
    # indices of the ``int[]``/``SymInt[]`` arguments: a list of Python ints fits them at once
    _int_lists: frozenset[int] = attrs.field(init=False, repr=False, eq=False, hash=False)
    # whether a Python number binds to a ``Tensor``/``Tensor?`` argument (see numbers_as_tensors)
    _numbers: bool = attrs.field(init=False, repr=False, eq=False, hash=False)

    def __attrs_post_init__(self) -> None:
        self._check_defaults()
        # Mirrors makeBitsetForDispatchArgs: scan the schema once, when it is created.
        dispatch = tuple(
            (i, arg.name, arg.dispatch_kind, arg.kwarg_only)
            for i, arg in enumerate(self.arguments)
            if arg.dispatch_kind is not None
        )
        object.__setattr__(self, "_dispatch_arguments", dispatch)
        object.__setattr__(self, "_fits", tuple(
            None if arg.dispatch_kind is not None else fitting_classes(arg.type) for arg in self.arguments))
        object.__setattr__(self, "_index", {arg.name: i for i, arg in enumerate(self.arguments)})
        object.__setattr__(self, "_int_lists", frozenset(
            i for i, arg in enumerate(self.arguments)
            if isinstance(arg.type, ListType) and getattr(arg.type.elem, "name", None) in _INT_NAMES))
        object.__setattr__(self, "_numbers", allows_numbers_as_tensors(self.name))

    def _check_defaults(self) -> None:
        seen_default = False
        for arg in self.arguments:
            if arg.has_default:
                seen_default = True
            elif not isinstance(arg.type, ListType) and seen_default and not arg.kwarg_only:
                raise SchemaError(
                    f'!seen_default_arg || arg.kwarg_only() INTERNAL ASSERT FAILED at "{_TORCH_SRC}'
                    'aten/src/ATen/core/function_schema.h":342, please report a bug to PyTorch. '
                    "Non-default positional argument follows default argument. Parameter "
                    f"{arg.name} in {self}"
                )

    @property
    def numbers_as_tensors(self) -> bool:
        """Whether ``bind`` takes a Python number for a ``Tensor`` or ``Tensor?`` argument.

        True for the operators torch's ``opAllowsNumbersAsTensors`` names (``aten::mul``,
        ``aten::add_``, ``aten::copy_``, ..., and every ``prims``/``nvprims`` operator): there
        ``torch.ops.aten.mul.Tensor(x, 2)`` binds ``2`` as a wrapped number. ``Tensor[]`` never
        takes one.
        """
        return self._numbers

    @property
    def overload_name(self) -> str:
        """The overload name; ``""`` for the default overload."""
        return self.name.overload_name

    @property
    def qualified_name(self) -> str:
        """``ns::name.overload``, the operator's registry key."""
        return str(self.name)

    @property
    def is_mutable(self) -> bool:
        """Whether any argument is written to (``Tensor(a!)``); ``FunctionSchema::is_mutable``."""
        return any(arg.is_write for arg in self.arguments)

    @property
    def positional(self) -> tuple[Argument, ...]:
        """The arguments before ``*`` (always a prefix of ``arguments``)."""
        return tuple(arg for arg in self.arguments if not arg.kwarg_only)

    @property
    def kwarg_only(self) -> tuple[Argument, ...]:
        """The keyword-only arguments, after ``*``."""
        return tuple(arg for arg in self.arguments if arg.kwarg_only)

    @property
    def dispatch_arguments(self) -> tuple[tuple[int, str, str, bool], ...]:
        """``(index, name, dispatch_kind, kwarg_only)`` for each dispatch argument (``DispatchKeyExtractor``)."""
        return self._dispatch_arguments

    def __str__(self) -> str:
        parts = []
        seen_kwarg_only = False
        for arg in self.arguments:
            prefix = ""
            if arg.kwarg_only and not seen_kwarg_only:
                prefix, seen_kwarg_only = "*, ", True
            parts.append(prefix + str(arg))
        if self.is_vararg:
            parts.append("...")
        returns = [str(r) for r in self.returns] + (["..."] if self.is_varret else [])
        single = len(self.returns) == 1 and not self.is_varret
        # One return prints bare unless it is a tuple type, which would read as a return list.
        bare = (single and not returns[0].startswith("(")) or (not self.returns and self.is_varret)
        body = ", ".join(returns)
        return f"{self.name}({', '.join(parts)}) -> " + (body if bare else f"({body})")

    def bind(
        self, args: tuple, kwargs: dict[str, Any], *, is_tensor: Callable[[Any], bool]
    ) -> tuple[tuple, dict[str, Any]]:
        """Check a Python call against the schema and normalize it, as ``torch.ops`` does.

        Mirrors ``createStackForSchema`` (``torch/csrc/jit/python/pybind_utils.h``): the same
        checks in the same order, with torch's messages. Values are type-checked like
        ``toIValue`` for ``Tensor``, ``Tensor?``, ``Tensor[]``, ``Tensor?[]``, ``int``,
        ``SymInt``, ``float``, ``complex``, ``bool``, ``str``, ``Scalar``, their lists and
        optionals; ``ScalarType``, ``Layout`` and ``MemoryFormat`` take dispatchcore's
        ``dtype``/``layout``/``memory_format`` or an int (``dtype='float32'`` is refused, as in
        torch), ``Device`` a ``device`` or a string (not an int); other types (``Generator``,
        ...) accept any value, since the tensor library supplies those objects.
        A tensor counts as a number where torch accepts one (``int``, ``float``, ``bool``) only
        when it has ``ndim == 0`` (or an empty ``shape``). Like torch, ``Tensor`` accepts
        ``None`` (an undefined tensor), and, for the operators of ``numbers_as_tensors``
        (``aten::mul``, ...), a Python number for ``Tensor``/``Tensor?``, which the operator
        handle then wraps (``OperatorHandle._bound``; Note [Wrapped numbers]).

        Values pass through unchanged (torch would turn ``3`` for ``int[2]`` into ``[3, 3]``):
        the dispatcher's fast path never binds, and kernels must see the same values either way.

        Args:
            args: the positional arguments of the call.
            kwargs: the keyword arguments of the call.
            is_tensor: predicate for tensor values.

        Returns:
            ``(positional, kwarg_only)``: every non-keyword-only argument the caller gave, by
            position or by keyword, placed positionally, with gaps before the last one filled
            from the schema defaults; and the keyword-only arguments given, in schema order.

        Raises:
            SchemaError: too many arguments, a positional value for a keyword-only argument,
                a value of the wrong type, a missing value, an unknown keyword, or a value
                given both positionally and by keyword.

        Example:
            >>> s = parse_schema("ex::f(Tensor x, int y=1, int z=2, *, bool flag=False) -> Tensor")
            >>> s.bind(("t",), {"z": 5, "flag": True}, is_tensor=lambda v: v == "t")
            (('t', 1, 5), {'flag': True})
        """
        arguments = self.arguments
        op = self.name.unqualified
        if len(args) + len(kwargs) > len(arguments):
            raise SchemaError(
                f"{op}() expected at most {len(arguments)} argument(s) but received "
                f"{len(args) + len(kwargs)} argument(s). Declaration: {self}"
            )
        for index, value in enumerate(args):
            if arguments[index].kwarg_only:
                raise SchemaError(
                    f"{op}() takes {index} positional argument(s) but {len(args)} was/were "
                    f"given.  Declaration: {self}"
                )
            self._check_value(index, value, is_tensor)
        given: dict[int, Any] = dict(enumerate(args))
        for index in range(len(args), len(arguments)):
            arg = arguments[index]
            if arg.name in kwargs:
                given[index] = kwargs[arg.name]
                self._check_value(index, given[index], is_tensor)
            elif not arg.has_default:
                raise SchemaError(
                    f"{op}() is missing value for argument '{arg.name}'. Declaration: {self}"
                )
        if len(given) - len(args) != len(kwargs):
            raise SchemaError(self._find_error_in_kwargs(kwargs))

        n_positional = len(self.positional)
        last = max((i for i in given if i < n_positional), default=-1)
        positional = tuple(
            given[i] if i in given else python_default(arguments[i]) for i in range(last + 1)
        )
        keywords = {arguments[i].name: given[i] for i in sorted(given) if i >= n_positional}
        return positional, keywords

    def _check_value(self, index: int, value: Any, is_tensor: Callable[[Any], bool]) -> None:
        arg = self.arguments[index]
        details = _cast_error(arg.type, value, is_tensor, self._numbers)
        if details is None:
            return
        raise SchemaError(
            f"{self.name.unqualified}() Expected a value of type '{_annotation(arg.type)}' for "
            f"argument '{arg.name}' but instead found type '{_friendly_type_name(value)}'.\n"
            f"Position: {index}\nValue: {value!r}\nDeclaration: {self}\n{details}"
        )

    def values_fit(self, args: tuple, kwargs: dict[str, Any], *, is_tensor: Callable[[Any], bool]) -> bool:
        """Whether every non-dispatch value of an already well-formed call passes ``bind``'s checks.

        For a call whose arity, keywords and dispatch arguments (``Tensor``, ``Tensor?``,
        ``Tensor[]``) the caller has checked: the value checks alone, with the common classes
        (``int`` for ``int``, a ``dtype`` for ``ScalarType``, ...) let through at once. When it
        returns False, ``bind`` raises torch's error for the first bad value.

        Example:
            >>> s = parse_schema("ex::f(Tensor x, int n, *, ScalarType? dtype=None) -> Tensor")
            >>> yes = lambda v: v == "t"
            >>> s.values_fit(("t", 2), {}, is_tensor=yes), s.values_fit(("t", "a"), {}, is_tensor=yes)
            (True, False)
            >>> s.values_fit(("t", 2), {"dtype": "float32"}, is_tensor=yes)
            False
        """
        fits, arguments, int_lists = self._fits, self.arguments, self._int_lists
        for index, value in enumerate(args):
            classes = fits[index]
            if classes is not None and value.__class__ not in classes:
                if index in int_lists and value.__class__ is list and all(v.__class__ is int for v in value):
                    continue  # sizes and strides, the usual list: no closer look
                if _cast_error(arguments[index].type, value, is_tensor) is not None:
                    return False
        for name, value in kwargs.items():
            index = self._index[name]
            classes = fits[index]
            if classes is not None and value.__class__ not in classes and _cast_error(
                    arguments[index].type, value, is_tensor) is not None:
                return False
        return True

    def _find_error_in_kwargs(self, kwargs: dict[str, Any]) -> str:
        """``FunctionSchema::findErrorInKwargs``: an unknown keyword, else a duplicate."""
        names = {arg.name for arg in self.arguments}
        for key in kwargs:
            if key not in names:
                return (
                    f"Unknown keyword argument '{key}' for operator '{self.name.unqualified}'. "
                    f"Schema: {self}"
                )
        for arg in self.arguments:
            if arg.name in kwargs:
                if arg.has_default:
                    # torch asserts here that a duplicated argument has no default
                    return (
                        f'!argument.default_value() INTERNAL ASSERT FAILED at "{_TORCH_SRC}'
                        'aten/src/ATen/core/function_schema.cpp":547, please report a bug to '
                        "PyTorch. "
                    )
                return (
                    f"Argument '{arg.name}' specified both as positional and keyword argument. "
                    f"Schema: {self}"
                )
        return ""  # unreachable: some keyword was left unconsumed


def python_default(arg: Argument) -> Any:
    """The Python value of ``arg``'s default (a fresh list for list defaults).

    ``int[2] k=1`` gives ``[1, 1]``; ``ScalarType? dtype=float`` gives ``6`` (ScalarType,
    Layout, MemoryFormat and ``Mean`` defaults stay the ints torch stores); a ``Device``
    default gives its string (``"cuda:1"``). Used at registration to compare with a kernel's
    own Python defaults.

    Raises:
        ValueError: if ``arg`` has no default.

    Example:
        >>> python_default(parse_schema("f(int[2] k=1) -> ()").arguments[0])
        [1, 1]
    """
    if arg.default is NO_DEFAULT:
        raise ValueError(f"argument {arg.name!r} has no default")
    return list(arg.default) if isinstance(arg.default, list) else arg.default


# --------------------------------------------------------------------------------------------
# Binding: the value checks of ``toIValue`` (torch/csrc/jit/python/pybind_utils.cpp)
# --------------------------------------------------------------------------------------------

_PYBIND_HINT = (
    "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)"
)


def _pybind_error(value: Any) -> str:
    return (
        f"Cast error details: Unable to cast Python instance of type {type(value)!r} to C++ "
        f"type '?' {_PYBIND_HINT}"
    )


def _friendly_type_name(value: Any) -> str:
    """``friendlyTypeName``: the class name, with the fields of a NamedTuple."""
    name = type(value).__name__
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return f"{name} (aka NamedTuple({', '.join(value._fields)}))"
    return name


def _is_zero_dim(value: Any) -> bool:
    ndim = getattr(value, "ndim", None)
    if ndim is None and getattr(value, "shape", None) is not None:
        ndim = len(value.shape)
    return ndim == 0


def _has(value: Any, method: str) -> bool:
    """Whether ``value``'s class defines ``method`` (a slot), ignoring metaclass attributes."""
    return any(method in vars(klass) for klass in type(value).__mro__)


def _is_int(value: Any, is_tensor: Callable[[Any], bool]) -> bool:
    if value.__class__ is int:
        return True
    if is_tensor(value):
        return _is_zero_dim(value)
    # pybind11 converts anything int() accepts, except floats
    return not isinstance(value, float) and (_has(value, "__index__") or _has(value, "__int__"))


def _is_symint_item(value: Any, is_tensor: Callable[[Any], bool]) -> bool:
    if not is_tensor(value):
        return _is_int(value, is_tensor)
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _is_float(value: Any, is_tensor: Callable[[Any], bool]) -> bool:
    if is_tensor(value):
        return _is_zero_dim(value)
    return _has(value, "__float__") or _is_int(value, is_tensor)


def _is_complex(value: Any, is_tensor: Callable[[Any], bool]) -> bool:
    if is_tensor(value):
        return _is_zero_dim(value)
    return _has(value, "__complex__") or _is_float(value, is_tensor)


def _is_bool(value: Any, is_tensor: Callable[[Any], bool]) -> bool:
    # pybind11's bool caster (with conversion) takes None and any type with nb_bool
    if is_tensor(value):
        return _is_zero_dim(value)
    return value is None or _has(value, "__bool__")


def _is_enum(kind: type) -> Callable[[Any, Callable[[Any], bool]], bool]:
    """``ScalarType``, ``Layout``, ``MemoryFormat``: the library's object (``dc.float32``) or an int."""
    return lambda value, is_tensor: isinstance(value, kind) or _is_int(value, is_tensor)


def _is_device(value: Any, is_tensor: Callable[[Any], bool]) -> bool:
    # a device object or a string; torch.ops refuses a bare index (``device=0``)
    return isinstance(value, (_device, str, bytes))


_NUMBER_CHECKS: dict[str, Callable[[Any, Callable[[Any], bool]], bool]] = {
    "int": _is_int, "SymInt": _is_int, "float": _is_float, "complex": _is_complex,
    "bool": _is_bool, "SymBool": _is_bool, "str": lambda v, _: isinstance(v, (str, bytes)),
    "ScalarType": _is_enum(_dtype), "Layout": _is_enum(_layout),
    "MemoryFormat": _is_enum(_memory_format), "Device": _is_device,
}

# Classes whose values fit a base type at once (``values_fit``); exact classes, no subclasses.
_FITTING: dict[str, frozenset[type]] = {
    "int": frozenset({int, bool}), "SymInt": frozenset({int, bool}),
    "float": frozenset({float, int, bool}), "complex": frozenset({complex, float, int, bool}),
    "Scalar": frozenset({complex, float, int, bool}), "bool": frozenset({bool}),
    "SymBool": frozenset({bool}), "str": frozenset({str}),
    "ScalarType": frozenset({_dtype, int}), "Layout": frozenset({_layout, int}),
    "MemoryFormat": frozenset({_memory_format, int}), "Device": frozenset({_device, str}),
}


def fitting_classes(t: SchemaType) -> frozenset[type] | None:
    """The classes ``values_fit`` lets through for ``t`` (None: every value fits; lists: none)."""
    if isinstance(t, OptionalType):
        inner = fitting_classes(t.elem)
        return None if inner is None else inner | {type(None)}
    if isinstance(t, ListType):
        return frozenset()  # checked item by item
    if isinstance(t, BaseType):
        if t.name == "Tensor":
            return frozenset()
        return _FITTING.get(t.name) if t.name in _NUMBER_CHECKS or t.name == "Scalar" else None
    return None


# torch::should_allow_numbers_as_tensors (torch/csrc/utils/python_arg_parser.cpp): the aten
# operators whose ``torch.ops`` handles take a Python number for a Tensor argument (toIValue under
# ToIValueAllowNumbersAsTensors wraps it: scalar_to_tensor + set_wrapped_number). The ``*_out``
# spellings are dead entries there (an overload's symbol is its base name), kept for fidelity.
NUMBERS_AS_TENSORS = frozenset({
    "add", "add_", "add_out", "div", "div_", "div_out", "divide", "divide_", "divide_out",
    "mul", "mul_", "mul_out", "multiply", "multiply_", "multiply_out", "sub", "sub_", "sub_out",
    "subtract", "subtract_", "subtract_out", "true_divide", "true_divide_", "true_divide_out",
    "to", "_to_copy", "copy_", "floor_divide", "floor_divide_", "floor_divide_out", "_conj",
})


def allows_numbers_as_tensors(name: OperatorName) -> bool:
    """``opAllowsNumbersAsTensors`` (torch/csrc/jit/python/pybind_utils.h) for ``name``."""
    ns = name.namespace
    return ns in ("prims", "nvprims") or (ns == "aten" and name.name in NUMBERS_AS_TENSORS)


def is_number_operand(value: Any) -> bool:
    """A value toIValue wraps for a Tensor argument when numbers are allowed: a Python or numpy number."""
    if isinstance(value, (bool, int, float, complex)):
        return True
    return isinstance(value, np.generic) and value.dtype.kind in "biufc"


def _cast_error(t: SchemaType, value: Any, is_tensor: Callable[[Any], bool],
                numbers: bool = False) -> str | None:
    """The ``Cast error details`` line for ``value`` as a ``t``, or None if it fits.

    ``numbers``: a Python number fits ``Tensor`` and ``Tensor?`` (``FunctionSchema.numbers_as_tensors``).
    """
    if isinstance(t, OptionalType):
        return None if value is None else _cast_error(t.elem, value, is_tensor, numbers)
    if isinstance(t, ListType):
        return _list_cast_error(t, value, is_tensor)
    if not isinstance(t, BaseType):
        return None
    if t == _TENSOR:
        if value is None or is_tensor(value) or (numbers and is_number_operand(value)):
            return None
        return f"Cast error details: Unable to cast {value!s} to Tensor"
    if t.name == "Scalar":
        if isinstance(value, (int, float, complex)) and not is_tensor(value):
            return None
        return f"Cast error details: Cannot cast {value!s} to number"
    check = _NUMBER_CHECKS.get(t.name)
    if check is None or check(value, is_tensor):
        return None
    return _pybind_error(value)


def _list_cast_error(t: ListType, value: Any, is_tensor: Callable[[Any], bool]) -> str | None:
    elem = t.elem
    is_sequence = isinstance(value, (list, tuple))
    # the usual value, a list of Python ints for ``int[]``/``SymInt[]`` (sizes, strides): fits
    if is_sequence and getattr(elem, "name", None) in _INT_NAMES and all(v.__class__ is int for v in value):
        return None
    if elem == _TENSOR:
        ok = is_sequence and all(is_tensor(v) for v in value)
        return None if ok else _pybind_error(value)
    if elem == _INT and t.size is not None and isinstance(value, int):
        return None  # a fixed-size int list broadcasts one int (``int[2] stride=1``)
    if isinstance(elem, BaseType) and elem.name in ("int", "float", "bool"):
        # these cast the whole list at once, so the error names the list's class
        check = _NUMBER_CHECKS[elem.name]
        ok = is_sequence and all(check(v, is_tensor) for v in value)
        return None if ok else _pybind_error(value)
    # Other lists (SymInt[], Tensor?[], Scalar[], ...) iterate any iterable (tensors too).
    try:
        items: Iterable[Any] = value if is_sequence else list(iter(value))
    except TypeError as exc:
        return f" Python error details: TypeError: {exc}"
    for item in items:
        if elem == _SYMINT:
            # SymInt lists cast item by item, so the error names the item's class; a tensor
            # item must be one that operator.index() accepts (a 0-dim integer tensor)
            error = None if _is_symint_item(item, is_tensor) else _pybind_error(item)
        else:
            error = _cast_error(elem, item, is_tensor)
        if error is not None:
            return error
    return None


# --------------------------------------------------------------------------------------------
# Error reports (``SourceRange::highlight``, ``ErrorReport``, ``Lexer::expected``)
# --------------------------------------------------------------------------------------------


class _SchemaValueError(SchemaError, ValueError):
    """``std::invalid_argument``/``length_error`` (stoll, stod, vector): ValueError in torch."""


class _SchemaIndexError(SchemaError, IndexError):
    """``std::out_of_range`` from ``std::stoll``/``std::stod``; pybind11 raises IndexError."""


_CONTEXT = 3  # SourceRange::CONTEXT


def _highlight(source: str, start: int, end: int) -> str:
    """``SourceRange::highlight``: up to two lines of context, the line, a ``~`` caret line.

    Works on UTF-8 bytes, as torch does, so carets line up after non-ASCII text.
    """
    data = source.encode()
    start, end = len(source[:start].encode()), len(source[:end].encode())
    n = len(data)
    if end - start == n:
        return source  # the range is the whole text

    def at(i: int) -> int:
        return data[i] if i < n else 0  # std::string has a NUL at size()

    nl = ord("\n")
    range_end = min(n, end)
    begin_line, end_line = start, range_end
    while begin_line > 0 and data[begin_line - 1] != nl:
        begin_line -= 1
    while end_line < n and data[end_line] != nl:
        end_line += 1
    begin_context, lines = begin_line, 0
    while begin_context > 0:
        lines += data[begin_context - 1] == nl
        if lines >= _CONTEXT:
            break
        begin_context -= 1
    end_context, lines = end_line, 0
    while end_context < n:
        lines += data[end_context] == nl
        if lines >= _CONTEXT:
            break
        end_context += 1

    out = bytearray(data[begin_context:start])
    line_start, line_end = start, start
    while line_start < range_end:
        while line_end < n and data[line_end] != nl:
            line_end += 1
        line = data[line_start : line_end + 1]
        out += line if line.endswith(b"\n") else line + b"\n"
        line_begin = line_start
        while line_begin > 0 and data[line_begin - 1] != nl:
            line_begin -= 1
        highlight_end = line_start
        while highlight_end < range_end and data[highlight_end] != nl:
            highlight_end += 1
        empty = 0
        for i in range(line_begin, highlight_end):
            if data[i] != ord(" ") and i >= start:
                break
            empty += 1
        tildes = highlight_end - line_begin - empty
        if tildes > 0:
            more = any(at(i) not in (nl, ord(" ")) for i in range(line_end, range_end + 1))
            tail = b"\n" if more and line_end != range_end else b" <--- HERE\n"
            out += b" " * empty + b"~" * tildes + tail
        line_end += 1
        line_start = line_end
    if line_end <= n:
        rest = data[line_end:end_context]
        out += rest + (b"\n" if rest and not rest.endswith(b"\n") else b"")
    return out.decode("utf-8", errors="replace")


# --------------------------------------------------------------------------------------------
# Lexer: the subset of torch/csrc/jit/frontend/lexer.h that schema strings can reach,
# including its Python-style newline, indent and comment rules.
# --------------------------------------------------------------------------------------------

# Multi-character tokens and the names torch's ``kindToString`` gives them in errors. Python
# keywords are tokens too, so an argument named ``in`` or ``if`` is a syntax error.
_TOKENS = {
    "def": "def", "<=>": "equivalent", "if": "if", "else": "else", "elif": "elif",
    "while": "while", "return": "return", "is": "is", "is not": "is not", "!=": "ne",
    "==": "eq", "<=": "le", ">=": "ge", "//": "floordiv", "True": "True", "False": "False",
    "None": "None", "and": "and", "or": "or", "not": "not", "<<": "<<", ">>": ">>",
    "+=": "+=", "-=": "-=", "*=": "*=", "/=": "/=", "%=": "%=", "|=": "|=", "&=": "&=",
    "^=": "^=", "<<=": "<<=", ">>=": ">>=", "**=": "**=", "global": "global",
    "**": "pow operator", "->": "arrow", "# type:": "type comment", "raise": "raise",
    "assert": "assert", "...": "dots", "break": "break", "continue": "continue", "del": "del",
    "pass": "pass", "class": "class", "import": "import", "with": "with", "as": "as",
    "Ellipsis": "Ellipsis", "NoneType": "NoneType", "for": "for", "in": "in",
    "not in": "not in",
}
_TOKENS.update({c: c for c in "+-*/%@()[]:,={}><.?!&^|~"})
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")
_TOKEN_PREFIXES = frozenset(tok[:i] for tok in _TOKENS for i in range(1, len(tok) + 1))

_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
_BLANKS = frozenset(" \t\v\f\r")  # C isspace() minus newline

# The prefix of a string that C's strtod converts: hexadecimal or decimal, with sign.
_HEX_FLOAT = r"0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
_DEC_FLOAT = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_STRTOD = re.compile(rf"[ \t\n\v\f\r]*(?P<num>[+-]?(?:(?P<hex>{_HEX_FLOAT})|{_DEC_FLOAT}))")
_STRTOLL = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")


def _strtod(text: str) -> tuple[float, int, bool] | None:
    """C ``strtod`` on the start of ``text``: (value, characters used, ERANGE), or None."""
    match = _STRTOD.match(text)
    if match is None:
        return None
    num = match["num"]
    if match["hex"] is None:
        exact = Fraction(num)
    else:
        hex_parts = re.fullmatch(r"([+-]?)0[xX]([^pP]*)[pP]?(.*)", num)
        assert hex_parts is not None  # num matched _HEX_FLOAT, so this always matches
        sign, digits, exponent = hex_parts.groups()
        whole, _, frac = digits.partition(".")
        exact = Fraction(int(whole + frac or "0", 16), 16 ** len(frac))
        exact *= Fraction(2) ** int(exponent or "0") * (-1 if sign == "-" else 1)
    try:
        value = float(exact)
    except OverflowError:
        value = math.inf
    # ERANGE: overflow, or an inexact result that underflowed to zero or a subnormal
    erange = math.isinf(value) or (abs(value) < sys.float_info.min and exact != value)
    return value, match.end(), erange


def _stod(text: str) -> float:
    """``std::stod``, including its exceptions (which pybind11 maps to Value/IndexError)."""
    parsed = _strtod(text)
    if parsed is None:
        raise _SchemaValueError("stod")
    if parsed[2]:
        raise _SchemaIndexError("stod")
    return parsed[0]


def _stoll(text: str) -> int:
    """``std::stoll``: base 10, stops at the first non-digit (``"0x10"`` is 0)."""
    match = _STRTOLL.match(text)
    if match is None:
        raise _SchemaValueError("stoll")
    value = int(match.group())
    if not -(2**63) <= value < 2**63:
        raise _SchemaIndexError("stoll")
    return value


class _Token:
    __slots__ = ("kind", "start", "end")

    def __init__(self, kind: str, start: int, end: int) -> None:
        self.kind, self.start, self.end = kind, start, end


class _Lexer:
    """Tokens with one token of lookahead, lexed eagerly like torch's ``Lexer``."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0
        self.nesting = 0  # depth of ( [ {: newlines inside brackets are not tokens
        first = self._lex_raw(whitespace_token=True)
        self.indent_stack = [first.end - first.start]
        self.queue: list[_Token] = []
        self._lex()

    # -- the parser's interface --
    def cur(self) -> _Token:
        return self.queue[0]

    def text(self, token: _Token) -> str:
        return self.source[token.start : token.end]

    def next(self) -> _Token:
        token = self.queue.pop(0)
        if not self.queue:
            self._lex()
        return token

    def next_if(self, kind: str) -> bool:
        if self.cur().kind != kind:
            return False
        self.next()
        return True

    def lookahead(self) -> _Token:
        if len(self.queue) < 2:
            self._lex()
        return self.queue[1]

    def expect(self, kind: str) -> _Token:
        if self.cur().kind != kind:
            self.expected(kind, self.cur())
        return self.next()

    def expected(self, what: str, token: _Token) -> NoReturn:
        raise SchemaError(
            f"expected {what} but found '{token.kind}' here:\n"
            + _highlight(self.source, token.start, token.end)
        )

    # -- lexing --
    def _lex(self) -> None:
        token = self._lex_raw()
        if token.kind in _OPENING:
            self.nesting += 1
        elif token.kind in _CLOSING:
            self.nesting -= 1
        elif token.kind in ("whitespace", "whitespace_eof"):
            # Python-style indentation: the whitespace after a top-level newline
            eof = token.kind == "whitespace_eof"
            depth = self.indent_stack[0] if eof else token.end - token.start
            if depth > self.indent_stack[-1]:
                self.indent_stack.append(depth)
                token.kind = "indent"
            elif depth == self.indent_stack[-1]:
                token.kind = "newline"
            else:
                self.queue.append(_Token("newline", token.start, token.end))
                while self.indent_stack[-1] != depth:
                    self.indent_stack.pop()
                    self.queue.append(_Token("dedent", token.start, token.end))
                    if not self.indent_stack:
                        raise SchemaError(
                            f"invalid indent level {depth}:\n"
                            + _highlight(self.source, token.start, token.end)
                        )
                return
        self.queue.append(token)

    def _lex_raw(self, whitespace_token: bool = False) -> _Token:
        source, n, current = self.source, len(self.source), self.pos
        pos = current
        while True:
            start = pos
            while pos < n and source[pos] in _BLANKS:
                pos += 1
            if pos < n and source[pos] == "#" and not source.startswith("# type:", pos):
                while pos < n and source[pos] != "\n":
                    pos += 1
                continue
            if source.startswith("\\\n", pos) and not whitespace_token:
                pos += 2  # a backslash continues the line
                continue
            if pos < n and source[pos] == "\n":
                pos += 1
                whitespace_token = self.nesting == 0
                continue
            break
        if whitespace_token:
            token = _Token("whitespace_eof" if pos >= n else "whitespace", start, pos)
        elif pos >= n:
            token = _Token("eof", pos, pos)
        else:
            matched = self._match(pos)
            if matched is None:
                # torch names the character where this token's scan began, not the bad one
                self.expected("a valid token", _Token(source[current], pos, pos + 1))
            token = matched
        self.pos = token.end
        return token

    def _match(self, pos: int) -> _Token | None:
        source = self.source
        first = source[pos]
        if first not in "+-" and first not in _ASCII_LETTERS:
            parsed = _strtod(source[pos:])
            # strtod skips leading blanks; the lexer already did, so this is the number
            if parsed is not None:
                end = pos + parsed[1]
                end += source.startswith("j", end)  # complex literal
                return _Token("number", pos, end)
        length = self._string_length(pos)
        if length:
            return _Token("string_literal", pos, pos + length)
        # The longest identifier or token; at equal length a token (keyword) wins.
        best: _Token | None = None
        ident, alive, i = True, True, 0
        while pos + i < len(source) and (ident or alive):
            char = source[pos + i]
            ident = ident and (char in _ASCII_LETTERS or char == "_" or (i > 0 and char in _DIGITS))
            if ident:
                best = _Token("ident", pos, pos + i + 1)
            if alive:
                prefix = source[pos : pos + i + 1]
                alive = prefix in _TOKEN_PREFIXES
                if alive and prefix in _TOKENS:
                    best = _Token(_TOKENS[prefix], pos, pos + i + 1)
            i += 1
        return best

    def _string_length(self, start: int) -> int:
        """Length of a '...', "...", '''...''' or \"\"\"...\"\"\" literal at ``start``, or 0."""
        source = self.source
        quote = source[start]
        if quote not in "'\"":
            return 0
        width = 3 if source.startswith(quote * 3, start) else 1
        end = start + width
        while end < len(source) and not source.startswith(quote * width, end):
            if source[end] == "\n" and width != 3:
                return 0
            if source[end] == "\\":
                end += 1
            end += 1
        return end - start + width if end < len(source) else 0


# --------------------------------------------------------------------------------------------
# Parser: recursive descent, in the order of torch's SchemaParser/SchemaTypeParser so that the
# first error found is the one torch reports.
# --------------------------------------------------------------------------------------------

# getStringToDtypeMap(): dtype names a ScalarType default may use, and their ScalarType values.
_DTYPES = {
    "uint8": 0, "int8": 1, "int16": 2, "short": 2, "int": 3, "int32": 3, "int64": 4,
    "long": 4, "float16": 5, "half": 5, "float": 6, "float32": 6, "double": 7, "float64": 7,
    "chalf": 8, "complex32": 8, "cfloat": 9, "complex64": 9, "cdouble": 10, "complex128": 10,
    "bool": 11, "qint8": 12, "quint8": 13, "qint32": 14, "bfloat16": 15, "quint4x2": 16,
    "quint2x4": 17, "bits1x8": 18, "bits2x4": 19, "bits4x2": 20, "bits8": 21, "bits16": 22,
    "float8_e5m2": 23, "float8_e4m3fn": 24, "float8_e5m2fnuz": 25, "float8_e4m3fnuz": 26,
    "uint16": 27, "uint32": 28, "uint64": 29, "bit": 30, "uint1": 30, "uint2": 31,
    "uint3": 32, "uint4": 33, "uint5": 34, "uint6": 35, "uint7": 36, "int1": 37, "int2": 38,
    "int3": 39, "int4": 40, "int5": 41, "int6": 42, "int7": 43, "float8_e8m0fnu": 44,
    "float4_e2m1fn_x2": 45,
}
# Identifiers any number-like default may use (kept by torch for BC): ScalarType Float,
# ComplexFloat and Long, Layout strided, Reduction Mean, MemoryFormat contiguous_format.
_NAMED_DEFAULTS = {
    "float": 6, "complex": 9, "long": 4, "strided": 0, "Mean": 1, "contiguous_format": 0,
}
_DEVICE_TYPES = (
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
    "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
)
_UNKNOWN_TYPE = (
    "unknown type specifier. Common valid schema types include Tensor, SymInt, int, float, "
    "bool, Scalar; for a full list, please see "
    "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func "
)
# IValue::toX() asserts a list element's tag: (Python type, line in ivalue.h, message).
_LIST_ELEMENT_ASSERTS = {
    "float": (float, 544, "expected double"),
    "int": (int, 663, "expected int"),
    "bool": (bool, 710, "expected bool"),
}


class _Parser:
    def __init__(self, source: str, allow_typevars: bool) -> None:
        self.source = source
        self.allow_typevars = allow_typevars
        self.alias_ids = 0  # ``Tensor!`` gets a fresh alias set $0, $1, ...
        self.lex = _Lexer(source)

    # -- errors --
    def error(self, token: _Token, message: str) -> SchemaError:
        """``ErrorReport(range) << message``."""
        return SchemaError(f"\n{message}:\n" + _highlight(self.source, token.start, token.end))

    def text(self, token: _Token) -> str:
        return self.lex.text(token)

    def parse_list(self, begin: str | None, sep: str, end: str | None, item: Callable) -> None:
        lex = self.lex
        if begin is not None:
            lex.expect(begin)
        if end is None or lex.cur().kind != end:
            item()
            while lex.next_if(sep):
                item()
        if end is not None:
            lex.expect(end)

    # -- declarations --
    def parse_exactly_one(self) -> FunctionSchema | OperatorName:
        result = self.parse_declaration()
        self.lex.next_if("newline")
        self.lex.expect("eof")
        return result

    def parse_declaration(self) -> FunctionSchema | OperatorName:
        lex = self.lex
        name = self.parse_name()
        if lex.cur().kind != "(":
            return name
        arguments: list[Argument] = []
        state = {"kwarg_only": False, "vararg": False, "varret": False}

        def argument() -> None:
            if state["vararg"]:
                raise self.error(lex.cur(), "... must be the last element of the argument list")
            if lex.next_if("*"):
                state["kwarg_only"] = True
            elif lex.next_if("dots"):
                state["vararg"] = True
            else:
                arguments.append(self.parse_argument(False, state["kwarg_only"]))

        self.parse_list("(", ",", ")", argument)
        if state["vararg"] and any(arg.has_default for arg in arguments):
            raise self.error(lex.cur(), "schemas with vararg (...) can't have default value args")
        lex.expect("arrow")
        returns: list[Return] = []

        def ret() -> None:
            if state["varret"]:
                raise self.error(lex.cur(), "... must be the last element of the return list")
            if lex.next_if("dots"):
                state["varret"] = True
            else:
                returns.append(self.parse_argument(True, False))

        if lex.next_if("dots"):
            state["varret"] = True
        elif lex.cur().kind == "(":
            self.parse_list("(", ",", ")", ret)
        else:
            returns.append(self.parse_argument(True, False))
        return FunctionSchema(
            name, tuple(arguments), tuple(returns), state["vararg"], state["varret"]
        )

    def parse_name(self) -> OperatorName:
        lex = self.lex
        namespace, name = "", self.text(lex.expect("ident"))
        if lex.next_if(":"):
            lex.expect(":")
            namespace, name = name, self.text(lex.expect("ident"))
        overload = self.text(lex.expect("ident")) if lex.next_if(".") else ""
        # "default" names OpOverloadPacket.default, and dunders are Python attributes
        if overload == "default" or overload.startswith("__"):
            raise SchemaError(f"{overload} is not a legal overload name for aten operators")
        return OperatorName(namespace, name, overload)

    def parse_argument(self, is_return: bool, kwarg_only: bool) -> Any:
        lex = self.lex
        t, alias = self.parse_type()
        size = None
        if lex.next_if("["):
            # a size can only follow the argument's type: ``int[2]``, ``Tensor(a!)[2]?``
            size = _stoll(self.text(lex.expect("number")))
            size = (size + 2**31) % 2**32 - 2**31  # std::optional<int32_t>
            lex.expect("]")
            t = ListType(t, size)
            alias = _contain(self.parse_alias_annotation(), alias)
            if lex.next_if("?"):
                t = _make_optional(t)
        if is_return:
            name = self.text(lex.next()) if lex.cur().kind == "ident" else None
            return Return(name, t, alias)
        name = self.text(lex.expect("ident"))
        default = self.parse_default(t, size) if lex.next_if("=") else NO_DEFAULT
        return Argument(name, t, default, kwarg_only, alias)

    # -- types --
    def parse_type(self) -> tuple[SchemaType, AliasInfo | None]:
        lex = self.lex
        token = lex.cur()
        word = self.text(token) if token.kind == "ident" else None
        alias = None
        if token.kind == "(":
            elems: list[SchemaType] = []
            self.parse_list("(", ",", ")", lambda: elems.append(_fake(self.parse_type()[0])))
            t: SchemaType = TupleType(tuple(elems))
        elif word in ("Future", "Await", "RRef"):
            lex.next()
            lex.expect("(")
            t = ContainerType(word, (_fake(self.parse_type()[0]),))
            lex.expect(")")
        elif word == "Tensor":
            lex.next()
            t, alias = _TENSOR, self.parse_alias_annotation()
        elif word == "Dict":
            lex.next()
            lex.expect("(")
            key = _fake(self.parse_type()[0])
            lex.expect(",")
            value = _fake(self.parse_type()[0])
            lex.expect(")")
            alias = self.parse_alias_annotation()
            if key not in _DICT_KEYS:
                raise SchemaError(
                    f"Cannot create dict for key type '{key}', only int, float, complex, Tensor, "
                    "device and string keys are supported"
                )
            t = ContainerType("Dict", (key, value))
        elif word == "Union":
            lex.next()
            lex.expect("(")
            members = [_fake(self.parse_type()[0])]
            while lex.cur().kind != ")":
                lex.expect(",")
                members.append(_fake(self.parse_type()[0]))
            lex.expect(")")
            alias = self.parse_alias_annotation()
            t = _make_union(members)
        elif word == "__torch__":
            raise self.custom_class_error()
        else:
            t, alias = self.parse_base_type(), self.parse_alias_annotation()
        while True:
            if lex.cur().kind == "[" and lex.lookahead().kind == "]":
                lex.next()
                lex.next()
                t = ListType(t)
                alias = _contain(self.parse_alias_annotation(), alias)
            elif lex.next_if("?"):
                t = _make_optional(t)
            else:
                return t, alias

    def parse_base_type(self) -> BaseType:
        lex = self.lex
        token = lex.cur()
        if not lex.next_if("None") and not lex.next_if("NoneType"):
            lex.expect("ident")
        text = self.text(token)
        while lex.cur().kind == "." and lex.lookahead().kind == "ident":
            lex.next()
            text += "." + self.text(lex.expect("ident"))
        if text in _BASE_TYPES:
            return _BASE_TYPES[text]
        if self.allow_typevars and text[0] in "abcdefghijklmnopqrstuvwxyz":
            return BaseType(text)  # a type variable, e.g. ``t`` in ``aten::append``
        if text == "double":
            raise self.error(
                token,
                "Use `float` instead of `double` in an operator's schema string. `float` in "
                "schema corresponds to the double type in C++",
            )
        if text == "int64_t":
            raise self.error(
                token,
                "Use `SymInt` or `int` instead of `int64_t` in an operator's schema string. "
                "`SymInt` corresponds to c10::SymInt in C++ while `int` in schema corresponds to "
                "the int64_t type in C++.",
            )
        raise self.error(token, _UNKNOWN_TYPE)

    def custom_class_error(self) -> SchemaError:
        """``__torch__.torch.classes.ns.Class``: dispatchcore registers no custom classes."""
        lex = self.lex
        lex.next()
        lex.expect(".")
        for expected in ("torch", "classes"):
            token = lex.expect("ident")
            if self.text(token) != expected:
                return self.error(token, f"Expected classes namespace but got {self.text(token)}")
            lex.expect(".")
        namespace = self.text(lex.expect("ident"))
        lex.expect(".")
        token = lex.expect("ident")
        return self.error(
            token,
            f"Unknown custom class type {namespace}.{self.text(token)}. Please ensure it is "
            "registered.",
        )

    def parse_alias_annotation(self) -> AliasInfo | None:
        lex = self.lex
        if lex.next_if("("):
            before = self.parse_alias_sets()
            is_write = lex.next_if("!")
            # without "->" the after-set is a copy, built by iterating the before-set
            after = self.parse_alias_sets() if lex.next_if("arrow") else before[::-1]
            lex.expect(")")
            # unordered_set iterates these small sets in reverse insertion order
            return AliasInfo(tuple(before[::-1]), tuple(after[::-1]), is_write)
        if lex.next_if("!"):
            name = f"${self.alias_ids}"
            self.alias_ids += 1
            return AliasInfo((name,), (), True)
        return None

    def parse_alias_sets(self) -> list[str]:
        """``a|b|*``, in insertion order; after a ``*`` further names are not even read."""
        sets: list[str] = []

        def item() -> None:
            if self.lex.next_if("*"):
                name = "*"
            elif "*" in sets:
                return
            else:
                name = self.text(self.lex.expect("ident"))
            if name not in sets:
                sets.append(name)

        self.parse_list(None, "|", None, item)
        return sets

    # -- defaults --
    def parse_default(self, t: SchemaType, size: int | None) -> Any:
        lex = self.lex
        token = lex.cur()
        kind = _default_kind(t)
        if kind in ("Tensor", "Generator", "Quantizer"):
            lex.expect("None")
            return None
        if kind in ("str", "Optional", "Scalar", "int", "bool", "float", "complex"):
            return self.parse_single_constant(kind, t)
        if kind == "Device":
            return _parse_device(self.parse_string_literal(lex.expect("string_literal")))
        if kind == "List":
            assert isinstance(t, ListType)
            elem_kind = _default_kind(t.elem)
            if lex.cur().kind == "ident":
                lex.expect("None")  # always fails: lists have no named defaults
            if size is not None and lex.cur().kind != "[":
                value = self.parse_single_constant(elem_kind, t.elem)
                if size < 0:  # std::vector(size_t(size), value)
                    raise _SchemaValueError("cannot create std::vector larger than max_size()")
                return self.convert_to_list(elem_kind, token, [value] * size)
            list_token = lex.expect("[")
            values = []
            if lex.cur().kind != "]":
                values.append(self.parse_single_constant(elem_kind, t.elem))
                while lex.next_if(","):
                    values.append(self.parse_single_constant(elem_kind, t.elem))
            lex.expect("]")
            return self.convert_to_list(elem_kind, list_token, values)
        raise self.error(token, "unexpected type, file a bug report")

    def parse_single_constant(self, kind: str, t: SchemaType) -> Any:
        lex = self.lex
        token = lex.cur()
        if token.kind in ("True", "False", "None"):
            lex.next()
            return {"True": True, "False": False, "None": None}[token.kind]
        if token.kind == "string_literal":
            return self.parse_string_literal(lex.next())
        if token.kind == "ident":
            lex.next()
            text = self.text(token)
            if text in _NAMED_DEFAULTS:
                return _NAMED_DEFAULTS[text]
            if _is_scalar_type(t) and text in _DTYPES:
                return _DTYPES[text]
            raise self.error(lex.cur(), "invalid numeric default value")
        sign = "-" if lex.next_if("-") else ""
        number = sign + self.text(lex.expect("number"))
        if kind == "complex" or "j" in number:
            return complex(0, _stod(number[:-1]))  # drops the last character even without "j"
        if kind == "float" or "." in number or "e" in number:
            return _stod(number)
        return _stoll(number)

    def convert_to_list(self, kind: str, token: _Token, values: list[Any]) -> list[Any]:
        if kind == "complex":
            for value in values:
                if not isinstance(value, complex):
                    tag = _IVALUE_TAGS.get(type(value), type(value).__name__)
                    raise SchemaError(
                        f'isComplexDouble() INTERNAL ASSERT FAILED at "{_TORCH_SRC}aten/src/ATen/'
                        'core/ivalue_inl.h":159, please report a bug to PyTorch. Expected '
                        f"ComplexDouble but got {tag}"
                    )
            return values
        if kind in _LIST_ELEMENT_ASSERTS:
            expected_type, line, message = _LIST_ELEMENT_ASSERTS[kind]
            for value in values:
                if type(value) is not expected_type:
                    raise SchemaError(
                        f'0 INTERNAL ASSERT FAILED at "{_TORCH_SRC}aten/src/ATen/core/ivalue.h":'
                        f"{line}, please report a bug to PyTorch. {message}"
                    )
            return values
        raise self.error(token, "lists are only supported for float, int and complex types")

    def parse_string_literal(self, token: _Token) -> str:
        """``parseStringLiteral``: strip the quotes and apply its escape rules."""
        raw = self.text(token)
        width = 3 if raw.startswith(raw[0] * 3) else 1
        text = raw[width : len(raw) - width]
        pos = text.find("\\")
        while pos != -1:
            escape = text[pos + 1] if pos + 1 < len(text) else "\0"  # std::string's NUL
            erase = 2
            if escape in "\\'\"\n":
                char = escape
            elif escape in _STRING_ESCAPES:
                char = _STRING_ESCAPES[escape]
            elif escape == "x":
                raise self.error(token, "unsupported hex specifier")
            elif escape in "uU":
                raise self.error(token, "unsupported unicode specifier")
            else:
                digits = text[pos + 1 : pos + 4]
                # torch also wants one more character after the digits (pos + 3 < size)
                if pos + 3 >= len(text) or not all(d in "01234567" for d in digits) or (
                    int(digits, 8) >= 256
                ):
                    raise self.error(token, " ill formed octal specifier")
                char, erase = chr(int(digits, 8)), 4
            text = text[:pos] + char + text[pos + erase :]
            pos = text.find("\\", pos + 1)
        return text


_STRING_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "v": "\v", "t": "\t"}
_IVALUE_TAGS = {bool: "Bool", int: "Int", float: "Double", str: "String", type(None): "None"}


def _is_scalar_type(t: SchemaType) -> bool:
    """``isPossiblyOptionalScalarType``: ``ScalarType`` or ``ScalarType?`` (nested)."""
    while isinstance(t, OptionalType):
        t = t.elem
    return t == BaseType("ScalarType")


def _contain(container: AliasInfo | None, inner: AliasInfo | None) -> AliasInfo | None:
    """Attach an element's alias annotation to its list's (creating one that copies is_write)."""
    if inner is None:
        return container
    if container is None:
        container = AliasInfo((), (), inner.is_write)
    return attrs.evolve(container, contained=container.contained + (inner,))


def _fake(t: SchemaType) -> SchemaType:
    """The fake type: ``SymInt``/``ScalarType``/``Layout``/``MemoryFormat`` become ``int``.

    Compound types (tuples, dicts, unions, futures) are built from fake types, so they print
    ``(int, int)`` for ``(SymInt, ScalarType)``.
    """
    if isinstance(t, BaseType):
        return _INT if t.name in _FAKE_INT else t
    if isinstance(t, OptionalType):
        return OptionalType(_fake(t.elem))
    if isinstance(t, ListType):
        return ListType(_fake(t.elem), t.size)
    if isinstance(t, TupleType):
        return TupleType(tuple(map(_fake, t.elems)))
    return ContainerType(t.kind, tuple(map(_fake, t.elems)))


_NONE, _SCALAR = BaseType("NoneType"), BaseType("Scalar")
_DICT_KEYS = frozenset(
    map(BaseType, ("int", "float", "complex", "Tensor", "Device", "str", "bool"))
)
_UNION_SCALAR = ContainerType("Union", (_SCALAR,))  # how torch prints Union[int, float, complex]
_NUMBERS = frozenset({_INT, BaseType("float"), BaseType("complex"), _SCALAR})
# c10's TypeKind order (jit_type_base.h), by which unions sort their members
_KIND_RANK = {
    name: rank
    for rank, name in enumerate(
        "Any EnumType AnyEnumType Tensor Storage Tuple List Dict Scalar float complex Future "
        "Await RRef int NoneType str Generator Quantizer bool Optional Var Device Stream "
        "Function Class PyObject Capsule Interface QScheme ScalarType Layout MemoryFormat "
        "AnyList AnyTuple AnyClassType SymInt SymFloat SymBool Union".split()
    )
}


def _kind_rank(t: SchemaType) -> int:
    if isinstance(t, BaseType):
        return _KIND_RANK.get(t.name, _KIND_RANK["Var"])  # unknown names are type variables
    if isinstance(t, (OptionalType, ListType)):
        return _KIND_RANK["Optional" if isinstance(t, OptionalType) else "List"]
    return _KIND_RANK["Tuple" if isinstance(t, TupleType) else t.kind]


_ANY = BaseType("Any")
_KNOWN_NAMES = frozenset(t.name for t in _BASE_TYPES.values()) | {"Tensor"}


def _unify_key(t: SchemaType) -> SchemaType:
    """``t`` with every type variable renamed alike: unification merges ``a`` with ``b``."""
    if isinstance(t, BaseType):
        return t if t.name in _KNOWN_NAMES else BaseType("$var")
    if isinstance(t, OptionalType):
        return OptionalType(_unify_key(t.elem))
    if isinstance(t, ListType):
        return ListType(_unify_key(t.elem), t.size)
    if isinstance(t, TupleType):
        return TupleType(tuple(map(_unify_key, t.elems)))
    return ContainerType(t.kind, tuple(map(_unify_key, t.elems)))


def _make_union(members: list[SchemaType]) -> SchemaType:
    """``UnionType::create``: flatten, unify, sort; ``Union(T, NoneType)`` is ``T?``.

    Unification drops members that another one covers: duplicates, everything next to
    ``Any``, and all type variables but the first.

    Numbers merge: a union holding ``Scalar``, or all of ``int``, ``float`` and ``complex``,
    holds ``Scalar`` instead and prints as ``Union(Scalar)``.
    """
    flat: list[SchemaType] = []
    for member in members:
        if isinstance(member, OptionalType):
            parts = [member.elem, _NONE]
        elif isinstance(member, ContainerType) and member.kind == "Union":
            parts = list(member.elems)
        else:
            parts = [member]
        for part in parts:
            if _unify_key(part) not in map(_unify_key, flat):
                flat.append(part)
    if _ANY in flat:
        flat = [_ANY]  # Any absorbs every other member
    if len(flat) == 1 and flat != [_SCALAR]:  # Scalar counts as int, float and complex here
        listed = "".join(
            f"{_annotation(m)}" + (" " if i == 0 else ", ") for i, m in enumerate(members)
        )
        raise SchemaError(
            f'false INTERNAL ASSERT FAILED at "{_TORCH_SRC}aten/src/ATen/core/union_type.cpp":'
            "210, please report a bug to PyTorch. After type unification was performed, the "
            f"Union with the original types {{{listed}}} has the single type "
            f"{_annotation(flat[0])}. Use the common supertype instead of creating a Uniontype"
        )
    number = _SCALAR in flat or _NUMBERS - {_SCALAR} <= set(flat)
    flat = sorted((t for t in flat if not (number and t in _NUMBERS)), key=_kind_rank)
    if number:
        if not flat:
            return _UNION_SCALAR
        if flat == [_NONE]:
            return OptionalType(_SCALAR)
        # c10 prints such a union with an empty first member: "Union(, str, Scalar)"
        return ContainerType("Union", (BaseType(""), *flat, _SCALAR))
    if len(flat) == 2 and _NONE in flat:
        return OptionalType(flat[0] if flat[1] == _NONE else flat[1])
    return ContainerType("Union", tuple(flat))


def _make_optional(t: SchemaType) -> SchemaType:
    """``T?`` as ``OptionalType::create`` builds it (a union with ``NoneType`` in c10)."""
    if isinstance(t, OptionalType):
        # T?? is T?, except that c10 re-expands Scalar there
        return OptionalType(_UNION_SCALAR) if t.elem == _SCALAR else t
    if t == _NONE:
        return _make_union([_NONE, _NONE])  # raises, as in torch
    if t == _UNION_SCALAR:
        return OptionalType(_SCALAR)
    if isinstance(t, ContainerType) and t.kind == "Union" and _NONE in t.elems:
        others = tuple(e for e in t.elems if e != _NONE)
        return OptionalType(others[0] if len(others) == 1 else ContainerType("Union", others))
    return OptionalType(t)


def _parse_device(text: str) -> str:
    """``c10::Device(string)``: validate, and return the device as c10 prints it."""
    if not text:
        raise SchemaError("Device string must not be empty")
    match = re.fullmatch(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?", text)
    if match is None:
        raise SchemaError(f"Invalid device string: '{text}'")
    device_type, index = match.groups()
    if index is not None and int(index) >= 2**31:
        raise SchemaError(f"Could not parse device index '{index}' in device string '{text}'")
    if device_type not in _DEVICE_TYPES:
        raise SchemaError(
            f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
            f"{device_type}"
        )
    wrapped = None if index is None else (int(index) + 128) % 256 - 128  # DeviceIndex is int8
    # c10 prints no index when it is -1, "no index"
    return device_type if wrapped in (None, -1) else f"{device_type}:{wrapped}"


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


def parse_schema_or_name(
    text: str, *, allow_typevars: bool = True
) -> FunctionSchema | OperatorName:
    """Parse a full schema, or just ``[ns::]name[.overload]`` (``parseSchemaOrName``).

    Args:
        text: the schema or name.
        allow_typevars: treat unknown lower-case type names as type variables (``t``), as
            ``torch._C.parse_schema`` does; ``Library.define`` passes False. Always on for
            ``aten::`` and ``prim::`` names.

    Raises:
        SchemaError: on any syntax error, with torch's message and caret.

    Example:
        >>> parse_schema_or_name("myops::add.Tensor")
        OperatorName(namespace='myops', name='add', overload_name='Tensor')
    """
    if text.startswith(("aten::", "prim::")):
        allow_typevars = True
    return _Parser(text, allow_typevars).parse_exactly_one()


def parse_schema(text: str, *, allow_typevars: bool = True) -> FunctionSchema:
    """Parse an operator schema, as ``torch._C.parse_schema`` does.

    Besides the syntax this also checks, like torch's ``FunctionSchema`` constructor, that no
    positional argument without a default follows one with a default (torch reports it from
    ``parse_schema`` and therefore from ``Library.define``), that ``...`` comes last, and
    that vararg schemas have no defaults.

    Args:
        text: the schema, e.g. ``"ns::f.overload(Tensor x, *, int n=1) -> Tensor"``.
        allow_typevars: see ``parse_schema_or_name``.

    Returns:
        The parsed schema; ``str()`` of it equals ``str(torch._C.parse_schema(text))``.

    Raises:
        SchemaError: torch's message, then the source line and a caret under the offending
            token ending in ``<--- HERE``. Number conversions that fail in torch's ``stoll``/
            ``stod`` raise a SchemaError that is also a ValueError or IndexError, like torch.

    Example:
        >>> str(parse_schema("f(int[] a=[1,2], float b=1e-5, str c='x') -> (Tensor, Tensor)"))
        'f(int[] a=[1, 2], float b=1.0000000000000001e-05, str c="x") -> (Tensor, Tensor)'
        >>> parse_schema("f(Tensor x)")
        Traceback (most recent call last):
        ...
        dispatchcore.errors.SchemaError: expected arrow but found 'eof' here:
        f(Tensor x)
    """
    parsed = parse_schema_or_name(text, allow_typevars=allow_typevars)
    if not isinstance(parsed, FunctionSchema):
        raise SchemaError("Tried to parse a function schema but only the operator name was given")
    return parsed


# --------------------------------------------------------------------------------------------
# Python argument parsing: the checks ``torch.zeros(...)`` and friends make before any
# operator is called (``torch/csrc/utils/python_arg_parser.cpp``), with its TypeError texts.
# --------------------------------------------------------------------------------------------

# signature type -> (``FunctionParameter::type_name``, kind used by the checks below)
_PY_TYPES: dict[str, tuple[str, str]] = {
    "Tensor": ("Tensor", "Tensor"), "Scalar": ("Number", "Scalar"), "int64_t": ("int", "int"),
    "SymInt": ("int", "int"), "double": ("float", "float"), "bool": ("bool", "bool"),
    "IntArrayRef": ("tuple of ints", "int[]"), "SymIntArrayRef": ("tuple of ints", "int[]"),
    "TensorList": ("tuple of Tensors", "Tensor[]"), "ScalarType": ("torch.dtype", "ScalarType"),
    "Layout": ("torch.layout", "Layout"), "MemoryFormat": ("torch.memory_format", "MemoryFormat"),
    "Device": ("torch.device", "Device"), "Generator": ("torch.Generator", "Generator"),
    "c10::string_view": ("str", "str"), "PyObject*": ("object", "object"),
}
_PY_DEFAULTS = {"None": None, "False": False, "True": True}


def _py_default(text: str) -> Any:
    """A default as the binding reads it: None, a bool, an int, a float, an int list (``{0,1}``), or the text."""
    if text in _PY_DEFAULTS:
        return _PY_DEFAULTS[text]
    if text.startswith("{") and text.endswith("}"):
        return [int(v) for v in text[1:-1].split(",") if v]
    if text.lstrip("-").isdigit():
        return int(text)
    return float(text) if _FLOAT_LITERAL.fullmatch(text) else text


_FLOAT_LITERAL = re.compile(r"-?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)")


@attrs.frozen
class PythonParameter:
    """One parameter of a ``PythonSignature`` (``FunctionParameter``)."""

    name: str
    type_name: str  # as torch prints it: "tuple of ints", "torch.dtype", ...
    kind: str  # what the value is checked as
    allow_none: bool  # ``T?``: None is accepted
    optional: bool  # has a default, so it may be left out (``T?`` alone only accepts None)
    default: Any
    default_text: str | None
    keyword_only: bool
    size: int | None  # ``IntArrayRef[2]``: one int is accepted for the whole list

    def __str__(self) -> str:
        text = f"{self.type_name} {self.name}"
        return text if self.default_text is None else f"{text} = {self.default_text}"


@attrs.frozen
class PythonSignature:
    """One overload of a ``torch.*`` function, as ``python_arg_parser`` reads it.

    The text is the one torch's generated bindings use, e.g.
    ``"zeros(SymIntArrayRef size, *, ScalarType? dtype=None, bool? requires_grad=False)"``.

    Example:
        >>> str(PythonSignature.parse("eye(int64_t n, *, ScalarType? dtype=None)"))
        '(int n, *, torch.dtype dtype = None)'
    """

    name: str
    params: tuple[PythonParameter, ...]
    hidden: bool = False

    @classmethod
    def parse(cls, text: str, *, hidden: bool = False) -> PythonSignature:
        """Read a signature in torch's binding format (``FunctionSignature(fmt, index)``)."""
        name, _, rest = text.partition("(")
        params = []
        keyword_only = False
        for item in filter(None, (p.strip() for p in rest.rstrip(")").split(", "))):
            if item == "*":
                keyword_only = True
                continue
            decl, eq, default_text = item.partition("=")
            type_text, _, pname = decl.rpartition(" ")
            allow_none = type_text.endswith("?")
            base = type_text.rstrip("?")
            size = None
            if base.endswith("]"):
                base, _, n = base[:-1].partition("[")
                size = int(n)
            type_name, kind = _PY_TYPES[base]
            default = _py_default(default_text) if eq else None
            params.append(PythonParameter(
                pname, type_name, kind, allow_none, bool(eq), default,
                default_text if eq else None, keyword_only, size))
        return cls(name, tuple(params), hidden)

    @property
    def max_pos_args(self) -> int:
        return sum(not p.keyword_only for p in self.params)

    @property
    def min_args(self) -> int:
        return sum(not p.optional for p in self.params)

    def __str__(self) -> str:
        parts: list[str] = []
        for p in self.params:
            if p.keyword_only and "*" not in parts:
                parts.append("*")
            parts.append(str(p))
        return "(" + ", ".join(parts) + ")"

    def bind(self, args: tuple, kwargs: dict[str, Any], checks: dict[str, Callable[[Any], bool]],
             raise_error: bool) -> dict[str, Any] | None:
        """The arguments by name (defaults filled in), or None / TypeError if they do not fit.

        Mirrors ``FunctionSignature::parse``: a single positional int list also takes the
        varargs form (``zeros(2, 3)``), and type errors name the argument and its position.
        """
        nargs = len(args)
        varargs = self.max_pos_args == 1 and self.params[0].kind == "int[]"
        # the varargs form only when the first value is an int (``zeros(True, 2)``: too many arguments)
        if nargs > self.max_pos_args and not (varargs and _is_strict_int(args[0], checks["Tensor"])):
            return self._fail(raise_error, self._extra_args(nargs))
        bound: dict[str, Any] = {}
        arg_pos = 0
        remaining = len(kwargs)
        for param in self.params:
            is_kwd = arg_pos >= nargs
            if not is_kwd:
                if param.keyword_only:
                    return self._fail(raise_error, self._extra_args(nargs))
                value = args[arg_pos]
            else:
                value = kwargs.get(param.name, _MISSING)
                remaining -= value is not _MISSING
            if (value is _MISSING and param.optional) or (value is None and param.allow_none):
                bound[param.name] = param.default if value is _MISSING else None
            elif value is _MISSING:
                return self._fail(raise_error, self._missing(param))
            else:
                failed = _py_check(param, value, checks)
                if failed is None:
                    bound[param.name] = value
                elif failed >= 0 and param.kind == "Tensor[]":  # checked with throw_error, whatever the overloads
                    raise TypeError(f"expected Tensor as element {failed} in argument {self.params.index(param)}, "
                                    f"but got {_typename(value[failed])}")
                elif varargs and arg_pos == 0 and not is_kwd and _is_strict_int(value, checks["Tensor"]):
                    bad = _first_bad_int(args, checks)
                    if bad is None:  # zeros(2, 3) -> zeros((2, 3))
                        bound[param.name] = list(args)
                        arg_pos = nargs
                        continue
                    return self._fail(raise_error, self._unpack_error(param, bad, args))
                elif not raise_error:
                    return None
                elif is_kwd:
                    raise TypeError(f"{self.name}(): argument '{param.name}' must be "
                                    f"{param.type_name}, not {_typename(value)}")
                elif failed >= 0:
                    raise TypeError(
                        f"{self.name}(): argument '{param.name}' (position {arg_pos + 1}) must be "
                        f"{param.type_name}, but found element of type "
                        f"{_typename(value[failed])} at pos {failed}")
                else:
                    raise TypeError(
                        f"{self.name}(): argument '{param.name}' (position {arg_pos + 1}) must be "
                        f"{param.type_name}, not {_typename(value)}")
            if not is_kwd:
                arg_pos += 1
        if remaining > 0:
            return self._fail(raise_error, self._extra_kwargs(kwargs, nargs))
        # torch checks a list's first element only; the rest fail when the list is unpacked
        for param in self.params:
            value = bound[param.name]
            if param.kind == "int[]" and isinstance(value, (list, tuple)):
                bad = _first_bad_int(value, checks)
                if bad is not None:
                    return self._fail(raise_error, self._unpack_error(param, bad, value))
                if any(v.__class__ is bool for v in value):  # unpacked as torch does: True is 1
                    value = bound[param.name] = [int(v) if v.__class__ is bool else v for v in value]
                for i, item in enumerate(value):
                    if isinstance(item, int) and not -(2**63) <= item < 2**63:
                        return self._fail(raise_error, (
                            f"{self.name}(): argument '{param.name}' failed to unpack the object "
                            f'at pos {i + 1} with error "Overflow when unpacking long long'))
        return bound

    @staticmethod
    def _fail(raise_error: bool, message: str) -> None:
        if raise_error:
            raise TypeError(message)
        return None

    def _extra_args(self, nargs: int) -> str:
        most, least = self.max_pos_args, self.min_args
        if least != most:
            return (f"{self.name}() takes from {least} to {most} positional arguments but {nargs} "
                    "were given")
        return (f"{self.name}() takes {most} positional argument{'s' if most != 1 else ''} but "
                f"{nargs} {'were' if nargs != 1 else 'was'} given")

    def _missing(self, first: PythonParameter) -> str:
        rest = self.params[self.params.index(first):]
        names = [f'"{p.name}"' for p in rest if not p.optional]
        # torch's plural test is inverted: "missing 1 required positional arguments"
        return (f"{self.name}() missing {len(names)} required positional argument"
                f"{'s' if len(names) == 1 else ''}: {', '.join(names)}")

    def _extra_kwargs(self, kwargs: dict[str, Any], nargs: int) -> str:
        names = {p.name: i for i, p in enumerate(self.params)}
        for key in kwargs:
            if key not in names:
                return f"{self.name}() got an unexpected keyword argument '{key}'"
            if names[key] < nargs:
                return f"{self.name}() got multiple values for argument '{key}'"
        return f"{self.name}() got an unexpected keyword argument"  # unreachable

    def _unpack_error(self, param: PythonParameter, index: int, items: Any) -> str:
        return (f"{self.name}(): argument '{param.name}' failed to unpack the object at pos "
                f"{index + 1} with error \"type must be {param.type_name},but got "
                f"{_typename(items[index])}\"")


_MISSING: Any = object()


def _is_scalar_value(value: Any, is_tensor: Callable[[Any], bool]) -> bool:
    if is_tensor(value):
        return _is_zero_dim(value) and not getattr(value, "requires_grad", False)
    return isinstance(value, (int, float, complex)) or (
        type(value).__module__ == "numpy" and _has(value, "__float__"))


def _is_strict_int(value: Any, is_tensor: Callable[[Any], bool]) -> bool:
    """``THPUtils_checkIndex``-like: an int (not a bool), a numpy integer or a 0-d int tensor."""
    if is_tensor(value):
        return (_is_zero_dim(value) and not getattr(value, "requires_grad", False)
                and value.dtype.__class__.__name__ == "dtype" and value.dtype._category == 1)
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        type(value).__module__ == "numpy" and _has(value, "__index__")
        and not isinstance(value, bool) and type(value).__name__ != "bool")


def _typename(value: Any) -> str:
    return tp_name(type(value))


def _first_bad_int(items: Any, checks: dict[str, Callable[[Any], bool]]) -> int | None:
    """The first item an int list cannot unpack, or None.

    ``THPUtils_unpackIndex`` takes anything with ``__index__``, a bool too; the first item was
    already checked strictly.
    """
    is_tensor = checks["Tensor"]
    for i, item in enumerate(items):
        if not _is_strict_int(item, is_tensor) and (is_tensor(item) or not hasattr(type(item), "__index__")):
            return i
    return None


def _cxx_tuple_text(items: list[str], positional: bool) -> str:
    """``(a, b)`` as torch's ``_argDesc`` writes it.

    Each item is followed by ``", "``, and the last one is removed only when a positional
    argument was given (``got (dtype=str, )`` otherwise).
    """
    text = "".join(f"{item}, " for item in items)
    return f"({text[:-2] if positional else text})"


def _printed_arguments(text: str) -> list[tuple[str, str]]:
    """``(name, type)`` per argument of a printed signature, read as torch's ``_parseOption`` reads it.

    Each ``", "``-separated item splits at its last space: ``"int dim = -1"`` is named ``-1``
    with the type ``int dim =``; ``"*"`` is an argument named and typed ``*``.

    Example:
        >>> _printed_arguments("(Tensor input, *, bool stable, int dim = -1)")
        [('input', 'Tensor'), ('*', '*'), ('stable', 'bool'), ('-1', 'int dim =')]
    """
    found = []
    for item in text[1:-1].split(", "):  # "()" is one argument, named and typed "" (as in torch)
        cut = item.rfind(" ")
        end = cut - 4 if "..." in item and cut >= 0 else cut
        found.append((item[cut + 1:], item[:end] if end >= 0 else item))
    return found


def _printed_type_matches(type_name: str, value: Any) -> bool:
    """What ``_buildType(...).is_matching`` answers in torch: a Python type name against a printed type."""
    name = _typename(value)
    if type_name == "float":
        return name in ("float", "int", "long")
    if type_name == "int":
        return name in ("int", "long")
    return name == type_name


def _value_desc(value: Any) -> str:
    """A given argument as torch describes it: its type, and a tuple's or list's element types."""
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_typename(v) for v in value)
        if isinstance(value, tuple):
            return f"{_typename(value)} of ({inner}{',' if len(value) == 1 else ''})"
        return f"{_typename(value)} of [{inner}]"
    return _typename(value)


_MUL64 = 0xC6A4A7935BD1E995
_MASK64 = (1 << 64) - 1


def _cxx_string_hash(key: str) -> int:
    """libstdc++'s ``std::hash<std::string>`` (``_Hash_bytes``, seed 0xc70f6907) on a 64-bit machine."""
    data = key.encode()
    h = (0xC70F6907 ^ (len(data) * _MUL64)) & _MASK64
    whole = len(data) & ~7
    for i in range(0, whole, 8):
        word = int.from_bytes(data[i:i + 8], "little") * _MUL64 & _MASK64
        h = (h ^ ((word ^ (word >> 47)) * _MUL64 & _MASK64)) * _MUL64 & _MASK64
    if len(data) & 7:
        h = (h ^ int.from_bytes(data[whole:], "little")) * _MUL64 & _MASK64
    h = (h ^ (h >> 47)) * _MUL64 & _MASK64
    return h ^ (h >> 47)


def _cxx_map_order(keys: list[str]) -> list[str]:
    """The order a libstdc++ ``std::unordered_map<std::string, ...>`` filled with ``keys`` iterates.

    torch's ``format_invalid_args`` copies the keyword arguments into one and prints them (and
    the unknown ones) in its order. Its first insertion makes 13 buckets; a key whose bucket is
    empty goes to the front of the node list, else to the front of its bucket's run. Past 13 keys
    the table would grow and relink: not modelled, insertion order is kept.
    """
    if len(keys) > 13:
        return keys
    found: list[str] = []
    buckets: list[int] = []
    for key in keys:
        bucket = _cxx_string_hash(key) % 13
        at = buckets.index(bucket) if bucket in buckets else 0
        found.insert(at, key)
        buckets.insert(at, bucket)
    return found


def _py_check(param: PythonParameter, value: Any,
              checks: dict[str, Callable[[Any], bool]]) -> int | None:
    """``FunctionParameter::check``: None if ``value`` fits, else -1 or the failing list index."""
    kind = param.kind
    is_tensor = checks["Tensor"]
    if kind in checks:
        return None if checks[kind](value) else -1
    if kind == "Scalar" or kind == "float":
        return None if _is_scalar_value(value, is_tensor) and not isinstance(
            value, complex if kind == "float" else ()) else -1
    if kind == "int":
        return None if _is_strict_int(value, is_tensor) else -1
    if kind == "bool":
        return None if isinstance(value, bool) or type(value).__name__ == "bool_" else -1
    if kind == "int[]":
        if isinstance(value, (list, tuple)):
            # only the first element is looked at here (is_int_or_symint_list)
            return None if not value or _is_strict_int(value[0], is_tensor) else 0
        return None if param.size and _is_strict_int(value, is_tensor) else -1
    if kind == "Tensor[]":
        if not isinstance(value, (list, tuple)):
            return -1
        for i, item in enumerate(value):
            if not is_tensor(item):
                return i
        return None
    if kind == "str":
        return None if isinstance(value, str) else -1
    return None  # object


_INT64_LIMIT = 2**63
_MAX_PLANS = 64  # per parser: calls of ever new classes bind the slow way, nothing grows without bound
# where a binding plan takes a parameter's value from (Note [Binding plans])
_POSITION, _KEYWORD, _DEFAULT, _VARARGS = range(4)


class PythonArgParser:
    """The overloads of one ``torch.*`` function and the call checks torch makes for them.

    Mirrors ``PythonArgParser``: the first signature the call fits wins; when none does, one
    plausible signature (by argument count) raises its own error, several raise torch's
    ``received an invalid combination of arguments`` TypeError listing them.

    Args:
        signatures: signature texts in torch's binding format (see ``PythonSignature``).
        checks: predicates for the types the tensor library supplies, by kind: ``"Tensor"``,
            ``"ScalarType"``, ``"Layout"``, ``"MemoryFormat"``, ``"Device"``, ``"Generator"``.
            Each decides by the value's class, except for strings (Note [Binding plans]).

    Example:
        >>> p = PythonArgParser(["f(int64_t n, *, bool? flag=False)"],
        ...                     {"Tensor": lambda v: False})
        >>> p.parse((3,), {})
        (0, {'n': 3, 'flag': False})
        >>> p.parse(("a",), {})
        Traceback (most recent call last):
        ...
        TypeError: f(): argument 'n' (position 1) must be int, not str
    """

    def __init__(self, signatures: Iterable[str], checks: dict[str, Callable[[Any], bool]]) -> None:
        self.signatures = tuple(PythonSignature.parse(s) for s in signatures)
        self.name = self.signatures[0].name
        self.checks = checks
        self._plans: dict[tuple, tuple] = {}

    # Note [Binding plans]: which signature a call binds to, and where each argument lands, is
    # decided by the classes of its values and the names of its keywords (the checks test
    # classes), with four exceptions: a list or tuple (its items are checked), a class given as
    # a value (``dtype=float``: is it one torch maps?), a string (a check may read it) and a 0-d
    # tensor (it may stand for a Scalar or an int). A call of any other classes binds once; its
    # plan (the signature, each parameter's source: a position, a keyword, the default; or the
    # varargs form, ``zeros(2, 3)``) is kept under its classes, and later calls of the same
    # classes apply it: ~0.5 us instead of ~4 us for ``x.flatten()`` or ``x.cumsum(dim=1)``.
    # Each use checks its tensors for 0-d and its varargs ints for overflow (either: bind).
    def parse(self, args: tuple, kwargs: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """``(index of the signature, arguments by name)``; TypeError as torch raises it."""
        key = (*map(type, args), *kwargs, *map(type, kwargs.values())) if kwargs else tuple(map(type, args))
        plan = self._plans.get(key)
        if plan is not None:
            index, sources, tensors, varargs = plan
            for where in tensors:
                if _is_zero_dim(args[where] if where.__class__ is int else kwargs[where]):
                    break  # a 0-d tensor: bind
            else:
                if not varargs or all(-_INT64_LIMIT <= a < _INT64_LIMIT for a in args):  # else: overflow error
                    return index, {name: (args[where] if kind == _POSITION else kwargs[name] if kind == _KEYWORD
                                          else list(args) if kind == _VARARGS else where)
                                   for name, kind, where in sources}
        single = len(self.signatures) == 1
        for i, signature in enumerate(self.signatures):
            bound = signature.bind(args, kwargs, self.checks, single)
            if bound is not None:
                if plan is None and len(self._plans) < _MAX_PLANS:
                    plan = self._plan(signature, args, kwargs, bound)
                    if plan is not None:
                        self._plans[key] = (i, *plan)
                return i, bound
        nargs = len(args) + len(kwargs)
        plausible = [s for s in self.signatures
                     if s.min_args <= nargs <= len(s.params) and not s.hidden]
        if len(plausible) == 1:
            plausible[0].bind(args, kwargs, self.checks, True)
        raise TypeError(self._invalid_combination(args, kwargs))

    def _plan(self, signature: PythonSignature, args: tuple, kwargs: dict[str, Any],
              bound: dict[str, Any]) -> tuple[tuple, tuple, bool] | None:
        """``(sources, tensor places, varargs)`` of Note [Binding plans]; None if the classes do not decide."""
        sources = []
        tensors: list[int | str] = []
        is_tensor = self.checks["Tensor"]
        consumed = 0
        varargs = False
        for position, param in enumerate(signature.params):
            name = param.name
            where: int | str
            if position < len(args) and not param.keyword_only:
                kind, where, value = _POSITION, position, args[position]
            elif name in kwargs:
                kind, where, value = _KEYWORD, name, kwargs[name]
            else:
                sources.append((name, _DEFAULT, bound[name]))
                continue
            if position == 0 and kind == _POSITION and all(a.__class__ is int for a in args) \
                    and bound[name] == list(args) and bound[name] is not value:
                sources.append((name, _VARARGS, None))  # zeros(2, 3): every positional value, as a list
                consumed, varargs = len(args), True
                continue
            if bound[name] is not value or isinstance(value, (list, tuple, type, str)):
                return None  # converted (bools in a list) or checked by its items or value
            if is_tensor(value):
                if _is_zero_dim(value):
                    return None
                tensors.append(where)
            sources.append((name, kind, where))
            consumed += kind == _POSITION
        return (tuple(sources), tuple(tensors), varargs) if consumed == len(args) else None

    def _invalid_combination(self, args: tuple, kwargs: dict[str, Any]) -> str:
        """``format_invalid_args`` (torch/csrc/utils/invalid_arguments.cpp), step for step.

        What was given, then each visible signature; under a signature that lists exactly as many
        arguments as were given, why it did not match: the keywords it does not know, else the
        given types with the mismatched ones marked ``!type!``. Like torch, this re-reads the
        *printed* signature: an argument with a default prints as ``int dim = -1``, whose last
        word (``-1``) is taken as its name and the rest (``int dim =``) as its type, and the ``*``
        separator counts as an argument; so such arguments never match, by type or by keyword, in
        torch's message either. Keywords come in the order torch's C++ map iterates them.
        """
        order = _cxx_map_order(list(kwargs))
        got = [_typename(a) for a in args] + [f"{k}={_typename(kwargs[k])}" for k in order]
        lines = [f"{self.name}() received an invalid combination of arguments - got "
                 f"{_cxx_tuple_text(got, bool(args))}, but expected one of:"]
        for signature in self.signatures:
            if signature.hidden:
                continue
            lines.append(f" * {signature}")
            option = _printed_arguments(str(signature))
            variadic = "..." in str(signature)
            count = len(args) + len(kwargs)
            if not (count == len(option) or (variadic and count > len(option))):
                continue
            names = {name for name, _ in option[max(len(option) - len(kwargs), 0):]}
            unknown = [k for k in order if k not in names]
            if unknown:
                lines.append(f"      didn't match because some of the keywords were incorrect: {', '.join(unknown)}")
                continue
            marks = []
            for i in range(count):
                value = args[i] if i < len(args) else kwargs[option[i][0]]
                type_name = option[i][1] if i < len(option) else option[-1][1]
                text = ("" if i < len(args) else f"{option[i][0]}=") + _value_desc(value)
                marks.append(text if _printed_type_matches(type_name, value) else f"!{text}!")
            lines.append("      didn't match because some of the arguments have invalid types: "
                         + _cxx_tuple_text(marks, bool(args)))
        return "\n".join(lines) + "\n"
