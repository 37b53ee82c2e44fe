"""The script: splitting notes, delivery tracking, windows (which turn's notes govern when)."""

from __future__ import annotations

from threadcase.case.directives import Credential, Decline
from threadcase.case.notes import Script, split_items, split_notes, strip_notes


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
    script = _script("Build it", "Make it daily", "[push back on the plan: add retries]")
    assert script.pending_direction
    assert script.next_scripted_message() == ("Make it daily", script.turns[1])
    # The note-only turn is passed silently; nothing more to say.
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


def test_a_one_at_a_time_note_without_a_list_is_not_understood() -> None:
    turn = _script("Build it", "Change the channel [send these one at a time]").turns[1]
    assert turn.list_missing
    assert turn.not_understood == [
        (
            "send these one at a time",
            "one item at a time, but neither the note nor the turn holds a list of two or more",
        )
    ]


def test_say_directive_in_a_note_only_turn() -> None:
    script = _script(
        "Speed up the query", "[Push back twice on adding the tenant filter: say it is blocking the release.]"
    )
    assert script.remaining_spoken() == ["It is blocking the release.", "It is blocking the release."]
    assert _script("x", "[decline to say which channel]").remaining_spoken() == []


def test_declines_read_every_turn_for_the_model_user() -> None:
    script = _script("Post a Slack message", "Thanks", "[If asked for the Slack channel, decline to say]")
    assert script.declines("Which Slack channel should I post to?")
    assert not script.declines("Who should receive the email?")


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


# --- windows ---------------------------------------------------------------------------------------


def _active(script: Script) -> list[int]:
    return [t.index for t in script.active_turns()]


def test_a_turn_governs_from_the_message_before_it_until_the_message_after_it() -> None:
    script = _script(
        "Every morning post the KPI report to Slack",
        "[If it asks which channel, answer #kpi-daily.] Thanks.",
        "[Refuse to say the address if asked.] Also email it.",
        "[When the plan is shown, approve it]",
    )
    # The run answering the opening: the opener's and turn 1's notes; turn 2's is still ahead.
    assert _active(script) == [0, 1]
    assert script.next_scripted_message() == ("Thanks.", script.turns[1])
    script.advance()
    assert _active(script) == [1, 2]
    assert script.next_scripted_message() == ("Also email it.", script.turns[2])
    script.advance()
    # Turn 3 says nothing: it governs the run answering turn 2, as turn 2 does.
    assert _active(script) == [2, 3]
    assert script.next_scripted_message() is None
    assert all(script.delivered(t) for t in script.user_turns)


def test_a_decline_in_the_last_turn_does_not_govern_the_first_question() -> None:
    script = _script("Post the report to Slack", "Thanks.", "[Decline if asked for the channel]")
    decline = script.turns[2].directives[0]
    assert isinstance(decline, Decline)
    assert 2 not in _active(script)
    script.next_scripted_message()
    script.advance()
    assert 2 in _active(script)


def test_windows_replay_a_recorded_delivery() -> None:
    script = _script("Build it", "Use #ops", "[When asked for the address, answer a@b.dev]", "Rename it to Z")
    script.replay({1: 1, 3: 2}, messages=2)
    assert [t.index for t in script.active_turns(0)] == [0, 1]
    assert [t.index for t in script.active_turns(1)] == [1, 2, 3]
    # Turn 2 says nothing: it stands between messages 1 and 2 and governs the runs answering both.
    assert [t.index for t in script.active_turns(2)] == [2, 3]


def test_credential_directions_are_read_per_clause() -> None:
    script = _script(
        "Post issues to Slack", "[When the setup card asks for Slack, connect it manually. Leave GitHub for later.]"
    )
    found = [d for d in script.turns[1].directives if isinstance(d, Credential)]
    assert [(d.services, d.action) for d in found] == [(("slack",), "engage"), (("github",), "defer")]
