"""Director notes: parsing, delivery tracking, pending direction, and note interpretation."""

from __future__ import annotations

import pytest

from threadcase.case.notes import Script, credential_direction, split_items, split_notes, strip_notes


def test_split_notes_removes_every_note_and_keeps_spoken_text() -> None:
    spoken, notes = split_notes("Post it to Slack [decline if asked for the channel] every morning.")
    assert spoken == "Post it to Slack every morning."
    assert notes == ["decline if asked for the channel"]


def test_nested_brackets_are_one_note_and_links_are_spoken() -> None:
    spoken, notes = split_notes("See [the docs](https://x.dev) [say [nothing] yet]")
    assert spoken == "See [the docs](https://x.dev)"
    assert notes == ["say [nothing] yet"]


def test_note_only_turn_speaks_nothing() -> None:
    assert strip_notes("[When the credential card appears, set it up]") == ""


def test_split_items_inline_and_lines() -> None:
    assert split_items("Changes: 1. use #ops 2. add a filter 3. rename it to X") == [
        "use #ops",
        "add a filter",
        "rename it to X",
    ]
    assert split_items("- a\n- b") == ["a", "b"]
    assert split_items("no list here, just 1. thing") == []


def _script(*texts: str) -> Script:
    return Script.from_texts([("user", t) for t in texts])


def test_pending_direction_tracks_unsent_turns() -> None:
    script = _script("Build it", "Make it daily", "[push back on any plan without retries]")
    assert script.pending_direction
    assert script.next_scripted_message() == ("Make it daily", script.turns[1])
    # The note-only turn is delivered silently; nothing more to say.
    assert script.next_scripted_message() is None
    assert not script.pending_direction


def test_opener_notes_are_standing_directions() -> None:
    assert _script("Build it [decline the channel]").pending_direction
    assert not _script("Build it").pending_direction


def test_one_at_a_time_list_is_sent_item_by_item() -> None:
    script = _script("Build it", "Please: 1. use #ops 2. add a filter 3. rename it to Y [one at a time]")
    sent = []
    while (nxt := script.next_scripted_message()) is not None:
        sent.append(nxt[0])
    assert sent == ["use #ops", "add a filter", "rename it to Y"]


def test_consume_remaining_delivers_everything() -> None:
    script = _script("Build it", "Use #ops", "Send to bob@x.dev")
    assert script.consume_remaining() == ["Use #ops", "Send to bob@x.dev"]
    assert not script.has_more


@pytest.mark.parametrize(
    ("note", "question", "declined"),
    [
        ("If asked for the Slack channel, decline to say", "Which Slack channel should I post to?", True),
        ("If asked for the Slack channel, decline to say", "Who should receive the email?", False),
        ("refuse to answer any question", "Which channel?", True),
        ("Don't give the recipient address", "What is the recipient's email address?", True),
    ],
)
def test_declines(note: str, question: str, declined: bool) -> None:
    assert _script(f"Build it [{note}]").declines(question) is declined


def test_credential_directions() -> None:
    engage = credential_direction("When the Slack credential card appears, set it up manually")
    assert engage is not None
    assert engage.engage
    assert engage.working
    assert engage.applies_to("slackApi")
    assert not engage.applies_to("notionApi")
    named = credential_direction("Connect Slack using the credential named 'Ops Slack'")
    assert named is not None
    assert named.engage
    assert named.names == ("Ops Slack",)
    broken = credential_direction("Set up the GitHub credential, but it should not authenticate")
    assert broken is not None
    assert broken.engage
    assert not broken.working
    defer = credential_direction("Skip the credential setup for now, set it up later")
    assert defer is not None
    assert not defer.engage
    assert credential_direction("decline the channel") is None


def test_list_inside_a_one_at_a_time_note_is_said_item_by_item() -> None:
    note = (
        "[Once the first version is built, ask for these changes one at a time, waiting for each build:\n"
        "1. send it at 07:30 instead of 08:00\n2. add Porto as a second city\n3. only email when rain is forecast]"
    )
    script = _script("Build the weather mail", note)
    assert script.has_more
    said = []
    while (nxt := script.next_scripted_message()) is not None:
        said.append(nxt[0])
    assert said == [
        "send it at 07:30 instead of 08:00",
        "add Porto as a second city",
        "only email when rain is forecast",
    ]
    assert not any("one at a time" in s for s in said)


def test_say_directive_in_a_note_only_turn() -> None:
    script = _script(
        "Speed up the query", "[Push back twice on adding the tenant filter: say it is blocking the release.]"
    )
    assert script.remaining_spoken() == ["It is blocking the release.", "It is blocking the release."]
    assert _script("x", "[decline to say which channel]").remaining_spoken() == []


def test_credential_directions_are_read_per_sentence() -> None:
    script = _script(
        "Post issues to Slack", "[When the setup card asks for Slack, connect it manually. Leave GitHub for later.]"
    )
    slack = script.credential_direction_for("slackApi")
    assert slack is not None
    assert slack.engage
    github = script.credential_direction_for("githubApi")
    assert github is None or not github.engage


def test_scripts_of_the_same_texts_share_parsing_but_never_state() -> None:
    """The parsed turns are cached by their content: one script's delivery, queue and replaced opener
    must not leak into the next iteration's script of the same case."""
    texts = ["Build it [decline if asked for the channel]", "1. use #ops 2. add a filter [one at a time]"]
    first = _script(*texts)
    assert first.next_scripted_message() == ("use #ops", first.turns[1])
    first.turns[0] = first.turns[0].model_copy(update={"spoken": "replaced"})
    second = _script(*texts)
    assert second.opener.spoken == "Build it"
    assert second.next_scripted_message() == ("use #ops", second.turns[1])
    assert second.remaining_spoken() == ["add a filter"]
    # Another text at the same position is parsed for itself.
    assert _script("Build it [say yes]").opener.notes == ("say yes",)
