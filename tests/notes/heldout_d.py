"""The fourth held-out set (D): written after every change made for sets A to C; since its first run it is
a development set too.

Its first run, untouched: 82 notes, 72 read right, 4 not understood, 6 scored wrong — 1 a natural
question the row's exact wording did not allow ("When does the workflow run next?") and 5 real
misreadings: "the answer's #x" keeping "the answer's" in the value, "…; tell it if it asks" read as a
second answer "it", "any details it asks for" read as a question about "details", "say no to the plan"
pushing back with a stock sentence instead of rejecting, and "connect Sheets, but use a credential that
will fail" read as two credentials. Those classes and the refusals ("waiting for each", "set up Notion
by hand", "make them up", "if it's unsure which channel") were then fixed as classes. The untouched
held-out set is ``heldout.py`` (E).
"""

from __future__ import annotations

from tests.notes.expect import APPROVE, REFUSE, REJECT, A, C, D, H, L, P, R, Row, S, T, U, W

HELDOUT_D: list[Row] = [
    # answers
    ("If it asks for the Slack channel, the answer's #cust-escalations.", [A("channel", "#cust-escalations", False)]),
    ("When it wants an email, give it helpdesk@initech.example.", [A("email", "helpdesk@initech.example", True)]),
    (
        "Should it ask for an endpoint, it's https://hooks.zorg.example/in",
        [A("url", "https://hooks.zorg.example/in", False)],
    ),
    ("In case it asks about the repo, octo/widgets.", [A("repo", "octo/widgets", False)]),
    ("Use every 5 minutes for the schedule if it asks.", [A("schedule", "every 5 minutes", False)]),
    ("If it's unsure which channel, reply with #ml-alerts.", [A("channel", "#ml-alerts")]),
    ("When asked who should get it, say team-leads@acme.example", [A("email", "team-leads@acme.example", True)]),
    ("If asked for a limit, 1000.", [A("number", "1000", False)]),
    ("The channel to use is #deploy-log; tell it if it asks.", [A("channel", "#deploy-log", False)]),
    ('If it asks which sheet, say "Expenses FY25".', [A("spreadsheet", "Expenses FY25", False)]),
    ("When the bot asks for a path, answer /webhooks/github", [A("path", "/webhooks/github", True)]),
    # declines
    ("Don't give it an email address.", [D("email")]),
    ("If it wants the channel, decline.", [D("channel", False)]),
    ("Refuse to hand over the token.", [D("token")]),
    ("The user won't say which repo.", [D("repo")]),
    ("When asked for the URL, say you don't have it yet.", [D("url", True)]),
    ("Keep the spreadsheet to yourself.", [D("spreadsheet")]),
    ("Don't share any details it asks for.", [D("any")]),
    ("If it asks for the recipient, say it's not decided.", [D("email", False)]),
    ("Avoid naming the channel.", [D("channel")]),
    ("Withhold the webhook URL even if it insists.", [D("url")]),
    # plans
    ("When the plan appears, approve it.", [APPROVE(required=True)]),
    (
        "Reject the first plan: it should send an email instead. Approve the revised one.",
        [P("send an email instead", 1, "approve")],
    ),
    ("If it shows a plan with Slack in it, push back until Slack is gone.", [P(absent=("slack",), then="approve")]),
    ("Say no to the plan.", [REJECT()]),
    ("Push back on the plan once, asking for a daily schedule, then accept.", [P("daily schedule", 1, "approve")]),
    (
        "When the plan comes up, object that the Notion step is unnecessary, and approve once it's gone.",
        [P("Notion step is unnecessary", absent=("notion",), then="approve", required=True)],
    ),
    ("Accept the plan as it is.", [APPROVE()]),
    ("Approve only once the plan mentions error handling.", [P(present=("error", "handling"), then="approve")]),
    ("Decline the plan twice, saying it's too slow, then approve it.", [P("too slow", 2, "approve")]),
    (
        "When you see the plan, tell it to drop the HTTP step and then approve the new plan.",
        [P("drop the HTTP step", 1, "approve", required=True)],
    ),
    # holds
    ("Keep insisting.", [H()]),
    ("Push three more times.", [H(3)]),
    ("If it says no, insist twice.", [H(2)]),
    ("Press harder, one more time.", [H(1)]),
    ("Keep pushing for it to email the password.", [H(None, "~email the password")]),
    ("Don't cave.", [H()]),
    ("Repeat your request once more and then accept its answer.", [H(1)]),
    # tones
    ("Sound annoyed.", [T()]),
    ("Be extremely polite.", [T()]),
    ("You're irritated.", [T()]),
    ("Keep your replies short.", [T()]),
    ("Friendly tone.", [T()]),
    ("Seem a bit unsure.", [T()]),
    # says
    ("Ask whether it can also send a Teams message.", [S("Can it also send a Teams message?")]),
    ("Tell it that the report should go out at 9.", [S("The report should go out at 9.")]),
    ("Ask when the workflow runs next.", [S("When does the workflow run next?")]),  # widened after the first run
    ("Say that's all for now.", [S("That's all for now.")]),
    ("Ask it to rename the workflow to Inbox zero.", [S("Rename the workflow to Inbox zero.")]),
    ("Let it know the webhook is live.", [S("The webhook is live.")]),
    ('Reply "sounds good".', [S("sounds good")]),
    ("Ask what the workflow does when the sheet is empty.", [S("~the sheet is empty")]),
    ("Tell it you're not happy with the naming.", [S("I'm not happy with the naming.")]),
    ("Thank it and say you'll be back tomorrow.", [S("~back tomorrow")]),
    # lists
    ("Send these one at a time, waiting for each.", [L(0)]),
    ("Ask for the changes separately: move it to 6pm, then add a filter on status.", [L(2)]),
    ("Send each change in a separate message:\n1. use #ops\n2. add Slack alerts\n3. rename it", [L(3)]),
    ("One per message.", [L(0)]),
    # credentials
    ("Connect Gmail when the card shows, and skip Slack.", [C("gmail"), C("slack", "defer")]),
    ("Leave the Slack credential for later.", [C("slack", "defer")]),
    ("Create a new GitHub credential when prompted.", [C("github", new=True)]),
    ('When asked which Gmail account, choose "Support inbox".', [C("gmail", names=("Support inbox",))]),
    ("The Slack token is invalid on purpose.", [C("slack", working=False)]),
    ("Defer every credential.", [C((), "defer")]),
    ("Set up Notion by hand.", [C("notion")]),
    ("Connect Google Sheets, but use a credential that will fail.", [C("googlesheets", working=False)]),
    # runs
    ("Run the workflow before answering.", [R()]),
    ("Before replying, test the workflow yourself.", [R()]),
    ("Trigger a run yourself first.", [R()]),
    # web
    ("Don't let it browse.", [W(False)]),
    ("Permit internet access if it asks.", [W(True)]),
    ("Deny any web lookups.", [W(False)]),
    # as usual
    ("Answer everything else with reasonable defaults.", [U()]),
    ("Other details: make them up.", [U()]),
    # mixed
    (
        "If asked for the channel, #sales-eu; if asked for the email, decline.",
        [A("channel", "#sales-eu", False), D("email", False)],
    ),
    ("Sound impatient and insist once more.", [T(), H(1)]),
    # not followable: must be refused
    ("Behave like a customer who has never seen a workflow.", REFUSE),
    ("If it takes too long, complain.", REFUSE),
    ("Approve the plan if it looks right to you.", REFUSE),
    ("Reply in French only.", REFUSE),
    ("If it mentions Zapier, ask about pricing.", REFUSE),
    ("Pretend to misunderstand the first answer.", REFUSE),
]
