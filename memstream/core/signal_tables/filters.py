"""Filters: prompt injection, chat-template markup, trivial turns, slash commands, emoji,
code and markdown lines."""

from __future__ import annotations

import re
from typing import Final

_OBJ = (
    r"(?:instructions?|prompts?|rules|directions|directives?|guidelines|constraints|guardrails"
    r"|restrictions|programming|training|system prompt|safety)(?![a-z])"
)
INJECTION_RE: Final[re.Pattern[str]] = re.compile(
    (
        r"(?P<ignore_previous>(?:ignore|disregard|forget|override|bypass)"
        r"(?: (?:all|any|the|your|my|of|everything|every|these|those|previous|prior|above|earlier"
        r"|preceding|former|original|initial|system|safety|existing|current|other)){0,4} "
        + _OBJ
        + ")"
        r"|(?P<ignore_above>(?:ignore|disregard|forget) (?:(?:all|everything) (?:the |that )?"
        r"(?:above|before|prior|previous|earlier)|(?:the )?above)(?![a-z]))"
        r"|(?P<system_prompt>system (?:prompt|message)|(?:hidden|secret|initial) (?:prompt|instructions))"
        r"|(?P<you_are_now>you(?: are|'re) now (?:an? |the |my |no longer|free|unrestricted|jailbroken"
        r"|dan(?![a-z])|developer|evil|unfiltered|uncensored|in (?:developer|dan|god) mode))"
        r"|(?P<jailbreak>jailbr[eo]a?k[a-z]*|dan mode|developer mode|do anything now|god mode)"
        r"|(?P<roleplay>pretend (?:that )?you(?: are|'re| have) (?:no |not |an? (?:unrestricted|unfiltered"
        r"|uncensored|evil|different)|free |dan(?![a-z]))|act as (?:if you (?:are|were) )?(?:an? )?"
        r"(?:unrestricted|unfiltered|uncensored|evil|dan(?![a-z]))|no restrictions|unfiltered|uncensored)"
        r"|(?P<reveal>(?:reveal|print|repeat|show(?: me)?|output|leak) (?:me )?(?:your|the) "
        r"(?:system |initial |hidden |original |secret )?(?:prompt|instructions|rules))"
        r"|(?P<new_instructions>new instructions\s*:)"
    ).replace(" ", r"\s+")  # written with single spaces for reading; any whitespace run matches
)

# Markup. Known chat-template / system tags are flagged on sight; other tags count toward
# the "mostly markup" share.
TAG_RE: Final[re.Pattern[str]] = re.compile(
    r"<\|?/?[A-Za-z_][\w:.-]{0,40}\|?(?: [^<>]{0,200})?/?>|<<\/?SYS>>|\[/?INST\]|<\|[a-z_]+\|>"
)
SYSTEM_TAGS: Final[frozenset[str]] = frozenset(
    {
        "system",
        "sys",
        "im_start",
        "im_end",
        "inst",
        "instructions",
        "instruction",
        "assistant",
        "user",
        "tool",
        "tool_call",
        "tool_result",
        "function_call",
        "function_calls",
        "s",
        "system-reminder",
        "system_prompt",
        "developer",
        "endoftext",
        "context",
        "prompt",
    }
)
TAG_NAME_RE: Final[re.Pattern[str]] = re.compile(r"[a-z_][\w:.-]*")

TRIVIAL_RE: Final[re.Pattern[str]] = re.compile(
    r"[\W_]*(?:(?:hi|hello|hey|heya|hiya|yo|howdy|sup|thanks|thank you|thank u|thx|ty|tysm|tnx"
    r"|ok|okay|okey|k|kk|lol|lmao|rofl|ha(?:ha)+|he(?:he)+|yes|yeah|yep|yup|ya|no|nope|nah|sure"
    r"|cool|nice|great|good|awesome|perfect|got it|gotcha|sounds good|bye|goodbye|see ya|cya"
    r"|good (?:morning|night|evening|afternoon)|morning|cheers|np|no problem|welcome"
    r"|you're welcome|hm+|oh|ah|wow|right|alright|fine|done|continue|go on|go ahead|please|pls"
    r"|test|testing|ping|agreed|exactly|indeed|true|correct|same|noted|understood|ack|kthx"
    r"|brb|gtg|ttyl|omg|yay|whatever|meh|idk)(?![\w'])"
    # the lookahead makes each word parse one way only: no catastrophic backtracking on "kkkk…x"
    r"(?: +(?:there|all|everyone|guys|again|so much|a lot|very much|man|mate|buddy|bro|dude"
    r"|bot|you|then)(?![\w']))?[\W_]*)*"
)
SLASH_COMMAND_RE: Final[re.Pattern[str]] = re.compile(r"/[a-z][\w-]*(?:\s|$)")

# Only on non-ASCII text: pictographs, dingbats, flags, joiners and variation selectors.
EMOJI_RE: Final[re.Pattern[str]] = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\ufe0f\u200d\U000e0000-\U000e007f]"
)

CODE_LINE_RE: Final[re.Pattern[str]] = re.compile(
    r"^[ \t]*(?:def |class |import |from \S+ import|return\b|function\b|const |let |var |public "
    r"|private |#include|if *\(|for *\(|while *\(|} *else|SELECT |INSERT |\$ |>>> |@\w+)"
    r"|[;{}] *$",
    re.MULTILINE,
)
# CODE_LINE_RE in its two halves: counted apart they find as many matches (no match of the
# first holds a ";", "{" or "}" that ends a line), and the second alone skips to its first
# character in C instead of trying the line-start alternatives at every position.
CODE_LINE_START_RE: Final[re.Pattern[str]] = re.compile(
    r"^[ \t]*(?:def |class |import |from \S+ import|return\b|function\b|const |let |var |public "
    r"|private |#include|if *\(|for *\(|while *\(|} *else|SELECT |INSERT |\$ |>>> |@\w+)",
    re.MULTILINE,
)
CODE_LINE_END_RE: Final[re.Pattern[str]] = re.compile(r"[;{}] *$", re.MULTILINE)
MARKDOWN_LINE_RE: Final[re.Pattern[str]] = re.compile(
    r"^[ \t]*(?:#{1,6} |[-*+] |[0-9]{1,3}[.)] |> |\|.*\||```|---+$|\*\*)", re.MULTILINE
)
