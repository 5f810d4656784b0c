"""A linear-time string-literal pattern for xDSL 0.75's MLIR lexer (xDSL is pinned, so xrelay patches it).

xDSL's pattern `"(?:[^"\\\n\v\f]+|\\(?:...))*"` nests a `+` inside a `*`: on an unclosed `"`
followed by a long line the regex engine tries every way of splitting the line into runs before
failing, exponential in the line's length (40 characters took hours). The same language with a
possessive outer repeat and an atomic inner run never backtracks, so a string literal is accepted or
rejected in one pass over it. Importing `xrelay.dialects` installs it.
"""

import re

from xdsl.utils.lexer import Token
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind, StringLiteral

STRING_LITERAL = re.compile(r'"(?>[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')

MLIRLexer._unescaped_characters_regex = STRING_LITERAL


_lex_string_literal = MLIRLexer._lex_string_literal


def _lex_plain_string_literal(self: MLIRLexer, start_pos):
    """A literal without escapes or line breaks (every hex blob of a weight: tens of MB in a built
    ResNet) found with `str.find`, at C speed; any other through the pattern above."""
    content = self.input.content
    end = content.find('"', start_pos + 1)
    if end > 0 and all(content.find(c, start_pos + 1, end) < 0 for c in "\\\n\v\f"):
        self.pos = end + 1
        return Token(MLIRTokenKind.STRING_LIT, StringLiteral(start_pos, self.pos, self.input))
    return _lex_string_literal(self, start_pos)


MLIRLexer._lex_string_literal = _lex_plain_string_literal


def _string_contents(self: StringLiteral) -> str:
    """The literal's value; one without escapes is its text between the quotes, returned as it is
    (xDSL encodes it to bytes, copies them into a bytearray and decodes them back: three passes over
    each weight's hex in a lowered module)."""
    text = self.text
    if "\\" not in text:
        return text[1:-1]
    return self.bytes_contents.decode()


StringLiteral.string_contents = property(_string_contents)
