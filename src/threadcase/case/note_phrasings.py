"""The director-note phrasings, as regular expressions: what each directive's words look like.

:mod:`threadcase.case.note_grammar` reads a note with them; ``docs/director-notes.md`` lists the
phrasings in prose, and ``tests/test_note_grammar.py`` holds one row per phrasing. Pure data.
"""

from __future__ import annotations

import re

# --- moments: "when asked for …", "when the plan is shown", "if a card appears" -------------------

TRIGGER = re.compile(
    r"^(?P<word>when(?:ever)?|once|as soon as|after|the moment|each time|every time|if|should|in case|"
    r"on|at|upon|before)\s+(?P<body>.+)$",
    re.IGNORECASE,
)
REQUIRED = frozenset({"when", "once", "as soon as", "after", "the moment", "on", "at", "upon"})
TRIGGER_END = re.compile(r"\s*(?:,|:|;|—|–|\s-\s)\s*")
ACTION_VERBS = (
    r"answer|reply|respond|say|give|use|tell|pick|choose|select|go with|type|enter|provide|decline|refuse|"
    r"withhold|skip|leave|defer|connect|set|create|add|fill|approve|accept|reject|push|object|insist|hold|"
    r"deny|allow|block|run|execute|send|ask|keep|stick|ignore|dismiss|hook|link|engage|confirm|mention|"
    r"don'?t|do not"
)
VERB_START = re.compile(rf"^(?:then\s+)?(?:{ACTION_VERBS})\b", re.IGNORECASE)
PLAN_WORDS = re.compile(r"\b(?:plan|proposal|proposed steps)\b", re.IGNORECASE)
CARD_WORDS = re.compile(
    r"\b(?:card|credentials?|connect\w*|account|sign[- ]?in|log[- ]?in|oauth|auth\w*|set ?up wizard)\b",
    re.IGNORECASE,
)
WEB_WORDS = re.compile(r"\b(?:web|internet|domain|browse|browsing|search|site|url access)\b", re.IGNORECASE)
ASK_WORDS = re.compile(
    r"\b(?:asks?|asked|asking|wants? to know|needs? to know|requests?|requested|prompts?|prompted|queries|"
    r"questions?|enquires|inquires)\b",
    re.IGNORECASE,
)
BUILT_WORDS = re.compile(
    r"\b(?:built|builds|build|applied|done|ready|finished|saved|created|first version|up and running)\b",
    re.IGNORECASE,
)
BEFORE_SENDING = re.compile(r"\b(?:answer|repl|respond|send|writ|messag)", re.IGNORECASE)
ASKER = re.compile(r"^(?:it|they|he|she|you are|you're|the (?:agent|assistant|builder|bot|ai))\s+", re.IGNORECASE)
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
    "openai": "openai",
    "gemini": "googlepalm",
    "whatsapp": "whatsapp",
    "bearer": "httpbearer",
    "header auth": "httpheader",
    "basic auth": "httpbasic",
}
SERVICE = re.compile(r"\b(" + "|".join(re.escape(k) for k in SERVICE_TYPES) + r")\b", re.IGNORECASE)

# --- lists, runs, web access ----------------------------------------------------------------------

ONE_AT_A_TIME = re.compile(
    r"\b(?:one (?:at a time|by one|per message|after (?:the )?(?:other|another))|each (?:[\w-]+ )?(?:in its own|"
    r"on its own|as a separate|in a separate) message|in separate messages|separately|"
    r"(?:wait(?:ing)?|only) (?:for|after) (?:each|every) (?:build|change|one|edit|reply|answer)|"
    r"each (?:only )?(?:after|once) the (?:previous|last|one before)"
    r"(?: one)?|after each (?:one )?(?:is|was|has been) (?:applied|done|built)|one change per message)\b",
    re.IGNORECASE,
)
RUN_WORKFLOW = re.compile(
    r"\b(?:run|execute|trigger|test-run|try)s?\b[^.;]*?\b(?:workflow|it)\b[^.;]*?"
    r"\b(?:yourself|myself|themselves|for real|before (?:answering|replying|you answer|you reply|sending|"
    r"the next message)|once before)",
    re.IGNORECASE,
)
WEB_DENY = re.compile(
    r"\b(?:deny|block|refuse|reject|don'?t allow|do not allow|disallow|forbid)\b[^.;]*\b(?:web|internet|domain|"
    r"site|network|browsing|search|access)\b",
    re.IGNORECASE,
)
WEB_ALLOW = re.compile(
    r"\b(?:allow|grant|approve|permit|accept)\b[^.;]*\b(?:web|internet|domain|site|network|browsing|search|access)\b",
    re.IGNORECASE,
)

# --- questions: declines, answers, things to say --------------------------------------------------

DECLINE = re.compile(
    r"\b(?:declin\w*|refus\w*|withhold\w*|(?:would )?rather not(?: say| tell| give| share)?|prefer not to \w+|"
    r"(?:don'?t|do not|won'?t|will not|never|not to|not) (?:say|tell|give|share|provide|answer|reveal|name|"
    r"specify|disclose|pick|choose|know|offer|supply|mention)|without (?:giving|saying|sharing|providing|naming)|"
    r"keep (?P<kept>(?:[\w'-]+ ){0,4}?)(?:to yourself|private|secret|back)|skip (?:the|that|this|any) questions?|"
    r"leave (?P<left>(?:[\w'-]+ ){0,4}?)(?:blank|empty|unset|unanswered|open)|say (?:you )?(?:don'?t|do not) know|"
    r"say nothing|stay silent|keep quiet|(?:don'?t|do not) mention|"
    r"(?:you )?(?:haven'?t|have not) (?:decided|picked|chosen)|not (?:decided|sure) yet|no answer)",
    re.IGNORECASE,
)
DECLINE_FILLER = re.compile(
    r"^(?:to\s+)?(?:(?:say|tell|give|share|provide|answer|reveal|name|specify|disclose|pick|choose|offer|supply|"
    r"mention)\s+(?:it\s+)?)?(?:(?:which|what|who|the|any|a|an)\b)?\s*",
    re.IGNORECASE,
)
AGAIN = re.compile(r"\bagain\b|\brepeat(?:ed|s)?\b|\bre-?ask", re.IGNORECASE)
ANSWER_VERB = re.compile(
    r"^(?:then\s+)?(?:answer|reply|respond|say|give|use|tell (?:it|them|the \w+)|pick|choose|select|go with|type|"
    r"enter|provide|supply|offer|call it|name it|name|it'?s (?:called|named)|it is (?:called|named)|it'?s|it is|"
    r"that it'?s|"
    r"that it is|the answer is)\b(?:\s+(?:with|that|it'?s|it is|by saying))?\s*:?\s*(?P<value>.+)$",
    re.IGNORECASE,
)
STATEMENT = re.compile(
    r"^(?:the\s+|my\s+|our\s+|its\s+)?(?P<topic>[a-z][\w' -]{1,40}?)\s+(?:is|are|should be|will be|to use is|"
    r"must be)\s+(?P<value>.+)$",
    re.IGNORECASE,
)
USE_AS = re.compile(r"^use\s+(?P<value>.+?)\s+(?:as|for)\s+(?:the\s+)?(?P<topic>.+)$", re.IGNORECASE)
SAY = re.compile(
    r"^(?:then\s+)?(?:say|reply|respond|tell (?:it|them|the (?:agent|assistant|builder))|write|send|"
    r"ask(?: it| them)?(?: to)?|mention)\b(?:\s+that)?\s*:?\s*(?P<text>.+)$",
    re.IGNORECASE,
)

# --- held positions and tones ---------------------------------------------------------------------

HOLD = re.compile(
    r"^(?:then\s+|and\s+)?(?:insist(?:s|ing)?|keep (?:insisting|pushing|asking)|hold (?:firm|your ground|the line|"
    r"out)|stand firm|stay firm|be persistent|persist|don'?t (?:back down|give in|budge|relent|let it go)|do not "
    r"(?:back down|give in|budge|relent)|stick to (?:it|your guns|the request|your request|your position)|"
    r"repeat (?:it|the (?:same )?(?:request|ask|thing)|yourself|your request)|"
    r"push(?:es)? (?:back|again|harder|once more|one more time|twice|"
    r"three times)|push|press(?:es)? (?:on|again|harder|once more|one more time|twice|the point)|press|"
    r"nudge (?:it )?(?:again|once more)|try (?:again|once more|one more time)|ask again|give up|let it (?:go|be|rest)|"
    r"accept (?:the|its) (?:refusal|answer|no)|back (?:down|off)|drop it|stop(?: pushing| asking| there| here)?$|"
    r"leave it (?:there|at that)|move on)\b",
    re.IGNORECASE,
)
TONE_WORDS = (
    r"frustrated|annoyed|impatient|irritated|exasperated|angry|upset|curt|terse|brief|polite|friendly|calm|casual|"
    r"formal|rushed|hurried|stressed|anxious|apologetic|confused|unsure|hesitant|enthusiastic|grateful|sarcastic|"
    r"blunt|firm|short|cheerful|tired|grumpy|nervous|annoyingly|in a hurry|pushy|demanding|relieved|happy|pleased|"
    r"excited|disappointed|skeptical|sceptical|worried|doubtful|bored|surprised|frank|direct|informal|warm|cold|"
    r"in a rush|rushed|busy|distracted|hurried"
)
TONE = re.compile(
    rf"^(?:while\s+|and\s+)?(?:sound(?:ing|s)?|be(?:ing)?|act(?:ing)?|get(?:ting)?|stay(?:ing)?|seem(?:ing)?|"
    rf"come across as|remain(?:ing)?|pretend (?:you(?:'re| are)|to be)|as if (?:you(?:'re| are)))?\s*"
    rf"(?:a (?:bit|little) |very |increasingly |clearly |slightly |more |"
    rf"getting )?(?:{TONE_WORDS})(?:ly)?(?:\s+(?:but|and)\s+(?:{TONE_WORDS})(?:ly)?)?\s*$",
    re.IGNORECASE,
)
RATIONALE = re.compile(
    r"^(?:because|since|as|you(?:'ll| will| have| haven'?t| don'?t| do not| are| aren'?t| plan| want| need| "
    r"can| can'?t)|it(?:'s| is| isn'?t| has| hasn'?t| was| wasn'?t| will| won'?t)|they(?:'re| are| have)|"
    r"this is|that is|there(?:'s| is| isn'?t| are| aren'?t))\b",
    re.IGNORECASE,
)

# --- plans ----------------------------------------------------------------------------------------

PUSHBACK = re.compile(
    r"^(?:then\s+)?(?P<verb>push(?:es)? back|object(?: to (?:it|the plan|the first (?:one|plan|version)))?|"
    r"reject(?: it| the plan| the first (?:one|plan|version)| the proposal)?|refuse (?:it|the plan)|say no|"
    r"(?:don'?t|do not) approve(?: it| the plan)?(?: yet)?|ask for changes|request changes|send it back|"
    r"complain|disagree)\b(?P<count>\s+(?:once|twice|two times|three times|thrice))?(?P<rest>.*)$",
    re.IGNORECASE,
)
FEEDBACK = re.compile(
    r"^(?:\s*(?::|—|–|-{1,2}|,)\s*(?:and\s+)?(?:say(?:ing)?\s+(?:that\s+)?|tell(?:ing)? it\s+(?:that\s+|to\s+)?|"
    r"ask(?:ing)?(?: it)?\s+(?:to\s+|for\s+)?)?|\s+(?:with|saying(?: that)?|by saying(?: that)?|and say(?: that)?|"
    r"and ask(?: it)?(?: to| for)?|asking(?: it)?(?: to| for)?|and tell it(?: to| that)?|telling it(?: to| that)?|"
    r"because|on|about)\s+)(?P<feedback>.+)$",
    re.IGNORECASE,
)
DECISION = re.compile(
    r"^(?:then\s+|and\s+|but\s+)*(?:only\s+)?(?P<verb>approve|accept|confirm|okay|ok|sign off on|go ahead with|"
    r"say yes(?: to)?|reject|decline|refuse|turn down)\b(?P<rest>.*)$",
    re.IGNORECASE,
)
TRAILING_DECISION = re.compile(
    r"^(?P<feedback>.+?)[,;]?\s+(?:and\s+|then\s+|and then\s+)+(?P<decision>(?:only\s+)?(?:approve|accept|reject|"
    r"confirm)\b.*)$",
    re.IGNORECASE,
)
CONDITION = re.compile(r"\b(?:only\s+)?(?:once|when|after|as soon as|if|until)\s+(?P<cond>.+)$", re.IGNORECASE)
LATER_VERSION = re.compile(
    r"\b(?:second|revised|next|new|updated|2nd|changed|fixed|corrected|following) (?:version|plan|one|proposal|"
    r"draft)\b|\b(?:afterwards|after that|the second time|next time)\b",
    re.IGNORECASE,
)
ABSENT = re.compile(
    r"^(?:it|the plan|the (?:revised|new|next|updated) (?:plan|version|one)|that)?\s*(?:no longer|does ?n[o']t|"
    r"does not|stops?|drops|has no|contains no|mentions no|includes no|is without|leaves? out|removes?|omits?|"
    r"lacks?|has dropped|has removed|loses)\s+(?:any\s+)?(?P<what>.+)$",
    re.IGNORECASE,
)
ABSENT_AFTER = re.compile(r"^(?P<what>.+?)\s+(?:is|are)\s+(?:gone|removed|dropped|out|no longer there)\b", re.I)
PRESENT = re.compile(
    r"^(?:it|the plan|the (?:revised|new|next|updated) (?:plan|version|one)|that)?\s*(?:includes?|mentions?|has|"
    r"adds?|contains?|uses?|covers?|handles?|shows?)\s+(?P<what>.+)$",
    re.IGNORECASE,
)
REPEATS = {"once": 1, "twice": 2, "two times": 2, "three times": 3, "thrice": 3}

# --- credentials ----------------------------------------------------------------------------------

CRED_VERB = re.compile(
    r"\b(?:engage\w*|set (?:[\w'-]+ )?up|setup|connect\w*|use|pick|select|choose|create|add|fill(?: it)?(?: in)?|"
    r"hook (?:[\w'-]+ )?up|link|authori[sz]e|sign (?:in|up)|log in|provide|enter|complete|accept)\b",
    re.IGNORECASE,
)
CRED_DEFER = re.compile(
    r"\b(?:later|defer\w*|skip\w*|not now|postpone\w*|for now|for the moment|ignore|dismiss|"
    r"(?:leave|keep) (?:[\w'-]+ ){0,3}?(?:unconnected|disconnected|alone|for later|for now|unset|empty|blank|"
    r"open|out)|(?:don'?t|do not|won'?t|will not|never|refuse to|decline to) (?:set|connect|engage|use|add|create|"
    r"provide|link|hook|fill))\b",
    re.IGNORECASE,
)
CRED_NEW = re.compile(
    r"\b(?:new|fresh|another|brand[- ]new|separate|second)\s+(?:one|credential|account|connection|token)\b|"
    r"\bcreate (?:one|a credential|it|a new)\b",
    re.IGNORECASE,
)
CRED_BROKEN = re.compile(
    r"\b(?:should ?n[o']t (?:authenticate|work|connect|pass)|(?:does|do|will|would) ?n[o']t (?:authenticate|work)|"
    r"does not (?:authenticate|work)|not authenticate|invalid|broken|expired|revoked|bad|wrong|should fail|"
    r"meant to fail|supposed to fail|expected to fail|fails?|failing)\b",
    re.IGNORECASE,
)
CRED_AUTO = re.compile(r"\b(?:auto(?:matic(?:ally)?)?[- ]?(?:setup|set ?up)|automatic(?:ally)?|auto)\b", re.I)
CRED_NAMED = re.compile(r"\b(?:named|called)\s+([A-Z][\w-]*(?:\s+[A-Z0-9(][\w)-]*)*)")
CRED_PRONOUN = re.compile(r"\b(?:it|them|both|all|everything|each|one|the card)\b", re.IGNORECASE)

# --- everything else ------------------------------------------------------------------------------

AS_USUAL = re.compile(
    r"^(?:then\s+)?(?:make up|invent|come up with|use|give|pick|choose|answer (?:everything|anything|the rest|any "
    r"other (?:question|detail)s?)(?: else)? with)\s+(?:a |an |some )?(?:plausible|sensible|reasonable|realistic|"
    r"default|placeholder|sample|dummy)\s+(?:values?|answers?|details?|defaults?|data|ones?)\b|"
    r"^(?:then\s+)?answer (?:everything|anything|the rest|any other (?:question|detail)s?|every other question)"
    r"(?: else)?\s+"
    r"(?:as usual|normally|as you see fit|sensibly|plausibly)\b|^(?:use )?(?:sensible )?defaults for the rest\b",
    re.IGNORECASE,
)
STOP_SAYING = re.compile(
    r"\s*(?:,|\band\b|\bthen\b)\s*(?:then\s+)?(?:stop|end (?:the conversation|there|here|it)|be done|leave it there"
    r"|say nothing (?:more|else))\s*$",
    re.IGNORECASE,
)
PIECES = re.compile(
    rf"\s*,\s*(?:and\s+|but\s+)?(?:then\s+)?|\s+(?:and\s+)?then\s+|\s+but\s+|\s+and\s+(?=(?:{ACTION_VERBS})\b)"
    r"|\s*(?:—|–)\s*|\s+-\s+|:\s+(?=(?:then\s+)?(?:say|reply|respond|tell|answer|ask|write|send|mention)\b)",
    re.IGNORECASE,
)
SENTENCES = re.compile(r"(?<=[.!?;…])\s+|\n+")
TRAILING_ASK = re.compile(
    r"^(?P<rest>.+?),?\s+(?P<moment>(?:if|when|whenever|once|should|in case)\s+(?:it |they |the (?:agent|assistant|"
    r"builder|bot) )?(?:asks?|asked|asking|wants? to know|needs? to know|requests?)\b[^,;]*)$",
    re.IGNORECASE,
)
BARE_DECISION = re.compile(
    r"^(?:then\s+)?(?:only\s+)?(?:approve|accept|confirm|sign off on|go ahead with|say yes|"
    r"reject (?:it|the plan|the proposal|the fix|the change))\b",
    re.IGNORECASE,
)
FLIP = (
    (re.compile(r"\byou(?:'re| are)\b", re.I), "I'm"),
    (re.compile(r"\byour\b", re.I), "my"),
    (re.compile(r"\byourself\b", re.I), "myself"),
    (re.compile(r"\byou(?:'ll| will)\b", re.I), "I'll"),
    (re.compile(r"\byou\b", re.I), "I"),
)
PLAN_SAY = re.compile(
    r"^(?:then\s+)?(?:say|tell it|reply|respond|point out|explain|mention)(?:\s+that)?\s+(?P<feedback>.+?)[,;]?\s+"
    r"(?:and\s+|then\s+|and then\s+)+(?P<decision>(?:reject|decline|refuse|approve|accept)\b.*)$",
    re.IGNORECASE,
)
ON_THE_PLAN = re.compile(
    r"^\s*(?:on|to|against)\s+(?:the|this|its|any|that|a)\s+(?:first\s+)?(?:plan|proposal)\b", re.IGNORECASE
)
UNTIL = re.compile(r"\s+(?:until|till|unless)\s+(?P<cond>.+)$", re.IGNORECASE)
