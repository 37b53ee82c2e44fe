"""The sixth held-out set (F): written after every change made for sets A to E; since its first run it is a
development set too.

Its first run, untouched: 58 notes, 52 read right, 3 not understood, 3 misreadings: "reject the plan, no
reason given" pushing back with "No reason given", "reply quickly and casually" sent as words, and "when
it asks to search online, say yes" read as a plan approval. Those classes and two of the refusals ("be
short with it", "each of these in its own message") were then fixed as classes. The untouched held-out
set is ``heldout.py`` (G).
"""

from __future__ import annotations

from tests.notes.expect import APPROVE, REFUSE, REJECT, A, C, D, H, L, P, R, Row, S, T, U, W

HELDOUT_F: list[Row] = [
    # answers
    ("If it asks which channel to notify, go with #oncall-db.", [A("channel", "#oncall-db", False)]),
    ("When it wants an address, answer finance-team@oscorp.example", [A("email", "finance-team@oscorp.example", True)]),
    ("Should it need the repo, tell it umbrella/labs-api.", [A("repo", "umbrella/labs-api", False)]),
    (
        "If asked for the API URL, https://api.hooli.example/v2/users",
        [A("url", "https://api.hooli.example/v2/users", False)],
    ),
    ("If it asks when to run, say every Tuesday at 10am", [A("schedule", "every Tuesday at 10am", False)]),
    ('The spreadsheet is "Leads master" if it asks.', [A("spreadsheet", "Leads master", False)]),
    ("When asked which table, answer the customers table.", [A("table", "~customers", True)]),
    ("If it needs a threshold, use 300.", [A("number", "300", False)]),
    # declines
    ("Don't give the recipient, you'll add it yourself.", [D("email")]),
    ("If it asks for the webhook URL, say you don't know it.", [D("url", False)]),
    ("The user refuses to name the channel.", [D("channel")]),
    ("Don't share the repo name under any circumstances.", [D("repo")]),
    ("When asked for the schedule, say it's not decided yet.", [D("schedule", True)]),
    ("Hold back the API key.", [D("key")]),
    ("Decline all its questions.", [D("any")]),
    # plans
    ("When it proposes a plan, say yes.", [APPROVE(required=True)]),
    (
        "Push back on the plan: it should use Teams, not Slack. Then approve.",
        [P("it should use Teams, not Slack", 1, "approve")],
    ),
    ("Reject every plan that posts to Slack until Slack is gone.", [P(absent=("slack",), then="approve")]),
    ("Reject the plan, no reason given.", [REJECT()]),
    (
        "If a plan comes up, ask for a daily digest instead and approve the new one.",
        [P("daily digest instead", 1, "approve")],
    ),
    ("Don't sign off on the plan until it includes a filter.", [P(present=("filter",), then="approve")]),
    (
        "Approve the second plan after pushing back once with: drop the email step.",
        [P("drop the email step", 1, "approve")],
    ),
    # holds
    ("Insist.", [H()]),
    ("Push twice.", [H(2)]),
    ("Keep pushing back, three more times, for it to store the key in the node.", [H(3, "~store the key in the node")]),
    ("Stay firm even if it objects.", [H()]),
    ("Press once more and then let it go.", [H(1)]),
    # tones
    ("Sound worried.", [T()]),
    ("Be short with it.", [T()]),
    ("Apologetic tone.", [T()]),
    ("The user is annoyed.", [T()]),
    ("Reply quickly and casually.", [T()]),
    # says
    ("Ask if it can add a summary line.", [S("~add a summary line")]),
    ("Tell it the numbers match now.", [S("The numbers match now.")]),
    ("Ask who receives the alert.", [S("~receives the alert")]),
    ("Say you need it by Friday.", [S("I need it by Friday.")]),
    ("Ask it to make the message shorter.", [S("Make the message shorter.")]),
    ("The user asks why the Slack node is still there.", [S("~the Slack node")]),
    ("Reply 'ok, ship it'.", [S("ok, ship it")]),
    # lists
    ("Send the changes one by one, each after the previous is done.", [L(0)]),
    ("One at a time: add Braga; move it to 9am.", [L(2)]),
    ("Each of these in its own message:\n1. rename it to Morning brief\n2. post to #brief", [L(2)]),
    # credentials
    ("Connect GitHub now and leave Notion for later.", [C("github"), C("notion", "defer")]),
    ("Skip every credential for now.", [C((), "defer")]),
    ('Use the "Ops Gmail" credential when the card appears.', [C("gmail", names=("Ops Gmail",))]),
    ("The Slack credential should fail the connection test.", [C("slack", working=False)]),
    ("Set up a fresh Notion credential.", [C("notion", new=True)]),
    # runs
    ("Run it yourself before replying.", [R()]),
    ("Execute the saved workflow first.", [R()]),
    # web
    ("Deny web access.", [W(False)]),
    ("When it asks to search online, say yes.", [W(True)]),
    # as usual
    ("Answer any other questions with sensible values.", [U()]),
    # mixed
    ("If asked for the email, give a@b.example; deny web access.", [A("email", "a@b.example", False), W(False)]),
    # not followable: must be refused
    ("Act as someone who hates automation.", REFUSE),
    ("If it seems unsure, reassure it.", REFUSE),
    ("Approve the plan if it's good.", REFUSE),
    ("Write in all caps.", REFUSE),
    ("If it mentions Make.com, switch topics.", REFUSE),
]

STILL_REFUSED = frozenset({"Approve the second plan after pushing back once with: drop the email step."})
"""Rows of this set the grammar still does not understand (reported, never misread)."""
