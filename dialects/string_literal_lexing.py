"""A linear-time string-literal pattern for xDSL 0.75's MLIR lexer (xDSL is pinned, so xrelay patches it).

xDSL's pattern `"(?:[^"\\\n\v\f]+|\\(?:...))*"` nests a `+` inside a `*`: on an unclosed `"`
followed by a long line the regex engine tries every way of splitting the line into runs before
failing, exponential in the line's length (40 characters took hours). The same language with a
possessive outer repeat and an atomic inner run never backtracks, so a string literal is accepted or
rejected in one pass over it. Importing `xrelay.dialects` installs it.
"""

import re

from xdsl.utils.mlir_lexer import MLIRLexer

STRING_LITERAL = re.compile(r'"(?>[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')

MLIRLexer._unescaped_characters_regex = STRING_LITERAL
