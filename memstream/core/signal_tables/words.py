"""Word classes for density and novelty: stopwords, frequent words and their weights."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from memstream.core.signal_tables.names import SHOUT_WORDS


def _words(text: str) -> list[str]:
    return text.split()


# Function words: carry no content (density) and no novelty.
STOPWORDS: Final[frozenset[str]] = frozenset(
    _words("""
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
don't down during each few for from further had hadn't has hasn't have haven't having he he'd
he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into
is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only
or other ought our ours ourselves out over own same shan't she she'd she'll she's should
shouldn't so some such than that that's the their theirs them themselves then there there's
these they they'd they'll they're they've this those through to too under until up very was
wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while
who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours
yourself yourselves im dont cant ive id thats also just will shall may might must yeah yes ok
okay oh um uh hmm well really actually like get got gonna wanna
""")
)

# Frequent content words: real content (density) but not novel. A few hundred of the most
# frequent English content words; anything outside both lists counts as "rare" for novelty.
COMMON_WORDS: Final[frozenset[str]] = frozenset(
    _words("""
time person year way day thing man world life hand part child eye woman place work week case
point government company number group problem fact people good new first last long great little
own old right big high different small large next early young important public bad same able
say make go know take see come think look want give use find tell ask seem feel try leave call
need become put mean keep let begin help talk turn start show hear play run move live believe
hold bring happen write provide sit stand lose pay meet include continue set learn change lead
understand watch follow stop create speak read allow add spend grow open walk win offer remember
love consider appear buy wait serve die send expect build stay fall cut reach kill remain
thing things something anything nothing everything someone anyone everyone one two three four
five six seven eight nine ten many much lot lots bit kind sort yes no maybe please thanks thank
sure fine right now today tomorrow yesterday later soon still even back here there again always
never often sometimes usually already yet ever much more less best better worse worst sorry
hello hi hey question answer idea issue help info information way ways thing stuff time times
home house room school job team friend family money water food night morning evening hour hours
minute minutes month months year years days weeks second name names word words line lines file
files code data system program test tests list lists page pages message messages email emails
phone app apps user users version fix bug error errors question questions problem problems
make made making goes going went gone done doing said says saying told asked using used uses
works working worked looks looking looked wants wanted needs needed tried trying thought thinks
knows knew known seen saw gave given takes took taken came comes coming gets getting put puts
""")
)


STOP_WEIGHT: Final = 1
COMMON_WEIGHT: Final = 1 << 16


def _word_weights() -> dict[str, int]:
    # Summing these weights over a turn's tokens counts both classes in one C-level pass:
    # stopwords in the low 16 bits, common words above. Tokens come from a plain whitespace
    # split of the original text, so case and trailing punctuation are pre-expanded here
    # instead of normalised per token at scan time.
    out: dict[str, int] = {}
    for weight, words in ((COMMON_WEIGHT, COMMON_WORDS), (STOP_WEIGHT, STOPWORDS)):
        for w in words:
            for spelling in (w, w.capitalize()):
                # the common trailing marks only: a small table stays in cache between turns
                for suffix in ("", ".", ",", "!", "?"):
                    out[spelling + suffix] = weight
    return out


WORD_WEIGHT: Final[Mapping[str, int]] = _word_weights()

# All-caps spellings that are shouting rather than acronyms: the listed loud words and any
# function or frequent word written in capitals ("NAME", "NEVER").
SHOUTS: Final[frozenset[str]] = frozenset(
    w.upper() for w in (*SHOUT_WORDS, *STOPWORDS, *COMMON_WORDS)
)
