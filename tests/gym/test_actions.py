from __future__ import annotations

import time

import pytest

from osint_gym.actions import MAX_ACTION_CHARS, Call, parse_action

PROFILE = Call("get_profile", {"handle_or_id": "@x"})


@pytest.mark.parametrize(
    "action",
    [
        '{"tool": "get_profile", "args": {"handle_or_id": "@x"}}',
        '{"name": "get_profile", "arguments": {"handle_or_id": "@x"}}',
        '{"name": "get_profile", "arguments": "{\\"handle_or_id\\": \\"@x\\"}"}',
        '{"type": "function", "function": {"name": "get_profile", "arguments": {"handle_or_id": "@x"}}}',
        (
            '{"tool_calls": [{"type": "function", "function": {"name": "get_profile", '
            '"arguments": "{\\"handle_or_id\\": \\"@x\\"}"}}]}'
        ),
        '<tool_call>{"name": "get_profile", "arguments": {"handle_or_id": "@x"}}</tool_call>',
        'I will look them up.\n{"tool": "get_profile", "args": {"handle_or_id": "@x"}} and then decide.',
        {"tool": "get_profile", "args": {"handle_or_id": "@x"}},
        [{"name": "get_profile", "arguments": {"handle_or_id": "@x"}}],
    ],
)
def test_every_supported_shape_parses_to_the_same_call(action):
    parsed = parse_action(action)
    assert parsed.ok, parsed.error
    assert parsed.calls == (PROFILE,)


def test_parallel_calls_from_tags_and_lists():
    two = "<tool_call>{\"name\": \"get_post\", \"arguments\": {\"post_id\": \"post_1\"}}</tool_call>\n" \
          "<tool_call>{\"name\": \"get_post\", \"arguments\": {\"post_id\": \"post_2\"}}</tool_call>"
    assert [c.args["post_id"] for c in parse_action(two).calls] == ["post_1", "post_2"]
    listed = parse_action('[{"tool": "get_post", "args": {"post_id": "post_1"}}, {"answer": "person_1"}]')
    assert [c.name for c in listed.calls] == ["get_post", "answer"]


def test_shortcuts_and_plain_answers():
    assert parse_action('{"answer": "person_3"}').calls == (Call("answer", {"entity_id": "person_3"}),)
    assert parse_action("Answer: person_3").calls == (Call("answer", {"entity_id": "person_3"}),)
    assert parse_action('final answer = "person_3"').calls == (Call("answer", {"entity_id": "person_3"}),)
    edge = parse_action('{"add_edge": ["account_1", "alias_of", "person_3"]}').calls[0]
    assert edge == Call("add_edge", {"src": "account_1", "rel": "alias_of", "dst": "person_3"})


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("", "empty action"),
        ("hello there", "no action found"),
        ('{"args": {}}', "needs a 'tool'"),
        ('{"tool_calls": "x"}', "must be a list"),
        ('{"name": "get_post", "arguments": "{bad"}', "not valid JSON"),
        ("<tool_call>{oops}</tool_call>", "does not contain valid JSON"),
        ('{"add_edge": ["a", "b"]}', r"\[src, rel, dst\]"),
        ("[]", "empty list"),
        ("[1, 2]", "must be a JSON object"),
        (42, "a string or a JSON object"),
        (None, "a string or a JSON object"),
        ("x" * (MAX_ACTION_CHARS + 1), "characters long"),
        ("[" * 100_000 + "]" * 100_000, "characters long"),
    ],
)
def test_malformed_actions_give_typed_failures(action, message):
    parsed = parse_action(action)
    assert not parsed.ok and parsed.calls == ()
    assert parsed.error and __import__("re").search(message, parsed.error)


def test_deep_nesting_within_the_length_limit_does_not_raise():
    deep = "[" * 8000 + "]" * 8000
    parsed = parse_action(deep)
    assert not parsed.ok


def test_parsing_is_bounded_in_time():
    nasty = ["{" * 8000, "{" + '"a":' * 4000, "[{" * 4000, ("x {" * 5000)[:MAX_ACTION_CHARS], "<tool_call>" * 1000]
    for text in nasty:
        t0 = time.perf_counter()
        parse_action(text)
        assert time.perf_counter() - t0 < 0.25, text[:20]
