"""The director-note vocabulary, as regular expressions: moments, action heads, and what they take.

:mod:`threadcase.case.note_grammar` reads a note with them (plans: :mod:`~threadcase.case.note_plans`,
credentials: :mod:`~threadcase.case.note_credentials`); ``docs/director-notes.md`` lists phrasings in
prose and ``tests/notes/corpus.py`` holds a corpus of them. The patterns are built from word families
(a negation, a giving verb, a topic) rather than whole phrasings, so "don't hand over the key", "never
reveal the key" and "refuse to share the key" are one rule. Pure data.
"""

from __future__ import annotations

import re

# --- moments: "when asked for …", "should it want …", "when the plan is shown", "if a card appears" ---

TRIGGER = re.compile(
    r"^(?P<word>when(?:ever)?|once|as soon as|after|the moment|the first time|each time|every time|any ?time|"
    r"if(?: and when| ever)?|should|in case|in the event(?: that)?|on|at|upon|before|provided(?: that)?|"
    r"assuming|supposing)\s+(?P<body>.+)$",
    re.IGNORECASE,
)
REQUIRED = frozenset({"when", "once", "as soon as", "after", "the moment", "the first time", "on", "at", "upon"})
TRIGGER_END = re.compile(r"\s*(?:,|:(?=\s|$)|;|—|–|\s-\s|\?)\s*")
ACTION_VERBS = (
    r"answer|reply|respond|say|give|use|tell|pick|choose|select|go with|type|enter|provide|decline|refuse|"
    r"withhold|skip|leave|defer|connect|set|create|add|fill|approve|accept|reject|push|object|insist|hold|"
    r"deny|allow|block|run|execute|send|ask|keep|stick|ignore|dismiss|hook|link|engage|confirm|mention|hand|"
    r"supply|offer|point|share|reveal|disclose|dodge|avoid|grant|permit|let|log|sign|authori[sz]e|do|make|"
    r"put|postpone|trigger|test|try|kick|click|press|repeat|persist|stand|thank|complain|explain|sound|act|be|"
    r"won't|don't|do not|never|can't|cannot|okay|ok|greenlight|turn|sign off|sign-off|veto|bounce|"
    r"drop|walk|split|apply|write|notify|inform|pass|spell|name|call|suggest|request|wait|end|stop|finish|wrap"
)
VERB_START = re.compile(rf"^(?:then\s+)?(?:{ACTION_VERBS})\b", re.IGNORECASE)
PLAN_WORDS = re.compile(r"\b(?:plan|proposal|proposed steps)\b", re.IGNORECASE)
OTHER_PLAN = re.compile(
    r"\b(?:paid|pricing|price|subscription|premium|free|billing|pro|enterprise|payment|upgrade|cheaper|hosting|"
    r"team|starter|business|data|phone|meal|project|marketing|sales)\s+plans?\b",
    re.IGNORECASE,
)
"""A plan that is not the agent's proposal ("if it recommends a paid plan")."""
WEB_WORDS = re.compile(
    r"\b(?:web|internet|domain|browse|browsing|search|site|website|url access|online|docs|documentation|"
    r"look (?:it |things |something )?up)\b",
    re.IGNORECASE,
)
ASK_WORDS = re.compile(
    r"\b(?:asks?|asked|asking|wants?|wanted|needs?|needed|requires?|required|requests?|requested|prompts?|"
    r"prompted|queries|queried|query|questions?|questioned|quizzed|enquires|inquires|wonders|checks with you|"
    r"is missing|pressed for|consults? you|unsure|not sure|doesn't know|does not know|"
    r"comes? up|necessary|quizzes|brings? up)\b",
    re.IGNORECASE,
)
BUILT_WORDS = re.compile(
    r"\b(?:built|builds|build|applied|done|ready|finished|saved|created|first version|up and running)\b",
    re.IGNORECASE,
)
BEFORE_SENDING = re.compile(r"\b(?:answer|repl|respond|send|writ|messag|continu)", re.IGNORECASE)
ASKER = re.compile(
    r"^(?:it|they|he|she|you are|you're|you get|you|the user is|the user gets|the user|"
    r"the (?:agent|assistant|builder|bot|ai|model))\s+(?:ever\s+|does\s+|do\s+|is\s+|gets\s+|get\s+)?",
    re.IGNORECASE,
)
SERVICE_TYPES: dict[str, str] = {
    "slack": "slack",
    "gmail": "gmail",
    "email": "gmail",
    "e-mail": "gmail",
    "notion": "notion",
    "github": "github",
    "google sheets": "googlesheets",
    "sheets": "googlesheets",
    "sheet": "googlesheets",
    "google drive": "googledrive",
    "drive": "googledrive",
    "teams": "microsoftteams",
    "microsoft teams": "microsoftteams",
    "openai": "openai",
    "gemini": "googlepalm",
    "whatsapp": "whatsapp",
    "bearer": "httpbearer",
    "header auth": "httpheader",
    "basic auth": "httpbasic",
}
SERVICE = re.compile(r"\b(" + "|".join(re.escape(k) for k in SERVICE_TYPES) + r")\b", re.IGNORECASE)
REFUSAL_MOMENT = re.compile(
    r"\b(?:refuses?|refused|says? no|said no|pushes back|push(?:es)? back|objects?|declines?|won't|will not|"
    r"resists?|hesitates?|disagrees?|says? it can't|says? it cannot|holds? (?:firm|the line)|sticks? to)\b",
    re.IGNORECASE,
)
TRAILING_MOMENT = re.compile(
    r"^(?P<rest>.+?)(?<!\beven)[,;]?\s+(?P<moment>(?:if|when|whenever|once|should|in case|as soon as|the moment|"
    r"each time|"
    r"every time|any ?time|if and when|if ever)\s+(?:(?:[^,;]*?\s)?(?:asks?|asked|asking|wants?|needs?|requires?|"
    r"requests?|prompted|prompts?|queries|queried|comes? up|needed|necessary|required|relevant|it does|"
    r"questions?|question comes|questioned)\b|(?:a|the|its|any) (?:plan|proposal) (?:is |gets )?"
    r"(?:shown|presented|proposed|up|ready|shows?(?: up)?|appears?|comes?(?: up)?|arrives?|pops? up)\b)"
    # "connect Notion when asked and skip Gmail": the moment ends before the next action.
    rf"(?:(?!\s+and\s+(?:{ACTION_VERBS})\b)[^,;])*)$",
    re.IGNORECASE,
)

# --- lists, runs, web access ----------------------------------------------------------------------

ONE_AT_A_TIME = re.compile(
    r"\b(?:one (?:at a time|by one|per (?:message|turn|reply)|after (?:the )?(?:other|another)|each turn|"
    r"message at a time|step at a time|change at a time|edit at a time|thing at a time)|item by item|"
    r"individually|separately|sequentially|in sequence|drip[- ]feed|one message each|"
    r"each (?:[\w-]+ ){0,2}(?:in its own|on its own|as a separate|in a separate|as its own) (?:message|turn|reply)|"
    r"each (?:[\w-]+ )?(?:on its own|by itself|on their own)\b|\bseparate (?:messages|turns|replies)\b|"
    r"(?:in|as|into) (?:separate|individual|their own|distinct) (?:messages|turns|replies)|as a separate message|"
    r"one (?:change|edit|item|thing) per (?:message|msg|turn|reply)|"
    r"(?:wait(?:ing)?|only) (?:for|after|until) (?:each|every|the agent|it)\b[^.;]*?(?:build|change|one|edit|reply|"
    r"answer|finish|done|applied|before the next)|"
    r"each (?:only )?(?:after|once) the (?:previous|last|one before)(?: one)?|"
    r"after each (?:one )?(?:is|was|has been) (?:applied|done|built)|one change per message|"
    r"(?:not|don't send them|do not send them) (?:all )?(?:at once|together|in one (?:go|message)))",
    re.IGNORECASE,
)
WAIT_EACH = re.compile(
    r"^(?:(?:giving|give|leaving|leave) it (?:a (?:chance|moment)|time) to (?:finish|apply|complete|build)"
    r"(?: each(?: one)?)?|"
    r"(?:wait(?:ing)?|let(?:ting)?|until|after|once|only after|only once)\b.*\b(?:each|every|it|the previous|"
    r"the last|the agent|one)\b.*\b(?:lands?|landed|finish\w*|appl\w*|done|built|complete\w*|go(?:es)? through|"
    r"answers?|replies|repl\w+)\b.*|each (?:after|once) the (?:previous|last|one before)\b.*|"
    r"(?:waiting|wait) (?:for|on) (?:each|every|it|the agent)(?: one| change| build| reply| time)?)$",
    re.IGNORECASE,
)
"""How a one-at-a-time note says to wait for each change ("letting each land first")."""
RUN_WORKFLOW = re.compile(
    r"^(?:first\s+|now\s+)?(?:run|execute|trigger|test|test-run|try(?: out| running| executing| triggering)?|kick off|"
    r"fire(?: off)?|launch|start|"
    r"click (?:execute|run|test)(?: on)?(?= |$)|hit (?:execute|run)(?: on)?(?= |$)|"
    r"press (?:execute|run)(?: on)?(?= |$)|"
    r"give|do)\s+(?P<what>.*)$",
    re.IGNORECASE,
)
RUN_OBJECT = re.compile(
    r"^(?:it|the (?:saved |new |finished |built )?(?:workflow|flow|automation)|a (?:test |manual |real )?"
    r"(?:run|execution|test run)|an execution|the (?:saved )?workflow a (?:test )?(?:run|spin|try)|it a (?:test )?"
    r"(?:run|spin|try)|the workflow out|it out)\b(?P<rest>.*)$",
    re.IGNORECASE,
)
RUN_REST = re.compile(
    r"^(?:\s*(?:yourself|myself|themselves|for real|manually|by hand|once|first|out|now|a test run|for a test|"
    r"on the saved workflow|the saved workflow|of it|of the workflow|once more|one more time|again|"
    r"before (?:answering|replying|responding|you "
    r"(?:answer|reply|respond|write back|continue)|the user (?:answers|replies)|sending|writing back|the next "
    r"message|continuing|going on|this message|the next turn|you send (?:this|the next) message|sending (?:this|it|"
    r"the|your)(?: next)?(?: (?:message|turn|reply))?|to answer|answer|you answer)|"
    # "…, so we can see what it does": why, not what
    r"so (?:we|i|you|the user) can (?:see|check|tell)\b.*|to see (?:what|how|if|whether)\b.*|"
    r"then reply|then answer)\b)*\s*$",
    re.IGNORECASE,
)
WEB_DENY = re.compile(
    r"\b(?:deny|block|refuse|reject|decline|forbid|disallow|say no to|turn down|don't allow|do not allow|never allow|"
    r"don't permit|do not permit|don't grant|do not grant|not permit|not allow|no permit)\b[^.;]*\b(?:web|internet|"
    r"domain|"
    r"site|network|browsing|search\w*|access|online|lookups?)\b|"
    r"^no (?:web|internet|online)(?: access| browsing| search\w*| lookups?)?$|^no (?:browsing|web ?search\w*)$|"
    r"^(?:don't|do not|never) (?:let it|allow it to|allow)\s+(?:go online|browse|search|use the (?:web|internet)|"
    r"look (?:things |anything |it )?up|access the (?:web|internet)|fetch)\b|^keep it offline$|"
    r"^(?:it|the (?:agent|bot|assistant|builder))\s+(?:shouldn't|should not|must not|mustn't|can't|cannot|may not|"
    r"isn't allowed to|is not allowed to|is not to)\s+(?:go online|browse|search the web|use the (?:web|internet)|"
    r"look (?:things |anything |it )?up online|access the (?:web|internet))\b",
    re.IGNORECASE,
)
WEB_ALLOW = re.compile(
    r"^(?:allow|grant|approve|permit|accept|okay|ok)\b[^.;]*\b(?:web|internet|domain|site|network|browsing|"
    r"search\w*|access|online|lookups?)\b|"
    r"^(?:let it|allow it to)\s+(?:go online|browse|search|use the (?:web|internet)|look (?:things |it )?up|"
    r"fetch|read|visit|open|access)\b[^.;]*|^let it$|^allow it$",
    re.IGNORECASE,
)

# --- questions: declines, answers, things to say --------------------------------------------------

TONE_WORDS_LY = (
    r"politely|firmly|calmly|gently|bluntly|curtly|tersely|briefly|impatiently|angrily|nicely|kindly|sharply|"
    r"sternly|casually|cheerfully|warmly|coldly|quickly|simply|plainly|clearly|again"
)
"""How the user says it ("tell it politely that …"): the manner, never part of the words."""
EVEN_IF = re.compile(
    r"^(?:even (?:if|when|though)\b.*|no matter (?:what|how)\b.*|whatever it says|however (?:it|they) asks?\b.*|"
    r"however many times\b.*|if pressed|if it (?:insists|presses|pushes|asks again)\b.*)$",
    re.IGNORECASE,
)
"""A piece that only says a decline or a held position stands ("even if it asks twice")."""
NEG = (
    r"(?:don't|do not|never|won't|will not|can't|cannot|can not|shouldn't|should not|must not|mustn't|not to|to not|"
    r"not)"
)
GIVE = (
    r"(?:give(?: away| out)?|hand(?: over| out| it over)?|share|provide|supply|reveal|disclose|tell|say|name|"
    r"specify|mention|offer|pass(?: on| along)?|send|type(?: in)?|enter|fill(?: in)?|answer|confirm|divulge|"
    r"spell out|give up|part with|leak|volunteer|put(?: in)?|let (?:it|them) (?:have|know)|pick|choose|know)"
)
DECLINE = re.compile(
    rf"^(?:(?:{NEG}|refuse to|decline to|avoid|would rather not|'d rather not|rather not|prefer not to|'d prefer "
    rf"not to|would prefer not to)\s+(?:(?:be able to|want to)\s+)?{GIVE}\b|(?:declin\w*|refus\w*|withhold\w*|"
    rf"hold back|dodge|sidestep|evade|skip|ignore)\b(?!\s+(?:to\s+)?(?:back down|give in|budge|give up|take no))|"
    rf"(?:avoid|without|refuse|decline|stop)\s+(?:giving|handing|sharing|providing|supplying|revealing|disclosing|"
    rf"telling|saying|naming|specifying|mentioning|offering|passing|sending|typing|entering|filling|answering|"
    rf"confirming|picking|choosing)\b|"
    rf"keep (?!pushing|pressing|insisting|asking)(?P<kept>(?:[\w'-]+ ){{0,4}}?)"
    rf"(?:to yourself|private|secret|back|under wraps|hidden|quiet)|"
    rf"no (?=(?:api |access |secret )?(?:keys?|tokens?|passwords?|secrets?)$)|"
    rf"leave (?P<left>(?:[\w'-]+ ){{0,4}}?)(?:blank|empty|unset|unanswered|open|out)\b|(?:give|provide|name|"
    rf"offer|share) no\b|say nothing|stay silent|keep quiet|no answer)",
    re.IGNORECASE,
)
NOT_AVAILABLE = re.compile(
    r"^(?:say|tell (?:it|them|the \w+)|reply|respond|answer|explain|admit|mention)?\s*(?:that\s+)?(?:(?:so|this)\s*$|"
    r"(?:you|i|the user|they)\s*(?:'d| would)?\s*(?:don't|do not|doesn't|does not|didn't|haven't|have not|"
    r"hasn't|can't|cannot)\s+(?:know|have|remember|recall|got|decided|picked|chosen|set up|created)|"
    r"(?:you|i|they)(?:'re| are|'m| am)\s+not sure(?:\s+yet)?(?:\s+(?:which|what|about)\b.*)?$|"
    r"(?:you|i|they)(?:'ll| will)\s+(?:decide|pick|choose|"
    r"add|set|fill|sort|figure|get back|tell|send|share|give|provide|do|handle|sort)\b.*\blater\b|"
    r"(?:you|i|they)(?:'d| would) (?:rather|prefer) not|(?:you|i|they) (?:can't|cannot) (?:share|say|tell|give)|"
    r"there (?:isn't|is no|'s no|are no|aren't)|(?:that|it|this|the \w+)\s*(?:has|'s|is|have)?\s*(?:not|n't)\s+"
    r"(?:been\s+)?(?:decided|chosen|picked|set up|created|agreed|settled|finali[sz]ed)|"
    r"it(?:'s| is) (?:not (?:decided|set up|ready|known|available)|"
    r"tbd|undecided|still open)|not (?:decided|sure|known|ready) yet|tbd|"
    r"to be (?:decided|confirmed))",
    re.IGNORECASE,
)
DECLINE_FILLER = re.compile(
    r"\b(?:if (?:it |they |the \w+ )?(?:asks?|asked|wants? it)|when asked|for now|yet|later|either|at all|"
    r"with it|to it|with them|to them|even if (?:asked|it asks)|the question|its questions|questions? it asks|"
    r"if asked|so|just|any of|every|all|each|questions?|one|anything|any|details?|info|information|specifics|"
    r"answers?|everything|whatever|it asks for|it wants|it needs|(?:any )?more|anymore|after this|from now on|"
    r"for the rest of the (?:chat|conversation))\b",
    re.IGNORECASE,
)
AGAIN = re.compile(r"\bagain\b|\brepeat(?:ed|s)?\b|\bre-?ask", re.IGNORECASE)
ANSWER_VERB = re.compile(
    r"^(?:answer|reply|respond|say|give|use|tell|hand|pick|choose|select|go with|type|enter|provide|supply|"
    r"offer|share|suggest|send|put|point (?:it|them|the \w+) (?:at|to)|call it|name it|name|"
    r"it'?s (?:called|named)|it is (?:called|named)|(?:that )?it(?:'?s| is)(?!\s+(?:for|because|since|to|in|on|at|"
    r"about|not|too|very|so|fine|ok|okay|just|only|still|already|pretty|quite|rather|all)\b)|the answer is|"
    r"the answer should be)\b(?:\s+(?:it(?!')|them|him|her|the (?:agent|assistant|builder|bot)|back)(?=\s))?"
    r"(?:\s+(?:with|that|by saying|as)\b)?(?:\s+(?:it'?s|it is)\b)?\s*:?\s*(?P<value>.+)$",
    re.IGNORECASE,
)
STATEMENT = re.compile(
    rf"^(?!(?:{ACTION_VERBS}|point|explain|mention|complain|remind|let)\b)"
    r"(?:the\s+|my\s+|our\s+|its\s+|your\s+|their\s+)?(?P<topic>[a-z][\w' /-]{1,40}?)\s*(?:\s(?:is|are|should be|"
    r"will be|to use is|must be|is called|is named|would be)\s|\s*:\s+|\s*=\s*|\s*(?:->|→)\s*)(?P<value>.+)$",
    re.IGNORECASE,
)
REVERSED_STATEMENT = re.compile(
    r"^(?!(?:it|this|that|they|he|she|which|what)\b)(?P<value>\S+)\s+(?:is|should be|will be)\s+(?:the|my|our)\s+"
    r"(?P<topic>[a-z][\w' -]{1,40}?)$",
    re.IGNORECASE,
)
ANSWER_ABOUT = re.compile(
    r"^(?:answer|reply to|respond to|meet)\s+(?:the\s+|any\s+|a\s+|its\s+)?(?:question\s+(?:about|on|for)\s+"
    r"(?:the\s+)?(?P<topic>.+?)|(?P<topic2>.+?)\s+(?:question|query|prompt))s?\s+with\s+(?P<value>.+)$",
    re.IGNORECASE,
)
USE_AS = re.compile(
    r"^(?:use|give|go with|pick|choose|put)\s+(?P<value>.+?)\s+(?:as|for)\s+(?:the\s+|its\s+|my\s+)?(?P<topic>.+)$",
    re.IGNORECASE,
)
SAY = re.compile(
    r"^(?P<verb>say|reply|respond|answer|tell (?:it|them|him|her|the (?:agent|assistant|builder|bot))|"
    r"let (?:it|them|him|her|the (?:agent|assistant|builder|bot)) know|write(?: back)?|send|ask|enquire|inquire|"
    r"mention|point out|explain|complain|note|remark|admit|add|clarify|confirm|remind (?:it|them|him|her)|"
    rf"object|stress|emphasi[sz]e|insist)\b(?:\s+(?:{TONE_WORDS_LY}|exactly|verbatim|word for word|literally|only))?"
    r"(?:\s+(?:that|with)\b(?!'))?\s*(?P<colon>:)?\s*(?P<text>.+)$",
    re.IGNORECASE,
)
THANK = re.compile(
    r"^(?:thank (?:it|them|the (?:agent|assistant|builder|bot))|say thanks|say thank you|thanks)"
    r"(?:\s+(?:for (?:the|its|your) help|for that|a lot|warmly|politely))?$",
    re.IGNORECASE,
)
CLOSING = re.compile(
    r"(?:thanks|thank you|cheers|many thanks|thanks a lot|that's (?:all|it|everything)(?: for (?:now|today))?)[.!]?",
    re.IGNORECASE,
)
"""Words that close what the user says ("say thanks, that's all"): part of the message, not a reason."""
STOP = re.compile(
    r"^(?:stop|end (?:the conversation|the chat|there|here|it)|be done|leave it there|say nothing (?:more|else)|"
    r"(?:send|write) (?:this|the|your|the next|this turn's) (?:message|turn|reply|text)|reply|answer|respond|"
    r"continue|go on|carry on|please|thanks|if possible|ok|okay)$",
    re.IGNORECASE,
)

# --- held positions and tones ---------------------------------------------------------------------

HOLD = re.compile(
    r"^(?:insist(?:s|ing)?(?: on (?:it|this|that))?|"
    r"keep (?:insisting|pushing(?: back)?|asking|pressing(?: on)?|at it|on it|going|"
    r"nagging|repeating (?:it|the request|yourself))|hold (?:firm|your ground|the line|out|your position)|"
    r"stand (?:firm|your ground)|stay firm|be persistent|persist|"
    r"(?:don't|do not|never|refuse to|won't) (?:back down|back off|let up|give way|fold|yield|give in|give up|budge|"
    r"relent|let it go|cave(?: in)?|take no for "
    r"an answer|accept no|accept a no)|stick to (?:it|your guns|the request|your request|your position)|"
    r"repeat (?:it|the (?:same )?(?:request|ask|thing|demand)|yourself|your request)|"
    r"push(?:es)?(?: back| again| harder| on)?|press(?:es)?(?: on| again| harder| the point)?|"
    r"nudge(?: it)?(?: again)?|try(?: again)?|ask again|ask (?:it )?(?:once|one more time|twice)|give up|"
    r"let it (?:go|be|rest)|accept (?:the|its) (?:refusal|answer|no)|back (?:down|off)|drop it|"
    r"stop(?: pushing| asking| there| here)?|leave it (?:there|at that)|move on)\b(?P<rest>.*)$",
    re.IGNORECASE,
)
HOLD_REST_OK = re.compile(
    r"^(?:\s*(?:even if (?:it|they) (?:refuses?|says? no|pushes back|objects?|declines?)(?: again)?|"
    r"if (?:it|they) (?:refuses?|says? no|pushes back|objects?)(?: again)?|whatever it says|no matter what|"
    r"(?:up )?on (?:it|this|that|the point|the request|[\w' -]{1,60})|about (?:it|this|that|[\w' -]{1,60})|"
    r"again|harder|this time|in the next message|in total|after that|until it refuses|then|more firmly|"
    r"firmly|politely|a bit|easily|so easily|too easily|that easily|quickly|too quickly|right away|at the first no|"
    r"without a fight)\b)*\s*$",
    re.IGNORECASE,
)
TONE_WORDS = (
    r"frustrated|annoyed|impatient|irritated|exasperated|angry|upset|curt|terse|brief|polite|friendly|calm|casual|"
    r"formal|rushed|hurried|stressed|anxious|apologetic|confused|unsure|hesitant|enthusiastic|grateful|sarcastic|"
    r"blunt|firm|short|cheerful|tired|grumpy|nervous|pushy|demanding|relieved|happy|pleased|excited|disappointed|"
    r"skeptical|sceptical|worried|doubtful|bored|surprised|frank|direct|informal|warm|cold|busy|distracted|"
    r"irritable|cross|testy|snappy|snippy|weary|exhausted|fed up|passive[- ]aggressive|short[- ]tempered|"
    r"cranky|grouchy|peeved|miffed|sharp|brusque|concise|succinct|chatty|relaxed|laid[- ]back|easygoing|"
    r"courteous|respectful|stern|insistent|urgent|panicked|panicky|frantic|desperate|agitated|tense|"
    r"unimpressed|dismissive|curious|grateful|thankful|appreciative|upbeat|gruff|clipped|harried|flustered|"
    r"overwhelmed|impolite|rude|kind|nice|gentle|patient|professional|to the point|straight to the point|"
    r"matter-of-fact|no-nonsense|quick|slow|neutral|factual|precise|businesslike|business-like|"
    r"short with (?:it|them|the agent)"
)
_TONE_ADJ = rf"(?:{TONE_WORDS})(?:ly|ily)?"
_TONE_MOD = (
    r"(?:a (?:bit|little|tad) |very |really |quite |rather |somewhat |increasingly |clearly |visibly |slightly |"
    r"more |getting |extremely |super |mildly |pretty |a bit more |more and more |noticeably |openly |"
    r"(?:a )?little(?: bit)? )*"
)
TONE = re.compile(
    rf"^(?:while\s+|and\s+)?(?:(?:tone|voice|mood|manner)\s*:\s*)?(?:(?:sound(?:ing|s)?|be(?:ing)?|act(?:ing)?|get(?:ting)?|stay(?:ing)?|seem(?:ing)?|"
    rf"appear|come across(?: as)?|remain(?:ing)?|grow|become|feel|play it|write|reply|answer|respond|talk|speak|"
    rf"keep it|keep (?:your )?(?:messages|replies|answers|tone)|pretend (?:you(?:'re| are)|to be)|"
    rf"as if (?:you(?:'re| are))|you(?:'re| are)|the user(?:'s| is)|they(?:'re| are)|i'm|i am)\s+)?{_TONE_MOD}"
    rf"(?:{_TONE_ADJ}|in a (?:rush|hurry)|pressed for time|on a deadline|out of patience|stressed out)"
    rf"(?:\s*(?:,|but|and|yet)\s+{_TONE_MOD}(?:{_TONE_ADJ}))*(?:\s+(?:tone|voice|mood|way|manner))?"
    rf"(?:\s+(?:throughout|all along|the whole time|throughout the conversation|all the way|at all times))?\s*$"
    rf"|^(?:(?:reply|answer|respond|write|speak|talk)\s+)?(?:(?:use|with|in|adopt|take|keep)\s+)?(?:a|an)\s+{_TONE_MOD}{_TONE_ADJ}(?:\s*(?:,|but|and)\s+"
    rf"{_TONE_ADJ})*\s+(?:tone|voice|way|manner|mood|register)(?:\s+of voice)?\s*$"
    rf"|^(?:(?:reply|answer|respond|write|speak|talk)\s+)?with (?:some |a bit of |a hint of |mild |obvious |"
    rf"growing |clear |a touch of )?(?:impatience|irritation|frustration|annoyance|urgency|sarcasm|enthusiasm|"
    rf"exasperation|politeness|warmth|humou?r)\s*$|^no small talk$|^keep (?:it|messages|replies) short$",
    re.IGNORECASE,
)
RATIONALE = re.compile(
    r"^(?:because|since|as|you(?:'ll| will| have| haven'?t| don'?t| do not| are| aren'?t| plan| want| need| "
    r"can| can'?t|'re)|it(?:'s| is| isn'?t| has| hasn'?t| was| wasn'?t| will| won'?t)|they(?:'re| are| have)|"
    r"this is|that is|that's|there(?:'s| is| isn'?t| are| aren'?t)|the (?:user|team) (?:is|has|will)|"
    r"we(?:'ll| will|'re| are|'ve| have| can| don'?t| do not)|i(?:'ll| will|'m| am|'ve| have))\b",
    re.IGNORECASE,
)

# --- everything else ------------------------------------------------------------------------------

AS_USUAL_REST = re.compile(
    r"\b(?:anything else|everything else|any other (?:question|detail)s?|other (?:question|detail)s?|the rest|"
    r"remaining (?:question|detail)s?|whatever else|all (?:the )?other (?:question|detail)s?|every other "
    r"(?:question|detail))\b|^rest\b",
    re.IGNORECASE,
)
AS_USUAL_HOW = re.compile(
    r"\b(?:defaults?|sensibl[ey]|plausibl[ey]|reasonabl[ey]|realistic(?:ally)?|normally|as usual|however you "
    r"(?:like|want|see fit)|as you see fit|make up|made[- ]up|invent|whatever (?:you like|seems right)|"
    r"something sensible|freely|dummy|sample|placeholder|whatever (?:values? )?makes? sense|"
    r"make (?:them|it|something|one|those|stuff|things) up|invent (?:them|it|"
    r"something))\b",
    re.IGNORECASE,
)
PIECES = re.compile(
    rf"\s*,\s*(?:and\s+|but\s+)?(?:then\s+)?|\s+(?:and\s+)?then\s+|\s+but\s+|\s+and\s+(?=(?:{ACTION_VERBS})\b)"
    r"|\s*(?:—|–)\s*|\s+-\s+|:\s+(?=(?:then\s+)?(?:say|reply|respond|tell|answer|ask|write|send|mention)\b)",
    re.IGNORECASE,
)
SENTENCES = re.compile(r"(?<=[.!?;…])\s+|\n+")
