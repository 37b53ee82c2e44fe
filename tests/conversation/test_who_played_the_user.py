"""Who played the user is recorded with every run: scripted, a model (name and prompt version), or nobody."""

from __future__ import annotations

import pytest

from tests.conversation.helpers import drive, echo_agent, make_case
from tests.conversation.test_model_proxy import _models
from tests.fakes.openai_server import FakeOpenAI
from tests.models.answers import DONE, follow_up
from threadcase.models import ModelSettings
from threadcase.records import UserPlayer
from threadcase.report.console import run_header
from threadcase.user_proxy import user_player
from threadcase.user_proxy.prompts import PROMPT_VERSION

pytestmark = pytest.mark.anyio


async def test_a_scripted_run_says_so_and_tracks_its_directives() -> None:
    case = make_case(["Build a flow", "Rename it to Rota [sound relieved]"])
    record = (await drive(case, agent=echo_agent)).record
    assert record.user == UserPlayer(kind="scripted")
    assert record.script is not None
    assert record.script.tracked
    assert [(d.turn, d.fired) for d in record.script.directives] == [(1, True)]


async def test_a_model_run_names_the_model_and_the_prompt_version(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(follow_up("Rename it to Rota"), DONE)
    case = make_case(["Build a flow", "Rename it to Rota"])
    record = (await drive(case, agent=echo_agent, models=_models(url))).record
    assert record.user == UserPlayer(kind="model", model="fake-proxy", prompt_version=PROMPT_VERSION)
    assert record.script is not None
    # The model reads the notes as text: only which turns it delivered is tracked.
    assert not record.script.tracked
    assert record.script.directives == []
    assert [(t.turn, t.delivered, t.message) for t in record.script.turns] == [(1, True, 1)]


async def test_a_single_prompt_run_had_no_simulated_user() -> None:
    record = (await drive(make_case(["Build a flow"]), agent=echo_agent)).record
    assert record.user == UserPlayer(kind="auto-approve")
    assert record.script is None


def test_the_run_header_says_who_plays_the_user_and_who_judges() -> None:
    assert run_header(user_player(ModelSettings()), None) == (
        "threadcase run — simulated user: scripted (no proxy model configured); "
        "judge: none (process and outcome expectations not judged)"
    )
    model = user_player(ModelSettings(proxy_model="gpt-x"))
    assert run_header(model, "judge-y") == (
        f"threadcase run — simulated user: model gpt-x (prompt {PROMPT_VERSION}); judge: judge-y"
    )
