"""bot.mail_in.parse: a parsed mail's fields read through the index `_CappedMessage` keeps give
what the stdlib's own walk over the fields gives (`Message.get`: the first field of the name, in
any case, its value as the policy fetches it; `get_content_type`), however the fields and the
default type were changed since the index was made."""

from __future__ import annotations

from email.errors import MessageError
from email.message import Message
from email.parser import BytesParser

from hypothesis import given
from hypothesis import strategies as st

from bot.mail_in.parse import _POLICY, _CappedMessage

NAMES = ["Content-Type", "content-type", "CONTENT-TYPE", "Subject", "subject", "X-Extra", "From", "To"]
VALUES = ["text/plain", "text/html; charset=utf-8", "multipart/alternative; boundary=x", "hello", "a@b.example", ""]

field = st.tuples(st.sampled_from(NAMES), st.sampled_from(VALUES))
change = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(NAMES), st.sampled_from(VALUES)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("replace"), st.sampled_from(NAMES), st.sampled_from(VALUES)),
    st.tuples(st.just("set_param"), st.just("charset"), st.sampled_from(["utf-8", "latin-1"])),
    st.tuples(st.just("set_boundary"), st.just(""), st.sampled_from(["b1", "b2"])),
    st.tuples(st.just("set_default_type"), st.just(""), st.sampled_from(["text/plain", "message/rfc822"])),
)


def _stdlib_get(msg: _CappedMessage, name: str) -> object:
    for key, value in msg._headers:  # type: ignore[attr-defined]  # the stdlib's own list, as Message.get walks it
        if key.lower() == name.lower():
            return msg.policy.header_fetch_parse(key, value)
    return None


@given(st.lists(field, max_size=8), st.lists(change, max_size=6))
def test_get_gives_what_the_walk_over_the_fields_gives(
    fields: list[tuple[str, str]], changes: list[tuple[str, str, str]]
) -> None:
    raw = "".join(f"{name}: {value}\r\n" for name, value in fields) + "\r\nbody\r\n"
    msg = BytesParser(policy=_POLICY).parsebytes(raw.encode())
    assert isinstance(msg, _CappedMessage)
    for what, name, value in changes:
        for asked in NAMES:
            assert msg.get(asked) == _stdlib_get(msg, asked)
            walked = _stdlib_get(msg, asked)
            assert msg.get(asked, "none") == ("none" if walked is None else walked)
        assert msg.get_content_type() == Message.get_content_type(msg)  # its `get` checked above
        try:
            if what == "add":
                msg[name] = value
            elif what == "delete":
                del msg[name]
            elif what == "replace":
                msg.replace_header(name, value)
            elif what == "set_param":
                msg.set_param(name, value)
            elif what == "set_boundary":
                msg.set_boundary(value)
            else:
                msg.set_default_type(value)
        except (KeyError, ValueError, TypeError, AttributeError, MessageError):
            continue  # no such field to replace, a value the policy refuses: nothing changed
    for asked in NAMES:
        assert msg.get(asked) == _stdlib_get(msg, asked)
    assert msg.get_content_type() == Message.get_content_type(msg)
