"""The second held-out set (B): written after every change made for set A; since its first run it is a
development set too.

Its first run, untouched: 86 notes, 71 read right, 6 not understood, 9 scored wrong — 1 a natural
question the row's exact wording did not allow ("Can you tell me which node sends the email?") and 8
real misreadings: a channel answer whose question's words named no detail ("where to send the
alerts"), "…when the channel question comes" and "tell it that hasn't been decided" taken as words to
send, "keep insisting that it skip the credential" read as a credential, "ask for it again once more",
"write everything in German", "ask follow-up questions until …" sent as words, and "if it mentions
costs, push back" followed although the scripted user cannot see that moment. Those classes and the
refusals ("Channel, if asked: …", "the user doesn't share …", "to the point", "individual messages",
"before sending this", "don't allow any internet access") were then fixed as classes. The untouched
held-out set is ``heldout.py`` (C).
"""

from __future__ import annotations

from tests.notes.expect import APPROVE, REFUSE, REJECT, A, C, D, H, L, P, R, Row, S, T, U, W

HELDOUT_B: list[Row] = [
    # answers
    ("If it asks where to send the alerts, tell it #infra-alarms", [A("alerts", "#infra-alarms", False)]),
    ("Should they need the mailbox, it's invoices@oceanic.example", [A("email", "invoices@oceanic.example", False)]),
    (
        "When it asks for an API URL, answer https://api.wonka.example/v2/batches",
        [A("url", "https://api.wonka.example/v2/batches", True)],
    ),
    ("If the agent wants the GitHub repo, it's globex/hr-portal.", [A("repo", "globex/hr-portal", False)]),
    ("Channel, if asked: #quarterly-close", [A("channel", "#quarterly-close", False)]),
    ("The user replies #sec-ops when the channel question comes.", [A("channel", "#sec-ops")]),
    ("If it needs an address to email, use rita@bluth.example.", [A("email", "rita@bluth.example", False)]),
    ("When asked how often, say every 10 minutes", [A("schedule", "every 10 minutes", True)]),
    ("If asked which table, tell it the table is called signups_q3", [A("table", "~signups_q3", False)]),
    (
        'When it asks which spreadsheet to use, name the "Renewals tracker" sheet.',
        [A("spreadsheet", "Renewals tracker", True)],
    ),
    ("should it ask for a webhook path, /hooks/refunds", [A("path", "/hooks/refunds", False)]),
    ("The alert threshold is 75 if it asks.", [A("number", "75", False)]),
    (
        "In case the assistant asks for the recipient, reply with payroll@sterling.example and nothing else.",
        [A("email", "~payroll@sterling.example", False)],
    ),
    # declines
    ("Don't give out the API token.", [D("token")]),
    ("If asked for the spreadsheet, say you don't know which one yet.", [D("spreadsheet", False)]),
    ("Withhold the channel name if it comes up.", [D("channel", False)]),
    ("The user doesn't share the recipient's email.", [D("email")]),
    ("When it asks for the repo, skip it.", [D("repo", True)]),
    ("Refuse to provide a URL.", [D("url")]),
    ("Keep quiet about the channel.", [D("channel")]),
    ("Don't reveal anything it asks for.", [D("any")]),
    ("If it wants the webhook path, tell it that hasn't been decided.", [D("path", False)]),
    ("You'd prefer not to give the schedule.", [D("schedule")]),
    # plans
    (
        "When the plan appears, push back and ask for a Teams message instead of Slack; approve the revised plan.",
        [P("Teams message instead of Slack", 1, "approve", required=True)],
    ),
    ("Approve whatever plan it shows.", [APPROVE()]),
    ("Reject the plan.", [REJECT()]),
    (
        'If there\'s a plan, reject it once with "add a retry step" and then approve.',
        [P("add a retry step", 1, "approve")],
    ),
    ("Push back on any plan that includes Gmail until Gmail is removed.", [P(absent=("gmail",), then="approve")]),
    (
        "When the plan is shown, tell it it's missing error handling. Approve once error handling is added.",
        [P("missing error handling", present=("error", "handling"), then="approve", required=True)],
    ),
    ("Accept the plan once it no longer has a Notion step.", [P(absent=("notion",), then="approve")]),
    (
        "On the first plan, say it should post to #ops instead, and approve the second plan.",
        [P("post to #ops instead", 1, "approve")],
    ),
    ("When it shows the plan, OK it.", [APPROVE(required=True)]),
    ("Object to the plan twice, saying it's too complex, then approve it.", [P("too complex", 2, "approve")]),
    # holds
    ("keep pushing", [H()]),
    ("Insist twice more.", [H(2)]),
    ("Push one more time for it to add the password to the URL.", [H(1, "~add the password to the URL")]),
    ("Hold firm, three times if needed.", [H(3)]),
    ("Keep insisting that it skip the credential and paste the key.", [H(None, "~skip the credential")]),
    ("Don't let it go.", [H()]),
    ("Ask for it again once more, then give up.", [H(1)]),
    # tones
    ("Be impatient.", [T()]),
    ("Sound a little stressed.", [T()]),
    ("Stay polite.", [T()]),
    ("The user is clearly frustrated.", [T()]),
    ("Write casually.", [T()]),
    ("in an irritated tone", [T()]),
    ("Be short and to the point.", [T()]),
    # says
    ("Ask what it will do if the API times out.", [S("What will it do if the API times out?")]),
    ("Tell it the webhook fired twice last night.", [S("The webhook fired twice last night.")]),
    ("Say you're happy with the result.", [S("I'm happy with the result.")]),
    ("Ask whether it can send a test message.", [S("Can it send a test message?")]),
    ("Reply: 'all good, thanks'", [S("all good, thanks")]),
    ("Let it know the token lives in the vault.", [S("The token lives in the vault.")]),
    ("Ask it to also log each run to a sheet.", [S("Also log each run to a sheet.")]),
    ("The user thanks the agent.", [S("Thanks")]),
    ("Ask which node sends the email.", [S("Which node sends the email?")]),
    ("Point out that the time zone is Europe/Lisbon.", [S("The time zone is Europe/Lisbon.")]),
    # lists
    ("One at a time, please.", [L(0)]),
    ("Send these as separate messages: add a Gmail step, then change the time to 7am.", [L(2)]),
    ("Split the list into individual messages and wait for each to be done.", [L(0)]),
    ("Send them one after the other:\n1. rename it to Inbox triage\n2. post to #triage\n3. run hourly", [L(3)]),
    ("Ask for each change separately.", [L(0)]),
    # credentials
    ("Connect GitHub when asked; skip Notion.", [C("github"), C("notion", "defer")]),
    ("Leave every credential unconnected.", [C((), "defer")]),
    ("When the Gmail card shows up, create a new credential.", [C("gmail", new=True)]),
    ('Pick the Slack credential called "Alerts bot".', [C("slack", names=("Alerts bot",))]),
    ("The Notion credential is expired.", [C("notion", working=False)]),
    ("Set up Slack manually and defer Google Sheets.", [C("slack"), C("googlesheets", "defer")]),
    ("Connect Teams with a token that will be rejected.", [C("microsoftteams", working=False)]),
    ("Don't set up any credentials.", [C((), "defer")]),
    # runs
    ("Run the workflow yourself before sending this.", [R()]),
    ("Execute it once for real first.", [R()]),
    ("Before answering, give it a test run.", [R()]),
    # web
    ("Deny web search.", [W(False)]),
    ("Allow it to browse the docs when it asks.", [W(True)]),
    ("Don't allow any internet access.", [W(False)]),
    # as usual
    ("Invent sensible values for everything else.", [U()]),
    ("Any other question: answer as usual.", [U()]),
    # mixed
    (
        "When asked for the channel, give #hr-bots. Don't share the email address.",
        [A("channel", "#hr-bots", True), D("email")],
    ),
    ("Sound rushed and ask whether it's done yet.", [T(), S("~done yet?")]),
    # not followable: must be refused
    ("Play a skeptical security reviewer.", REFUSE),
    ("If it gets confused, simplify your request.", REFUSE),
    ("Approve the plan if it's cheap to run.", REFUSE),
    ("Write everything in German.", REFUSE),
    ("Ask follow-up questions until you understand it.", REFUSE),
    ("If it mentions costs, push back.", REFUSE),
]
