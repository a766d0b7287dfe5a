"""Is a plain statement concrete: something a question could later ask about?

The importance spectrum (``core.importance``) puts a plain fact with nothing concrete in it
in the trivial band, and the dream cycle archives trivia after 90 days. So this decides
which everyday statements are forgotten: "the weather was nice today" should be; a habit
("I stay away from sugar"), a trait or a job ("the architect who reads building codes for
fun") should not, though they name nothing and carry no date. Measured through a worker
(``python -m bench live_recall``) and a year on (``python -m bench learning``): evidence for
the own set's questions had been archived as trivia for lacking exactly these.
"""

from __future__ import annotations

import re

from memstream.core.extract.gates import wordset
from memstream.core.extract.person import ADVERB, past_tense
from memstream.core.signal_patterns import HITS, WORD_WEIGHT
from memstream.core.signals import SignalRecord as Signal

# words that make a plain statement concrete: counts and spans, and the events of a life
_NUMBER_WORDS = wordset(
    "two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty "
    "hundred hundreds thousand thousands million dozen half "
    # how long: "we have a whole week" answers how long the break is ("day" is small talk)
    "week weeks fortnight month months year years decade decades"
)
_LIFE_WORDS = wordset(
    "born died passed pregnant married engaged divorced pregnancy surgery surgeon diagnosed "
    "diagnosis allergic allergy intolerant hospital funeral graduated graduate hired fired "
    "promoted retired retiring moved moving move adopted adopting injured broke cancer baby "
    "wedding proposed job offer accepted news started lessons house apartment "
    # the body: a condition or a reaction is asked about long after ("eyes swell up around cats")
    "swell swells swelling swollen rash hives itchy sneeze sneezing wheeze wheezing asthma "
    "asthmatic inhaler epipen migraine migraines diabetes diabetic insulin medication "
    "medications prescription symptoms "
    # recovering from an injury or an operation: "down to a cane now"
    "cane crutches wheelchair stitches rehab physio physiotherapy "
    # what someone eats or does not: asked about for every meal and gift after
    "vegan vegetarian pescatarian gluten lactose dairy kosher halal sober teetotal "
    # habits: what someone does every time is asked about, what they did once less so
    "every usually often daily weekly nightly weekends always "
    # a habit or a way of working changed: "stopped drinking coffee", "works remotely"
    "stopped anymore remotely"
)
# what someone does for a living: who they are, whatever the sentence around it
_WORK_WORDS = wordset(
    "architect architects teacher teachers teaching teaches nurse nurses doctor doctors "
    "physician engineer engineers lawyer lawyers attorney chef chefs cook baker designer "
    "developer developers programmer accountant pharmacist therapist dentist pilot "
    "firefighter electrician plumber carpenter professor lecturer student students scientist "
    "researcher writer author novelist artist painter sculptor musician composer "
    "photographer farmer mechanic journalist editor librarian veterinarian vet paramedic "
    "technician technologist consultant analyst barista bartender waiter waitress cashier "
    "contractor officer soldier coach trainer instructor tutor counselor counsellor "
    "volunteer volunteers volunteering freelance freelancer intern internship career "
    "profession occupation shift shifts "
    # a place in academia: "I got the postdoc!"
    "postdoc phd doctorate degree diploma scholarship residency tenure fellowship"
)
# one lookup for all three: every claim of every turn is tested
_CONCRETE_WORDS = _NUMBER_WORDS | _LIFE_WORDS | _WORK_WORDS
# verbs after "I" / "we" that say what someone thinks, wants or says now, not what they do
_NOT_HABIT = wordset(
    "think guess hope know mean feel want wish wonder believe suppose see agree understand "
    "remember forget bet doubt imagine need promise swear get appreciate suspect expect "
    "say tell ask am be have do can could will would shall should must may might "
    "just also really still actually only even already now then too totally definitely "
    "absolutely probably kinda sorta literally honestly love like hate miss owe"
)
# a pursuit of the speaker's: what they work on, try, learn, fight with or aim for ("I'm
# having trouble debugging my resume analyzer", "my goal is to build a robust data model").
# Asked about months on ("how did my work on X go?"); rated trivia, the dream cycle archived
# such facts after 90 days: through a worker on BEAM's 500K tier, seven of the ten
# questions its archival cost had lost one of them (the other three, commitments).
_PURSUIT = re.compile(
    rf"(?<![\w'’])(?:(?:[Ii]|[Ww]e)(?:'m|'re| am| are| was| were|'ve been| have been| had been)\s+"
    rf"{ADVERB}*(?:trying|working on|working through|struggling|learning|studying|practicing|"
    r"practising|figuring out|dealing with|stuck on|looking for|preparing for|training for|"
    r"saving for|aiming|building|developing|implementing|debugging|designing|"
    r"having (?:some |a lot of |real |a bit of |)(?:trouble|issues|problems|difficulty|"
    r"difficulties|a hard time|a tough time)|not sure how|unsure how)"
    r"|(?:[Ii]|[Ww]e) (?:don't|do not) know how to"
    r"|\b(?:[Mm]y|[Oo]ur) (?:main |big |ultimate |current |new |first |next )?"
    r"(?:goal|aim|objective|target|mission) (?:is|was|for)\b)"
)
_FIRST_VERB = re.compile(rf"(?<![\w'’])(?:I|[Ww]e)\s+{ADVERB}*([a-z]+)\b(?!['’])")
_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'll", "I'd", "User"})


def habitual(said: str) -> bool:
    """The speaker says what they do as a rule, in the present ("I stay away from sugar",
    "we teach music"); not a thought, a wish or a past event ("I think so", "I went")."""
    for m in _FIRST_VERB.finditer(said):
        verb = m.group(1)
        if verb not in _NOT_HABIT and not past_tense(verb):
            return True
    return False


def concrete(
    named: bool, has_date: bool, speaker: str, said: str, words: frozenset[str], found: Signal
) -> bool:
    """Something in the claim a question could ask about: a name (not the speaker's), a
    number, a date that is more than "today", an event of a life (a birth, a move), a job,
    a habit or a pursuit. ``words`` may hold more than ``said``'s: a short answer's question."""
    if named or any(ch.isdigit() for ch in said):
        return True
    if not _CONCRETE_WORDS.isdisjoint(words):
        return True
    if has_date and (
        not found.temporal or any(e.pattern != "relative_day" for e in found.temporal)
    ):
        return True
    if habitual(said) or _PURSUIT.search(said):
        return True
    # a capitalised word: a name the entity finder did not know (the first word only when
    # it is no common word: "Felix is seeing someone", not "The line was long", nor a verb
    # opening a subjectless sentence: "Cooked pasta tonight")
    return any(
        w[:1].isupper()
        and w not in _NOT_NAMES
        and w != speaker
        and (i > 0 or (w.lower() not in WORD_WEIGHT and w not in HITS and not _verb(w)))
        for i, w in enumerate(said.split())
        if w[:1].isalpha()
    )


def _verb(word: str) -> bool:
    """A word that reads as a verb's past form ("Cooked", "Went"); an "-ing" word may be
    what the sentence is about ("Swimming is going better")."""
    return past_tense(word.lower().strip(".,!?"))
