"""``regime_core.router.sentences``: the sentence rule for running text (Latin terminals with
their abbreviations, the sentence marks of other scripts wherever they stand) and the refusal of
text that was not valid UTF-8. Parity with router.js is tested in ``test_router_js.py``."""

from __future__ import annotations

import pytest

from regime_core.router.model import default_router
from regime_core.router.sentences import (
    SENTENCE_MARKS,
    check_text,
    ends_sentence,
    route_bridge_text,
    split_bridge,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Chinese and Japanese put no space between sentences.
        ("鹰湾是一部电影。它由多伊执导！真的吗？",
         ["鹰湾是一部电影。", "它由多伊执导！", "真的吗？"]),
        ("ケストレル湾は映画です｡監督はドウです｡", ["ケストレル湾は映画です｡", "監督はドウです｡"]),
        # Runs of marks and closing brackets stay with the sentence they end.
        ("他说：「你好。」然后走了。真的吗？！是的",
         ["他说：「你好。」", "然后走了。", "真的吗？！", "是的"]),
        ("《鹰湾》（1931）。导演：多伊。", ["《鹰湾》（1931）。", "导演：多伊。"]),
        # Danda, Arabic, Armenian, Ethiopic, Myanmar and Khmer marks.
        ("यह एक फ़िल्म है। इसे दो ने बनाया॥ और", ["यह एक फ़िल्म है।", "इसे दो ने बनाया॥", "और"]),
        ("هل هذا فيلم؟ نعم۔ حقا", ["هل هذا فيلم؟", "نعم۔", "حقا"]),
        ("Սա ֆիլմ է։ Այո։", ["Սա ֆիլմ է։", "Այո։"]),
        ("ይህ ፊልም ነው። ነው፧ አዎ", ["ይህ ፊልም ነው።", "ነው፧", "አዎ"]),
        ("ဒါ ရုပ်ရှင်ပါ။ ဟုတ်", ["ဒါ ရုပ်ရှင်ပါ။", "ဟုတ်"]),
        ("នេះជាខ្សែភាពយន្ត។ បាទ", ["នេះជាខ្សែភាពយន្ត។", "បាទ"]),
        # Mixed with English; a mark right after a chunk's start, or alone.
        ("Kestrel Bay is a film. 它很有名。Yes.", ["Kestrel Bay is a film.", "它很有名。", "Yes."]),
        ("Hello 。World", ["Hello 。", "World"]),
        ("。", ["。"]),
        # Guillemets close a sentence as quotes do; the fullwidth full stop is not a mark.
        ("Il a dit «Non.» Puis il partit.", ["Il a dit «Non.»", "Puis il partit."]),
        ("版本３．１４发布", ["版本３．１４发布"]),
        # The Latin rule is unchanged: abbreviations and initials, terminals only chunk-final.
        ("Made by J. R. R. Tolkien in the U.S. in 1937. Dr. Who? Yes!", [
            "Made by J. R. R. Tolkien in the U.S. in 1937.", "Dr. Who?", "Yes!"]),
        ("Yahoo!News is a site. It is old.", ["Yahoo!News is a site.", "It is old."]),
    ],
)  # fmt: skip
def test_split_bridge(text: str, expected: list[str]) -> None:
    assert split_bridge(text) == expected
    squeezed = "".join(text.split())
    assert "".join("".join(s.split()) for s in split_bridge(text)) == squeezed  # nothing lost


def test_every_mark_ends_a_sentence_and_follows_no_space() -> None:
    for mark in SENTENCE_MARKS:
        assert ends_sentence(f"x{mark}"), f"U+{ord(mark):04X}"
        assert split_bridge(f"a{mark}b{mark}") == [f"a{mark}", f"b{mark}"], f"U+{ord(mark):04X}"
        assert mark.isprintable() and not mark.isspace() and not mark.isalnum()


@pytest.mark.parametrize(
    ("field", "value", "position"),
    [("question", "Who\ufffd?", 3), ("bridge", "A.\udcff", 2), ("bridge title", "\ud800x", 0)],
)
def test_text_that_was_not_utf8_is_refused(field: str, value: str, position: int) -> None:
    with pytest.raises(ValueError, match=rf"the {field} is not valid UTF-8 text \(character "
                       rf"{position} is U\+FFFD or a lone surrogate"):  # fmt: skip
        check_text(value, field)
    args = {"question": "Who directed it?", "bridge": "It is a film.", "bridge title": None}
    args[field] = value
    with pytest.raises(ValueError, match=f"the {field} is not valid UTF-8"):
        route_bridge_text(default_router(), args["question"], args["bridge"], args["bridge title"])


def test_valid_text_passes_unchanged() -> None:
    for text in ("Zürich 🎬 東京", "", "\u2028\u00a0"):
        assert check_text(text, "question") == text
