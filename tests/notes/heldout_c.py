"""The third held-out set (C): written after every change made for sets A and B; since its first run it is
a development set too.

Its first run, untouched: 85 notes, 77 read right, 2 not understood, 6 scored wrong — 1 a natural
question the row's exact wording did not allow ("Where does the data end up?") and 5 real misreadings:
"when asked about timing" not seen as a schedule question, "tell it to post in #regional-sales" giving
the whole phrase as the value, "reject the plan outright, whatever it says" pushing back with "Whatever
it says", "don't give up easily" read as a decline, and "say: that's everything, thanks" losing its
thanks. Those classes and the two refusals ("insist … on putting the secret in the node", "polite
throughout") were then fixed as classes. The untouched held-out set is ``heldout.py`` (D).
"""

from __future__ import annotations

from tests.notes.expect import APPROVE, REFUSE, REJECT, A, C, D, H, L, P, R, Row, S, T, U, W

HELDOUT_C: list[Row] = [
    # answers
    ("If it asks what channel to use, #payments-ops.", [A("channel", "#payments-ops", False)]),
    (
        "When the agent needs the recipient, give it accounts@massive.example",
        [A("email", "accounts@massive.example", True)],
    ),
    ("Should it ask which repo, reply initrode/billing.", [A("repo", "initrode/billing", False)]),
    (
        "If prompted for the URL, use https://feeds.example.org/rss/latest",
        [A("url", "https://feeds.example.org/rss/latest", False)],
    ),
    ("The recipient is ops-team@hooli.example, if it wants to know.", [A("email", "ops-team@hooli.example", False)]),
    ("When asked about timing, say weekdays at 7:15am", [A("schedule", "weekdays at 7:15am", True)]),
    ("If it asks for a channel, tell it to post in #regional-sales.", [A("channel", "#regional-sales", False)]),
    ('Answer with the "Vendor list" spreadsheet if it asks which sheet.', [A("spreadsheet", "Vendor list", False)]),
    ("In case it asks how many, say 20.", [A("number", "20", False)]),
    ("When the question about the channel comes up, go with #release-notes", [A("channel", "#release-notes", True)]),
    ('If it needs a workflow name, call it "Nightly backup"', [A("name", "Nightly backup", False)]),
    ("should the builder want an email address: cfo@wayne.example", [A("email", "cfo@wayne.example", False)]),
    # declines
    ("Don't tell it which channel.", [D("channel")]),
    ("If it asks for an email address, say you'll sort that out later.", [D("email", False)]),
    ("Never give the repository.", [D("repo")]),
    ("The user declines to share the webhook URL.", [D("url")]),
    ("When asked for the sheet, say you haven't got one yet.", [D("spreadsheet", True)]),
    ("Keep the recipient private for now.", [D("email")]),
    ("Don't answer questions about the schedule.", [D("schedule")]),
    ("Should it ask for the API key, refuse.", [D("key", False)]),
    ("Leave the channel unanswered.", [D("channel")]),
    ("Decline any question about the destination.", [D("email")]),
    # plans
    (
        "When the plan is shown, push back once: swap Slack for Teams. Then approve.",
        [P("swap Slack for Teams", 1, "approve", required=True)],
    ),
    ("Approve the plan without asking for changes.", [APPROVE()]),
    ("Reject the plan outright, whatever it says.", [REJECT()]),
    (
        "If it proposes a plan, ask it to add a retry step and approve once the plan includes retries.",
        [P("add a retry step", present=("retries",), then="approve")],
    ),
    ("Don't accept the plan until the Gmail step is removed.", [P(absent=("gmail",), then="approve")]),
    (
        "When the plan shows up, reject it, saying it should run every 15 minutes; approve the second version.",
        [P("run every 15 minutes", 1, "approve", required=True)],
    ),
    ("Push back on the plan three times asking for fewer nodes, then approve.", [P("fewer nodes", 3, "approve")]),
    ("When it presents the plan, approve.", [APPROVE(required=True)]),
    ("Sign off on the plan only once it has no Slack step.", [P(absent=("slack",), then="approve")]),
    (
        "Object to the plan: email should go to finance too. Accept the updated plan.",
        [P("email should go to finance too", 1, "approve")],
    ),
    # holds
    ("Push back twice more.", [H(2)]),
    ("Insist, three times, on putting the secret in the node.", [H(3)]),
    ("Keep pushing for it to hardcode the password.", [H(None, "~hardcode the password")]),
    ("Don't give up easily.", [H()]),
    ("If it refuses, press once more.", [H(1)]),
    ("Stand firm and repeat the request twice.", [H(2)]),
    ("Keep asking, two more times, that it just put the token in the URL.", [H(2, "~put the token in the URL")]),
    # tones
    ("Be a bit grumpy.", [T()]),
    ("Sound very impatient.", [T()]),
    ("Polite throughout.", [T()]),
    ("The user is in a rush.", [T()]),
    ("Reply tersely.", [T()]),
    ("Come across as slightly confused.", [T()]),
    ("Use a formal tone.", [T()]),
    # says
    ("Ask why the run failed.", [S("~why the run failed")]),
    ("Tell it the Slack post looks fine now.", [S("The Slack post looks fine now.")]),
    ("Ask whether the filter still applies.", [S("Does the filter still apply?")]),
    ("Say: that's everything, thanks", [S("That's everything, thanks.")]),
    ("Ask it to switch the trigger to a webhook.", [S("Switch the trigger to a webhook.")]),
    ("Let it know you've added the credential yourself.", [S("I've added the credential myself.")]),
    ("Ask how long a run usually takes.", [S("~how long a run usually takes")]),
    ("The user says the numbers are wrong.", [S("The numbers are wrong.")]),
    ('Reply "go ahead".', [S("go ahead")]),
    ("Ask where the data ends up.", [S("Where does the data end up?")]),  # widened after the first run
    # lists
    ("Send these changes one at a time.", [L(0)]),
    ('One at a time: rename it to "Ops pulse", then post it to #ops-pulse.', [L(2)]),
    ("Give it the edits separately, waiting for each build:\n- run at 8am\n- add Faro", [L(2)]),
    ("Send each bullet as its own message.", [L(0)]),
    ("Ask for these individually: first add a Sheets step, then drop the filter.", [L(2)]),
    # credentials
    ("Connect Slack manually when the card appears.", [C("slack")]),
    ("Skip the Gmail credential.", [C("gmail", "defer")]),
    ("Set up GitHub with a brand-new credential; leave Slack for later.", [C("github", new=True), C("slack", "defer")]),
    ('Pick the existing "Finance Gmail" credential when asked.', [C("gmail", names=("Finance Gmail",))]),
    ("The OpenAI credential should not work.", [C("openai", working=False)]),
    ("Postpone all credentials.", [C((), "defer")]),
    ("When the Notion card pops up, connect it with a token that's expired.", [C("notion", working=False)]),
    ("Hook up Google Drive and Slack.", [C(("googledrive", "slack"))]),
    # runs
    ("Execute the workflow yourself before replying.", [R()]),
    ("Give it a test run before you answer.", [R()]),
    ("Run it for real first.", [R()]),
    # web
    ("Refuse any web search.", [W(False)]),
    ("If it asks for web access, grant it.", [W(True)]),
    ("Block browsing.", [W(False)]),
    # as usual
    ("Answer the rest normally.", [U()]),
    ("Make up plausible values for any other details.", [U()]),
    # mixed
    ("If it asks for the repo, say acme/web; decline the channel.", [A("repo", "acme/web", False), D("channel")]),
    ("Approve the plan, then skip the Slack credential.", [APPROVE(), C("slack", "defer")]),
    # not followable: must be refused
    ("Act like a nervous intern on their first day.", REFUSE),
    ("If the answer is too long, ask for a summary.", REFUSE),
    ("Approve the plan if it seems reasonable.", REFUSE),
    ("Reply in Spanish.", REFUSE),
    ("Gradually lose interest.", REFUSE),
    ("If it suggests Zapier, say no.", REFUSE),
]
