"""The fifth held-out set (E): written after every change made for sets A to D; since its first run it is
a development set too.

Its first run, untouched: 82 notes, 74 read right, 4 not understood, 4 scored wrong — 1 arguable ("if
it looks finished, say thanks" was read as thanks sent after the build, the turn's own moment; the row
asked for a refusal, and was widened) and 3 real misreadings: "you can't share the repo, so decline if
it asks" declining every question, "say thanks, that's all" losing "that's all", and "if it recommends a
paid plan, decline" taken as a plan review. Those classes and the refusals ("turn the plan down",
"approve once Notion is in it", "each change on its own", "separate messages, please") were then fixed
as classes. The untouched held-out set is ``heldout.py`` (F).
"""

from __future__ import annotations

from tests.notes.expect import APPROVE, REFUSE, REJECT, A, C, D, H, L, P, R, Row, S, T, U, W

HELDOUT_E: list[Row] = [
    # answers
    ("If it asks where it should post, say #support-tier2.", [A("post", "#support-tier2", False)]),
    ("When it needs the address, reply noc@umbrella.example", [A("email", "noc@umbrella.example", True)]),
    ("Should the assistant ask for a repository, give acme-corp/etl-jobs", [A("repo", "acme-corp/etl-jobs", False)]),
    (
        "If it wants a URL, https://api.stark.example/v1/reactors is the one.",
        [A("url", "https://api.stark.example/v1/reactors", False)],
    ),
    ("When asked how often it should run, say hourly.", [A("schedule", "hourly", True)]),
    ("If it asks which data table, tell it the orders_eu table.", [A("table", "~orders_eu", False)]),
    ("Recipient, if it asks: alerts@globex.example", [A("email", "alerts@globex.example", False)]),
    ("In case it wants a channel, use #cs-weekly.", [A("channel", "#cs-weekly", False)]),
    ('When it asks what to name the workflow, say "Stock watcher".', [A("name", "Stock watcher", True)]),
    ("If it asks for a minimum amount, answer 50.", [A("number", "50", False)]),
    ("The user gives #gtm-alerts when asked for the channel.", [A("channel", "#gtm-alerts", True)]),
    # declines
    ("Don't provide the email address, even if asked again.", [D("email")]),
    ("If it asks about the channel, say you'll decide later.", [D("channel", False)]),
    ("Refuse to give the spreadsheet name.", [D("spreadsheet")]),
    ("You can't share the repo, so decline if it asks.", [D("repo", False)]),
    ("Never tell it the password.", [D("password")]),
    ("When asked for the recipient, say there isn't one yet.", [D("email", True)]),
    ("Keep the URL back.", [D("url")]),
    ("The user won't give any details.", [D("any")]),
    ("Don't answer if it asks for the schedule.", [D("schedule", False)]),
    ("Leave the repo blank.", [D("repo")]),
    # plans
    ("When the plan is shown, approve it straight away.", [APPROVE(required=True)]),
    (
        "Reject the plan and ask for Gmail instead of Outlook, then approve the next one.",
        [P("Gmail instead of Outlook", 1, "approve")],
    ),
    (
        "If it shows a plan, object: the Slack step isn't needed. Approve once it no longer mentions Slack.",
        [P("the Slack step isn't needed", absent=("slack",), then="approve")],
    ),
    ("Turn the plan down.", [REJECT()]),
    (
        "Push back on the plan twice, saying it needs error handling, then approve.",
        [P("needs error handling", 2, "approve")],
    ),
    ("Only approve the plan once it has a retry step.", [P(present=("retry",), then="approve")]),
    (
        "When the plan comes, tell it to add a Notion step and approve once Notion is in it.",
        [P("add a Notion step", present=("notion",), then="approve", required=True)],
    ),
    ("Approve the plan without changes.", [APPROVE()]),
    ("Don't approve the plan until Gmail is gone.", [P(absent=("gmail",), then="approve")]),
    ("Reject the first plan, saying it's too many steps, and accept the second.", [P("too many steps", 1, "approve")]),
    # holds
    ("Keep pressing.", [H()]),
    ("Insist two more times.", [H(2)]),
    ("Push once more for it to add the key to the header.", [H(1, "~add the key to the header")]),
    ("Don't back down, push three times.", [H(3)]),
    ("If it refuses, insist again.", [H()]),
    ("Keep at it, twice more.", [H(2)]),
    ("Ask again once, then let it be.", [H(1)]),
    # tones
    ("Sound frustrated.", [T()]),
    ("Be polite.", [T()]),
    ("The user sounds rushed.", [T()]),
    ("Be a little impatient but friendly.", [T()]),
    ("Answer curtly.", [T()]),
    ("Stay calm.", [T()]),
    # says
    ("Ask whether it can post to two channels.", [S("~post to two channels")]),
    ("Tell it the sheet has moved to a new folder.", [S("The sheet has moved to a new folder.")]),
    ("Ask why it picked Gmail.", [S("~picked Gmail")]),
    ("Say thanks, that's all.", [S("~that's all")]),
    ("Ask it to turn on error handling.", [S("Turn on error handling.")]),
    ("Let it know the report is for the board.", [S("The report is for the board.")]),
    ('Reply "perfect".', [S("perfect")]),
    ("Ask what happens when the API returns an error.", [S("~the API returns an error")]),
    ("The user says they'll test it on Monday.", [S("I'll test it on Monday.")]),
    ("Complain that it ignored the filter.", [S("It ignored the filter.")]),
    # lists
    ("Send them one by one.", [L(0)]),
    ("Send each change on its own, waiting for it to be applied: add Lisbon, then set the time to 8am.", [L(2)]),
    ("Ask for these one after another:\n- use #eu-weather\n- add Porto", [L(2)]),
    ("Separate messages, please.", [L(0)]),
    # credentials
    ("Connect Slack when asked, leave GitHub unconnected.", [C("slack"), C("github", "defer")]),
    ("Skip all the credential cards.", [C((), "defer")]),
    ("When the Gmail card appears, set it up with a new credential.", [C("gmail", new=True)]),
    ('Pick the credential named "Ops Notion".', [C("notion", names=("Ops Notion",))]),
    ("The GitHub credential is broken.", [C("github", working=False)]),
    ("Defer Notion.", [C("notion", "defer")]),
    ("Connect Slack with a revoked token.", [C("slack", working=False)]),
    ("Link Google Sheets manually.", [C("googlesheets")]),
    # runs
    ("Run the workflow first, then send the message.", [R()]),
    ("Execute it yourself before you reply.", [R()]),
    ("Test-run it before answering.", [R()]),
    # web
    ("Don't allow web search.", [W(False)]),
    ("Allow browsing when it asks.", [W(True)]),
    ("No internet.", [W(False)]),
    # as usual
    ("For everything else, use defaults.", [U()]),
    ("Answer other questions sensibly.", [U()]),
    # mixed
    (
        "If it asks for the channel, say #qa; skip the Gmail credential.",
        [A("channel", "#qa", False), C("gmail", "defer")],
    ),
    ("Be terse and run the workflow yourself first.", [T(), R()]),
    # not followable: must be refused
    ("Act like a CFO reviewing costs.", REFUSE),
    ("If it looks finished, say thanks.", [S("Thanks")]),  # widened after the first run: the build's moment
    ("Approve the plan if it's simple enough.", REFUSE),
    ("Answer in German.", REFUSE),
    ("If it recommends a paid plan, decline.", REFUSE),
    ("Change the subject halfway.", REFUSE),
]
