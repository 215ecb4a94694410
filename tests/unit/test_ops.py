"""ops.py: ``dispatchcore.ops`` namespaces and packets, cached as torch.ops caches them."""

from __future__ import annotations

import pytest

import dispatchcore as dc


def test_del_of_a_namespace_works_after_every_access(ns):
    """torch.ops: hasattr caches the namespace as an attribute; del drops it; a second del raises."""
    assert hasattr(dc.ops, ns)
    first = getattr(dc.ops, ns)
    delattr(dc.ops, ns)
    assert hasattr(dc.ops, ns)
    delattr(dc.ops, ns)
    with pytest.raises(AttributeError):
        delattr(dc.ops, ns)
    assert hasattr(dc.ops, ns) and getattr(dc.ops, ns) is not first  # a new namespace, as in torch
    delattr(dc.ops, ns)


def test_a_namespace_is_one_object_until_deleted(ns):
    assert getattr(dc.ops, ns) is getattr(dc.ops, ns)
    delattr(dc.ops, ns)


def test_destroying_a_def_drops_its_cached_packet(ns, carrier):
    with dc.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "cpu", "CPU")
        packet = getattr(dc.ops, ns).f
        assert packet.default(carrier()) == "cpu"
        assert "f" in vars(getattr(dc.ops, ns))
    assert "f" not in vars(getattr(dc.ops, ns))
    assert not hasattr(getattr(dc.ops, ns), "f")
    with pytest.raises(AttributeError, match=rf"^'_OpNamespace' '{ns}' object has no attribute 'f'$"):
        getattr(dc.ops, ns).f  # noqa: B018 - the lookup is the test


def test_a_schema_less_operator_is_not_in_ops(ns):
    """An impl without def: torch.ops raises the same AttributeError as for an unknown name."""
    with dc.Library(ns, "IMPL") as impl:
        impl.impl("f", lambda x: x, "CPU")
        with pytest.raises(AttributeError, match=rf"^'_OpNamespace' '{ns}' object has no attribute 'f'$"):
            getattr(dc.ops, ns).f  # noqa: B018
