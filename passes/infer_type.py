"""InferType: recompute every nn op's result types, then every function's signature."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from xrelay.dialects import nn
from xrelay.instrument.xdsl_pass import require_module
from xrelay.pass_base import XRelayPass, register_xrelay_pass


class TypeInferenceError(DiagnosticException):
    """A type that InferType cannot make consistent (names the op and both types)."""


def _is_nn_op(op: Operation) -> bool:
    # nn.constant is not an NNOp: its type is its value's, nothing to infer.
    return isinstance(op, nn.NNOp)


# (op name, operand types, attributes) -> inferred result types. Inference depends on nothing
# else (the dialect contract), and models repeat the same few signatures, while InferType runs
# after every function pass on a fresh copy of the same ops: caching makes those reruns cheap.
_CACHE: dict[tuple, list] = {}
_CACHE_LIMIT = 4096


def inferred_result_types(op: nn.NNOp) -> list:
    """`op.infer_result_types()`, memoised on the op's name, operand types and attributes."""
    key = (op.name, tuple(op.operand_types), tuple(op.attributes.items()))
    try:
        return _CACHE[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable attribute: no caching
        return op.infer_result_types()
    types = op.infer_result_types()
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = types
    return types


def _types(values) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


def infer_types(module: ModuleOp) -> None:
    """Re-type every nn op from its operands in program order (one linear walk), fill each
    function's input types from its block arguments, and check its declared result types.

    Raises TypeInferenceError when an nn op cannot be typed, when a function body returns
    types that differ from its declared results, or when a non-nn op no longer verifies
    because the types of its operands changed.
    """
    changed: set[SSAValue] = set()
    for op in module.walk():
        if _is_nn_op(op):
            try:
                new_types = inferred_result_types(op)
            except nn.ShapeError as e:
                raise TypeInferenceError(f"InferType: {e}") from None
            for result, new_type in zip(op.results, new_types):
                if result.type != new_type:
                    changed.add(Rewriter.replace_value_with_new_type(result, new_type))
        elif isinstance(op, func.FuncOp):
            _retype_arguments(op)
        elif isinstance(op, func.ReturnOp):
            _check_return(op)
        elif changed and any(operand in changed for operand in op.operands):
            _check_foreign_op(op)


def types_are_current(module: ModuleOp) -> bool:
    """True when every nn op's stored result types equal those inferred from its operands and
    every function's signature matches its block arguments and return: InferType would change
    nothing. One read-only walk; stops at the first difference."""
    for op in module.walk():
        if _is_nn_op(op):
            try:
                if list(op.result_types) != inferred_result_types(op):
                    return False
            except nn.ShapeError:
                return False
        elif isinstance(op, func.FuncOp):
            if op.body.blocks and tuple(op.body.blocks[0].arg_types) != tuple(op.function_type.inputs.data):
                return False
        elif isinstance(op, func.ReturnOp):
            function = op.parent_op()
            if isinstance(function, func.FuncOp) and tuple(op.arguments.types) != tuple(
                function.function_type.outputs.data
            ):
                return False
    return True


def _retype_arguments(function: func.FuncOp) -> None:
    """Block arguments are the source of truth for the inputs (a layout pass may retype them)."""
    if function.body.blocks:
        inputs = function.body.blocks[0].arg_types
        if tuple(inputs) != tuple(function.function_type.inputs.data):
            function.function_type = FunctionType.from_lists(inputs, function.function_type.outputs.data)


def _check_return(ret: func.ReturnOp) -> None:
    function = ret.parent_op()
    if not isinstance(function, func.FuncOp):
        return
    declared = tuple(function.function_type.outputs.data)
    returned = tuple(ret.arguments.types)
    if declared != returned:
        raise TypeInferenceError(
            f"InferType: func.return in @{function.sym_name.data} returns {_types(returned)} "
            f"but the function is declared to return {_types(declared)}"
        )


def _check_foreign_op(op: Operation) -> None:
    """An op outside nn keeps its stored result types; it must still accept its new operands."""
    try:
        op.verify_()
    except VerifyException as e:
        raise TypeInferenceError(
            f"InferType: {op.name} does not accept its re-inferred operand types "
            f"{_types(op.operand_types)} (results {_types(op.result_types)}): {e}"
        ) from None


@register_xrelay_pass("infer-type", opt_level=0)
@dataclass(frozen=True)
class InferType(XRelayPass):
    """Recomputes every nn op's result type from its operands (Relay's InferType)."""

    def transform_module(self, mod: ModuleOp, pass_ctx) -> ModuleOp:
        # Most runs (the one after every function pass) find nothing to change: skip the copy.
        require_module(mod, self.info)
        if types_are_current(mod):
            return mod
        return super().transform_module(mod, pass_ctx)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        infer_types(op)
