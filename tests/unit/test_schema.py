"""Unit tests for dispatchcore.schema: parsing, printing, errors and argument binding.

Every expected string below was produced by torch 2.13's ``torch._C.parse_schema`` or by calling
an op defined with ``torch.library`` (see tests/differential/test_vs_torch_schema.py, which
re-checks the same behaviours against torch when it is installed).
"""

from __future__ import annotations

import doctest
import string

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dispatchcore as dc
import dispatchcore.schema as schema_module
from dispatchcore.errors import SchemaError
from dispatchcore.schema import (
    NO_DEFAULT,
    AliasInfo,
    Argument,
    BaseType,
    ContainerType,
    FunctionSchema,
    ListType,
    OperatorName,
    OptionalType,
    Return,
    TupleType,
    parse_schema,
    parse_schema_or_name,
    python_default,
)

TENSOR = BaseType("Tensor")
INT = BaseType("int")


# --- round trips of real schemas --------------------------------------------------------------

# As torch 2.13 prints them (str(torch._C.parse_schema(s)) == s for each).
REAL_SCHEMAS = [
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"
    " -> Tensor",
    "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,"
    " SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,"
    " SymInt groups) -> Tensor",
    "aten::nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1,"
    " SymInt ignore_index=-100) -> Tensor",
    "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    "aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
    "aten::stack(Tensor[] tensors, int dim=0) -> Tensor",
    "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,"
    " Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None,"
    " Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height,"
    " SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
    "aten::sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False,"
    " Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
    "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean,"
    " Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "aten::_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
    "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "aten::normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None) -> Tensor",
    "aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
    "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,"
    " int[2] dilation=1, bool ceil_mode=False) -> Tensor",
    "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "aten::pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor",
    "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None,"
    " Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor",
    "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride,"
    " SymInt? storage_offset=None) -> Tensor(a)",
    "aten::_assert_async.msg(Tensor self, str assert_msg) -> ()",
    "aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)",
    "aten::items.str(Dict(str, t) self) -> ((str, t)[])",
    "aten::format(str self, ...) -> str",
    "prim::TupleUnpack(Any tup) -> ...",
]


@pytest.mark.parametrize("text", REAL_SCHEMAS)
def test_real_schemas_print_back_unchanged(text):
    assert str(parse_schema(text)) == text


@pytest.mark.parametrize("text", REAL_SCHEMAS)
def test_real_schemas_reparse_to_an_equal_value(text):
    parsed = parse_schema(text)
    assert parse_schema(str(parsed)) == parsed


# --- printing normalizes like torch -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("f(int[2] k=[1,2]) -> Tensor", "f(int[2] k=[1, 2]) -> Tensor"),
        ("f(float[] k=[1.0, 2.5]) -> Tensor", "f(float[] k=[1., 2.5]) -> Tensor"),
        ("f(float[] x=[1, 2]) -> Tensor", "f(float[] x=[1., 2.]) -> Tensor"),
        ("f(float k=1.0) -> Tensor", "f(float k=1.) -> Tensor"),
        ("f(float k=1e-5) -> Tensor", "f(float k=1.0000000000000001e-05) -> Tensor"),
        ("f(float k=0.1) -> Tensor", "f(float k=0.10000000000000001) -> Tensor"),
        ("f(float k=1e20) -> Tensor", "f(float k=1e+20) -> Tensor"),
        ("f(float k=1e18) -> Tensor", "f(float k=1000000000000000000.) -> Tensor"),
        ("f(float k=-0.0) -> Tensor", "f(float k=0.) -> Tensor"),
        ("f(float a=.5) -> Tensor", "f(float a=0.5) -> Tensor"),
        ("f(float x=0x10) -> Tensor", "f(float x=16.) -> Tensor"),
        ("f(int x=1E5) -> Tensor", "f(int x=1) -> Tensor"),
        ("f(int a=0x10) -> Tensor", "f(int a=0) -> Tensor"),
        ("f(int x=0x1e) -> Tensor", "f(int x=30.) -> Tensor"),
        ("f(int x=1.5) -> Tensor", "f(int x=1.5) -> Tensor"),
        ("f(float x=- 1) -> Tensor", "f(float x=-1.) -> Tensor"),
        ("f(str k='abc') -> Tensor", 'f(str k="abc") -> Tensor'),
        ("f(str k='a\"b') -> Tensor", 'f(str k="a\\"b") -> Tensor'),
        ("f(str k='a\\'b') -> Tensor", "f(str k=\"a\\'b\") -> Tensor"),
        ("f(str x='a\\101b') -> Tensor", 'f(str x="aAb") -> Tensor'),
        ("f(str x='\\001') -> Tensor", 'f(str x="\\001") -> Tensor'),
        ("f(str x='a\tb\x7fc\rd') -> Tensor", 'f(str x="a\\tb\\177c\\rd") -> Tensor'),
        ("f(str x='é') -> Tensor", 'f(str x="\\0)+\\/.)") -> Tensor'),
        ("f(str x='''ab\nc''') -> Tensor", 'f(str x="ab\\nc") -> Tensor'),
        ("f(str? x='a') -> Tensor", 'f(str? x="a") -> Tensor'),
        ("f(Scalar x='a') -> Tensor", "f(Scalar x=a) -> Tensor"),
        ("f(int[2] k=1) -> Tensor", "f(int[2] k=1) -> Tensor"),
        ("f(int[2] x=[3,3]) -> Tensor", "f(int[2] x=3) -> Tensor"),
        ("f(int[] x=[3,3]) -> Tensor", "f(int[] x=3) -> Tensor"),
        ("f(SymInt[2] x=1) -> Tensor", "f(SymInt[2] x=[1, 1]) -> Tensor"),
        ("f(float[2] x=1.5) -> Tensor", "f(float[2] x=[1.5, 1.5]) -> Tensor"),
        ("f(int[0] x=1) -> Tensor", "f(int[0] x=[]) -> Tensor"),
        ("f(int[2]? x=1) -> Tensor", "f(int[2]? x=1) -> Tensor"),
        ("f(complex x=1j) -> Tensor", "f(complex x=0.+1.j) -> Tensor"),
        ("f(complex x=1.5) -> Tensor", "f(complex x=0.+1.j) -> Tensor"),
        ("f(Scalar x=-2j) -> Tensor", "f(Scalar x=0.-2.j) -> Tensor"),
        ("f(ScalarType x=float) -> Tensor", "f(ScalarType x=6) -> Tensor"),
        ("f(ScalarType? x=bfloat16) -> Tensor", "f(ScalarType? x=15) -> Tensor"),
        ("f(int reduction=Mean) -> Tensor", "f(int reduction=1) -> Tensor"),
        ("f(Layout x=strided) -> Tensor", "f(Layout x=0) -> Tensor"),
        ("f(MemoryFormat? x=contiguous_format) -> Tensor", "f(MemoryFormat? x=0) -> Tensor"),
        ("f(Device d='cuda:1') -> Tensor", "f(Device d=cuda:1) -> Tensor"),
        ("f(Device d='cuda:300') -> Tensor", "f(Device d=cuda:44) -> Tensor"),
        ("f(Device? d='cpu') -> Tensor", "f(Device? d=cpu) -> Tensor"),
        ("f(Tensor x) -> (Tensor)", "f(Tensor x) -> Tensor"),
        ("f(Tensor x) -> (Tensor a)", "f(Tensor x) -> Tensor a"),
        ("f(Tensor x) -> Tensor junk", "f(Tensor x) -> Tensor junk"),
        ("f(Tensor x) -> ((int, int))", "f(Tensor x) -> ((int, int))"),
        ("f(Tensor x) -> (...)", "f(Tensor x) -> ..."),
        ("f(Tensor x) -> (Tensor y, ...)", "f(Tensor x) -> (Tensor y, ...)"),
        ("f(int x, *) -> Tensor", "f(int x) -> Tensor"),
        ("f(int x, *, *, int y) -> Tensor", "f(int x, *, int y) -> Tensor"),
        ("f(Tensor x, *, ...) -> Tensor", "f(Tensor x, ...) -> Tensor"),
        ("  f ( Tensor   x ) ->Tensor", "f(Tensor x) -> Tensor"),
        ("f(Tensor x,\n  int y) -> Tensor\n", "f(Tensor x, int y) -> Tensor"),
        ("f(Tensor x) -> \\\nTensor", "f(Tensor x) -> Tensor"),
        ("f(int x=1) -> Tensor # comment", "f(int x=1) -> Tensor"),
        ("f(Tensor(a|b) x) -> Tensor(a|b)", "f(Tensor(b|a) x) -> Tensor(b|a)"),
        ("f(Tensor(a|b -> c|*) x) -> Tensor", "f(Tensor(b|a -> *|c) x) -> Tensor"),
        ("f(Tensor(a|*) x) -> Tensor", "f(Tensor(*|a) x) -> Tensor"),
        ("f(Tensor(a|a) x) -> Tensor", "f(Tensor(a) x) -> Tensor"),
        ("f(Tensor(a -> a) x) -> Tensor", "f(Tensor(a) x) -> Tensor"),
        ("f(Tensor! x) -> Tensor", "f(Tensor($0! -> ) x) -> Tensor"),
        ("f(Tensor(a!)[][] x) -> Tensor", "f(Tensor[](!)[] x) -> Tensor"),
        ("f(Tensor(a)[](b) x) -> Tensor", "f(Tensor(a)[](b) x) -> Tensor"),
        ("f(Tensor(a)?[] x) -> Tensor", "f(Tensor?(a)[] x) -> Tensor"),
        ("f(Tensor(a!)[2] x) -> Tensor", "f(Tensor(a!)[2] x) -> Tensor"),
        ("f(int[1.5] x) -> Tensor", "f(int[1] x) -> Tensor"),
        ("f(int[3000000000] x) -> Tensor", "f(int[-1294967296] x) -> Tensor"),
        ("f(Tensor?? x) -> Tensor", "f(Tensor? x) -> Tensor"),
        ("f(None x) -> None", "f(NoneType x) -> NoneType"),
        ("f(ConstQuantizerPtr x, DeviceIndex y) -> Tensor", "f(int x, int y) -> Tensor"),
        ("f((SymInt, ScalarType) x) -> Tensor", "f((int, int) x) -> Tensor"),
        ("f(Dict(str, SymInt) x) -> Tensor", "f(Dict(str, int) x) -> Tensor"),
        ("f(Union(Tensor, NoneType) x) -> Tensor", "f(Tensor? x) -> Tensor"),
        ("f(Union(str, NoneType, int) x) -> Tensor", "f(Union(int, NoneType, str) x) -> Tensor"),
        ("f(Union(int, float, complex) x) -> Tensor", "f(Union(Scalar) x) -> Tensor"),
        ("f(Union(a, b, int) x) -> Tensor", "f(Union(int, a) x) -> Tensor"),
        ("f(Future(Tensor) x) -> Future(int)[]", "f(Future(Tensor) x) -> Future(int)[]"),
        ("f(t x, double y) -> t", "f(t x, double y) -> t"),
    ],
)
def test_printing_normalizes_like_torch(text, printed):
    assert str(parse_schema(text)) == printed


# --- the data model ---------------------------------------------------------------------------


def test_arguments_carry_types_defaults_and_alias_info():
    s = parse_schema(
        "aten::sum.dim_IntList(Tensor(a!) self, int[1]? dim, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor(a!)"
    )
    self_, dim, keepdim, dtype = s.arguments
    assert self_ == Argument("self", TENSOR, NO_DEFAULT, False, AliasInfo(("a",), ("a",), True))
    assert dim.type == OptionalType(ListType(INT, 1)) and not dim.has_default
    assert keepdim.default is False and keepdim.has_default
    assert dtype == Argument("dtype", OptionalType(BaseType("ScalarType")), None, True)
    assert s.returns == (Return(None, TENSOR, AliasInfo(("a",), ("a",), True)),)
    assert self_.is_write and not keepdim.is_write


def test_list_alias_annotation_holds_the_element_annotation():
    (arg,) = parse_schema("f(Tensor(a!)[] xs) -> ()").arguments
    element = AliasInfo(("a",), ("a",), True)
    assert arg.alias_info == AliasInfo((), (), True, (element,))
    assert arg.is_write
    assert str(arg) == "Tensor(a!)[] xs"


def test_split_returns_a_wildcard_alias_list():
    s = parse_schema(REAL_SCHEMAS[5])
    assert s.arguments[0].alias_info == AliasInfo(("a",), ("*",))
    assert s.returns[0].alias_info == AliasInfo((), (), False, (AliasInfo(("a",), ("a",)),))
    assert str(s.arguments[0].alias_info) == "(a -> *)"


def test_named_returns_keep_their_names():
    s = parse_schema(REAL_SCHEMAS[6])
    assert [r.name for r in s.returns] == ["values", "indices"]
    assert [str(r) for r in s.returns] == ["Tensor values", "Tensor indices"]


@pytest.mark.parametrize(
    ("type_text", "kind"),
    [
        ("Tensor", "tensor"),
        ("Tensor(a!)", "tensor"),
        ("Tensor?", "optional"),
        ("Tensor[]", "list"),
        ("Tensor(a)[]", "list"),
        ("Tensor?[]", "list"),
        ("Tensor[2]", "list"),
        ("Tensor[]?", None),
        ("int", None),
        ("Scalar", None),
        ("t", None),
        ("Any", None),
    ],
)
def test_dispatch_kind_marks_tensor_optional_and_list_arguments(type_text, kind):
    assert parse_schema(f"f({type_text} x) -> ()").arguments[0].dispatch_kind == kind


def test_dispatch_arguments_lists_index_name_kind_and_kwarg_only():
    s = parse_schema(
        "f(Tensor a, int n, Tensor? b, Tensor?[] c, *, Tensor[] d, Tensor(a!) out) -> ()"
    )
    assert s.dispatch_arguments == (
        (0, "a", "tensor", False),
        (2, "b", "optional", False),
        (3, "c", "list", False),
        (4, "d", "list", True),
        (5, "out", "tensor", True),
    )


def test_dispatch_arguments_are_computed_once_and_survive_evolve():
    s = parse_schema("f(Tensor a, Tensor b) -> ()")
    assert s.dispatch_arguments is s.dispatch_arguments
    smaller = attrs.evolve(s, arguments=s.arguments[:1])
    assert smaller.dispatch_arguments == ((0, "a", "tensor", False),)


def test_schema_properties():
    s = parse_schema(REAL_SCHEMAS[2])  # add.out
    assert s.qualified_name == "aten::add.out"
    assert s.overload_name == "out"
    assert s.is_mutable
    assert [a.name for a in s.positional] == ["self", "other"]
    assert [a.name for a in s.kwarg_only] == ["alpha", "out"]
    assert not parse_schema(REAL_SCHEMAS[0]).is_mutable
    assert not parse_schema("f(Tensor(a) x) -> Tensor(a)").is_mutable


def test_schemas_are_hashable_values():
    a = parse_schema("f(int[2] k=1, Tensor x=None) -> Tensor")
    b = parse_schema("f(int[2] k=[1, 1], Tensor x=None) -> Tensor")
    assert a == b and hash(a) == hash(b)
    assert a != parse_schema("f(int[2] k=2, Tensor x=None) -> Tensor")
    assert len({a, b}) == 1


def test_varargs_and_varrets():
    s = parse_schema("aten::format(str self, ...) -> str")
    assert s.is_vararg and not s.is_varret
    s = parse_schema("f(...) -> ...")
    assert s.is_vararg and s.is_varret and s.arguments == () and s.returns == ()


def test_compound_types():
    (tup, dct, fut, uni) = parse_schema(
        "f((int, str) a, Dict(str, Tensor) b, Future(Tensor) c, Union(int, str) d) -> ()"
    ).arguments
    assert tup.type == TupleType((INT, BaseType("str")))
    assert dct.type == ContainerType("Dict", (BaseType("str"), TENSOR))
    assert fut.type == ContainerType("Future", (TENSOR,))
    assert uni.type == ContainerType("Union", (INT, BaseType("str")))


def test_type_strings():
    assert str(OptionalType(ListType(INT, 2))) == "int[2]?"
    assert str(ListType(OptionalType(TENSOR))) == "Tensor?[]"
    assert str(ListType(INT)) == "int[]"
    assert str(AliasInfo(("a",), ("a",), True)) == "(a!)"
    assert str(AliasInfo(("a",), ("*",))) == "(a -> *)"


def test_no_default_is_a_readable_singleton():
    assert repr(NO_DEFAULT) == "NO_DEFAULT"
    assert Argument("x", TENSOR).default is NO_DEFAULT
    assert not Argument("x", TENSOR).has_default
    assert Argument("x", TENSOR, None).has_default


def test_constructed_schema_prints_like_a_parsed_one():
    s = FunctionSchema(
        OperatorName("ns", "f", "out"),
        (Argument("x", TENSOR), Argument("out", TENSOR, kwarg_only=True,
                                         alias_info=AliasInfo(("a",), ("a",), True))),
        (Return(None, TENSOR, AliasInfo(("a",), ("a",), True)),),
    )
    assert str(s) == "ns::f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)"
    assert parse_schema(str(s)) == s


def test_operator_names():
    assert OperatorName.parse("aten::add.Tensor") == OperatorName("aten", "add", "Tensor")
    assert OperatorName.parse("add") == OperatorName("", "add", "")
    assert str(OperatorName("ns", "f", "")) == "ns::f"
    assert str(OperatorName("", "f", "ov")) == "f.ov"
    assert OperatorName("ns", "f", "ov").unqualified == "ns::f"


def test_parse_schema_or_name_accepts_both():
    assert parse_schema_or_name("ns::f.ov") == OperatorName("ns", "f", "ov")
    assert isinstance(parse_schema_or_name("ns::f.ov(Tensor x) -> Tensor"), FunctionSchema)


def test_operator_name_parse_refuses_a_schema():
    with pytest.raises(SchemaError) as info:
        OperatorName.parse("f(Tensor x) -> Tensor")
    assert str(info.value) == "Tried to parse an operator name but function schema was given"


def test_type_variables_only_when_allowed():
    assert parse_schema("f(t x) -> t").arguments[0].type == BaseType("t")
    with pytest.raises(SchemaError) as info:
        parse_schema("tv(t x) -> Tensor", allow_typevars=False)
    assert str(info.value).startswith("\nunknown type specifier.")
    # aten:: and prim:: names always allow them
    assert str(parse_schema("aten::foo(double x) -> Tensor", allow_typevars=False)) == (
        "aten::foo(double x) -> Tensor"
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("f(int[2] k=1) -> ()", [1, 1]),
        ("f(int[] k=[]) -> ()", []),
        ("f(ScalarType? dtype=float) -> ()", 6),
        ("f(MemoryFormat? m=contiguous_format) -> ()", 0),
        ("f(Device d='cuda:1') -> ()", "cuda:1"),
        ("f(Tensor? x=None) -> ()", None),
        ("f(float eps=1e-5) -> ()", 1e-05),
        ("f(str mode='constant') -> ()", "constant"),
        ("f(complex c=2j) -> ()", 2j),
        ("f(bool b=True) -> ()", True),
    ],
)
def test_python_default_gives_the_parsed_value(text, value):
    arg = parse_schema(text).arguments[0]
    assert python_default(arg) == value
    assert type(python_default(arg)) is type(value)


def test_python_default_returns_a_fresh_list():
    arg = parse_schema("f(int[2] k=1) -> ()").arguments[0]
    python_default(arg).append(99)
    assert arg.default == [1, 1]


def test_python_default_refuses_arguments_without_default():
    with pytest.raises(ValueError, match="has no default"):
        python_default(parse_schema("f(Tensor x) -> ()").arguments[0])


# --- errors: torch's text, source line and caret ----------------------------------------------

UNKNOWN = (
    "\nunknown type specifier. Common valid schema types include Tensor, SymInt, int, float, bool, "
    "Scalar; for a full list, please see "
    "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func :\n"
)

PARSE_ERRORS = [
    ("f(Tensor x -> Tensor", "expected ) but found 'arrow' here:\nf(Tensor x -> Tensor\n"
     "           ~~ <--- HERE\n"),
    ("f(Foo x) -> Tensor", UNKNOWN + "f(Foo x) -> Tensor\n  ~~~ <--- HERE\n"),
    ("f(Tensor x)", "expected arrow but found 'eof' here:\nf(Tensor x)"),
    ("f.a.b(Tensor x) -> Tensor", "expected eof but found '.' here:\nf.a.b(Tensor x) -> Tensor\n"
     "   ~ <--- HERE\n"),
    ("bad3(Tensor x, int y=1, Tensor z) -> Tensor",
     '!seen_default_arg || arg.kwarg_only() INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/'
     'src/ATen/core/function_schema.h":342, please report a bug to PyTorch. Non-default '
     "positional argument follows default argument. Parameter z in bad3(Tensor x, int y=1, "
     "Tensor z) -> Tensor"),
    ("f(Tensor[] l=[]) -> Tensor", "\nlists are only supported for float, int and complex types:\n"
     "f(Tensor[] l=[]) -> Tensor\n             ~ <--- HERE\n"),
    ("f(float k=inf) -> Tensor", "\ninvalid numeric default value:\nf(float k=inf) -> Tensor\n"
     "             ~ <--- HERE\n"),
    ("f(float k=-inf) -> Tensor", "expected number but found 'ident' here:\n"
     "f(float k=-inf) -> Tensor\n           ~~~ <--- HERE\n"),
    ("f.default(Tensor x) -> Tensor", "default is not a legal overload name for aten operators"),
    ("f.__x(Tensor x) -> Tensor", "__x is not a legal overload name for aten operators"),
    ("ns::f", "Tried to parse a function schema but only the operator name was given"),
    ("f(Tensor x) -> Tensor;", "expected a valid token but found ';' here:\n"
     "f(Tensor x) -> Tensor;\n                     ~ <--- HERE\n"),
    ("f(Tensor x) -> Tensor $", "expected a valid token but found ' ' here:\n"
     "f(Tensor x) -> Tensor $\n                      ~ <--- HERE\n"),
    ("f(Tensor x,\n int y,\n Foo z,\n int w,\n int v,\n int u) -> Tensor",
     UNKNOWN + "f(Tensor x,\n int y,\n Foo z,\n ~~~ <--- HERE\n int w,\n int v,\n"),
    ("f(Tensor in) -> Tensor", "expected ident but found 'in' here:\nf(Tensor in) -> Tensor\n"
     "         ~~ <--- HERE\n"),
    ("f(Tensor is not) -> Tensor", "expected ident but found 'is not' here:\n"
     "f(Tensor is not) -> Tensor\n         ~~~~~~ <--- HERE\n"),
    ("f(..., Tensor x) -> Tensor", "\n... must be the last element of the argument list:\n"
     "f(..., Tensor x) -> Tensor\n       ~~~~~~ <--- HERE\n"),
    ("f(Tensor x) -> (..., Tensor)", "\n... must be the last element of the return list:\n"
     "f(Tensor x) -> (..., Tensor)\n                     ~~~~~~ <--- HERE\n"),
    ("f(int x=1, ...) -> Tensor", "\nschemas with vararg (...) can't have default value args:\n"
     "f(int x=1, ...) -> Tensor\n                ~~ <--- HERE\n"),
    ("f(str x='\\x41') -> Tensor", "\nunsupported hex specifier:\nf(str x='\\x41') -> Tensor\n"
     "        ~~~~~~ <--- HERE\n"),
    ("f(str x='a\\9') -> Tensor", "\n ill formed octal specifier:\nf(str x='a\\9') -> Tensor\n"
     "        ~~~~~ <--- HERE\n"),
    ("f(str x='abc) -> Tensor", "expected a valid token but found ''' here:\n"
     "f(str x='abc) -> Tensor\n        ~ <--- HERE\n"),
    ("f(Device d='foo') -> Tensor", "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, "
     "ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device "
     "type at start of device string: foo"),
    ("f(Device d='cuda:01') -> Tensor", "Invalid device string: 'cuda:01'"),
    ("f(Device d=None) -> Tensor", "expected string_literal but found 'None' here:\n"
     "f(Device d=None) -> Tensor\n           ~~~~ <--- HERE\n"),
    ("f(int[] x=[1.5]) -> Tensor", '0 INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/'
     'ATen/core/ivalue.h":663, please report a bug to PyTorch. expected int'),
    ("f(bool[] x=[1]) -> Tensor", '0 INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/'
     'ATen/core/ivalue.h":710, please report a bug to PyTorch. expected bool'),
    ("f(Tensor x=1) -> Tensor", "expected None but found 'number' here:\nf(Tensor x=1) -> Tensor\n"
     "           ~ <--- HERE\n"),
    ("f(int[] x=None) -> Tensor", "expected [ but found 'None' here:\nf(int[] x=None) -> Tensor\n"
     "          ~~~~ <--- HERE\n"),
    ("f(int[]? x=[3,3]) -> Tensor", "expected number but found '[' here:\n"
     "f(int[]? x=[3,3]) -> Tensor\n           ~ <--- HERE\n"),
    ("f(Any x=1) -> Tensor", "\nunexpected type, file a bug report:\nf(Any x=1) -> Tensor\n"
     "        ~ <--- HERE\n"),
    ("f(Dict(Scalar, int) x) -> Tensor", "Cannot create dict for key type 'Scalar', only int, "
     "float, complex, Tensor, device and string keys are supported"),
    ("f(NoneType? x) -> Tensor", 'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/'
     'ATen/core/union_type.cpp":210, please report a bug to PyTorch. After type unification was '
     "performed, the Union with the original types {NoneType NoneType, } has the single type "
     "NoneType. Use the common supertype instead of creating a Uniontype"),
    ("f(__torch__.torch.classes.ns.C x) -> Tensor", "\nUnknown custom class type ns.C. Please "
     "ensure it is registered.:\nf(__torch__.torch.classes.ns.C x) -> Tensor\n"
     "                             ~ <--- HERE\n"),
    ("(Tensor x) -> Tensor", "expected ident but found '(' here:\n(Tensor x) -> Tensor\n"
     "~ <--- HERE\n"),
    ("f(Tensor x) -> Tensor\ng(Tensor x) -> Tensor", "expected eof but found 'ident' here:\n"
     "f(Tensor x) -> Tensor\ng(Tensor x) -> Tensor\n~ <--- HERE\n"),
    ("f(Tensor(*|a) x) -> Tensor", "expected ) but found 'ident' here:\n"
     "f(Tensor(*|a) x) -> Tensor\n           ~ <--- HERE\n"),
    ("f(Tensor(a!=) x) -> Tensor", "expected ) but found 'ne' here:\n"
     "f(Tensor(a!=) x) -> Tensor\n          ~~ <--- HERE\n"),
    ("f(Tensor x) ->\n Tensor", "expected ident but found 'indent' here:\nf(Tensor x) ->\n"
     " Tensor\n"),
    ("  f(Tensor x) -> Tensor\n g()", "invalid indent level 1:\n  f(Tensor x) -> Tensor\n g()\n"),
    ("", "expected ident but found 'eof' here:\n"),
]


@pytest.mark.parametrize(("text", "message"), PARSE_ERRORS)
def test_parse_errors_match_torch_text_and_caret(text, message):
    with pytest.raises(SchemaError) as info:
        parse_schema(text)
    assert str(info.value) == message


def test_library_define_style_parse_rejects_double_with_a_hint():
    with pytest.raises(SchemaError) as info:
        parse_schema("dbl(double x) -> Tensor", allow_typevars=False)
    assert str(info.value) == (
        "\nUse `float` instead of `double` in an operator's schema string. `float` in schema "
        "corresponds to the double type in C++:\ndbl(double x) -> Tensor\n    ~~~~~~ <--- HERE\n"
    )


@pytest.mark.parametrize(
    ("text", "python_type", "message"),
    [
        ("f(int x=99999999999999999999) -> Tensor", IndexError, "stoll"),
        ("f(float x=1e400) -> Tensor", IndexError, "stod"),
        ("f(float x=1e-310) -> Tensor", IndexError, "stod"),
        ("f(complex x=1) -> Tensor", ValueError, "stod"),
        ("f(int[.5] x) -> Tensor", ValueError, "stoll"),
    ],
)
def test_number_conversion_errors_are_value_or_index_errors_like_torch(text, python_type, message):
    with pytest.raises(SchemaError) as info:
        parse_schema(text)
    assert isinstance(info.value, python_type)
    assert str(info.value) == message


def test_positional_after_default_is_allowed_for_lists_and_kwarg_only():
    assert str(parse_schema("f(Tensor x, int y=1, Tensor[] z) -> Tensor")).endswith("z) -> Tensor")
    parse_schema("f(Tensor x, int y=1, *, Tensor z) -> Tensor")


def test_constructing_an_invalid_schema_raises_the_same_error():
    with pytest.raises(SchemaError, match="Non-default positional argument follows default"):
        FunctionSchema(OperatorName("", "f"), (Argument("a", INT, 1), Argument("b", INT)), ())


# --- binding ----------------------------------------------------------------------------------


class FakeTensor:
    """What the dispatcher treats as a tensor: an int ``_key_bits``."""

    def __init__(self, ndim: int = 1) -> None:
        self._key_bits = 1
        self.ndim = ndim

    def __repr__(self) -> str:
        return "T" if self.ndim else "T0"


def is_tensor(value) -> bool:
    return isinstance(getattr(value, "_key_bits", None), int)


T = FakeTensor()
T0 = FakeTensor(ndim=0)

F_OV = parse_schema("ex3::f.ov(Tensor x) -> Tensor")
G = parse_schema("ex3::g(Tensor x, int y=1, *, Scalar alpha=1, Tensor? out=None) -> Tensor")
H = parse_schema("ex3::h(Tensor x, Tensor y, int z) -> Tensor")
L = parse_schema("ex3::l(Tensor[] xs, Tensor?[] ys, int[2] k, SymInt[] s, float[] f) -> Tensor")
N = parse_schema("ex3::n(int? x, bool b, str s, ScalarType? dt) -> Tensor")
PYBIND = (
    "to C++ type '?' (#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode "
    "for details)"
)


@pytest.mark.parametrize(
    ("schema", "args", "kwargs", "expected"),
    [
        (F_OV, (T,), {}, ((T,), {})),
        (F_OV, (), {"x": T}, ((T,), {})),
        (G, (T,), {}, ((T,), {})),
        (G, (), {"x": T, "alpha": 2}, ((T,), {"alpha": 2})),
        (G, (T,), {"out": T, "y": 5}, ((T, 5), {"out": T})),
        (G, (T,), {"out": None, "alpha": 3}, ((T,), {"alpha": 3, "out": None})),
        (H, (T,), {"z": 1, "y": T}, ((T, T, 1), {})),
        (parse_schema("f(Tensor x, int a=1, int[2] b=1, int c=3) -> ()"), (T,), {"c": 7},
         ((T, 1, [1, 1], 7), {})),
        (parse_schema("f() -> ()"), (), {}, ((), {})),
    ],
)
def test_bind_places_non_kwarg_only_arguments_positionally(schema, args, kwargs, expected):
    assert schema.bind(args, kwargs, is_tensor=is_tensor) == expected


def test_bind_does_not_fill_defaults_beyond_the_last_given_argument():
    s = parse_schema("f(Tensor x, int a=1, int b=2, *, int c=3) -> ()")
    assert s.bind((T,), {}, is_tensor=is_tensor) == ((T,), {})
    assert s.bind((T,), {"a": 5}, is_tensor=is_tensor) == ((T, 5), {})


def test_bind_passes_values_through_unchanged():
    s = parse_schema("f(int[2] k, Tensor[] ts) -> ()")
    ts = (T, T)
    positional, _ = s.bind((3, ts), {}, is_tensor=is_tensor)
    assert positional[0] == 3 and positional[1] is ts


def test_bind_fills_gaps_with_fresh_default_lists():
    s = parse_schema("f(int[2] k=1, int n=0) -> ()")
    positional, _ = s.bind((), {"n": 2}, is_tensor=is_tensor)
    positional[0].append(9)
    assert s.arguments[0].default == [1, 1]


@pytest.mark.parametrize(
    ("schema", "args", "kwargs", "message"),
    [
        (F_OV, (), {}, "ex3::f() is missing value for argument 'x'. Declaration: "
         "ex3::f.ov(Tensor x) -> Tensor"),
        (F_OV, (3,), {}, "ex3::f() Expected a value of type 'Tensor' for argument 'x' but instead "
         "found type 'int'.\nPosition: 0\nValue: 3\nDeclaration: ex3::f.ov(Tensor x) -> Tensor\n"
         "Cast error details: Unable to cast 3 to Tensor"),
        (F_OV, (T, T), {}, "ex3::f() expected at most 1 argument(s) but received 2 argument(s). "
         "Declaration: ex3::f.ov(Tensor x) -> Tensor"),
        (F_OV, (), {"x": 3}, "ex3::f() Expected a value of type 'Tensor' for argument 'x' but "
         "instead found type 'int'.\nPosition: 0\nValue: 3\nDeclaration: ex3::f.ov(Tensor x) -> "
         "Tensor\nCast error details: Unable to cast 3 to Tensor"),
        (F_OV, (T,), {"y": T}, "ex3::f() expected at most 1 argument(s) but received 2 "
         "argument(s). Declaration: ex3::f.ov(Tensor x) -> Tensor"),
        (G, (T, 2, 3), {}, "ex3::g() takes 2 positional argument(s) but 3 was/were given.  "
         f"Declaration: {G}"),
        (G, (T,), {"foo": 1}, f"Unknown keyword argument 'foo' for operator 'ex3::g'. Schema: {G}"),
        (G, (T,), {"y": 3, "x": T}, "Argument 'x' specified both as positional and keyword "
         f"argument. Schema: {G}"),
        (G, (T, 2), {"y": 3}, '!argument.default_value() INTERNAL ASSERT FAILED at "/__w/pytorch/'
         'pytorch/aten/src/ATen/core/function_schema.cpp":547, please report a bug to PyTorch. '),
        (G, (T,), {"alpha": "a"}, "ex3::g() Expected a value of type 'number' for argument "
         f"'alpha' but instead found type 'str'.\nPosition: 2\nValue: 'a'\nDeclaration: {G}\n"
         "Cast error details: Cannot cast a to number"),
        (G, (T, 2.5), {}, "ex3::g() Expected a value of type 'int' for argument 'y' but instead "
         f"found type 'float'.\nPosition: 1\nValue: 2.5\nDeclaration: {G}\nCast error details: "
         f"Unable to cast Python instance of type <class 'float'> {PYBIND}"),
        (H, (T,), {"z": 1}, f"ex3::h() is missing value for argument 'y'. Declaration: {H}"),
        (L, ([T, 1], [T], [1, 2], [1], [1.0]), {}, "ex3::l() Expected a value of type "
         "'List[Tensor]' for argument 'xs' but instead found type 'list'.\nPosition: 0\nValue: "
         f"[T, 1]\nDeclaration: {L}\nCast error details: Unable to cast Python instance of type "
         f"<class 'list'> {PYBIND}"),
        (L, ([T], [T, 1], [1, 2], [1], [1.0]), {}, "ex3::l() Expected a value of type "
         "'List[Optional[Tensor]]' for argument 'ys' but instead found type 'list'.\nPosition: 1"
         f"\nValue: [T, 1]\nDeclaration: {L}\nCast error details: Unable to cast 1 to Tensor"),
        (L, ([T], [T, None], 3, 3, [1.0]), {}, "ex3::l() Expected a value of type 'List[int]' for "
         "argument 's' but instead found type 'int'.\nPosition: 3\nValue: 3\nDeclaration: "
         f"{L}\n Python error details: TypeError: 'int' object is not iterable"),
        (L, ([T], [T, None], 3, [1, 2.5], [1.0]), {}, "ex3::l() Expected a value of type "
         "'List[int]' for argument 's' but instead found type 'list'.\nPosition: 3\nValue: "
         f"[1, 2.5]\nDeclaration: {L}\nCast error details: Unable to cast Python instance of "
         f"type <class 'float'> {PYBIND}"),
        (L, ([T], None, 3, [1], [1.0]), {}, "ex3::l() Expected a value of type "
         "'List[Optional[Tensor]]' for argument 'ys' but instead found type 'NoneType'.\n"
         f"Position: 1\nValue: None\nDeclaration: {L}\n Python error details: TypeError: "
         "'NoneType' object is not iterable"),
        (L, ([T], [None], [1.5], [1], [1.0]), {}, "ex3::l() Expected a value of type 'List[int]' "
         "for argument 'k' but instead found type 'list'.\nPosition: 2\nValue: [1.5]\n"
         f"Declaration: {L}\nCast error details: Unable to cast Python instance of type <class "
         f"'list'> {PYBIND}"),
        (L, ([T], [None], 1, [1], ["a"]), {}, "ex3::l() Expected a value of type 'List[float]' for"
         " argument 'f' but instead found type 'list'.\nPosition: 4\nValue: ['a']\nDeclaration: "
         f"{L}\nCast error details: Unable to cast Python instance of type <class 'list'> "
         f"{PYBIND}"),
        (N, (2.5, True, "s", None), {}, "ex3::n() Expected a value of type 'Optional[int]' for "
         "argument 'x' but instead found type 'float'.\nPosition: 0\nValue: 2.5\nDeclaration: "
         f"{N}\nCast error details: Unable to cast Python instance of type <class 'float'> "
         f"{PYBIND}"),
        (N, (None, "x", "s", None), {}, "ex3::n() Expected a value of type 'bool' for argument 'b'"
         " but instead found type 'str'.\nPosition: 1\nValue: 'x'\nDeclaration: "
         f"{N}\nCast error details: Unable to cast Python instance of type <class 'str'> "
         f"{PYBIND}"),
        (N, (None, True, 3, None), {}, "ex3::n() Expected a value of type 'str' for argument 's' "
         "but instead found type 'int'.\nPosition: 2\nValue: 3\nDeclaration: "
         f"{N}\nCast error details: Unable to cast Python instance of type <class 'int'> "
         f"{PYBIND}"),
    ],
)
def test_bind_errors_match_torch(schema, args, kwargs, message):
    with pytest.raises(SchemaError) as info:
        schema.bind(args, kwargs, is_tensor=is_tensor)
    assert str(info.value) == message


_TYPE_CHECKS = pytest.mark.parametrize(
    ("type_text", "accepted", "rejected"),
    [
        ("Tensor", [T, T0, None], [3, 2.5, "a", [T]]),
        ("Tensor?", [T, None], [3, [T]]),
        ("Tensor[]", [[T, T], (T,), []], [T, None, [T, None], [1]]),
        ("Tensor?[]", [[T, None], (None,), []], [None, 3, [1]]),
        ("int", [3, True, T0], [2.5, None, "a", T, 1j]),
        ("SymInt", [3, True, T0], [2.5, None, T]),
        ("float", [3, True, 2.5, T0], [1j, None, "a", T]),
        ("complex", [3, 2.5, 1j, T0], [None, "a", T]),
        ("bool", [True, 0, 2.5, None, T0], ["a", [], T]),
        ("str", ["a"], [3, None]),
        ("Scalar", [3, True, 2.5, 1j], [T0, None, "a", [1]]),
        ("int[]", [[1, 2], (1, 2), [], [T0, 1]], [3, [1.5], None, [T]]),
        ("int[2]", [3, True, [1, 2]], [2.5, T0]),
        ("SymInt[]", [[1, 2], (1,)], [3, [1.5], None]),
        ("SymInt[2]", [[1, 2]], [3]),
        ("float[]", [[1, 2.5, True]], [2.5, [1j], ["a"]]),
        ("bool[]", [[True, 1, 2.5]], [True, ["a"]]),
        ("int[]?", [None, [1]], [3]),
        ("int[1]?", [None, 3, [1]], [2.5]),
        ("Scalar[]", [[1, 2.5]], [3, [None]]),
        # torch.ops takes the library's objects or an int for these, a device or a string for
        # Device (checked against torch 2.13: dtype='float32', dtype=float, device=0 are refused)
        ("ScalarType", [dc.float32, 6, True, T0], [object(), "float32", float, 6.0, dc.strided]),
        ("ScalarType?", [None, dc.int64], ["int64"]),
        ("Layout", [dc.strided, 0], ["anything", dc.float32]),
        ("MemoryFormat?", [None, dc.contiguous_format, 0], ["x", dc.float32]),
        ("Device?", [None, "cpu", b"cpu", dc.device("cpu")], [object(), 0, 1.5]),
        ("Generator?", [object(), None], []),
    ],
)


@_TYPE_CHECKS
def test_bind_type_checks(type_text, accepted, rejected):
    s = parse_schema(f"f({type_text} x) -> ()")
    for value in accepted:
        assert s.bind((value,), {}, is_tensor=is_tensor) == ((value,), {}), value
    for value in rejected:
        with pytest.raises(SchemaError, match="Expected a value of type"):
            s.bind((value,), {}, is_tensor=is_tensor)


@_TYPE_CHECKS
def test_values_fit_agrees_with_bind_on_non_tensor_values(type_text, accepted, rejected):
    s = parse_schema(f"f(int a, {type_text} x, *, {type_text} k) -> ()")
    if s.arguments[1].dispatch_kind is not None:
        return  # dispatch arguments are the caller's to check (values_fit skips them)
    for value in accepted:
        assert s.values_fit((1, value), {"k": value}, is_tensor=is_tensor), value
    for value in rejected:
        assert not s.values_fit((1, value), {}, is_tensor=is_tensor), value
        assert not s.values_fit((1, 2), {"k": value}, is_tensor=is_tensor), value


def test_values_fit_looks_at_list_items_and_the_first_argument_too():
    s = parse_schema("f(int[] size, Scalar fill, *, ScalarType? dtype=None) -> Tensor")
    fits = lambda *args, **kwargs: s.values_fit(args, kwargs, is_tensor=is_tensor)  # noqa: E731
    assert fits([2, 3], 1.5) and fits((2,), 1, dtype=dc.float32) and fits([], True, dtype=None)
    assert not fits(["a"], 1) and not fits([2.5], 1) and not fits("a", 1)
    assert not fits([2], "a") and not fits([2], 1, dtype="float32") and not fits([2], 1, dtype=float)


def test_bind_refuses_strings_for_the_library_enum_types_as_torch_ops_does():
    s = parse_schema("aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
                     "Device? device=None, bool? pin_memory=None) -> Tensor")
    with pytest.raises(SchemaError) as info:
        s.bind(([2],), {"dtype": "float32"}, is_tensor=is_tensor)
    assert str(info.value) == (
        "aten::zeros() Expected a value of type 'Optional[int]' for argument 'dtype' but instead found type "
        f"'str'.\nPosition: 1\nValue: 'float32'\nDeclaration: {s}\nCast error details: Unable to cast "
        f"Python instance of type <class 'str'> {PYBIND}")
    with pytest.raises(SchemaError, match="argument 'device' but instead found type 'int'"):
        s.bind(([2],), {"device": 0}, is_tensor=is_tensor)
    assert s.bind(([2],), {"dtype": dc.float32, "layout": dc.strided, "device": "cpu"},
                  is_tensor=is_tensor) == (([2],), {"dtype": dc.float32, "layout": dc.strided, "device": "cpu"})


def test_bind_names_namedtuples_like_torch():
    from collections import namedtuple

    pair = namedtuple("Pair", "a b")
    with pytest.raises(SchemaError, match=r"found type 'Pair \(aka NamedTuple\(a, b\)\)'"):
        F_OV.bind((pair(1, 2),), {}, is_tensor=is_tensor)


# --- properties -------------------------------------------------------------------------------

_IDENT = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda s: s not in {"def", "if", "else", "elif", "while", "return", "is", "and", "or", "not",
                        "global", "raise", "assert", "break", "continue", "del", "pass", "class",
                        "import", "with", "as", "for", "in"}
)
_SAFE_TEXT = st.text(alphabet=string.ascii_letters + string.digits + " '\"\\\n\t\a!#()", max_size=8)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda f: f == 0 or abs(f) >= 2.3e-308
)


@st.composite
def _argument(draw, name):
    kind = draw(st.sampled_from(["Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int", "SymInt",
                                 "float", "bool", "str", "Scalar", "int[]", "int[2]", "float[]",
                                 "int?", "ScalarType?", "Tensor(a!)", "Tensor(a)"]))
    default = NO_DEFAULT
    if draw(st.booleans()):
        default = draw({
            "Tensor?": st.none(), "int": st.integers(-(2**63), 2**63 - 1),
            "SymInt": st.integers(-100, 100), "float": _FLOATS, "bool": st.booleans(),
            "str": _SAFE_TEXT, "Scalar": st.integers(-5, 5) | _FLOATS,
            # an unsized int list of equal values prints as one int, which torch cannot re-read
            "int[]": st.lists(st.integers(-9, 9), max_size=3).filter(
                lambda v: len(v) < 2 or len(set(v)) > 1),
            "int[2]": st.lists(st.integers(-9, 9), min_size=2, max_size=2),
            "float[]": st.lists(_FLOATS, max_size=3), "int?": st.none() | st.integers(0, 9),
            "ScalarType?": st.none() | st.integers(0, 15),
        }.get(kind, st.just(NO_DEFAULT)))
    text, alias = kind, None
    if text.startswith("Tensor(a"):
        alias = AliasInfo(("a",), ("a",), text.endswith("!)"))
        text = "Tensor"
    t = {"Tensor?": OptionalType(TENSOR), "Tensor[]": ListType(TENSOR),
         "Tensor?[]": ListType(OptionalType(TENSOR)), "int[]": ListType(INT),
         "int[2]": ListType(INT, 2), "float[]": ListType(BaseType("float")),
         "int?": OptionalType(INT), "ScalarType?": OptionalType(BaseType("ScalarType"))}.get(
        text, BaseType(text))
    return Argument(name, t, default, False, alias)


@st.composite
def _schemas(draw):
    names = draw(st.lists(_IDENT, unique=True, max_size=6))
    args = [draw(_argument(name)) for name in names]
    keyword_only = [draw(st.booleans()) for _ in args]
    # positional defaults must come last; keyword-only arguments follow all positional ones
    positional = [a for a, k in zip(args, keyword_only) if not k]
    positional.sort(key=lambda a: a.has_default)
    keyword = [attrs.evolve(a, kwarg_only=True) for a, k in zip(args, keyword_only) if k]
    args = positional + keyword
    returns = tuple(Return(draw(st.none() | _IDENT), draw(st.sampled_from([TENSOR, INT])))
                    for _ in range(draw(st.integers(0, 3))))
    name = OperatorName(draw(st.sampled_from(["", "ns"])), draw(_IDENT),
                        draw(st.sampled_from(["", "out", "Tensor"])))
    return FunctionSchema(name, tuple(args), returns)


@settings(max_examples=300, deadline=None)
@given(_schemas())
def test_printing_then_parsing_gives_back_the_same_schema(schema):
    text = str(schema)
    reparsed = parse_schema(text)
    assert str(reparsed) == text
    assert reparsed == schema


def test_docstring_examples_run():
    failures, _ = doctest.testmod(schema_module, optionflags=doctest.ELLIPSIS)
    assert failures == 0


# --- PythonArgParser: torch's Python binding checks (python_arg_parser.cpp) -------------------

_PY_CHECKS = {"Tensor": lambda v: False, "ScalarType": lambda v: v == "dtype"}
_ZEROS = ["zeros(SymIntArrayRef size, *, ScalarType? dtype=None, bool? requires_grad=False)"]


@pytest.mark.parametrize(("args", "kwargs", "bound"), [
    ((2, 3), {}, {"size": [2, 3], "dtype": None, "requires_grad": False}),
    (((2, 3),), {"dtype": "dtype"}, {"size": (2, 3), "dtype": "dtype", "requires_grad": False}),
    (([],), {"requires_grad": True}, {"size": [], "dtype": None, "requires_grad": True}),
    ((2,), {"dtype": None}, {"size": [2], "dtype": None, "requires_grad": False}),
])
def test_python_arg_parser_binds_varargs_and_lists(args, kwargs, bound):
    assert schema_module.PythonArgParser(_ZEROS, _PY_CHECKS).parse(args, kwargs) == (0, bound)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (("a",), {}, "zeros(): argument 'size' (position 1) must be tuple of ints, not str"),
    ((True,), {}, "zeros(): argument 'size' (position 1) must be tuple of ints, not bool"),
    (([2.5],), {}, "zeros(): argument 'size' (position 1) must be tuple of ints, but found element "
                   "of type float at pos 0"),
    (((2, "a"),), {}, "zeros(): argument 'size' failed to unpack the object at pos 2 with error "
                      '"type must be tuple of ints,but got str"'),
    ((2, 3, "a"), {}, "zeros(): argument 'size' failed to unpack the object at pos 3 with error "
                      '"type must be tuple of ints,but got str"'),
    ((2**63,), {}, "zeros(): argument 'size' failed to unpack the object at pos 1 with error "
                   '"Overflow when unpacking long long'),
    ((), {}, 'zeros() missing 1 required positional arguments: "size"'),
    (((2,), (3,)), {}, "zeros() takes 1 positional argument but 2 were given"),
    ((2,), {"foo": 1}, "zeros() got an unexpected keyword argument 'foo'"),
    (((2,),), {"size": (3,)}, "zeros() got multiple values for argument 'size'"),
    ((2,), {"dtype": "float32"}, "zeros(): argument 'dtype' must be torch.dtype, not str"),
    ((2,), {"requires_grad": "a"}, "zeros(): argument 'requires_grad' must be bool, not str"),
])
def test_python_arg_parser_errors_match_torch(args, kwargs, message):
    """Texts recorded from torch 2.13's ``torch.zeros``, whose binding has this signature."""
    with pytest.raises(TypeError) as info:
        schema_module.PythonArgParser(_ZEROS, _PY_CHECKS).parse(args, kwargs)
    assert str(info.value) == message


def test_python_arg_parser_lists_overloads_as_torch_does():
    """``torch.ones(2).view("a")``: two plausible overloads, each with its reason."""
    parser = schema_module.PythonArgParser(
        ["view(ScalarType dtype)", "view(SymIntArrayRef size)"], _PY_CHECKS)
    with pytest.raises(TypeError) as info:
        parser.parse(("a",), {})
    assert str(info.value) == (
        "view() received an invalid combination of arguments - got (str), but expected one of:\n"
        " * (torch.dtype dtype)\n"
        "      didn't match because some of the arguments have invalid types: (!str!)\n"
        " * (tuple of ints size)\n"
        "      didn't match because some of the arguments have invalid types: (!str!)\n")
    assert parser.parse(("dtype",), {}) == (0, {"dtype": "dtype"})
    assert parser.parse((1, 2), {}) == (1, {"size": [1, 2]})


def test_python_arg_parser_explains_only_signatures_listing_as_many_arguments_as_given():
    """torch's ``_argcountMatch``: ``*`` counts as an argument, so ``(int n, *, Tensor out = None)``
    lists three and is not explained for two given; ``(float x, int n)`` lists two and is."""
    parser = schema_module.PythonArgParser(
        ["f(int64_t n, *, Tensor out=None)", "f(double x, int64_t n)"], _PY_CHECKS)
    with pytest.raises(TypeError) as info:
        parser.parse(("a",), {"out": None})
    assert str(info.value) == (
        "f() received an invalid combination of arguments - got (str, out=NoneType), but expected "
        "one of:\n"
        " * (int n, *, Tensor out = None)\n"
        " * (float x, int n)\n"
        "      didn't match because some of the keywords were incorrect: out\n")
    with pytest.raises(TypeError, match=r"\(!str!, int\)"):
        parser.parse(("a", 1), {})


def test_python_arg_parser_never_matches_an_argument_with_a_default():
    """torch re-reads ``int k = 2`` as an argument named ``2`` of type ``int k =``: a correct value
    is still marked, and its keyword is "incorrect" (torch 2.13 does the same, e.g. ``argsort``)."""
    parser = schema_module.PythonArgParser(["f(int64_t n, int64_t k=2)", "f(double x, double y=1)"], _PY_CHECKS)
    with pytest.raises(TypeError) as info:
        parser.parse(("a", 1), {})
    assert "didn't match because some of the arguments have invalid types: (!str!, !int!)\n" in str(info.value)
    with pytest.raises(TypeError) as info:
        parser.parse(("a",), {"k": 1})
    assert "didn't match because some of the keywords were incorrect: k\n" in str(info.value)


def test_python_arg_parser_lists_keywords_in_libstdcxx_map_order():
    """The order torch's C++ ``std::unordered_map`` iterates: 13 buckets, std::hash of the name."""
    assert schema_module._cxx_map_order(["stable", "dim"]) == ["dim", "stable"]
    assert schema_module._cxx_map_order(["stable", "dim", "descending"]) == ["dim", "descending", "stable"]
    assert schema_module._cxx_map_order(["dim", "keepdim"]) == ["keepdim", "dim"]
    assert schema_module._cxx_map_order([]) == []
    many = [f"k{i}" for i in range(14)]
    assert schema_module._cxx_map_order(many) == many  # past 13 keys: insertion order, documented


def test_printed_arguments_are_read_as_torch_reads_them():
    assert schema_module._printed_arguments("()") == [("", "")]
    assert schema_module._printed_arguments("(Tensor input, *, bool stable, int dim = -1)") == [
        ("input", "Tensor"), ("*", "*"), ("stable", "bool"), ("-1", "int dim =")]
    assert schema_module._value_desc((1,)) == "tuple of (int,)"
    assert schema_module._value_desc([1.5, "a"]) == "list of [float, str]"


def test_python_signature_prints_like_torch():
    signature = schema_module.PythonSignature.parse(
        "rand(SymIntArrayRef size, *, Generator? generator, Tensor out=None, bool? pin_memory=False)")
    assert str(signature) == ("(tuple of ints size, *, torch.Generator generator, Tensor out = None, "
                              "bool pin_memory = False)")
    assert (signature.min_args, signature.max_pos_args) == (2, 1)


# Note [Binding plans]: a call binds once per classes of its values; later calls reuse the plan
_FLATTEN = ["flatten(int64_t start_dim=0, int64_t end_dim=-1)", "flatten(int64_t start_dim, int64_t end_dim, "
            "ScalarType dtype)"]


class _T:
    """A stand-in tensor for the binding checks: ``ndim`` decides whether it is 0-d."""

    def __init__(self, ndim: int) -> None:
        self.ndim = ndim


_T_CHECKS = {"Tensor": lambda v: isinstance(v, _T), "ScalarType": lambda v: v == "dtype"}


@pytest.mark.parametrize(("signatures", "calls"), [
    (_ZEROS, [((2, 3), {}), ((4, 5), {}), ((7,), {"requires_grad": True}), ((8,), {"requires_grad": False}),
              ((2, 3), {"dtype": None}), (((2, 3),), {}), (([4],), {})]),
    (_FLATTEN, [((), {}), ((1,), {}), ((0, 2), {}), ((1,), {"end_dim": 3}), ((), {"end_dim": 1})]),
    (["any()", "any(int64_t dim, bool keepdim=False)"], [((), {}), ((1,), {}), ((1,), {"keepdim": True})]),
    (["add(Tensor input, Scalar other, *, Scalar alpha=1)", "add(Tensor input, Tensor other, *, Scalar alpha=1)"],
     [((_T(1), 2), {}), ((_T(1), _T(2)), {}), ((_T(1), _T(0)), {}), ((_T(1), _T(3)), {"alpha": 2}),
      ((_T(2), _T(0)), {"alpha": 2}), ((_T(1), 2.5), {})]),
])
def test_python_arg_parser_plans_bind_as_the_signature_does(signatures, calls):
    planned = schema_module.PythonArgParser(signatures, _T_CHECKS)
    for _ in range(2):  # the first call of each classes makes the plan, the second uses it
        for args, kwargs in calls:
            fresh = schema_module.PythonArgParser(signatures, _T_CHECKS).parse(args, kwargs)
            assert planned.parse(args, kwargs) == fresh, (args, kwargs)
    assert planned._plans  # some calls were planned


def test_python_arg_parser_plans_leave_zero_dim_tensors_strings_and_overflow_to_the_binder():
    add = schema_module.PythonArgParser(
        ["add(Tensor input, Scalar other)", "add(Tensor input, Tensor other)"], _T_CHECKS)
    wide, scalar = _T(1), _T(0)
    assert add.parse((wide, _T(2)), {})[0] == 1  # planned: a non-0-d tensor is no Scalar
    assert add.parse((wide, scalar), {})[0] == 0  # same classes, but a 0-d tensor binds as a Scalar
    assert add.parse((wide, _T(2)), {})[0] == 1
    view = schema_module.PythonArgParser(["view(ScalarType dtype)", "view(SymIntArrayRef size)"], _T_CHECKS)
    assert view.parse(("dtype",), {}) == (0, {"dtype": "dtype"})
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        view.parse(("a",), {})  # a string is checked each time: this check reads it
    zeros = schema_module.PythonArgParser(_ZEROS, _T_CHECKS)
    assert zeros.parse((2, 3), {})[1]["size"] == [2, 3]
    with pytest.raises(TypeError, match="Overflow when unpacking long long"):
        zeros.parse((2**63, 3), {})  # the varargs plan's ints are checked, as unpacking does
    with pytest.raises(TypeError, match="must be tuple of ints, not bool"):
        zeros.parse((True,), {})
