"""The compact text form of upstream's OpDSL named-op definitions (`upstream_named_defs.txt`).

One block per op; `format_named_ops` writes it (`tools/gen_named_ops.py`), `parse_named_ops` reads it
back into the entries `upstream_named.py` builds the ops from:

    conv_1d_ncw_fcw Conv1DNcwFcwOp: Performs 1-D convolution.
      ins(I: T1[3], K: T2[3], IZp: I32) outs(O: U[3])
      attrs strides[s3] = [1], dilations[s5] = [1]
      maps (d0, d1, d2, d3, d4)[s0, ..., s6] -> (d0, d3, d2 * s3 + d4 * s5); (d1, d3, d4); (d0, d1, d2)
      iterators parallel, parallel, parallel, reduction, reduction
      O = binary.add(O, binary.mul(type.cast_signed[U](I), type.cast_signed[U](K)))

An operand is `name: type variable[rank]` (a scalar has no rank); `attrs` lists the index attributes
(`name[symbol positions] = defaults`) and the type-function attributes (`name = default function`);
the maps share their dimension and symbol lists. `like <op>` stands for these four lines of an
earlier op that has the same. A body line assigns an output a scalar expression
written as a Python expression: an operand's name, `const("text")`, `index(dim)`,
`kind.function[type variable](operands)` or, for a function an attribute selects,
`kind[attribute][type variable](operands)` (the `[type variable]` only where the function has one).
An entry is a dict: `class_name`, `doc`, `operands` as (name, kind, type variable, rank or None) with
kind "input", "output" or "scalar", `index_attrs` as (name, symbol positions, defaults),
`type_fn_attrs` as (name, default function), `maps`, `iterators`, and `body` as (output, expression)
with expressions ("arg", name), ("const", text), ("index", dim) or (kind, function or None,
attribute or None, type variable or None, *operands).
"""

from __future__ import annotations

import ast
import re

_OPERAND = re.compile(r"(\w+): (\w+)(?:\[(\d+)\])?$")
_INDEX_ATTR = re.compile(r"(\w+)\[([\w, ]*)\] = \[([\d, ]*)\]$")
_FUNCTION_ATTR = re.compile(r"(\w+) = (\w+)$")


_SIGNATURE = ("operands", "index_attrs", "type_fn_attrs", "maps", "iterators")


def format_named_ops(entries: dict[str, dict]) -> str:
    """The table of these ops; an op whose operands, attributes, maps and iterators are an earlier
    op's says `like <that op>` instead of repeating them."""
    blocks, first = [], {}
    for name, entry in entries.items():
        signature = tuple(entry[key] for key in _SIGNATURE)
        blocks.append(_format_op(name, entry, first.setdefault(signature, name)))
    return "".join(blocks)


def _format_op(name: str, entry: dict, like: str) -> str:
    ins = [f"{n}: {t}" + ("" if kind == "scalar" else f"[{rank}]")
           for n, kind, t, rank in entry["operands"] if kind != "output"]
    outs = [f"{n}: {t}[{rank}]" for n, kind, t, rank in entry["operands"] if kind == "output"]
    attrs = [f"{n}[{', '.join(f's{p}' for p in positions)}] = [{', '.join(map(str, defaults))}]"
             for n, positions, defaults in entry["index_attrs"]]
    attrs += [f"{n} = {fn}" for n, fn in entry["type_fn_attrs"]]
    prefixes = {text.split(" -> ")[0] for text in entry["maps"]}
    if len(prefixes) != 1:
        raise ValueError(f"{name}: the maps do not share their dimensions and symbols")
    lines = [f"{name} {entry['class_name']}: {entry['doc']}"]
    if like != name:
        lines.append(f"like {like}")
        return "\n  ".join(lines + [f"{out} = {_format_expression(expr)}" for out, expr in entry["body"]]) + "\n"
    lines.append(f"ins({', '.join(ins)}) outs({', '.join(outs)})")
    if attrs:
        lines.append("attrs " + ", ".join(attrs))
    lines.append(f"maps {prefixes.pop()} -> " + "; ".join(text.split(" -> ")[1] for text in entry["maps"]))
    lines.append(("iterators " + ", ".join(entry["iterators"])).rstrip())
    lines += [f"{out} = {_format_expression(expr)}" for out, expr in entry["body"]]
    return "\n  ".join(lines) + "\n"


def _format_expression(expr: tuple) -> str:
    kind = expr[0]
    if kind == "arg":
        return expr[1]
    if kind == "const":
        return f"const({expr[1]!r})"
    if kind == "index":
        return f"index({expr[1]})"
    _, fn, attr, type_var, *operands = expr
    callee = f"{kind}[{attr}]" if attr is not None else f"{kind}.{fn}"
    if type_var is not None:
        callee += f"[{type_var}]"
    return f"{callee}({', '.join(_format_expression(o) for o in operands)})"


def parse_named_ops(table: str) -> dict[str, dict]:
    """Every op of the table, by name."""
    entries = {}
    for block in re.split(r"\n(?=\S)", table.strip()):
        header, *rest = [line.strip() for line in block.splitlines()]
        name, header = header.split(" ", 1)
        class_name, doc = header.split(": ", 1)
        entry = {"class_name": class_name, "doc": doc}
        if rest[0].startswith("like "):
            like = entries[rest.pop(0).removeprefix("like ")]
            entry |= {key: like[key] for key in _SIGNATURE}
        else:
            entry |= {"operands": _operands(rest.pop(0)), "index_attrs": (), "type_fn_attrs": ()}
            if rest[0].startswith("attrs "):
                entry |= _attrs(rest.pop(0).removeprefix("attrs "))
            prefix, results = rest.pop(0).removeprefix("maps ").split(" -> ", 1)
            entry["maps"] = tuple(f"{prefix} -> {r}" for r in results.split("; "))
            iterators = rest.pop(0).removeprefix("iterators").strip()
            entry["iterators"] = tuple(iterators.split(", ")) if iterators else ()
        entry["body"] = tuple((out, _expression(ast.parse(text, mode="eval").body))
                              for out, text in (line.split(" = ", 1) for line in rest))
        entries[name] = entry
    return entries


def _operands(line: str) -> tuple:
    ins, outs = line.removeprefix("ins(").removesuffix(")").split(") outs(")
    operands = []
    for text, is_output in [(t, False) for t in ins.split(", ") if t] + [(t, True) for t in outs.split(", ")]:
        name, type_var, rank = _OPERAND.match(text).groups()
        kind = "output" if is_output else "scalar" if rank is None else "input"
        operands.append((name, kind, type_var, None if rank is None else int(rank)))
    return tuple(operands)


def _attrs(line: str) -> dict:
    index_attrs, type_fn_attrs = [], []
    for text in re.split(r", (?=\w+[\[ ])", line):
        if match := _INDEX_ATTR.match(text):
            name, positions, defaults = match.groups()
            index_attrs.append((name, tuple(int(p.strip().removeprefix("s")) for p in positions.split(",")),
                                tuple(int(d) for d in defaults.split(","))))
        else:
            type_fn_attrs.append(_FUNCTION_ATTR.match(text).groups())
    return {"index_attrs": tuple(index_attrs), "type_fn_attrs": tuple(type_fn_attrs)}


def _expression(node: ast.expr) -> tuple:
    if isinstance(node, ast.Name):
        return ("arg", node.id)
    callee, type_var = node.func, None
    if isinstance(callee, ast.Name):  # const("text"), index(dim)
        return (callee.id, ast.literal_eval(node.args[0]))
    operands = tuple(_expression(a) for a in node.args)
    if isinstance(callee, ast.Subscript) and not isinstance(callee.value, ast.Name):
        callee, type_var = callee.value, callee.slice.id
    if isinstance(callee, ast.Attribute):
        return (callee.value.id, callee.attr, None, type_var, *operands)
    return (callee.value.id, None, callee.slice.id, type_var, *operands)
