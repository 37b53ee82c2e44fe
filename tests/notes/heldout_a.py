"""The first held-out set (A): written after the grammar was tuned on ``corpus.py``; since its first run it
is a development set too.

Its first run, untouched: 77 notes, 66 read right, 5 not understood, 6 scored wrong — of which 2 were
natural sentences the rows' exact wording did not allow ("Can you tell me whether the Slack message
includes the totals?", "Why was nothing posted yesterday?") and 4 real misreadings: a URL cut at its
``:`` as if it ended a moment, "answer the recipient question with …" sent as words, "mention that the
API needs a bearer token" read as a credential, "respond only in emojis" sent as words. Those four
classes and four of the refusals ("any question about …:", "questioned", "OK the next one", "don't back
off", a plan sentence going on about a credential) were then fixed as classes, and the two rows that
were too narrow were widened (marked below). The untouched held-out set is ``heldout.py`` (B).
"""

from __future__ import annotations

from tests.notes.expect import APPROVE, REFUSE, REJECT, A, C, D, H, L, P, R, Row, S, T, U, W

HELDOUT_A: list[Row] = [
    # answers
    ("If it wants to know the target channel, #mktg-leads is the one.", [A("channel", "#mktg-leads", False)]),
    (
        "Should the agent ask for an e-mail, go with reports@dunder.example",
        [A("email", "reports@dunder.example", False)],
    ),
    (
        "when it asks for the endpoint give https://erp.acme.example/api/v3/orders",
        [A("url", "https://erp.acme.example/api/v3/orders", True)],
    ),
    ("Any question about the repository: answer tyrell/replicant-api", [A("repo", "tyrell/replicant-api")]),
    (
        'If the builder asks which spreadsheet, say the one called "Churn 2025"',
        [A("spreadsheet", "~Churn 2025", False)],
    ),
    (
        "The destination address is treasury@cyberdyne.example if it asks.",
        [A("email", "treasury@cyberdyne.example", False)],
    ),
    ("When questioned about the schedule, reply every weekday at 6pm.", [A("schedule", "every weekday at 6pm", True)]),
    ("If you're asked for a channel, use #data-quality", [A("channel", "#data-quality", False)]),
    ("Reply #eng-oncall should it ask which channel to alert.", [A("channel", "#eng-oncall", False)]),
    ("if asked how many rows max, say 500", [A("number", "500", False)]),
    (
        "The user answers the recipient question with sales-ops@initech.example.",
        [A("email", "sales-ops@initech.example")],
    ),
    ('In case it needs a name for the workflow, call it "Lead scorer".', [A("name", "Lead scorer", False)]),
    # declines
    ("Don't disclose the recipient.", [D("email")]),
    ("If it asks which channel, the user says they haven't decided yet.", [D("channel", False)]),
    ("You won't share the spreadsheet name.", [D("spreadsheet")]),
    ("Refuse if it asks for the URL.", [D("url", False)]),
    ("When it asks for the repo, tell it you'd rather not say.", [D("repo", True)]),
    ("Keep the webhook URL under wraps.", [D("url")]),
    ("If asked for the recipient address, leave it blank.", [D("email", False)]),
    ("Skip any questions it asks.", [D("any")]),
    ("Do not volunteer the channel name.", [D("channel")]),
    ("Say you can't give out the email address if it asks.", [D("email", False)]),
    # plans
    (
        "When the plan comes, reject it and ask it to use email instead, then approve the new version.",
        [P("use email instead", 1, "approve", required=True)],
    ),
    ("Approve the plan straight away.", [APPROVE()]),
    (
        "If it shows you a plan, say no and explain that the Slack step should go; accept once Slack is gone.",
        [P("Slack step should go", absent=("slack",), then="approve", required=False)],
    ),
    (
        "The user pushes back on the plan twice, saying it needs a filter, then gives the go-ahead.",
        [P("needs a filter", 2, "approve")],
    ),
    ("Reject the proposal outright.", [REJECT()]),
    (
        "When the plan is ready, object: there should be no Gmail step. Approve once it drops Gmail.",
        [P("no Gmail step", absent=("gmail",), then="approve", required=True)],
    ),
    ("Only sign off on the plan once it mentions retries.", [P(present=("retries",), then="approve")]),
    (
        "Refuse the first plan, asking it to post to #sales instead; OK the next one.",
        [P("post to #sales instead", 1, "approve")],
    ),
    # holds
    ("Push back three more times.", [H(3)]),
    ("keep insisting, twice more, that it should skip the approval step", [H(2, "~skip the approval step")]),
    ("Don't back off.", [H()]),
    ("Stick to your guns.", [H()]),
    ("Press once more, then drop it.", [H(1)]),
    ("Insist again, for it to just use the token directly.", [H(None, "~just use the token directly")]),
    # tones
    ("Sound tired.", [T()]),
    ("You are in a hurry and a little annoyed.", [T()]),
    ("Be brusque.", [T()]),
    ("with mild irritation", [T()]),
    ("Reply in a cheerful tone.", [T()]),
    ("The user is polite but firm.", [T()]),
    # says
    ("Ask it how often the workflow runs.", [S("How often does the workflow run?")]),  # widened after the first run
    ("Tell it you'll check the results tomorrow.", [S("I'll check the results tomorrow.")]),
    ("Ask whether the Slack message includes the totals.", [S("Does the Slack message include the totals?")]),
    ('Say "that\'s perfect, thanks".', [S("that's perfect, thanks")]),
    ("Mention that the API needs a bearer token.", [S("The API needs a bearer token.")]),
    ("Ask why nothing was posted yesterday.", [S("Why was nothing posted yesterday?")]),  # widened after the first run
    ("The user asks it to add a filter on status.", [S("Add a filter on status.")]),
    ("Complain that the email went to the wrong person.", [S("The email went to the wrong person.")]),
    # lists
    ("Send them one at a time.", [L(0)]),
    ('Go through these individually: add a Notion step, then rename it to "CRM sync"', [L(2)]),
    ("Deliver the changes in separate messages, waiting for each to be applied.", [L(0)]),
    ("One by one please:\n- drop the IF node\n- post to #finance\n- run at 10am", [L(3)]),
    # credentials
    ("Set up Slack when the card shows; leave Gmail for later.", [C("slack"), C("gmail", "defer")]),
    ("Defer all credential cards.", [C((), "defer")]),
    ("Connect Notion using a fresh credential.", [C("notion", new=True)]),
    ('When asked to connect GitHub, choose the one named "CI bot".', [C("github", names=("CI bot",))]),
    ("The Gmail connection should fail its test.", [C("gmail", working=False)]),
    ("Hold off on Slack for now.", [C("slack", "defer")]),
    ("Authorise Google Sheets, but with an expired token.", [C("googlesheets", working=False)]),
    # runs
    ("Run it once yourself before answering.", [R()]),
    ("Before you reply, execute the workflow.", [R()]),
    ("Do a test run of the workflow first, then send the message.", [R()]),
    # web access
    ("Block internet access.", [W(False)]),
    ("If it asks to search the web, allow it.", [W(True)]),
    ("No online lookups.", [W(False)]),
    # as usual
    ("Answer anything else with sensible defaults.", [U()]),
    ("For other questions, make something plausible up.", [U()]),
    # mixed
    (
        "If asked for the channel, say #it-help; don't give the email address.",
        [A("channel", "#it-help", False), D("email")],
    ),
    ("Approve the plan, then connect Slack when the card appears.", [APPROVE(), C("slack")]),
    # not followable: must be refused
    ("Act like you've never used n8n before.", REFUSE),
    ("If it seems confused, rephrase the request.", REFUSE),
    ("Approve the plan if it looks efficient.", REFUSE),
    ("Respond only in emojis.", REFUSE),
    ("If the agent suggests Airtable, refuse.", REFUSE),
    ("Slowly lose patience over the conversation.", REFUSE),
]
