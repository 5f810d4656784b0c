"""Layout strings (``"NCHW"``, ``"HWIO"``, ...) as axis permutations, and Relay's padding tuples."""

from __future__ import annotations

from collections.abc import Sequence


def layout_permutation(src: str, dst: str) -> tuple[int, ...]:
    """Axes for ``np.transpose`` taking an array laid out as ``src`` to ``dst``.

    Both layouts must be permutations of the same distinct letters (``NCHW``/``NHWC``,
    ``OIHW``/``HWIO``/``OHWI``, ...); anything else (split layouts like ``NCHW4c``) is a ValueError.
    """
    if len(set(src)) != len(src) or sorted(src) != sorted(dst) or not src.isalpha():
        raise ValueError(
            f"layout_transform: {src!r} -> {dst!r} is not a permutation of the same distinct letters"
        )
    return tuple(src.index(letter) for letter in dst)


def check_layout(layout: str, letters: str, what: str) -> str:
    """Return ``layout`` if it is a permutation of ``letters``, else raise a ValueError naming ``what``."""
    if len(layout) != len(letters) or sorted(layout) != sorted(letters):
        raise ValueError(f"{what}: layout {layout!r} is not a permutation of {letters!r}")
    return layout


def padding_4(padding: Sequence[int], what: str) -> tuple[int, int, int, int]:
    """Relay's 2-D padding as (top, left, bottom, right); accepts 1, 2 or 4 values like Relay."""
    pad = tuple(int(p) for p in padding)
    if len(pad) == 1:
        return (pad[0],) * 4  # type: ignore[return-value]
    if len(pad) == 2:
        return (pad[0], pad[1], pad[0], pad[1])
    if len(pad) == 4:
        return pad  # type: ignore[return-value]
    raise ValueError(f"{what}: padding must have 1, 2 or 4 values, got {pad}")


def pair(values: Sequence[int] | int, what: str, name: str) -> tuple[int, int]:
    """An (h, w) pair from an int or a 1- or 2-element sequence."""
    if isinstance(values, int):
        return (values, values)
    vals = tuple(int(v) for v in values)
    if len(vals) == 1:
        return (vals[0], vals[0])
    if len(vals) == 2:
        return vals  # type: ignore[return-value]
    raise ValueError(f"{what}: {name} must have 1 or 2 values, got {vals}")
