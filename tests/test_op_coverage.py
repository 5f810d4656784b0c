"""Every registered nn op has all its pieces (CONTRIBUTING.md, "Add an op"): shape rule, layout
rule, numpy kernel, interpreter implementation, linalg lowering (or a stated reason for none),
a row in dialects/README.md and a lit test. A failure names the op and the missing piece."""

from __future__ import annotations

import pathlib
import re
from typing import ClassVar

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.irdl import irdl_op_definition

from xrelay.dialects import nn
from xrelay.dialects.infer import same
from xrelay.dialects.op_base import DataOp, LayoutRule, NNOp
from xrelay.lowering.to_linalg import LOWERINGS
from xrelay.passes.layout_rewriter import LayoutRewriter
from xrelay.runtime.reference.interpreter import make_interpreter
from xrelay.runtime.reference.nn_kernels import KERNELS

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _readme_ops() -> set[str]:
    """Op names in the first column of dialects/README.md's op table."""
    names = set()
    for line in (ROOT / "dialects" / "README.md").read_text().splitlines():
        if line.startswith("| nn."):
            names.update(name.strip() for name in line.split("|")[1].split(","))
    return names


def _lit_text() -> str:
    return "\n".join(p.read_text() for p in (ROOT / "tests" / "filecheck").rglob("*.mlir"))


README_OPS = _readme_ops()
LIT_TEXT = _lit_text()
# xDSL keeps no public view of an interpreter's implementations.
INTERPRETED = make_interpreter(ModuleOp([]))._impls._impl_dict


def missing_pieces(op: type) -> list[str]:
    """What `op` lacks, each naming where it belongs."""
    family = op.__module__.rsplit(".", 1)[-1]
    missing = []
    if getattr(nn, op.__name__, None) is not op:
        missing.append(f"not exported as nn.{op.__name__} (the __all__ of dialects/ops/{family}.py)")
    if op not in nn.OPS.values():
        missing.append("not registered in the dialect (@nn_op)")
    if issubclass(op, NNOp) and not callable(getattr(op, "SHAPE_RULE", None)):
        missing.append(f"no SHAPE_RULE (dialects/ops/{family}.py)")
    layout = getattr(op, "LAYOUT", None)
    if not isinstance(layout, LayoutRule):
        missing.append(f"no LAYOUT rule for ConvertLayout (dialects/ops/{family}.py)")
    elif layout not in LayoutRewriter.RULES:
        missing.append(f"layout rule {layout} has no implementation in passes/layout_rewriter.py")
    if op not in KERNELS:
        missing.append(f"no numpy kernel (runtime/reference/nn_kernels/{family}.py)")
    if op not in INTERPRETED:
        missing.append("no interpreter implementation (runtime/reference/interpreter.py derives them from KERNELS)")
    reason = getattr(op, "NO_LOWERING", None)
    if op in LOWERINGS and reason:
        missing.append("has a lowering but also says NO_LOWERING")
    if op not in LOWERINGS and not (isinstance(reason, str) and reason.strip()):
        missing.append(f"no linalg lowering (lowering/to_linalg/{family}.py) and no NO_LOWERING reason")
    if op.name not in README_OPS:
        missing.append("no row in the op table of dialects/README.md")
    if not re.search(rf"\b{re.escape(op.name)}\b", LIT_TEXT):
        missing.append("no lit test mentions it (tests/filecheck)")
    return missing


@pytest.mark.parametrize("op", list(nn.OPS.values()), ids=list(nn.OPS))
def test_op_has_every_piece(op):
    missing = missing_pieces(op)
    assert not missing, f"{op.name}: " + "; ".join(missing)


def test_readme_lists_only_registered_ops():
    assert README_OPS - set(nn.OPS) == set()


def test_every_layout_rule_is_implemented():
    assert set(LayoutRewriter.RULES) == set(LayoutRule)


def test_the_check_names_every_piece_of_an_unregistered_op():
    @irdl_op_definition
    class HalfOp(DataOp):
        name = "nn.half_for_test"
        SHAPE_RULE = staticmethod(same)

    missing = missing_pieces(HalfOp)
    for piece in ("not exported", "not registered", "no LAYOUT", "no numpy kernel", "no interpreter",
                  "no linalg lowering", "dialects/README.md", "no lit test"):
        assert any(piece in m for m in missing), piece

    class DeclinedOp(HalfOp):
        LAYOUT: ClassVar[LayoutRule] = LayoutRule.AGNOSTIC
        NO_LOWERING: ClassVar[str] = "runs on the interpreter only"

    missing = missing_pieces(DeclinedOp)
    assert not any("LAYOUT" in m or "lowering" in m for m in missing), missing


def test_an_op_without_lowering_says_why_when_lowered(monkeypatch):
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.lowering import lower

    monkeypatch.delitem(LOWERINGS, nn.ReluOp)
    monkeypatch.setattr(nn.ReluOp, "NO_LOWERING", "kept for the test", raising=False)
    text = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
      func.return %y : tensor<2xf32>
    }"""
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(NotImplementedError, match="nn.relu has no lowering: kept for the test"):
        lower(module, to="linalg")
