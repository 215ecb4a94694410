"""dispatchcore.schema against torch 2.13: printing, parse errors and argument binding errors."""

from __future__ import annotations

import random

import pytest

from dispatchcore.errors import SchemaError
from dispatchcore.schema import parse_schema

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.differential


def torch_parse(text: str, **kwargs) -> tuple[str, str]:
    try:
        return "ok", str(torch._C.parse_schema(text, **kwargs))
    except Exception as exc:  # torch raises RuntimeError, ValueError or IndexError
        return type(exc).__name__, str(exc)


def our_parse(text: str, **kwargs) -> tuple[str, str]:
    try:
        return "ok", str(parse_schema(text, **kwargs))
    except SchemaError as exc:
        # our SchemaError is also a ValueError/IndexError where torch raises one
        kind = next(k for k in (ValueError, IndexError, RuntimeError) if isinstance(exc, k))
        return kind.__name__, str(exc)


SCHEMAS = [
    # real operators
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor",
    "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
    # defaults and their printing
    "f(int[2] k=1, int[2] j=[1,2], int[] i=[3,3], int[] h=[3], SymInt[2] s=1) -> Tensor",
    "f(float a=1.0, float b=1e-5, float c=1e20, float d=-0.0, float e=.5, float g=0x1p3) -> ()",
    "f(float a=1e18, float b=1e19, float c=-9223372036854775808.0, float d=123456789012.5) -> ()",
    "f(float[] a=[1.0, 2.5], float[] b=[1, 2], bool[] c=[True], complex[] d=[1j, 2.5j]) -> ()",
    "f(str a='abc', str b=\"a'b\", str c='a\\nb\\t\\a\\101', str? d='x', Scalar e='y') -> ()",
    "f(str x='é') -> Tensor",
    "f(str x='''tri\nple''') -> Tensor",
    "f(int a=0x10, int b=1E5, int c=0x1e, int d=007, int e=-3, int f=1.5, int g=True) -> ()",
    "f(complex a=1, complex b=1.5) -> ()",
    "f(ScalarType a=float, ScalarType? b=bfloat16, int c=Mean, Layout d=strided, "
    "MemoryFormat? e=contiguous_format, ScalarType f=complex, ScalarType g=long) -> ()",
    "f(int x=float32) -> Tensor",
    "f(Device a='cpu', Device b='cuda:1', Device c='cuda:300', Device d='cuda:255', "
    "Device? e='meta') -> ()",
    "f(Device d='cuda:01') -> ()",
    "f(Device d='foo:1') -> ()",
    "f(Device d='') -> ()",
    "f(Device d='cuda:99999999999') -> ()",
    "f(Tensor x=None, Tensor? y=None, Generator? g=None, Tensor[]? z=None) -> ()",
    "f(int[2] x=None) -> ()",
    "f(int[] x=[1.5]) -> ()",
    "f(float[] x=[True]) -> ()",
    "f(complex[] x=[True]) -> ()",
    "f(Tensor[] l=[]) -> ()",
    "f(str[] x=['a']) -> ()",
    "f(Any x=1) -> ()",
    "f(int x=99999999999999999999) -> ()",
    "f(float x=1e400) -> ()",
    "f(float x=1e-310) -> ()",
    "f(float x=0x1p-1074) -> ()",
    "f(int[.5] x) -> ()",
    "f(int[3000000000] x) -> ()",
    # alias annotations
    "f(Tensor(a|b|c) x) -> Tensor(a|b -> b|c)",
    "f(Tensor(a|*) x, Tensor(*|a) y) -> Tensor",
    "f(Tensor! x, Tensor! y) -> Tensor!",
    "f(Tensor(a!)[][] x, Tensor(a)[](b) y, Tensor(a)?[] z, Tensor(a!)[2] w) -> ()",
    "f(Tensor(a! -> *) x) -> Tensor(A!)",
    # returns and varargs
    "f(Tensor x) -> ()",
    "f(Tensor x) -> (Tensor)",
    "f(Tensor x) -> (Tensor a, Tensor b)",
    "f(Tensor x) -> ((int, int) a)",
    "f(Tensor x, ...) -> (Tensor, ...)",
    "f(...) -> (...)",
    "f(Tensor x) -> (..., Tensor)",
    "f(..., Tensor x) -> Tensor",
    "f(int x=1, ...) -> Tensor",
    # types
    "f(Generator a, ScalarType b, Layout c, MemoryFormat d, Storage e, QScheme f, Quantizer g,"
    " ConstQuantizerPtr h, Device i, DeviceIndex j, Stream k, Scalar l, str m, float n,"
    " complex o, int p, SymInt q, bool r, SymBool s, None t, Capsule u, Any v) -> AnyEnumType",
    "f(Dimname x) -> Tensor",
    "f(SymFloat x) -> Tensor",
    "f(t x, double y, int64_t z) -> t",
    "f((SymInt, ScalarType) a, Dict(str, SymInt) b, Future(Tensor) c, Await(int) d, "
    "RRef(int) e) -> Dict(str, Tensor)(a)",
    "f(Union(str, NoneType, int) a, Union(Tensor, NoneType) b, Union(int, float, complex) c, "
    "Union(int, str)? d, Union(Scalar, NoneType, str) e) -> ()",
    "f(Union(int, int) x) -> ()",
    "f(Union(a, b, int) x, Union(a[], b[], int) y, Union(a?, int) z) -> ()",
    "f(Union(Tensor, Any) x) -> ()",
    "f(Dict(Scalar, int) x) -> ()",
    "f(NoneType? x) -> ()",
    "f(Scalar?? x, Tensor?? y) -> ()",
    "f(__torch__.torch.classes.ns.C x) -> ()",
    "f(__torch__.foo x) -> ()",
    # names
    "ns::f.ov(Tensor x) -> Tensor",
    "f.a.b(Tensor x) -> Tensor",
    "f.default(Tensor x) -> Tensor",
    "f.__x(Tensor x) -> Tensor",
    "a::b::c(Tensor x) -> Tensor",
    "a:b(Tensor x) -> Tensor",
    "f.1(Tensor x) -> Tensor",
    "ns::f",
    "",
    # syntax errors, whitespace and layout
    "f(Tensor x -> Tensor",
    "f(Foo x) -> Tensor",
    "f(Tensor x)",
    "f(Tensor x) ->",
    "f(Tensor in) -> Tensor",
    "f(Tensor x) -> Tensor if",
    "f(Tensor x) -> Tensor;",
    "f(Tensor x) -> Tensor $",
    "f(Tensor x,) -> Tensor",
    "f(int x=1, int y) -> Tensor",
    "f(Tensor x, int y=1, Tensor[] z, int[]? w) -> Tensor",
    "  f ( Tensor   x ) ->Tensor   ",
    "\n  f(Tensor x) -> Tensor\n\n",
    "f(Tensor x,\n  int y) -> Tensor # comment\n",
    "f(Tensor x) ->\n Tensor",
    "f(Tensor x)\n-> Tensor",
    "  f(Tensor x) -> Tensor\n g()",
    "f(Tensor x) -> Tensor\ng(Tensor x) -> Tensor",
    "f(Tensor x,\n int y,\n Foo z,\n int w,\n int v,\n int u) -> Tensor",
    "f(str x='abc) -> Tensor",
    "f(str x='\\x41', str y='\\u0041') -> Tensor",
    "f(str x='a\\9') -> Tensor",
    "f(Tensor x) -> Tensor # type: foo",
]


@pytest.mark.parametrize("text", SCHEMAS)
def test_parse_matches_torch(text):
    assert our_parse(text) == torch_parse(text)


@pytest.mark.parametrize("text", ["f(t x) -> t", "f(double x) -> Tensor", "f(int64_t x) -> ()",
                                  "aten::f(double x) -> Tensor"])
def test_parse_without_type_variables_matches_torch(text):
    assert our_parse(text, allow_typevars=False) == torch_parse(text, allow_typevars=False)


def test_every_registered_torch_schema_prints_the_same():
    """All ~4200 schemas torch registers, bar custom-class ones, which dispatchcore lacks."""
    texts = [str(s) for s in torch._C._jit_get_all_schemas() if "__torch__" not in str(s)]
    assert len(texts) > 3000
    mismatches = [t for t in texts if our_parse(t) != torch_parse(t)]
    assert mismatches == []


# -- a seeded fuzzer over the schema grammar, with random damage --------------------------------

_TYPES = [
    "Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Layout",
    "MemoryFormat", "Device", "Generator", "complex", "Storage", "t", "Any", "SymBool", "Stream",
    "NoneType", "Dimname", "Foo", "Dict(str, Tensor)", "Union(int, str)", "Future(int)",
    "(int, SymInt)", "None",
]
_NUMBERS = ["0", "1", "-1", "1.5", "-2.5", "1e-3", "1e10", "0.1", "3j", "-0.0", "1e20", "7.",
            ".5", "0x10", "1e400", "99999999999999999999", "1E5", "007", "0x"]
_WORDS = ["'a'", '"b c"', "'x\\ny'", "'\\101z'", "'\\x41'", "float", "long", "strided", "Mean",
          "float32", "'cpu'", "'cuda:1'", "None", "True", "False"]


def _random_schema(rng: random.Random) -> str:
    def type_() -> str:
        text = rng.choice(_TYPES)
        if text == "Tensor" and rng.random() < 0.4:
            text += rng.choice(["(a)", "(a!)", "(a -> *)", "(b|a)", "!", "(*)"])
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            text += rng.choice(["?", "[]", "[](a)"])
        return text

    def default() -> str:
        roll = rng.random()
        if roll < 0.3:
            return rng.choice(_WORDS)
        if roll < 0.55:
            items = [rng.choice(_NUMBERS + ["True"]) for _ in range(rng.randint(0, 3))]
            return "[" + ", ".join(items) + "]"
        return rng.choice(_NUMBERS)

    args = []
    for i in range(rng.randint(0, 5)):
        if rng.random() < 0.12:
            args.append("*")
            continue
        text = type_()
        if rng.random() < 0.2 and "[" not in text:
            text += f"[{rng.choice('123')}]" + rng.choice(["", "?"])
        text += f" a{i}"
        if rng.random() < 0.4:
            text += "=" + default()
        args.append(text)
    if rng.random() < 0.05:
        args.append("...")
    roll = rng.random()
    if roll < 0.3:
        returns = type_()
    elif roll < 0.4:
        returns = "()"
    else:
        items = [type_() + rng.choice(["", " r"]) for _ in range(rng.randint(1, 3))]
        returns = "(" + ", ".join(items) + ")"
    name = rng.choice(["f", "ns::f", "ns::f.ov", "aten::g.out"])
    text = f"{name}({', '.join(args)}) -> {returns}"
    if rng.random() < 0.4:  # damage it: drop or insert a character
        i = rng.randrange(len(text) + 1)
        insert = rng.choice([" ", ",", "(", ")", "[", "]", "?", "!", "=", "-", "\n", "\n  ", "'"])
        text = text[:i] + text[i + 1 :] if rng.random() < 0.5 else text[:i] + insert + text[i:]
    return text


def test_random_schemas_parse_and_fail_exactly_like_torch():
    rng = random.Random(2024)
    texts = [_random_schema(rng) for _ in range(3000)]
    mismatches = [(t, our_parse(t), torch_parse(t)) for t in texts]
    mismatches = [m for m in mismatches if m[1] != m[2]]
    assert mismatches == []


# -- binding against torch.ops ------------------------------------------------------------------

OPS = [
    "t.ov(Tensor x) -> Tensor",
    "opt(Tensor? x) -> Tensor",
    "tl(Tensor[] x) -> Tensor",
    "otl(Tensor?[] x) -> Tensor",
    "i(int x) -> Tensor",
    "si(SymInt x) -> Tensor",
    "fl(float x) -> Tensor",
    "b(bool x) -> Tensor",
    "s(str x) -> Tensor",
    "sc(Scalar x) -> Tensor",
    "il(int[] x) -> Tensor",
    "il2(int[2] x) -> Tensor",
    "sil(SymInt[] x) -> Tensor",
    "sil2(SymInt[2] x) -> Tensor",
    "fll(float[] x) -> Tensor",
    "bl(bool[] x) -> Tensor",
    "oi(int? x) -> Tensor",
    "oil(int[]? x) -> Tensor",
    "oil1(int[1]? x) -> Tensor",
    "cx(complex x) -> Tensor",
    "scl(Scalar[] x) -> Tensor",
    "sl(str[] x) -> Tensor",
    "osc(Scalar? x) -> Tensor",
    "sb(SymBool x) -> Tensor",
    "g(Tensor x, int y=1, *, Scalar alpha=1, Tensor? out=None) -> Tensor",
    "h(Tensor x, Tensor y, int z) -> Tensor",
    "ko(*, Tensor x) -> Tensor",
    "noargs() -> Tensor",
]
NAMESPACE = "dcschema_test"


@pytest.fixture(scope="module")
def ops():
    """Each op twice: torch's OpOverload (no kernels, so a bound call ends in NotImplementedError)
    and our parsed schema."""
    lib = torch.library.Library(NAMESPACE, "DEF")
    try:
        table = {}
        for text in OPS:
            lib.define(text)
            name, _, overload = text.partition("(")[0].partition(".")
            packet = getattr(getattr(torch.ops, NAMESPACE), name)
            schema = parse_schema(f"{NAMESPACE}::{text}")
            table[name] = (getattr(packet, overload or "default"), schema)
        yield table
    finally:
        lib._destroy()


def torch_call(op, args, kwargs) -> str:
    try:
        op(*args, **kwargs)
    except NotImplementedError:  # bound fine, then found no kernel
        return "ok"
    except RuntimeError as exc:
        # errors raised inside Python code (iterating a 0-d tensor) carry a Python traceback
        return str(exc).split("\n\nAt:\n")[0]
    return "ok"


def our_call(schema, args, kwargs) -> str:
    try:
        schema.bind(args, kwargs, is_tensor=lambda v: isinstance(v, torch.Tensor))
    except SchemaError as exc:
        return str(exc)
    return "ok"


def _values():
    t = torch.ones(2)
    scalars = [torch.tensor(3), torch.tensor(2.5), torch.tensor(True), torch.ones(0)]
    return [t, *scalars, None, 3, True, 2.5, 1 + 2j, "a", "ab", [1, 2], (1, 2), [t, t], (t, t),
            [t, None], [], [1.5], [True], [torch.tensor(3), 2], [None], [1, None], [1 + 1j], [[1]],
            {1: 2}, [1, 2.5]]


SINGLE_ARGUMENT_OPS = [text.partition("(")[0].partition(".")[0] for text in OPS[:24]]


@pytest.mark.parametrize("name", SINGLE_ARGUMENT_OPS)
def test_binding_one_value_matches_torch(ops, name):
    op, schema = ops[name]
    for value in _values():
        for args, kwargs in (((value,), {}), ((), {"x": value})):
            assert our_call(schema, args, kwargs) == torch_call(op, args, kwargs), (value, kwargs)


def test_binding_call_shapes_match_torch(ops):
    t = torch.ones(1)
    calls = [
        ("g", (t, 2), {"y": 3}),
        ("g", (t,), {"y": 3, "x": t}),
        ("g", (t, 2, 3), {}),
        ("g", (t, 2, 3, 4, 5), {}),
        ("g", (t, 2), {"alpha": "a"}),
        ("g", (t, 2), {"foo": 1, "bar": 2}),
        ("g", (t,), {"foo": 1}),
        ("g", (t, 2.5), {}),
        ("g", (t,), {"y": 2.5}),
        ("g", (1,), {"y": 2.5}),
        ("g", (), {"y": 2.5}),
        ("g", (t,), {"out": t, "alpha": 2}),
        ("g", (), {"x": t, "out": 1}),
        ("g", (t,), {"alpha": 1, "y": 3, "x": t}),
        ("g", (t, 1), {"x": t}),
        ("h", (t, 1), {}),
        ("h", (t,), {"z": 1}),
        ("h", (t, t, 1), {"x": t}),
        ("h", (t, t), {"x": t}),
        ("h", (t, 1), {"y": t}),
        ("h", (t,), {"z": 1, "y": 2, "w": 3}),
        ("h", (t,), {"y": t, "x": t}),
        ("h", (), {"z": 1, "y": t, "x": t}),
        ("ko", (t,), {}),
        ("ko", (), {}),
        ("noargs", (1,), {}),
        ("noargs", (), {"x": 1}),
        ("t", (), {}),
        ("t", (t, t), {}),
    ]
    for name, args, kwargs in calls:
        op, schema = ops[name]
        assert our_call(schema, args, kwargs) == torch_call(op, args, kwargs), (name, args, kwargs)


def test_library_define_reports_the_positional_after_default_error_like_parse_schema():
    lib = torch.library.Library(NAMESPACE, "FRAGMENT")
    try:
        text = "bad3(Tensor x, int y=1, Tensor z) -> Tensor"
        with pytest.raises(RuntimeError) as info:
            lib.define(text)
        with pytest.raises(SchemaError) as ours:
            parse_schema(text, allow_typevars=False)
        assert str(ours.value) == str(info.value)
    finally:
        lib._destroy()
