"""Einsum as the transposes, reshapes, sums and batched matmuls it means.

Two operands: indices only one operand has and the output lacks are summed out first; the rest are
batch indices (both operands and the output), contracted ones (both, not the output) and free ones
(one operand and the output). Each operand is transposed to (batch, free, contracted) and reshaped
to one batched matrix, nn.batch_matmul multiplies them, and the product is reshaped and transposed
to the output's order. More operands are multiplied pairwise, left to right, keeping the indices
later operands or the output still need. An index repeated within one operand (a diagonal) has no
such form: it is rejected with a message.
"""

from __future__ import annotations

import math
import re

from xrelay.frontend.onnx.ops_shape import reshape_to
from xrelay.frontend.onnx.registry import converter

_ELLIPSIS_LETTERS = "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ"  # stand-ins for the dimensions "..." covers


def _parse(node, shapes):
    """(the operands' index strings, the output's), "..." replaced by stand-in letters."""
    equation = str(node.attr("equation")).replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise node.error(f"equation '{equation}' has {len(terms)} operand terms for {len(shapes)} inputs")
    ellipsis_rank = 0
    letters = []
    for term, shape in zip(terms, shapes):
        if not re.fullmatch(r"[A-Za-z]*(\.\.\.)?[A-Za-z]*", term):
            raise node.error(f"equation '{equation}': cannot read the term '{term}'")
        explicit = len(term.replace("...", ""))
        if "..." in term:
            if explicit > len(shape):
                raise node.error(f"equation '{equation}': term '{term}' has more indices than its rank {len(shape)}")
            ellipsis_rank = max(ellipsis_rank, len(shape) - explicit)
        elif explicit != len(shape):
            raise node.error(f"equation '{equation}': term '{term}' names {explicit} indices of a rank-{len(shape)} input")
    stand_in = _ELLIPSIS_LETTERS[:ellipsis_rank]
    for term, shape in zip(terms, shapes):
        covered = len(shape) - len(term.replace("...", ""))
        letters.append(term.replace("...", stand_in[ellipsis_rank - covered:]))
    if arrow:
        out = output.replace("...", stand_in)
    else:  # implicit output: the ellipsis, then the indices named once, in alphabetical order
        counts = {c: sum(t.count(c) for t in letters) for t in letters for c in t}
        out = stand_in + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in stand_in))
    for index in out:
        if not any(index in t for t in letters) or out.count(index) > 1:
            raise node.error(f"equation '{equation}': output index '{index}' is not one input index")
    for term in letters:
        if len(set(term)) != len(term):
            raise node.error(f"equation '{equation}': an index repeated within one operand (a diagonal) "
                             "is not supported")
    return letters, out, stand_in


class _Operand:
    """A value with one index letter per axis."""

    def __init__(self, value, letters: str):
        self.value, self.letters = value, letters

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.type.get_shape())

    def size(self, letter: str) -> int:
        return self.shape[self.letters.index(letter)]


def _transpose(node, operand: _Operand, letters: str) -> _Operand:
    if operand.letters == letters:
        return operand
    axes = tuple(operand.letters.index(c) for c in letters)
    return _Operand(node.emit("nn.transpose", operand.value, axes=axes), letters)


def _sum_out(node, operand: _Operand, keep: set[str]) -> _Operand:
    axes = [i for i, c in enumerate(operand.letters) if c not in keep]
    if not axes:
        return operand
    summed = node.emit("nn.sum", operand.value, axis=axes, keepdims=False)
    return _Operand(summed, "".join(c for c in operand.letters if c in keep))


def _broadcast(node, a: _Operand, b: _Operand, stand_in: str) -> tuple[_Operand, _Operand]:
    """The ellipsis dimensions of size 1 in one operand broadcast to the other's."""
    for letter in set(a.letters) & set(b.letters):
        size_a, size_b = a.size(letter), b.size(letter)
        if size_a == size_b:
            continue
        if letter not in stand_in or 1 not in (size_a, size_b):
            raise node.error(f"index '{letter}' has sizes {size_a} and {size_b} in the two operands")
        small = a if size_a == 1 else b
        shape = tuple(max(size_a, size_b) if c == letter else d for c, d in zip(small.letters, small.shape))
        widened = _Operand(node.emit("nn.broadcast_to", small.value, shape=shape), small.letters)
        a, b = (widened, b) if small is a else (a, widened)
    return a, b


def _multiply(node, a: _Operand, b: _Operand, keep: set[str], stand_in: str) -> _Operand:
    """a * b summed over the indices not in `keep`, as one nn.batch_matmul."""
    a = _sum_out(node, a, keep | set(b.letters))
    b = _sum_out(node, b, keep | set(a.letters))
    a, b = _broadcast(node, a, b, stand_in)
    batch = "".join(c for c in a.letters if c in b.letters and c in keep)
    contracted = "".join(c for c in a.letters if c in b.letters and c not in keep)
    free_a = "".join(c for c in a.letters if c not in b.letters)
    free_b = "".join(c for c in b.letters if c not in a.letters)
    sizes = {c: a.size(c) for c in a.letters} | {c: b.size(c) for c in b.letters}

    def prod(letters: str) -> int:
        return math.prod(sizes[c] for c in letters)

    lhs = _transpose(node, a, batch + free_a + contracted)
    lhs = reshape_to(node, lhs.value, (prod(batch), prod(free_a), prod(contracted)))
    # The right operand as [batch, free, contracted] (attention's q.k) needs no transpose: nn.batch_matmul
    # takes it so with transpose_b.
    by_rows = b.letters == batch + free_b + contracted
    rhs = b if by_rows else _transpose(node, b, batch + contracted + free_b)
    rhs_shape = (prod(batch), prod(free_b), prod(contracted)) if by_rows else \
        (prod(batch), prod(contracted), prod(free_b))
    rhs = reshape_to(node, rhs.value, rhs_shape)
    product = node.emit("nn.batch_matmul", lhs, rhs, transpose_a=False, transpose_b=by_rows)
    letters = batch + free_a + free_b
    return _Operand(reshape_to(node, product, tuple(sizes[c] for c in letters)), letters)


@converter("Einsum", needs=("nn.transpose", "nn.reshape", "nn.sum", "nn.batch_matmul", "nn.broadcast_to"))
def einsum(node):
    present = [i for i in range(len(node.inputs)) if node.has(i)]
    letters, out, stand_in = _parse(node, [node.shape(i) for i in present])
    values = node.values_alike(*present)
    operands = [_Operand(v, t) for v, t in zip(values, letters)]
    result = _sum_out(node, operands[0], set(out) | {c for t in letters[1:] for c in t})
    for index, operand in enumerate(operands[1:], start=1):
        needed = set(out) | {c for t in letters[index + 1:] for c in t}
        result = _multiply(node, result, operand, needed, stand_in)
    result = _sum_out(node, result, set(out))
    return _transpose(node, result, out).value
