"""Resource handles parse as written, whatever was parsed before (xDSL is pinned, so xrelay patches it).

xDSL 0.75 keeps the handles of `dense_resource<name>` in one store per dialect for the whole process and
renames a handle it has seen in an earlier parse (`name_0`, `name_1`, ...): the second parse of a saved
module would ask its weights file for arrays that are not there. MLIR resolves a handle within its
file, so here a handle is its name as written. Importing `xrelay.dialects` installs it.
"""

from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.parser.attribute_parser import AttrParser


def _parse_dialect_resource_handle(self: AttrParser, dialect_name: str, interface: OpAsmDialectInterface) -> str:
    key = self.parse_identifier(context_msg=" for resource handle")
    if (dialect_name, key) not in self.dialect_resources:
        if interface.lookup(key) is None:  # declared once, so a `{-# dialect_resources #-}` blob can fill it
            interface.declare_resource(key)
        self.dialect_resources.add((dialect_name, key))
    return key


AttrParser._parse_dialect_resource_handle = _parse_dialect_resource_handle
