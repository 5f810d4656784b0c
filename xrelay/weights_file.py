"""A saved module's weights beside it: `dense_resource<name>` handles in the `.mlir`, arrays in an `.npz`.

`Executable.save("r18.built.mlir")` writes every large `arith.constant` as MLIR's resource form,

    builtin.module attributes {xrelay.weights = {file = "r18.built.npz", sha256 = "5f0c..."}} {
      ...
      %fc1_weight = arith.constant dense_resource<fc1_weight> : tensor<1000x512xf32>

and the values into `r18.built.npz` (one `.npy` member per handle; the SHA-256 of all of them, which
the module names, as the archive's comment). The IR stays short and readable, and loading it reads
the arrays straight into memory instead of parsing 90 MB of hex. `load_weights` (run by `xrelay-run`,
`xrelay-opt` and `Executable.load` after parsing) reads them back (`np.load`, never pickles) into
ordinary `dense<...>` constants and drops the attribute, so every pass and executor sees a plain
module; a missing, unreadable or mismatched file is a `WeightsError` naming the op or the module.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FileLineColLoc,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation

from xrelay.dialects.constant import SMALL_CONSTANT_ELEMENTS, attr_numpy, dtype_of

WEIGHTS_ATTR = "xrelay.weights"
"""The module attribute naming the weights file (relative to the `.mlir`'s folder) and its digest."""


class WeightsError(ValueError):
    """A saved module's weights cannot be read: `message`, about `op` (a constant, or the module)."""

    def __init__(self, message: str, op: Operation):
        loc = op.location
        where = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: " if isinstance(loc, FileLineColLoc) else ""
        super().__init__(where + message)
        self.message = message
        self.op = op


def save_with_weights(module: ModuleOp, path: str | Path) -> tuple[str, bytes | None]:
    """The text of `module` to write at `path`, its large constants as resource handles, and the
    `.npz` archive holding them (to write beside it, at `path` with the suffix `.npz`); no archive
    when the module has no large constant. `module` itself is not changed."""
    path = Path(path)
    if path.suffix == ".npz":
        raise ValueError(f"save: '{path}' would be overwritten by its own weights file; name it .mlir")
    clone = module.clone()
    arrays: dict[str, np.ndarray] = {}
    for op in clone.walk():
        if isinstance(op, arith.ConstantOp) and _is_large(op.value):
            name = _handle(op, arrays)
            arrays[name] = attr_numpy(op.value)
            op.properties["value"] = DenseResourceAttr.from_params(name, op.value.type)
    if not arrays:
        return str(module), None
    digest = _digest(arrays)
    clone.attributes[WEIGHTS_ATTR] = DictionaryAttr(
        {"file": StringAttr(path.with_suffix(".npz").name), "sha256": StringAttr(digest)})
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:  # what np.savez writes, plus a comment
        zf.comment = digest.encode()
        for name, array in arrays.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
    return str(clone), archive.getvalue()


def load_weights(module: ModuleOp, mlir_path: str | Path, required: bool = True) -> None:
    """Replace `module`'s resource handles by the arrays of the weights file its `xrelay.weights`
    attribute names (relative to `mlir_path`'s folder), and drop the attribute. Without the attribute,
    a handle left is a WeightsError when `required` (an executor cannot run it), else kept (a text
    tool prints it back)."""
    handles = [op for op in module.walk() if isinstance(op, arith.ConstantOp)
               and isinstance(op.value, DenseResourceAttr)]
    spec = module.attributes.get(WEIGHTS_ATTR)
    if spec is None:
        if handles and required:
            raise WeightsError(f"dense_resource<{handles[0].value.resource_handle.data}> has no value: the module "
                               f"names no weights file ({WEIGHTS_ATTR}, written by Executable.save)", handles[0])
        return
    if not (isinstance(spec, DictionaryAttr) and isinstance(spec.data.get("file"), StringAttr)
            and isinstance(spec.data.get("sha256"), StringAttr)):
        raise WeightsError(f'{WEIGHTS_ATTR} must be {{file = "NAME.npz", sha256 = "..."}}, got {spec}', module)
    file = Path(mlir_path).parent / spec.data["file"].data
    try:
        archive = np.load(file, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise WeightsError(f"cannot read the weights file '{file}' ({WEIGHTS_ATTR}): {reason}", module) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise WeightsError(f"the weights file '{file}' ({WEIGHTS_ATTR}) is not an .npz archive", module)
    with archive:
        expected = spec.data["sha256"].data
        found = archive.zip.comment.decode(errors="replace")
        if found != expected:
            raise WeightsError(f"the weights file '{file}' is not this module's: its digest is "
                               f"'{found}', {WEIGHTS_ATTR} says '{expected}'", module)
        for op in handles:
            op.properties["value"] = _dense_from(archive, op, file)
    del module.attributes[WEIGHTS_ATTR]


def _dense_from(archive, op: arith.ConstantOp, file: Path) -> DenseIntOrFPElementsAttr:
    name, value_type = op.value.resource_handle.data, op.value.type
    if name not in archive.files:
        raise WeightsError(f"dense_resource<{name}>: no array '{name}' in the weights file '{file}'", op)
    try:
        array = archive[name]
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise WeightsError(f"dense_resource<{name}>: cannot read it from '{file}': {error}", op) from None
    try:
        dtype = dtype_of(value_type.get_element_type())
    except TypeError as error:
        raise WeightsError(f"dense_resource<{name}>: {error}", op) from None
    shape = tuple(value_type.get_shape())
    if array.dtype != dtype or array.shape != shape:
        raise WeightsError(f"dense_resource<{name}> is {value_type}, but '{file}' holds {array.dtype} "
                           f"{array.shape}", op)
    return DenseIntOrFPElementsAttr(value_type, BytesAttr(array.tobytes()))


def _is_large(value) -> bool:
    """Whether a constant's value goes to the weights file: more elements than the decimal form is
    kept for, and not a splat (which prints as one number)."""
    if not isinstance(value, DenseIntOrFPElementsAttr):
        return False
    try:
        itemsize = dtype_of(value.get_element_type()).itemsize
    except TypeError:  # an element type numpy has no dtype for: it stays in the IR
        return False
    return int(np.prod(value.get_shape())) > SMALL_CONSTANT_ELEMENTS and len(value.data.data) > itemsize


def _handle(op: Operation, taken: dict) -> str:
    """A resource name for `op`'s value: its SSA name where it has one (an identifier MLIR reads
    bare), else `cst`; `_1`, `_2`, ... appended when taken."""
    hint = op.results[0].name_hint or "cst"
    base = "".join(c if c.isalnum() or c in "_$." else "_" for c in hint)
    base = base if base[0].isalpha() or base[0] == "_" else f"_{base}"
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


def _digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of every array with its name, dtype and shape, in name order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = arrays[name]
        digest.update(f"{name}:{array.dtype.str}:{array.shape};".encode())
        digest.update(np.ascontiguousarray(array).data)
    return digest.hexdigest()
