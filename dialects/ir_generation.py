"""A counter that every change to xDSL IR in this process moves: what lets a cache tell in O(1) that
a module is unchanged.

`generation()` grows whenever any op, block or region anywhere is inserted, detached or moved, an
operand, successor or block argument is added, removed or replaced (every one of these goes through
a few methods of `xdsl.ir.core` that this module wraps, which xDSL's Rewriter, PatternRewriter and
hand edits all call), or an attribute or property of a watched op is set or deleted (`watch`
makes an op's `attributes` and `properties` dicts count their changes: both are plain dicts in
xDSL). A cache that stored `generation()` with its value knows nothing changed while it is the
same; when it moved, the change may have been anywhere, and the cache compares what it depends on.

Changing private fields (`op._operands`, `op.parent = ...`) bypasses it, as it bypasses xDSL's use
lists. Importing `xrelay.dialects` installs it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from xdsl.ir.core import Block, IRWithUses, Operation, Region


class _Counter:
    value = 0


def generation() -> int:
    """How many changes to xDSL IR this process has made so far (see the module docstring)."""
    return _Counter.value


class WatchedDict(dict):
    """A dict that moves `generation()` whenever it is changed (an op's attributes or properties)."""

    __slots__ = ()

    def _changed(method: Callable) -> Callable:  # wraps dict's methods, in the class body
        @functools.wraps(method)
        def changing(self, *args, **kwargs):
            _Counter.value += 1
            return method(self, *args, **kwargs)

        return changing

    __setitem__ = _changed(dict.__setitem__)
    __delitem__ = _changed(dict.__delitem__)
    __ior__ = _changed(dict.__ior__)
    clear = _changed(dict.clear)
    pop = _changed(dict.pop)
    popitem = _changed(dict.popitem)
    setdefault = _changed(dict.setdefault)
    update = _changed(dict.update)
    del _changed


def watch(op: Operation) -> None:
    """Make changes to `op`'s attributes and properties move `generation()` from now on (the dicts
    are replaced by `WatchedDict`s holding the same entries; an op created later is unwatched, but
    inserting it moves the generation)."""
    if type(op.attributes) is not WatchedDict:
        op.attributes = WatchedDict(op.attributes)
    if type(op.properties) is not WatchedDict:
        op.properties = WatchedDict(op.properties)


def _counting(owner: type, name: str) -> None:
    method = getattr(owner, name)

    @functools.wraps(method)
    def changing(*args, **kwargs):
        _Counter.value += 1
        return method(*args, **kwargs)

    setattr(owner, name, changing)


_CHANGES = {
    IRWithUses: ("add_use", "remove_use"),  # every operand, successor and use change
    Operation: ("add_region", "detach_region"),
    Block: ("_attach_op", "detach_op", "insert_arg", "erase_arg"),
    Region: ("_attach_block", "detach_block", "move_blocks", "move_blocks_before"),
}
"""The methods of xDSL's IR through which every structural change goes (all insertions of ops and
blocks attach them with `_attach_op` / `_attach_block`)."""

for _owner, _names in _CHANGES.items():
    for _name in _names:
        _counting(_owner, _name)
