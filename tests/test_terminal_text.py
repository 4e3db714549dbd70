"""The one home of terminal-safe text: no character of model, dataset or exception text acts on a terminal."""

from __future__ import annotations

import pytest

from osmosis_ai.terminal_text import one_line, terminal_safe

HOSTILE = {
    "csi colour": ("4\x1b[31mRED", "4\\x1b[31mRED"),
    "osc title ended by BEL": ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
    "osc 52 clipboard": ("\x1b]52;c;cm0gLXJmIH4=\x07", "\\x1b]52;c;cm0gLXJmIH4=\\x07"),
    "c1 csi": ("\x9b2J", "\\x9b2J"),
    "backspace and DEL": ("ok\x08\x08no\x7f", "ok\\x08\\x08no\\x7f"),
    "bidi override": ("abc\u202edcba", "abc\\u202edcba"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_control_sequences_are_shown_not_obeyed(name: str) -> None:
    raw, shown = HOSTILE[name]
    assert terminal_safe(raw) == shown
    assert one_line(raw) == shown


def test_multi_line_text_keeps_its_lines_but_a_carriage_return_cannot_overwrite() -> None:
    assert terminal_safe("first\n\tsecond\rthird") == "first\n\tsecond\\x0dthird"
    assert one_line("first\n\tsecond\rthird") == "first second third"
    assert (terminal_safe("a\u2028b"), one_line("a\u2028b")) == ("a\\u2028b", "a b")


def test_plain_text_is_returned_as_is_and_non_strings_are_shown() -> None:
    text = "naïve 数学 — ok"
    assert terminal_safe(text) is text
    assert terminal_safe(ValueError("bad\x1b[0m")) == "bad\\x1b[0m"


def test_a_long_line_is_cut_to_the_limit_and_never_inside_an_escape() -> None:
    assert one_line("x" * 500, 50) == "x" * 47 + "..."
    for cut in range(4, 60):
        shown = one_line("y" * cut + "\x1b[31m" + "z" * 100, 50)
        assert len(shown) <= 50 and shown.endswith("...")
        head = shown[: -len("...")]
        assert "\x1b" not in head
        # the escape is whole or absent
        assert ("\\x1b" in head) == (head.find("\\") != -1)
    assert one_line("\x1b" * 40, 20) == "\\x1b" * 4 + "..."
