"""Untrusted text (model outputs, dataset fields, the messages of exceptions user code or a server raised) made
safe to show on a terminal: the one home for it.

A terminal obeys what it reads: ``ESC [ 31 m`` recolours the rest of the screen, ``OSC 0 ; ... BEL`` retitles
the window, ``OSC 52`` writes the clipboard, a carriage return or backspace overwrites what came before. So
every control character (C0, DEL, C1), the Unicode line and paragraph separators and the bidirectional
overrides are shown as the escape a Python ``repr`` would use (``\\x1b``, ``\\u202e``): the text stays
readable and nothing in it acts. Colour the CLI adds itself is added after this, around safe text.
"""

from __future__ import annotations

import re

__all__ = ["one_line", "terminal_safe"]

# Tab and newline are kept by terminal_safe (multi-line blocks); one_line turns them into spaces first.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_ELLIPSIS = "..."


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: object) -> str:
    """``text`` as a string in which no character controls the terminal; newlines and tabs are kept.

    Example:
        >>> terminal_safe("4\\x1b[31mRED\\x1b]0;title\\x07")
        '4\\\\x1b[31mRED\\\\x1b]0;title\\\\x07'
    """
    text = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def one_line(text: object, limit: int | None = None) -> str:
    """``text`` on one line (runs of whitespace, newlines and carriage returns included, become one space),
    made :func:`terminal_safe`, and cut to at most ``limit`` characters with ``...`` at the end; the cut
    never splits an escape.

    Example:
        >>> one_line("a\\r\\nb\\x1b[2J c", 12)
        'a b\\\\x1b[2J c'
        >>> one_line("x" * 20, 10)
        'xxxxxxx...'
    """
    flat = " ".join((text if isinstance(text, str) else str(text)).split())
    safe = terminal_safe(flat)
    if limit is None or len(safe) <= limit:
        return safe
    keep, width, shown = limit - len(_ELLIPSIS), 0, []
    for char in flat[:limit]:  # an escape is never shorter than its character: limit characters suffice
        piece = terminal_safe(char)
        if width + len(piece) > keep:
            break  # an escape cut in half would read as different text
        shown.append(piece)
        width += len(piece)
    return "".join(shown) + _ELLIPSIS
