"""ConvertLayout: convert `nn.conv2d` to desired data/kernel layouts and let the ops around
them follow, inserting `nn.layout_transform` only where a layout boundary remains (Relay's
ConvertLayout).

This module holds the pass and its option, the desired layouts (parsed and checked before any
rewriting); the walk and the rule of every `LayoutRule` are `passes/layout_rewriter.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from xrelay.dialects.layout import DEFAULT_KERNEL_LAYOUT
from xrelay.pass_base import XRelayPass, register_xrelay_pass
from xrelay.passes.layout_rewriter import CONVS_CONVERTED, TRANSFORMS_INSERTED, LayoutRewriter

SUPPORTED_OPS = ("nn.conv2d",)
"""Ops that accept a desired layout."""


# --- desired layouts: parsing and validation ---------------------------------------------


def _is_permutation(layout: str, letters: str) -> bool:
    return len(layout) == len(letters) and sorted(layout) == sorted(letters)


def _check_conv2d_layouts(layouts: Sequence[str], where: str) -> tuple[str, str]:
    if isinstance(layouts, str) or not 1 <= len(layouts) <= 2 or not all(isinstance(x, str) for x in layouts):
        raise ValueError(f"{where}: nn.conv2d takes [data_layout] or [data_layout, kernel_layout], got {layouts!r}")
    data_layout = layouts[0]
    kernel_layout = layouts[1] if len(layouts) == 2 else "default"
    if not _is_permutation(data_layout, "NCHW"):
        raise ValueError(f"{where}: unknown nn.conv2d data layout '{data_layout}' (a permutation of NCHW, e.g. NHWC)")
    if kernel_layout == "default":
        if data_layout not in DEFAULT_KERNEL_LAYOUT:
            raise ValueError(
                f"{where}: no default kernel layout for data layout '{data_layout}'; give one "
                f"(a permutation of OIHW)"
            )
    elif not _is_permutation(kernel_layout, "OIHW"):
        raise ValueError(
            f"{where}: unknown nn.conv2d kernel layout '{kernel_layout}' (a permutation of OIHW, or 'default')"
        )
    return data_layout, kernel_layout


def parse_desired_layouts(desired: Mapping[str, Sequence[str]] | str | Iterable[str]) -> dict[str, tuple[str, str]]:
    """`{"nn.conv2d": ["NHWC", "HWIO"]}`, or the option form `"nn.conv2d=NHWC:HWIO"` (one such
    entry per op, several as a tuple or separated by ';'), validated into `{op: (data, kernel)}`.

    Raises ValueError naming the bad entry for a malformed entry, an op without layout support
    or a layout that is not a permutation of NCHW / OIHW."""
    where = "convert-layout desired-layouts"
    if isinstance(desired, Mapping):
        items = list(desired.items())
    else:
        entries = [desired] if isinstance(desired, str) else list(desired)
        items = []
        for entry in entries:
            if not isinstance(entry, str):
                raise ValueError(f"{where}: expected 'op=data_layout[:kernel_layout]', got {entry!r}")
            for part in filter(None, (p.strip() for p in entry.split(";"))):
                op_name, eq, layouts = part.partition("=")
                if not eq or not op_name.strip() or not layouts.strip():
                    raise ValueError(f"{where}: malformed entry '{part}', expected 'op=data_layout[:kernel_layout]'")
                items.append((op_name.strip(), [x.strip() for x in layouts.split(":")]))
    result: dict[str, tuple[str, str]] = {}
    for op_name, layouts in items:
        if op_name not in SUPPORTED_OPS:
            raise ValueError(f"{where}: op '{op_name}' has no desired-layout support (supported: {', '.join(SUPPORTED_OPS)})")
        if op_name in result:
            raise ValueError(f"{where}: op '{op_name}' given twice")
        result[op_name] = _check_conv2d_layouts(layouts, f"{where} for '{op_name}'")
    if not result:
        raise ValueError(f"{where}: no desired layouts given, e.g. nn.conv2d=NHWC:HWIO")
    return result


def format_desired_layouts(desired: Mapping[str, tuple[str, str]]) -> tuple[str, ...]:
    """The option form of validated desired layouts: ("nn.conv2d=NHWC:HWIO", ...)."""
    return tuple(f"{op_name}={':'.join(layouts)}" for op_name, layouts in desired.items())


def convert_layout(module: ModuleOp, desired: Mapping[str, tuple[str, str]]) -> None:
    """Apply ConvertLayout with validated `desired` layouts to every function of `module`."""
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            LayoutRewriter(desired).run(op)


@register_xrelay_pass("convert-layout", opt_level=3, required=("InferType", "CanonicalizeOps"), infer_type_after=True,
                      statistics=(CONVS_CONVERTED, TRANSFORMS_INSERTED))
@dataclass(frozen=True)
class ConvertLayout(XRelayPass):
    """Converts `nn.conv2d` to the desired layouts and the layout-agnostic ops around them,
    with `nn.layout_transform` where a boundary remains (Relay's ConvertLayout).

    `ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]})` from Python; kernel layout "default" picks
    Relay's default for the data layout. As a pipeline option:
    `convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"}`.
    """

    desired_layouts: tuple[str, ...] = ()
    """Required: an empty value is the clear "no desired layouts given" error, not xDSL's."""

    def __post_init__(self) -> None:
        # Accept the Python dict form and store the option form, so the spec prints and parses back.
        object.__setattr__(self, "desired_layouts", format_desired_layouts(parse_desired_layouts(self.desired_layouts)))

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_layout(op, parse_desired_layouts(self.desired_layouts))
