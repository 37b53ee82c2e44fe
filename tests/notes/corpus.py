"""A corpus of director notes as case authors write them, with what each must mean.

Written in the words different authors would use — terse, chatty, imperative, conditional (if / when
/ should / in case / once), second person and third person ("the user ..."), British and American —
before the grammar was made to read them, not derived from its patterns. The grammar is tuned
against this corpus; ``heldout.py`` holds a set written afterwards that it is never tuned against.
"""

from __future__ import annotations

from tests.notes.expect import APPROVE, REFUSE, REJECT, A, C, D, H, L, P, R, Row, S, T, U, W

ANSWERS: list[Row] = [
    (
        "Should it want a recipient address, reply with billing@initech.test",
        [A("email", "billing@initech.test", False)],
    ),
    ("In case it asks where the alerts should go, the channel is #sre-pager", [A("channel", "#sre-pager", False)]),
    ("If the agent needs a channel name, give it #finance-bots", [A("channel", "#finance-bots", False)]),
    ("When prompted for the repo, say acme/billing-service", [A("repo", "acme/billing-service", True)]),
    ("if they want an email, use ana.souza@contoso.example", [A("email", "ana.souza@contoso.example", False)]),
    ("The user answers #warehouse when asked which channel.", [A("channel", "#warehouse", True)]),
    (
        "You reply with https://hooks.umbrella.example/v2/intake if it asks for the URL",
        [A("url", "https://hooks.umbrella.example/v2/intake", False)],
    ),
    ('Asked for the spreadsheet? It\'s the "Vendor invoices 2025" sheet.', [A("spreadsheet", "Vendor invoices 2025")]),
    ("recipient: payables@wayne.example", [A("email", "payables@wayne.example", False)]),
    ("channel = #ops-night", [A("channel", "#ops-night", False)]),
    ("Should the bot ask what time, tell it 6:45am", [A("schedule", "6:45am", False)]),
    ("When it asks how often it should run, answer every 15 minutes", [A("schedule", "every 15 minutes", True)]),
    ("If they ask for a threshold, 250 is fine", [A("number", "250", False)]),
    ("If it needs the data table, point it at the customer_events table", [A("table", "~customer_events", False)]),
    ("Give #growth-experiments as the channel if it comes up.", [A("channel", "#growth-experiments", False)]),
    (
        "When the assistant wants to know who should receive the report, tell it cfo@stark.example",
        [A("email", "cfo@stark.example", True)],
    ),
    ("If you get asked which Slack channel to use: #release-train", [A("channel", "#release-train", False)]),
    ("The webhook path is /intake/orders, in case it asks.", [A("path", "/intake/orders", False)]),
    ("Your answer to the channel question is #qa-bots.", [A("channel", "#qa-bots")]),
    (
        'When asked for the sheet name, say it\'s called "Inventory master"',
        [A("spreadsheet", "Inventory master", True)],
    ),
    ("If it wants to know the owner/repo, it is initech/tps-reports", [A("repo", "initech/tps-reports", False)]),
    ("The recipient should be helpdesk@soylent.example.", [A("email", "helpdesk@soylent.example", False)]),
    ("Whenever it asks about the schedule, go with weekdays at 8am", [A("schedule", "weekdays at 8am", False)]),
    (
        "If the builder asks for an endpoint, hand it https://api.globex.example/v1/stock",
        [A("url", "https://api.globex.example/v1/stock", False)],
    ),
    (
        "Once it asks for the address, respond: noreply-reports@hooli.example",
        [A("email", "noreply-reports@hooli.example", True)],
    ),
    ("Tell it to use #customer-success if it asks for a channel.", [A("channel", "#customer-success", False)]),
    ('when it asks what to call the workflow: "Invoice chaser"', [A("name", "Invoice chaser", True)]),
    (
        "If it asks for the email address, it's marta@pied-piper.example.",
        [A("email", "marta@pied-piper.example", False)],
    ),
    ("Use #billing-alerts for the channel.", [A("channel", "#billing-alerts", False)]),
    ("the table is called orders_2024", [A("table", "orders_2024", False)]),
    (
        "If it asks for the repository, answer with octo-org/octo-repo and explain that it's private",
        [A("repo", "~octo-org/octo-repo", False)],
    ),
    ("If asked, say the job should skip weekends.", [A("any", "the job should skip weekends", False)]),
    ("If it asks what the alert channel is, #oncall.", [A("channel", "#oncall", False)]),
    ("Should they ask for a schedule, every Monday at 9am", [A("schedule", "every Monday at 9am", False)]),
    ("When the agent asks for the Slack channel, the answer is #eng-deploys.", [A("channel", "#eng-deploys", True)]),
    (
        "If it queries the destination inbox, tell it ledger@umbrella.example",
        [A("email", "ledger@umbrella.example", False)],
    ),
]

DECLINES: list[Row] = [
    ("Don't hand over the API key; say you'll add it later", [D("key")]),
    ("If it asks for the recipient, don't give one.", [D("email", False)]),
    ("Do not share the channel name with it.", [D("channel")]),
    ("The user won't provide the webhook URL.", [D("url")]),
    ("Keep the spreadsheet name to yourself for now", [D("spreadsheet")]),
    ("If asked about the repo, dodge the question", [D("repo", False)]),
    ("Refuse to share the recipient email", [D("email")]),
    ("You don't know the channel yet — say so if it asks.", [D("channel", False)]),
    ("Don't answer if it asks which address to use.", [D("email", False)]),
    ("When it asks for the API token, withhold it.", [D("token", True)]),
    ("Hold back the destination address.", [D("email")]),
    ("The user refuses to give a schedule.", [D("schedule")]),
    ("Should it ask for the URL, tell it you don't have one yet.", [D("url", False)]),
    ("Never reveal the password.", [D("password")]),
    ("Avoid giving the channel; you haven't picked one.", [D("channel")]),
    ("If they ask for the sheet, skip the question.", [D("spreadsheet", False)]),
    ("Leave the recipient empty.", [D("email")]),
    ("Don't supply a repository if asked", [D("repo", False)]),
    ("Decline every question it asks.", [D("any")]),
    ("Don't answer any of its questions.", [D("any")]),
    ("If asked for the threshold, say you're not sure yet.", [D("number", False)]),
    ("Say you'd prefer not to give the address if it asks", [D("email", False)]),
    ("Keep the email address private.", [D("email")]),
    ("If it wants the channel, say you'll pick one later.", [D("channel", False)]),
    ("Don't pass along the token.", [D("token")]),
    ("In case it asks for the recipient, you can't share that.", [D("email", False)]),
    ("Don't type in the endpoint URL.", [D("url")]),
    ("Won't give the repo name if asked.", [D("repo", False)]),
    ("When it asks for the webhook URL, say there isn't one yet.", [D("url", True)]),
    ("Give no channel.", [D("channel")]),
]

PLANS: list[Row] = [
    (
        "When the plan comes up, ask it to drop the Gmail step, then approve.",
        [P("drop the Gmail step", 1, "approve", required=True)],
    ),
    (
        "If it shows a plan, say it should use Teams instead of Slack and reject it.",
        [P("It should use Teams instead of Slack", 1, required=False)],
    ),
    (
        "Reject the first plan because it has no error handling; approve the next one.",
        [P("no error handling", 1, "approve")],
    ),
    ("Approve the plan as proposed.", [APPROVE()]),
    ("Just accept whatever plan it proposes.", [APPROVE()]),
    ("Turn down the plan.", [REJECT()]),
    (
        "When the plan is presented, push back twice asking for a retry on the HTTP call, then accept.",
        [P("retry on the HTTP call", 2, "approve", required=True)],
    ),
    (
        "On seeing the plan, object that Slack is not needed; approve once Slack is removed.",
        [P("Slack is not needed", absent=("slack",), then="approve", required=True)],
    ),
    ("Don't OK the plan until the Slack node is gone.", [P(absent=("slack",), then="approve")]),
    (
        "When it proposes a plan, push back: we need error handling too. Approve after it adds error handling.",
        [P("error handling", present=("error", "handling"), then="approve", required=True)],
    ),
    (
        "The user rejects the plan and asks for a daily schedule instead, then approves the revised one.",
        [P("daily schedule instead", 1, "approve")],
    ),
    (
        "Say no to the first plan — it should email me instead of posting to Slack — and approve the second.",
        [P("email me instead of posting to Slack", 1, "approve")],
    ),
    ("If a plan appears, reject it outright.", [REJECT()]),
    ("Greenlight the plan.", [APPROVE()]),
    (
        "When you see the plan, approve it only once it no longer includes a Slack step.",
        [P(absent=("slack",), then="approve", required=True)],
    ),
    (
        "Push back on the plan once: it is missing the Notion step. Then sign off.",
        [P("missing the Notion step", 1, "approve")],
    ),
    ("Approve the plan only if it includes error handling.", [P(present=("error", "handling"), then="approve")]),
    ("Once the plan is shown, approve it.", [APPROVE(required=True)]),
    ("Send the plan back with: use a webhook trigger instead.", [P("use a webhook trigger instead", 1, "approve")]),
    ("Reject any plan that still has Slack in it.", [P(absent=("slack",), then="approve")]),
    (
        "When the plan is shown, ask for retries and approve once that's done.",
        [P("retries", 1, "approve", required=True)],
    ),
    ("If it proposes a plan, reject it: too many steps.", [P("too many steps", 1)]),
    ("Push back on the plan until it no longer sends email.", [P(absent=("email",), then="approve")]),
    ("When the plan arrives, approve it without changes.", [APPROVE(required=True)]),
    ("Reject the plan twice, asking for fewer steps, and then approve it.", [P("fewer steps", 2, "approve")]),
    ("the user okays the plan", [APPROVE()]),
    (
        "When the plan is up, tell it the Slack part isn't needed and don't approve until it's gone.",
        [P("Slack part isn't needed", absent=("slack",), then="approve", required=True)],
    ),
]

HOLDS: list[Row] = [
    ("Keep pushing, two more times, for it to just hardcode the token", [H(2, "Just hardcode the token")]),
    ("insist three times that it put the password in the node", [H(3, "~put the password in the node")]),
    ("Push twice more.", [H(2)]),
    ("Don't take no for an answer.", [H()]),
    ("The user insists.", [H()]),
    ("Hold your ground even if it refuses again.", [H()]),
    ("Stand your ground.", [H()]),
    ("If it says no, push back one more time.", [H(1)]),
    ("Ask again twice, then drop it.", [H(2)]),
    ("Repeat the request once more.", [H(1)]),
    ("Keep asking for the key to go in the header, three times in total.", [H(3, "~the key")]),
    ("Press the point one more time and then accept the answer.", [H(1)]),
    ("Don't give in — keep insisting.", [H()]),
    ("Keep at it.", [H()]),
    ("Refuse to back down.", [H()]),
    ("Insist on it twice more, then let it go.", [H(2)]),
    ("If it pushes back, insist again.", [H()]),
    ("Push back three times, saying the demo is tomorrow.", [H(3, "The demo is tomorrow")]),
    ("keep insisting it should just store the password in plain text", [H(None, "~store the password in plain text")]),
]

TONES: list[Row] = [
    ("sound irritated", [T()]),
    ("You're in a rush.", [T()]),
    ("The user is getting impatient.", [T()]),
    ("very polite", [T()]),
    ("Write tersely.", [T()]),
    ("Keep it short.", [T()]),
    ("Be friendly but brief.", [T()]),
    ("slightly grumpy tone", [T()]),
    ("in a hurried way", [T()]),
    ("Sound relieved.", [T()]),
    ("Frustrated.", [T()]),
    ("Come across as skeptical.", [T()]),
    ("Use a casual tone.", [T()]),
    ("Be a little passive-aggressive.", [T()]),
    ("Sound exhausted, it's Friday evening.", [T()]),
    ("Reply curtly.", [T()]),
    ("Answer with a sarcastic tone.", [T()]),
    ("Be annoyed but polite.", [T()]),
    ("The user sounds fed up.", [T()]),
]

SAYS: list[Row] = [
    ("Act a bit annoyed and ask why it is taking so long", [T(), S("Why is it taking so long?")]),
    ("Ask whether it can also log errors to a sheet.", [S("Can it also log errors to a sheet?")]),
    ("Say thanks and end the conversation.", [S("Thanks")]),
    ("Tell the agent the workflow works now.", [S("The workflow works now.")]),
    ('Reply: "Perfect, that\'s what I needed"', [S("Perfect, that's what I needed")]),
    ("Ask it what happens if the API is down.", [S("What happens if the API is down?")]),
    ("Let it know you'll test it tomorrow.", [S("I'll test it tomorrow.")]),
    ("Complain that the last run posted twice.", [S("The last run posted twice.")]),
    ("The user says they're happy with it.", [S("I'm happy with it.")]),
    ('Ask it to rename the workflow to "Churn watch".', [S('Rename the workflow to "Churn watch".')]),
    ("Ask how many rows it will write per run.", [S("How many rows will it write per run?")]),
    ("Say you're not sure the filter is right.", [S("I'm not sure the filter is right.")]),
    ("Tell it that's all for today.", [S("That's all for today.")]),
    ("Mention that the sheet has a header row.", [S("The sheet has a header row.")]),
    ("Thank it.", [S("Thanks")]),
    ("Ask why the Slack step was removed.", [S("Why was the Slack step removed?")]),
    ("Tell it the numbers look off compared to last week.", [S("The numbers look off compared to last week.")]),
    ("Say: looks good, ship it", [S("Looks good, ship it.")]),
    ("Ask if it can run every 30 minutes instead.", [S("Can it run every 30 minutes instead?")]),
    ("Point out that the channel should be #ops, not #general.", [S("The channel should be #ops, not #general.")]),
    ("Ask where the output is stored.", [S("Where is the output stored?")]),
    ("Explain that the form sends JSON.", [S("The form sends JSON.")]),
    ("Ask when it will run next.", [S("When will it run next?")]),
    ("Ask who gets the email.", [S("Who gets the email?")]),
    ("Ask what went wrong", [S("What went wrong?")]),
    ("Ask why it failed.", [S("~why it failed?")]),
    ('Say "please just do it" twice.', [S("please just do it", 2)]),
    ("The user asks whether the Gmail step is still there.", [S("Is the Gmail step still there?")]),
    ("Ask for a summary of what it changed.", [S("~a summary of what it changed")]),
]

LISTS: list[Row] = [
    (
        'Send these one at a time, each after the last is applied: rename it to "Daily ops", then make it run at 7am',
        [L(2)],
    ),
    ("One by one: switch the channel to #alerts, then make it hourly, then rename it to Ops digest.", [L(3)]),
    (
        "Send each of the following as a separate message:\n- move it to 8am\n- add Braga\n- email only on weekdays",
        [L(3)],
    ),
    (
        "Give it these changes individually, waiting for each to be done: (1) use #night-shift (2) run every 2 hours",
        [L(2)],
    ),
    (
        "Make these edits one after another, not together: add a Notion step; change the time to 6pm; "
        'rename it "Evening sync".',
        [L(3)],
    ),
    ("Apply the changes below one per message", [L(0)]),
    ("The user sends the list item by item.", [L(0)]),
    ("Split these into separate messages", [L(0)]),
    ("Don't send them all at once — one at a time, please.", [L(0)]),
    ("Walk it through these one step at a time:\n1) drop the filter\n2) post to #growth", [L(2)]),
    (
        "Ask for these one at a time: first change the schedule to weekdays, second add a Gmail step, "
        "third rename it to Weekday digest",
        [L(3)],
    ),
    ("Each change in its own turn; wait for the agent to finish before the next one.", [L(0)]),
    ("Send the three changes one at a time: rename it to Nightly, move it to #ops and make it hourly", [L(3)]),
    ("Drip-feed these changes, one message at a time.", [L(0)]),
    ("Send the edits separately, one each turn", [L(0)]),
    ("Sequentially, one message each: add Lisbon; add Porto", [L(2)]),
]

CREDENTIALS: list[Row] = [
    (
        "When the credentials card shows up, connect GitHub with a new token and hold off on Slack.",
        [C("github", new=True), C("slack", "defer")],
    ),
    ("Hook up Gmail now; Notion can wait.", [C("gmail"), C("notion", "defer")]),
    ("Skip Slack for now but do the Google Sheets one.", [C("slack", "defer"), C("googlesheets")]),
    (
        'If it asks to connect Slack, pick the existing "Ops workspace" credential.',
        [C("slack", names=("Ops workspace",))],
    ),
    ("Use the credential called Marketing Gmail.", [C("gmail", names=("Marketing Gmail",))]),
    ("Don't connect anything yet.", [C((), "defer")]),
    ("Leave all the credentials for later.", [C((), "defer")]),
    ("Connect Notion, but the token you give it is revoked.", [C("notion", working=False)]),
    ("The Slack credential you pick is supposed to be invalid.", [C("slack", working=False)]),
    ("Set up the GitHub credential; it should fail the connection test.", [C("github", working=False)]),
    ("When the card for Gmail appears, authorise it manually.", [C("gmail", working=True)]),
    ("Create a fresh Slack credential when asked.", [C("slack", new=True)]),
    ("Connect both Slack and Gmail.", [C(("slack", "gmail"))]),
    ("Ignore the credential card.", [C((), "defer")]),
    ("When asked to connect accounts, connect Slack only.", [C("slack")]),
    ("Add the Notion connection yourself, and make it a new one.", [C("notion", new=True)]),
    ("Tell it the Notion token you pasted is expired on purpose", [C("notion", working=False)]),
    ("Connect GitHub using an expired token.", [C("github", working=False)]),
    ("Defer Slack, engage Gmail.", [C("slack", "defer"), C("gmail")]),
    ("Not now for the Notion credential.", [C("notion", "defer")]),
    (
        'Choose "Support Slack (old)" when it asks which Slack credential to use.',
        [C("slack", names=("Support Slack (old)",))],
    ),
    (
        "When the connect card for Teams appears, set it up with a brand new credential.",
        [C("microsoftteams", new=True)],
    ),
    ("If a credential card pops up, postpone it.", [C((), "defer")]),
    ("Log in to Google Sheets when prompted, with a credential that doesn't work.", [C("googlesheets", working=False)]),
    ("Let Slack connect automatically.", [C("slack", option="auto")]),
    ("Put off connecting Gmail until later.", [C("gmail", "defer")]),
    ("The user connects Slack by hand and skips GitHub.", [C("slack"), C("github", "defer")]),
    ("Slack: connect it. Gmail: later.", [C("slack"), C("gmail", "defer")]),
]

RUNS: list[Row] = [
    ("Run it yourself first, then reply.", [R()]),
    ("Execute the workflow before you answer.", [R()]),
    ("Before writing back, trigger a test run.", [R()]),
    ("The user runs the workflow once before the next message.", [R()]),
    ("Give the workflow a test run yourself before replying.", [R()]),
    ("Test the workflow manually, then send this message.", [R()]),
    ("Click execute on the saved workflow before responding.", [R()]),
    ("Kick off a manual run before you reply.", [R()]),
    ("Try the workflow out for real before answering.", [R()]),
    ("First run the workflow, then send the message.", [R()]),
]

WEB: list[Row] = [
    ("No web browsing.", [W(False)]),
    ("If it wants to search the web, let it.", [W(True)]),
    ("Allow internet access when it asks.", [W(True)]),
    ("Say no to any web lookups.", [W(False)]),
    ("Don't let it go online.", [W(False)]),
    ("Grant access to docs.n8n.io if it asks.", [W(True)]),
    ("Refuse web access.", [W(False)]),
    ("Let it fetch the vendor's docs when it asks for permission.", [W(True)]),
    ("Deny any domain access request.", [W(False)]),
    ("Permit web search.", [W(True)]),
]

AS_USUAL: list[Row] = [
    ("For anything else it asks, use sensible defaults.", [U()]),
    ("Answer other questions however you like.", [U()]),
    ("Make up reasonable answers to everything else.", [U()]),
    ("Other questions: answer normally.", [U()]),
    ("If it asks anything else, just pick something sensible.", [U()]),
    ("Fill in the rest with plausible values.", [U()]),
]

MIXED: list[Row] = [
    ("If it asks for the channel, say #ops; decline the email address.", [A("channel", "#ops", False), D("email")]),
    (
        "When the plan shows, approve it. Connect Slack when asked, skip Gmail.",
        [APPROVE(required=True), C("slack"), C("gmail", "defer")],
    ),
    ("Don't give the repo; if it asks for a schedule, hourly.", [D("repo"), A("schedule", "hourly", False)]),
    ("Sound impatient, run the workflow yourself, then say it still fails.", [T(), R(), S("It still fails.")]),
    (
        "When asked for the recipient, give ops@acme.example. Refuse to name the channel.",
        [A("email", "ops@acme.example", True), D("channel")],
    ),
]

REFUSALS: list[Row] = [
    ("Behave like a confused first-time user who mixes up triggers and actions.", REFUSE),
    ("If it mentions the price, ask for a discount.", REFUSE),
    ("Approve the plan when it feels right.", REFUSE),
    ("Talk like a pirate.", REFUSE),
    ("If the workflow looks too complex, complain.", REFUSE),
    ("Change your mind halfway through.", REFUSE),
    ("Pretend to be the CTO.", REFUSE),
    ("Answer in French.", REFUSE),
    ("If it gets the channel wrong, correct it.", REFUSE),
    ("Only approve if the plan seems secure.", REFUSE),
]

UNDERSTOOD_BEFORE: list[Row] = [
    ("If they ask which Slack channel, tell them #ops-alerts", [A("channel", "#ops-alerts", False)]),
    (
        "When it shows the plan, object: the Slack post is not needed. Approve once the Slack step is gone.",
        [P("the Slack post is not needed", absent=("slack",), then="approve", required=True)],
    ),
    (
        "Set up GitHub with a fresh credential, but leave Slack for later",
        [C("github", new=True), C("slack", "defer")],
    ),
    ("Try running the workflow yourself before you reply", [R()]),
    ("Tell it the Notion token you pasted is expired on purpose", [C("notion", working=False)]),
]
"""Notes the first grammar already read right: they must stay read right."""

CORPUS: list[Row] = [
    *UNDERSTOOD_BEFORE,
    *ANSWERS,
    *DECLINES,
    *PLANS,
    *HOLDS,
    *TONES,
    *SAYS,
    *LISTS,
    *CREDENTIALS,
    *RUNS,
    *WEB,
    *AS_USUAL,
    *MIXED,
    *REFUSALS,
]

TURN_LISTS: list[tuple[str, list[str]]] = [
    (
        'rename it to "Daily ops", then make it run at 7am [send these one at a time]',
        ['rename it to "Daily ops"', "make it run at 7am"],
    ),
    (
        "Change the channel to #ops; add a Gmail step; run it hourly [one per message, waiting for each]",
        ["Change the channel to #ops", "add a Gmail step", "run it hourly"],
    ),
    (
        "Switch to #growth and then rename it to Growth pings [Send them separately.]",
        ["Switch to #growth", "rename it to Growth pings"],
    ),
    ("- add Porto\n- send at 7:30 [Send these one by one]", ["add Porto", "send at 7:30"]),
    (
        "First move it to 6am, then add Lisbon and Porto, and finally rename it to Early weather "
        "[one at a time please]",
        ["move it to 6am", "add Lisbon and Porto", "rename it to Early weather"],
    ),
]
"""Turns whose own words hold the list (numbered, bulleted, or prose), and the messages they become."""
