"""Corpus H: director notes as four different authors write them, with the meaning each must have.

Written before the precision round changed the grammar, by imagining who writes cases: a QA engineer
(explicit, names every field, quotes exact strings), a product manager (chatty, business words, the
reason along with the instruction), a non-native English speaker (dropped articles, "when it ask",
"say him", odd prepositions) and a terse power user ("tz if asked: Asia/Tokyo", "slack: connect").
Every directive kind is here, and the classes a guess used to get wrong: a topic outside any fixed
vocabulary ("the timezone", "the retention period"), a rejection with its reason ("reject it
outright: …"), values wrapped in conversation ("it's the one called …", "go with …"), services no
built-in list knows (Typeform, Airtable, HubSpot), deferrals in other words (hold off, park, not
now), and a question to ask in the user's voice ("ask it whether …").

The grammar is tuned against this set: every row must pass. ``authors_final.py`` holds the set written
after the tuning, run once untouched.
"""

from __future__ import annotations

from tests.notes.expect import APPROVE, REFUSE, REJECT, A, C, D, H, L, P, R, Row, S, T, U, W

QA_ENGINEER: list[Row] = [
    ("When the agent asks for the timezone, respond with America/Chicago.", [A("timezone", "America/Chicago", True)]),
    (
        "If prompted for the API base URL, provide https://qa.internal.example/api/v3",
        [A("url", "https://qa.internal.example/api/v3", False)],
    ),
    ("If it asks for the retry count, answer 3.", [A("number", "3", False, words=("retry",))]),
    ("When asked which locale to use, answer en-GB.", [A("locale", "en-GB", True)]),
    ("If it asks for the sender name, say 'QA Bot'.", [A("name", "QA Bot", False, words=("sender",))]),
    ("When asked about the time zone, reply UTC+1.", [A("zone", "UTC+1", True, words=("time",))]),
    ("If the builder asks which environment, it's the one called Staging-EU.", [A("environment", "Staging-EU", False)]),
    ("When it asks for the sample size, use 500", [A("size", "500", True, words=("sample",))]),
    ("When asked about the output format, answer CSV.", [A("format", "CSV", True, words=("output",))]),
    (
        "If the question is about the data retention period, answer 90 days.",
        [A("retention", "90 days", False, words=("period",))],
    ),
    ('If asked for the log level, reply "DEBUG".', [A("level", "DEBUG", False, words=("log",))]),
    (
        "When the agent asks for the spreadsheet, it is the one named QA Regression Runs.",
        [A("spreadsheet", "QA Regression Runs", True)],
    ),
    ("Decline to provide the staging password.", [D("password", words=("staging",))]),
    ("If asked for the Jira project key, do not provide it.", [D("key", False, words=("jira", "project"))]),
    ("Do not disclose the database host, even if asked twice.", [D("host", words=("database",))]),
    ("When asked for the webhook secret, refuse.", [D("secret", True)]),
    (
        "When the plan is presented, reject it: the spec requires a webhook trigger, not a schedule.",
        [P("the spec requires a webhook trigger", 1, "reject", required=True)],
    ),
    ("Approve the plan only after it includes a retry step.", [P(present=("retry",), then="approve")]),
    (
        "Push back on the first plan with: 'Use a webhook trigger instead.' Then approve.",
        [P("Use a webhook trigger instead", 1, "approve")],
    ),
    ("Reject the plan without comment.", [REJECT()]),
    ("Repeat the request two more times.", [H(2)]),
    (
        "The user insists three times that it put the token in the query string.",
        [H(3, "~put the token in the query string")],
    ),
    ("Tone: neutral and concise.", [T()]),
    ("Ask whether the workflow retries on HTTP 429.", [S("Does the workflow retry on HTTP 429?")]),
    ('Say exactly: "Run it against staging first."', [S("Run it against staging first.")]),
    (
        "Submit the following changes one per message, waiting for each to be applied:\n"
        "1. set the timeout to 30s\n2. add a retry on failure\n3. log errors to #qa-logs",
        [L(3)],
    ),
    (
        'Engage the Slack credential card using the existing credential named "QA Slack".',
        [C("slack", names=("QA Slack",))],
    ),
    ("Defer the Jira credential card.", [C("jira", "defer")]),
    ("Provide a deliberately invalid Stripe key when the credential card appears.", [C("stripe", working=False)]),
    ("Give the Postgres credential that is expected to fail its connection test.", [C("postgres", working=False)]),
    ("Execute the workflow manually before sending this message.", [R()]),
    ("Deny any web search request.", [W(False)]),
    ("For all other questions, use placeholder values.", [U()]),
    ("If the agent mentions rate limits, ask for details.", REFUSE),
    ("Verify that the agent does not ask the same question twice.", REFUSE),
]

PRODUCT_MANAGER: list[Row] = [
    ("If it asks what currency we report in, tell it we use EUR.", [A("currency", "EUR", False)]),
    ("When it asks about the fiscal year, our fiscal year starts in April.", [A("fiscal", "~starts in April", True)]),
    (
        "If the assistant wants to know who the audience is, it's the regional sales managers.",
        [A("audience", "~regional sales managers", False)],
    ),
    ("If it wants to know the fiscal quarter, say Q3.", [A("quarter", "Q3", False)]),
    ("If it asks about the region, go with EMEA.", [A("region", "EMEA", False)]),
    (
        "If it asks which pipeline, it's the one named Enterprise Renewals.",
        [A("pipeline", "Enterprise Renewals", False)],
    ),
    ("When it asks how many reps to include, say 12", [A("number", "12", True)]),
    ("If it asks for the owner of the report, that's Priya Raman.", [A("owner", "Priya Raman", False)]),
    ("When it asks for the go-live date, say March 3rd.", [A("date", "March 3rd", True)]),
    ("If asked about the budget, say it's 40k.", [A("budget", "40k", False)]),
    (
        "Please don't give out the budget figure if it comes up; that's still confidential.",
        [D("budget", False)],
    ),
    ("We'd rather not share the customer list, so decline if it asks for it.", [D("customer", words=("list",))]),
    (
        "Once it shows you the plan, push back — we need this to go to #sales-leadership, not email. "
        "After that you can approve.",
        [P("#sales-leadership", 1, "approve", required=True)],
    ),
    (
        "Once a plan appears, turn it down flatly: legal hasn't cleared HubSpot yet.",
        [P("legal hasn't cleared HubSpot yet", 1, "reject", required=True)],
    ),
    ("Reject the plan; we wanted Airtable, not Google Sheets.", [P("wanted Airtable", 1, "reject")]),
    ("When the plan comes, I'd like you to approve it straight away.", [APPROVE(required=True)]),
    (
        "When the plan shows up, ask it to send the digest on Mondays instead, and then approve it.",
        [P("send the digest on Mondays instead", 1, "approve", required=True)],
    ),
    ("Push back two more times, saying the client demo is on Friday.", [H(2, "~client demo is on Friday")]),
    ("Come across as a bit stressed, it's the end of the quarter.", [T()]),
    (
        "Let it know we'll review the numbers with finance tomorrow.",
        [S("We'll review the numbers with finance tomorrow.")],
    ),
    (
        "Ask it if the report can also include last month's totals.",
        [S("Can the report also include last month's totals?")],
    ),
    ("Ask it, nicely, to add the region column.", [S("Add the region column.")]),
    (
        "Ask it, politely, whether the dashboard can be shared with the board.",
        [S("Can the dashboard be shared with the board?")],
    ),
    (
        "Please send the follow-ups one at a time, giving it a chance to finish each: change the subject line to "
        "'Weekly pipeline', then add the APAC team to the recipients.",
        [L(2)],
    ),
    ("When the card for Salesforce shows up, connect it with our existing credential.", [C("salesforce")]),
    ("We're not ready to connect Stripe yet, so leave that card for later.", [C("stripe", "defer")]),
    ("Connect HubSpot, but park Mailchimp for now.", [C("hubspot"), C("mailchimp", "defer")]),
    ("Hook up Airtable using the existing credential; hold off on Typeform.", [C("airtable"), C("typeform", "defer")]),
    ("Before you reply, run the workflow once so we can see what it does.", [R()]),
    ("It shouldn't browse the web for this — say no if it asks.", [W(False)]),
    ("Anything else it asks, just make something sensible up.", [U()]),
    ("If it suggests adding a dashboard, say no thanks.", REFUSE),
    ("Make sure it feels like talking to a real customer.", REFUSE),
    ("Approve the plan if the numbers look right to you.", REFUSE),
]

NON_NATIVE: list[Row] = [
    ("When agent ask for channel, answer #soporte-tecnico", [A("channel", "#soporte-tecnico", True)]),
    ("If it ask which email, give him facturas@empresa.example", [A("email", "facturas@empresa.example", False)]),
    ("When he asks about time zone you say Europe/Madrid", [A("zone", "Europe/Madrid", True)]),
    ("If asking for the sheet, is the one called Ventas 2025", [A("spreadsheet", "Ventas 2025", False)]),
    (
        "If it ask for the phone number, the number is +34 600 123 456.",
        [A("number", "+34 600 123 456", False, words=("phone",))],
    ),
    ("When it want to know the language of the mails, say Spanish.", [A("language", "Spanish", True)]),
    ("If ask about the currency, is euros.", [A("currency", "euros", False)]),
    ("When it ask the repository, answer with mi-org/facturas-api.", [A("repo", "mi-org/facturas-api", True)]),
    ("Not give the password, never.", [D("password")]),
    ("If he ask the API key, say you don't have it yet", [D("key", False)]),
    ("The user not want to say the budget.", [D("budget")]),
    (
        "When plan is showing, say no: we need Airtable, no Google Sheets.",
        [P("we need Airtable, no Google Sheets", 1, "reject", required=True)],
    ),
    ("When the plan come, accept it.", [APPROVE(required=True)]),
    ("Push back to the plan two times, then approve.", [P(None, 2, "approve")]),
    ("If plan have Slack, ask to remove Slack, after approve.", [P("remove Slack", absent=("slack",), then="approve")]),
    ("Insist one more time.", [H(1)]),
    ("You are little bit angry.", [T()]),
    ("Ask him if is possible to send also to Teams.", [S("~send also to Teams")]),
    ("Tell him the numbers now are correct.", [S("The numbers now are correct.")]),
    ("Ask to him why the run is failing.", [S("Why is the run failing?")]),
    (
        "Send the changes one by one, wait that each one finish:\n- put the channel #ventas\n- change hour to 8am",
        [L(2)],
    ),
    ("Connect the Google Sheets when card appear, the Gmail no, later.", [C("googlesheets"), C("gmail", "defer")]),
    ("Use the credential call 'Sheets Marketing'.", [C("googlesheets", names=("Sheets Marketing",))]),
    ("The Notion token is not valid anymore, it is expired.", [C("notion", working=False)]),
    ("Give to it the wrong Typeform key, it must fail the test.", [C("typeform", working=False)]),
    ("Execute the workflow before to answer.", [R()]),
    ("Not permit the internet access.", [W(False)]),
    ("For other questions invent something normal.", [U()]),
    ("If it do mistake, correct him.", REFUSE),
    ("Please act like you are the boss of company.", REFUSE),
    ("If the workflow is too slow, say him to make faster.", REFUSE),
]

TERSE: list[Row] = [
    ("tz if asked: Asia/Tokyo", [A("tz", "Asia/Tokyo", False)]),
    ("channel -> #ops-bots", [A("channel", "#ops-bots", False)]),
    ("sheet = Q4 Pipeline", [A("spreadsheet", "Q4 Pipeline", False)]),
    ("email if asked: ops@corp.example", [A("email", "ops@corp.example", False)]),
    ("if asked why: budget cuts", [A("why", "budget cuts", False)]),
    ("region q -> go with us-east-1", [A("region", "us-east-1", False)]),
    ("if it asks which bucket: 'raw-events-prod'", [A("bucket", "raw-events-prod", False)]),
    ("decline the email q", [D("email")]),
    ("skip the url question", [D("url")]),
    ("no api key. ever.", [D("key")]),
    ("plan: reject", [REJECT()]),
    ("plan: approve", [APPROVE()]),
    ("plan -> push back once (drop slack), then ok", [P("drop slack", 1, "approve")]),
    ("reject plan, reason: needs an approval step", [P("needs an approval step", 1, "reject")]),
    ("approve plan once no slack in it", [P(absent=("slack",), then="approve")]),
    ("reject it outright if a plan shows", [REJECT()]),
    ("insist x2", [H(2)]),
    ("terse.", [T()]),
    ("say: ship it", [S("Ship it.")]),
    ("ask: eta?", [S("~eta")]),
    ("ask if it's live yet", [S("Is it live yet?")]),
    ("one change per msg", [L(0)]),
    ("run it first", [R()]),
    ("web: deny", [W(False)]),
    ("web access: allow", [W(True)]),
    ("everything else: defaults", [U()]),
    ("slack: connect. gmail: skip.", [C("slack"), C("gmail", "defer")]),
    ("no creds for gmail", [C("gmail", "defer")]),
    ("typeform: wrong key on purpose", [C("typeform", working=False)]),
    ("airtable cred = 'Ops Airtable'", [C("airtable", names=("Ops Airtable",))]),
    ("hubspot later", REFUSE),  # no credential word: it may as well be "ask about HubSpot later"
    ("connect jira, not now for confluence", [C("jira"), C("confluence", "defer")]),
    ("be smart", REFUSE),
    ("if slow -> nudge", REFUSE),
]

CORPUS_H: list[Row] = [*QA_ENGINEER, *PRODUCT_MANAGER, *NON_NATIVE, *TERSE]
