"""Cue patterns: discourse markers, hedges, questions, requests and the category of a claim."""

from __future__ import annotations

import re
from typing import Final

from memstream.core.extract.gates import Caseless, Gate, Gates, gate, words_of, wordset
from memstream.schemas.events import Category

# --- cue patterns --------------------------------------------------------------------

MARKERS = re.compile(
    r"^(?:(?:well|so|oh|ah|aw+|um+|uh+|hmm+|yeah|yes|yep|no(?! longer| one| more)|nope|ok|okay|anyway|anyways|also|btw|"
    r"by the way|actually|honestly|basically|fyi|fun fact|guess what|wow|haha|lol|hey|hi|hello|"
    r"sorry|wait|oops|plus|and|but|to be honest|tbh|oh and|oh well|then|now|correction|thank you so much|"
    r"thank you|thanks so much|thanks|nice to meet you|good to see you|"
    r"update|just so you know|for the record|quick update|(?:big|good|bad|some|great) news)\b[\s,!.:;-]*)+",
    re.I,
)
HEDGE = re.compile(
    r"^(?:I think|I guess|I feel like|I suppose|I mean|I reckon|I'd say|I believe|probably|maybe|perhaps)(?: that)?,?\s+(?=(?:I|i|[Ww]e|[Mm]y|[Oo]ur)\b)"
)
HEDGE_PARTS = ("maybe", "perhaps", "probably", "might", "not sure", "i think", "i guess")
_HEDGE_WORDS = re.compile(r"\b(?:maybe|perhaps|probably|might|not sure|i think|i guess)\b", re.I)
HEDGE_ANY = Caseless(_HEDGE_WORDS)
# The speaker's state of mind, said before a hedge ("I'm kinda worried that my $12.99/month
# plan might not be enough", "I'm not sure if ...", "I think the Q&A would be great"): the
# claim reports the worry, doubt or opinion, which is certain; its wording keeps the hedge.
# Marked unsure, such memories were archived as unconfirmed after 30 days (193 of 4,656 on
# BEAM test through a worker), facts and all.
_STATE_OF_MIND = re.compile(
    r"\b(?:[Ii]|[Ww]e)(?:'m|'re| am| are| was| were| feel| felt| have been|'ve been)?\s+"
    r"(?:(?:kinda|kind of|sort of|a bit|a little|a little bit|really|so|very|pretty|quite|"
    r"still|also|just|getting|somewhat|honestly|genuinely|seriously|starting to be)\s+)*"
    r"(?:worried|concerned|afraid|nervous|anxious|scared|unsure|not sure|uncertain|wondering|"
    r"curious|hoping|hopeful|doubtful|torn|confused|stressed|considering|think|thought|"
    r"wonder|hope|doubt|fear|don't know|do not know|didn't know)\b"
)


def reports_state_of_mind(body: str) -> bool:
    """A hedge inside what a state of mind of the speaker's is about, not on the claim."""
    hedge = _HEDGE_WORDS.search(body)
    state = _STATE_OF_MIND.search(body)
    return hedge is not None and state is not None and state.start() <= hedge.start()


QUESTION_START = re.compile(
    r"^(?:do|does|did|can|could|would|will|should|is|are|am|was|were|have|has|what|why|how|when|where|who|whom|which|any|anything|shall|may|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|right)\b",
    re.I,
)
REASON_CLAUSE = re.compile(
    r"\b(?:since|because|as|now that|given that|considering)\s+((?:I|i|[Ww]e|[Mm]y|[Oo]ur)\b.+)"
)
WONDER = re.compile(
    r"^(?:I|i)(?:'m| am| was)? (?:wonder|wondering|curious|need help|want to know|would like to know|'d like to know)",
    re.I,
)
FIRST_PERSON = re.compile(
    r"(?=[IiMmWwuOo])"  # what every match starts with: saying so first is much quicker
    r"(?<![\w.])(?:[Ii]|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself|[Ww]e|us|[Oo]ur|[Oo]urs|[Oo]urselves)(?![\w]|\.\w)"
)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you're|you've|you'll|you'd)\b", re.I)
# _SECOND_PERSON matches exactly where one of these is a word.
SECOND_PERSON_WORDS = wordset("you your yours yourself")

STANDING_ORDER = re.compile(
    r"^(?:please\s+)?(?P<verb>always|never|don't|do not|avoid|stop|make sure(?: to)?|remember to|keep(?! up| going| it up)|use|prefer|stick to|stick with)\b\s*(?P<rest>.*)$",
    re.I,
)
REMIND_ME = re.compile(
    r"^(?:please\s+)?(?:can you\s+|could you\s+)?remind me\s+(?:to\s+)?(?P<rest>.+)$", re.I
)
CALL_ME = re.compile(r"^(?:please\s+)?(?:just\s+)?call me\s+(?P<rest>.+)$", re.I)
LETS = re.compile(r"^(?:let's|let us)\s+(?P<rest>.+)$", re.I)
IMPERATIVE = re.compile(
    r"^(?:please|can you|could you|would you|will you|write|help|tell|show|give|make|create|explain|summarize|summarise|translate|fix|find|list|generate|draft|check|send|book|search|look|let me know|go ahead|try|imagine|pretend|describe|compare|recommend|suggest|rewrite|refactor|add|remove|delete|update|run|open|read|calculate|convert|edit|review|plan)\b",
    re.I,
)

ASSISTANT_LEAD_IN = re.compile(
    r"^(?:(?:got it|noted|understood|sure|great|okay|ok|perfect|thanks for sharing|good to know|of course|absolutely|right)\s*[,!.:;—–-]?\s*)*"
    r"(?:(?:so\s+)?(?:you (?:mentioned|said|told me|noted|shared|indicated|explained)|as you (?:mentioned|said)|"
    r"i (?:remember|recall|understand|noted|note|have noted|'ve noted|see)|i've noted|it sounds like|since)(?: that)?,?\s+)?",
    re.I,
)
ADVICE = re.compile(
    r"\b(?:you (?:should|could|might|can|may|need to|must|have to|want to|'d|would|will want|ought)|if you|let me know|feel free|"
    r"would you|do you|did you|have you|are you|can you|could you|hope you|good luck)\b",
    re.I,
)

#: verbs that rank one thing over another ("prioritized X over Y", "values X over Y"):
#: a preference here and in ``core.standing_instructions``
RANKING_VERBS: Final = (
    r"priorit(?:i[sz]e[sd]?|i[sz]ing)|valued?|values|valuing|favou?r(?:s|ed|ing)?"
)

_CATEGORY_CUES: tuple[tuple[Category, re.Pattern[str]], ...] = (
    (
        "correction",
        re.compile(
            r"^(?:actually|correction|no,|nope|sorry,|wait,|oops|update:)|\b(?:i meant|i was wrong|scratch that|"
            r"that's wrong|that's not right|that is wrong|that's incorrect|no longer|not anymore|anymore|changed my mind|"
            r"to clarify|instead of|i misspoke|rather than what i said)\b",
            re.I,
        ),
    ),
    (
        "decision",
        re.compile(
            r"\b(?:decided|decide|decision|going with|go with|went with|chose|chosen|settled on|opted|picked|"
            r"switching to|switched to|switch to|migrating to|migrated to|we'll use|we will use|let's|let us|"
            r"agreed to|committed to using|finalized|final answer)\b",
            re.I,
        ),
    ),
    (
        "commitment",
        re.compile(
            r"(?:\b(?:will|shall|going to|gonna|plan to|plans to|planning to|intend to|promise|promised|need to|"
            r"needs to|have to|has to|got to|must|remind me|deadline|due (?:on|by|date|tomorrow|next|this)|scheduled|appointment|by (?:monday|tuesday|"
            r"wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next week|the end of))\b|'ll\b)",
            re.I,
        ),
    ),
    (
        "preference",
        re.compile(
            r"\b(?:love|loves|loved|loving|enjoy|enjoys|enjoyed|prefer|prefers|preferred|favou?rite|hate|hates|hated|"
            r"dislike|dislikes|disliked|can't stand|cannot stand|fan of|fond of|adore|adores|rather|obsessed with|"
            r"passionate about|go-to|(?:'m|am|is|are|really|so|totally) into|allergic|likes|"
            # "like" the verb, after its subject or an auxiliary; not the preposition
            # ("risks, like bias in the algorithm", "notation like P(A)")
            r"(?:i|we|you|they|user|would|'d|do|don't|did|didn't|really|also|still|"
            r"definitely|genuinely|to) like)\b"
            # one thing ranked above another ("I prioritized battery life over brand
            # prestige", "we value readability over speed"): a preference, not a principle
            r"|\b(?:" + RANKING_VERBS + r")"
            r"\s+(?!(?:it|that|this|them|you|your|the time|the years|the weekend)\b)"
            r"[^.;,!?]{1,60}?\s+over\b",
            re.I,
        ),
    ),
    (
        "skill",
        re.compile(
            r"\b(?:know how to|knows how to|good at|great at|skilled|fluent|proficient|experienced (?:in|with)|expert|"
            r"years of experience|speak|speaks|learning|learned|learnt|studying|studied|certified|taught (?:me|myself)|"
            r"practic(?:e|ing)|practis(?:e|ing)|can (?:code|program|cook|play|speak|write|draw|paint|swim|drive|sing|dance))\b",
            re.I,
        ),
    ),
    (
        "principle",
        re.compile(
            r"\b(?:always|never|principle|rule of thumb|my rule|believe in|believe that|it's important to|"
            r"it is important to|make sure to|should always|should never|values?|priorit(?:y|ies|ize))\b",
            re.I,
        ),
    ),
    (
        "relationship",
        re.compile(
            r"\b(?:wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|sister|brother|siblings?|mother|mom|"
            r"mum|father|dad|parents?|son|daughter|kids?|children|child|baby|grandma|grandmother|grandpa|"
            r"grandfather|grandparents?|aunt|uncle|cousin|nephew|niece|friends?|best friend|colleague|coworker|"
            r"co-worker|boss|manager|mentor|roommate|neighbou?r|married|dating|divorced|engaged|in-laws?|family)\b",
            re.I,
        ),
    ),
    (
        "moment",
        re.compile(
            r"\b(?:birthday|anniversary|wedding|graduat(?:ed|ion)|got married|got engaged|passed away|died|was born|"
            r"gave birth|promoted|promotion|retired|first time|never forget|best day|worst day|proud|milestone|"
            r"celebrat\w*|accident|diagnosed|vacation|holiday|trip|concert|festival|ceremony|parade|race|marathon)\b",
            re.I,
        ),
    ),
    (
        "entity",
        re.compile(
            r"\b(?:is called|are called|named|'s name is|stands for|is an? (?:tool|library|framework|company|startup|"
            r"service|project|app|application|team|product|database|platform|band|restaurant|shop|store|book|movie|"
            r"show|game|podcast|dog|cat|pet|repo|repository|codebase|client|customer))\b",
            re.I,
        ),
    ),
)


# Gates of the families above, in the same order.
_CATEGORY_GATES: tuple[Gate, ...] = (
    gate(
        "i meant|i was wrong|scratch that|that's wrong|that's not right|that is wrong|"
        "that's incorrect|no longer|not anymore|anymore|changed my mind|to clarify|instead of|"
        "i misspoke|rather than what i said",
        starts="actually|correction|no,|nope|sorry,|wait,|oops|update:",
    ),
    gate(
        "decided|decide|decision|going with|go with|went with|chose|chosen|settled on|opted|"
        "picked|switching to|switched to|switch to|migrating to|migrated to|we'll use|"
        "we will use|let's|let us|agreed to|committed to using|finalized|final answer"
    ),
    gate(
        "will|shall|going to|gonna|plan to|plans to|planning to|intend to|promise|promised|"
        "need to|needs to|have to|has to|got to|must|remind me|deadline|due on|due by|due date|"
        "due tomorrow|due next|due this|scheduled|appointment|by monday|by tuesday|"
        "by wednesday|by thursday|by friday|by saturday|by sunday|by tomorrow|by tonight|"
        "by next week|by the end of|'ll"
    ),
    gate(
        "love|loves|loved|loving|enjoy|enjoys|enjoyed|prefer|prefers|preferred|favorite|"
        "favourite|hate|hates|hated|dislike|dislikes|disliked|can't stand|cannot stand|fan of|"
        "fond of|adore|adores|rather|obsessed with|passionate about|go-to|into|allergic|like|likes|"
        "over"
    ),
    gate(
        "know how to|knows how to|good at|great at|skilled|fluent|proficient|experienced in|"
        "experienced with|expert|years of experience|speak|speaks|learning|learned|learnt|"
        "studying|studied|certified|taught me|taught myself|practice|practicing|practise|"
        "practising|can code|can program|can cook|can play|can speak|can write|can draw|"
        "can paint|can swim|can drive|can sing|can dance"
    ),
    gate(
        "always|never|principle|rule of thumb|my rule|believe in|believe that|"
        "it's important to|it is important to|make sure to|should always|should never|value|"
        "values|priority|priorities|prioritize"
    ),
    gate(
        "wife|husband|partner|spouse|boyfriend|girlfriend|fiance|fiancé|fiancee|fiancée|"
        "sister|brother|sibling|siblings|mother|mom|mum|father|dad|parent|parents|son|daughter|"
        "kid|kids|children|child|baby|grandma|grandmother|grandpa|grandfather|grandparent|"
        "grandparents|aunt|uncle|cousin|nephew|niece|friend|friends|best friend|colleague|"
        "coworker|co-worker|boss|manager|mentor|roommate|neighbor|neighbour|married|dating|"
        "divorced|engaged|in-law|in-laws|family"
    ),
    gate(
        "birthday|anniversary|wedding|graduated|graduation|got married|got engaged|passed away|"
        "died|was born|gave birth|promoted|promotion|retired|first time|never forget|best day|"
        "worst day|proud|milestone|accident|diagnosed|vacation|holiday|trip|concert|festival|"
        "ceremony|parade|race|marathon",
        parts="celebrat",
    ),
    gate("is called|are called|named|'s name is|stands for|is a|is an"),
)
assert len(_CATEGORY_GATES) == len(_CATEGORY_CUES)
_CUE_GATES = Gates(_CATEGORY_GATES)
_CUE_SEARCH = tuple(Caseless(pattern) for _, pattern in _CATEGORY_CUES)
# A word of these gates is an alternative of its pattern on its own (\b on both sides, nothing
# else needed), so having the word is having a match; bar these, which need more around them.
_CUE_SURE = tuple(g.words - {"like", "likes", "into", "ll", "over"} for g in _CATEGORY_GATES)


def classify(claim: str) -> Category:
    """Category of a claim from cue words; the first matching family wins, else "fact"."""
    return classify_worded(claim, words_of(claim))


def classify_worded(claim: str, words: frozenset[str]) -> Category:
    for i in _CUE_GATES.admitting(words, claim):
        if not _CUE_SURE[i].isdisjoint(words) or _CUE_SEARCH[i].found(claim):
            return _CATEGORY_CUES[i][0]
    return "fact"
