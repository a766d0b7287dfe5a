"""Subject and slot of a claim: the question it answers ("user", "employer"), so that a
new value for the same slot can supersede the old one."""

from __future__ import annotations

import re
from typing import NamedTuple

from memstream.core.extract.entities import TECH, TECH_RE
from memstream.core.extract.gates import HAS_DIGIT, Gates, gate, words_of, wordset
from memstream.core.extract.person import ADVERB

# --- subject and slot ---------------------------------------------------------------

_RELATIONS = (
    r"wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|sister|brother|mother|mom|mum|father|dad|"
    r"son|daughter|kids?|child|baby|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|nephew|niece|"
    r"best friend|friend|colleague|coworker|boss|manager|mentor|roommate|neighbou?r|dog|cat|pet|puppy|kitten|"
    r"horse|team|company|startup|project|family|parents|children"
)
# a name of up to three capitalised words ("Maya", "New York City")
_NAME = r"(?-i:[A-Z])[\w.-]*(?: (?-i:[A-Z])[\w.-]*){0,2}"
_SUBJ = (
    r"^(?!(?-i:He|She|They|It|This|That|There|These|Those|Here|What|Who)\b)"
    r"(?P<subj>" + _NAME + r"?)(?:'s (?:(?:older|younger|little|big|best|new|old) )?"
    r"(?P<rel>" + _RELATIONS + r"))?(?P<group> and others)?\s+" + ADVERB + r"*"
)
# a home taken: "bought a house in", "signed a lease on a bigger apartment in"
_HOME_TAKEN = (
    r"(?:bought|purchased|rented|found|got|closed on|signed a lease (?:on|for)) "
    r"(?:a|an|our|my|the|their|his|her) (?:[\w-]+ )?"
    r"(?:house|home|flat|apartment|condo|place|townhouse|cottage|two-bedroom|one-bedroom) (?:in|at)"
)
JOBS = (
    r"engineer|developer|programmer|designer|manager|teacher|nurse|doctor|physician|lawyer|attorney|scientist|"
    r"analyst|student|consultant|writer|author|artist|painter|musician|counselor|counsellor|therapist|architect|"
    r"accountant|researcher|professor|chef|cook|pilot|driver|firefighter|officer|journalist|editor|photographer|"
    r"founder|ceo|cto|cfo|director|intern|freelancer|entrepreneur|pharmacist|dentist|veterinarian|vet|"
    r"mechanic|electrician|plumber|carpenter|salesperson|recruiter|librarian|administrator|admin|sre|"
    r"devops|technician|assistant|barista|waiter|waitress|cashier|soldier|homemaker|retiree|lead|"
    r"specialist|coordinator|strategist|owner|marketer|producer|actor|actress|singer|dancer|coach|tutor|"
    r"instructor|psychologist|surgeon|paramedic|clerk|secretary|banker|trader|investor|economist|"
    r"statistician|mathematician|physicist|chemist|biologist|data scientist|scientist"
)
_HEAD_SKIP = wordset("a an the my your our their his her its some more less very really much")
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern, re.I))
    for slot, pattern in (
        (
            "name",
            _SUBJ.replace(r"\s+" + ADVERB + "*", "") + r"'s (?:full |first |last |nick)?name is\b",
        ),
        ("name", _SUBJ + r"(?:is called|goes by|is named|wants to be called)\b"),
        ("email", _SUBJ.replace(r"\s+" + ADVERB + "*", "") + r"'s (?:e-?mail|email address) is\b"),
        (
            "phone",
            _SUBJ.replace(r"\s+" + ADVERB + "*", "")
            + r"'s (?:new |current )?(?:(?:phone|cell|mobile)(?: number)? is\b"
            # "my new number is 555-9876": a number that reads as a phone number
            + r"|number is (?=\+?\(?\d[\d\s().-]{5,}\d))",
        ),
        ("birthday", _SUBJ.replace(r"\s+" + ADVERB + "*", "") + r"'s birthday is\b"),
        ("birthday", _SUBJ + r"(?:was|were) born on\b"),
        # "Mia turns 7 on March 3rd", "my daughter Mia turns 7 on ...": the day is the birthday
        (
            "birthday",
            _SUBJ.replace("(?P<group>", r"(?: (?-i:[A-Z])[\w.-]*)?(?P<group>")
            + r"(?:turns|will turn|is turning|turned) \d{1,3}(?: years old)? on\b",
        ),
        (
            "age",
            _SUBJ
            + r"(?:is|turned|just turned|will turn|turns) \d{1,3}(?: years old| years of age)?"
            # "my mom is 61 and lives in Porto": the age, then another clause
            + r"(?:$|,? and\b|,)",
        ),
        ("age", _SUBJ.replace(r"\s+" + ADVERB + "*", "") + r"'s age is\b"),
        (
            "job_title",
            _SUBJ
            + r"(?:is|was|works as|is working as|has been|became|is now|started as|got promoted to|was promoted to) "
            r"(?:an? |the |a senior |a junior |a lead )?(?:[\w-]+ ){0,3}(?:" + JOBS + r")s?\b",
        ),
        (
            "job_title",
            _SUBJ.replace(r"\s+" + ADVERB + "*", "")
            + r"'s (?:job|role|title|position|occupation|profession|job title) is\b",
        ),
        # a working life ended says what it was: "I retired from teaching in 2020"
        ("job_title", _SUBJ + r"(?:has |is |was )?(?:semi-)?retired from [a-z]+ing\b"),
        (
            "employer",
            _SUBJ
            + r"(?:(?:works?|worked|is (?:now |currently |still )?working|has been working|has worked|"
            r"started working|is employed|no longer works?|"
            r"was employed|was hired|got hired|got a job|got a new job|started a (?:new )?job|landed a job|"
            r"is interning|interns|is an intern|does not work|did not work|is not working)(?: \w+){0,2}? (?:at|for|by|with)\s+"
            r"|(?:joined|now works for|quit|left|was laid off from|got laid off from) (?=(?-i:[A-Z]))"
            # "joined Kelly for dinner", "left Tom at the station": company, not someone met
            r"(?!(?-i:[A-Z])[\w&.'’-]*(?: (?-i:[A-Z])[\w&.'’-]*)* (?:for|at|on|with|to|by)\b))",
        ),
        (
            "location",
            _SUBJ
            + r"(?:lives?|lived|is (?:now |currently |still )?living|has lived|has been living|moved|has moved|relocated|has relocated|"
            r"is (?:now |currently |still )?(?:based|located)|resides?|resided|is staying|is moving|will move|will be moving|is relocating|"
            r"settled|is settling|does not live|no longer lives)(?: back| away)?"
            # "moved from Lisbon to Porto": the new place is the value (a tech name is a switch)
            r"(?: from (?!(?:" + TECH_RE + r")\b)[^,;]{1,40}?)? (?:in|to|at|into)\b",
        ),
        (
            # a home taken where one moves: "we bought a house in Richmond and moved in"
            "location",
            _SUBJ + r"(?=.*\bmov(?:ed|ing|e)\b)" + _HOME_TAKEN,
        ),
        (
            "origin",
            _SUBJ + r"(?:is|was|comes|came|is originally|was originally) (?:originally )?from\b",
        ),
        ("origin", _SUBJ + r"grew up in\b"),
        (
            "relationship_status",
            _SUBJ + r"(?:is|got|just got|recently got|has been|was) (?:now |happily )?"
            r"(?:married|single|divorced|engaged|widowed|separated)\b",
        ),
        (
            # one way of eating at a time; an intolerance or a religious rule ("lactose
            # intolerant", "gluten-free", "kosher") goes with any of them: no slot
            "diet",
            _SUBJ
            + r"(?:is|has been|became|went) (?:a |now |strictly |fully |no longer |not )?(?:vegetarian|vegan|pescatarian|"
            r"keto|paleo)\b",
        ),
        ("diet", _SUBJ + r"does not eat meat\b"),
    )
)
# A role one person holds for the subject at a time: "Maya's coach is Sean", then "Maya's
# new coach is Marta" (or "Sean is no longer Maya's coach") replaces it. Friends, siblings,
# colleagues are many at once: not here.
_ROLE_NAMES = {
    "coach": "coach",
    "trainer": "trainer",
    "personal trainer": "trainer",
    "doctor": "doctor",
    "gp": "doctor",
    "dentist": "dentist",
    "therapist": "therapist",
    "psychiatrist": "psychiatrist",
    "counselor": "counselor",
    "counsellor": "counselor",
    "physio": "physiotherapist",
    "physiotherapist": "physiotherapist",
    "manager": "manager",
    "boss": "manager",
    "supervisor": "supervisor",
    "mentor": "mentor",
    "advisor": "advisor",
    "adviser": "advisor",
    "tutor": "tutor",
    "landlord": "landlord",
    "landlady": "landlord",
    "accountant": "accountant",
    "lawyer": "lawyer",
    "attorney": "lawyer",
    "vet": "vet",
    "pediatrician": "pediatrician",
    "wife": "spouse",
    "husband": "spouse",
    "spouse": "spouse",
    "boyfriend": "partner",
    "girlfriend": "partner",
    "partner": "partner",
    "fiance": "partner",
    "fiancé": "partner",
    "fiancée": "partner",
    "fiancee": "partner",
}
_ROLE_RE = "|".join(sorted(map(re.escape, _ROLE_NAMES), key=len, reverse=True))
_OWNER = r"(?P<subj>(?!(?-i:He|She|They|It|This|That)\b)" + _NAME + r"?)"
_ROLE_OF = (
    # "Maya's new coach is Marta", also after a clause: "Sean left, Maya's new coach is Marta"
    re.compile(
        r"^(?:[^,;]{1,80}[,;] (?:and |but |so |now )?)?" + _OWNER + r"'s "
        r"(?:new |current |old |former |previous |first )?(?P<role>" + _ROLE_RE + r") "
        r"(?:is|was|has been|will be|became|is now|is no longer|is not) (?:now |also )?"
        r"(?:(?:Dr|Mr|Mrs|Ms|Prof)\.? )?(?-i:[A-Z])",
        re.I,
    ),
    # "Marta is Maya's new coach", "Sean is no longer Maya's coach"
    re.compile(
        r"^" + _NAME + r" (?:is|was|has been|became|is now|is no longer|is not|will be) "
        r"(?:now |also )?" + _OWNER + r"'s (?:new |current |old |former |previous |first )?"
        r"(?P<role>" + _ROLE_RE + r")\b",
        re.I,
    ),
)
_ROLE_GATE = gate("|".join(_ROLE_NAMES))


def _role_slot(text: str, words: frozenset[str]) -> re.Match[str] | None:
    if not _ROLE_GATE.admits(words, text):
        return None
    for pattern in _ROLE_OF:
        m = pattern.match(text)
        if m:
            return m
    return None


_FAVORITE = re.compile(
    r"^(?P<subj>" + _NAME + r"?)'s (?:all-time |absolute |current |new |personal )?"
    r"favou?rite (?P<what>[a-z][a-z -]{0,40}?) (?:is|are|was|has become|will always be)\b",
    re.I,
)
_FAVORITE_REVERSED = re.compile(
    r"^.+? (?:is|are|was|has become) (?P<subj>" + _NAME + r"?)'s (?:all-time |absolute |"
    r"current |new |personal )?favou?rite (?P<what>[a-z][a-z -]{0,40}?)$",
    re.I,
)
_PREFER = re.compile(
    _SUBJ
    + r"(?:prefers|would rather|likes|loves) (?P<a>.+?)(?: (?:over|to|rather than|instead of|vs\.?|versus|"
    r"more than|better than|than) (?P<b>.+?)(?: for (?P<for>.+?))?| for (?P<topic>.+?))?$",
    re.I,
)
_PREFER_VERB = re.compile(
    r"\bprefers\b|\bwould rather\b|\b(?:likes|loves) .+ (?:better|more) than\b", re.I
)
_USES_FOR = re.compile(
    _SUBJ
    + r"(?:uses|is using|relies on|(?:has )?switched to|moved to|migrated to|is switching to) "
    r"(?P<a>.+?) (?:for|as) (?P<topic>.+?)$",
    re.I,
)
# A change of what is preferred or used: "switched from Go to Rust", "no longer uses Go".
_SWITCH = re.compile(
    _SUBJ + r"(?:(?:has )?switched|migrated|moved|changed|went|is switching|is moving) (?:over )?"
    r"from (?P<b>.+?) to (?P<a>.+?)$",
    re.I,
)
_GAVE_UP = re.compile(
    r"\b(?:no longer|not \w+ anymore|stopped|quit|gave up|has given up)\s+"
    r"(?:(?:uses?|using|likes?|liking|prefers?|drinks?|drinking|eats?|eating|plays?|playing|"
    r"watch(?:es)?|watching|drives?|driving|is into)\s+)?(?P<b>[\w+#.-]+(?: [\w+#.-]+)?)",
    re.I,
)
_VERSION = re.compile(
    r"(?<![\w.])(?P<tech>" + TECH_RE + r")(?: version)? v?(?P<ver>\d+(?:\.\d+){0,3})(?![\w.])"
    r"|\bversion (?P<ver2>\d+(?:\.\d+){0,3}) of (?P<tech2>" + TECH_RE + r")(?![\w])",
    re.I,
)


# Gates of _SLOTS, in the same order.
_SLOT_GATES = Gates(
    (
        gate("name is|nickname is"),
        gate("is called|goes by|is named|wants to be called"),
        gate("e-mail is|email is|email address is"),
        gate("phone|cell|mobile|number"),
        gate("birthday is"),
        gate("born on"),
        gate("turns|turn|turning|turned", also=gate("on")),
        gate(digit=True),
        gate("age is"),
        gate("|".join(f"{job}|{job}s" for job in JOBS.split("|"))),
        gate("job is|role is|title is|position is|occupation is|profession is|job title is"),
        gate("retired"),
        gate(
            "work|works|worked|working|employed|hired|job|interning|interns|intern|joined|quit|"
            "left|laid"
        ),
        gate(
            "live|lives|lived|living|moved|relocated|based|located|reside|resides|resided|"
            "staying|moving|move|relocating|settled|settling"
        ),
        gate("moved|moving|move"),
        gate("from"),
        gate("grew up in"),
        gate("married|single|divorced|engaged|widowed|separated"),
        gate("vegetarian|vegan|pescatarian|keto|paleo"),
        gate("does not eat meat"),
    )
)
assert len(_SLOT_GATES) == len(_SLOTS)
_FAVORITE_GATE = gate("favorite|favourite")
_PREFER_GATE = gate("prefers|would rather|likes|loves")
_USES_FOR_GATE = gate("uses|is using|relies on|switched|moved|migrated|switching")
_SWITCH_GATE = gate("switched|migrated|moved|changed|went|switching|moving", also=gate("from"))
_GAVE_UP_GATE = gate("no longer|anymore|stopped|quit|gave up|given up")
# Words after an item that say when, not what ("prefers Rust over Go now").
_TRAILING_TIME = wordset("now anymore nowadays these days instead again too lately currently today")


def _head(phrase: str) -> str:
    words: list[str] = [w for w in re.findall(r"[\w+#.-]+", phrase.lower()) if w not in _HEAD_SKIP]
    while len(words) > 1 and words[-1].strip(".") in _TRAILING_TIME:
        words.pop()
    if not words:
        return ""
    if words[0] == "to" and len(words) > 1:
        return words[1]
    return words[-1].strip(".")


def _subject_key(match: re.Match[str], name: str, speaker_key: str) -> str:
    subj = match.group("subj")
    base = speaker_key if subj.casefold() == name.casefold() else subj.casefold()
    rel = match.groupdict().get("rel")
    return f"{base}'s {rel.lower()}" if rel else base


class SlotHit(NamedTuple):
    """What a claim answers, and what it says the subject has given up: ``replaces`` are
    items ("go") the subject no longer prefers or uses, whatever slot said they did;
    ``cancels`` the head nouns of plans called off ("marathon", "trip"), ``moves`` of plans
    moved to another time ("the dentist appointment was moved to Friday")."""

    subject: str
    slot: str | None
    replaces: tuple[str, ...] = ()
    cancels: tuple[str, ...] = ()
    moves: tuple[str, ...] = ()


def detect_slot(text: str, name: str, speaker_key: str) -> tuple[str, str] | None:
    """(subject, slot) of a third-person claim, e.g. ("user", "employer"), or None.

    Slots name the question the claim answers, so "User works at Acme" and
    "User works at Initech" share ("user", "employer") and can contradict.
    """
    hit = detect_slot_worded(text, name, speaker_key, words_of(text))
    return None if hit is None or hit.slot is None else (hit.subject, hit.slot)


def detect_slot_worded(
    text: str, name: str, speaker_key: str, words: frozenset[str]
) -> SlotHit | None:
    m = _FAVORITE_GATE.admits(words, text) and (
        _FAVORITE.match(text) or _FAVORITE_REVERSED.match(text)
    )
    if m:
        what = re.sub(r"[\s-]+", "_", m.group("what").strip().lower())
        return SlotHit(_subject_key(m, name, speaker_key), f"favorite_{what}")
    m = _SWITCH_GATE.admits(words, text) and _SWITCH.match(text)
    # "moved from Lisbon to Porto" is a move; "moved from Go to Rust" is a switch
    if m and (_TECH_NAME.search(m.group(0)) or "moved" not in m.group(0).lower()):
        a, b = _head(m.group("a")), _head(m.group("b"))
        if a and b and a != b:
            switched = "preference:" + "|".join(sorted((a, b)))
            return SlotHit(_subject_key(m, name, speaker_key), switched, (b,))
    m = _role_slot(text, words)
    if m:
        role = _ROLE_NAMES[m.group("role").lower()]
        return SlotHit(_subject_key(m, name, speaker_key), f"role:{role}")
    for i in _SLOT_GATES.admitting(words, text):
        slot, pattern = _SLOTS[i]
        m = pattern.match(text)
        if m:
            return SlotHit(_subject_key(m, name, speaker_key), slot)
    m = _PREFER_GATE.admits(words, text) and _PREFER.match(text)
    if m and _PREFER_VERB.search(text):
        if m.group("b"):
            a, b = _head(m.group("a")), _head(m.group("b"))
            pair = sorted(h for h in (a, b) if h)
            given_up = (b,) if a and b and a != b else ()
            subject = _subject_key(m, name, speaker_key)
            return SlotHit(subject, "preference:" + "|".join(pair), given_up)
        topic = _head(m.group("topic") or m.group("a"))
        if topic:
            return SlotHit(_subject_key(m, name, speaker_key), f"preference:{topic}")
    m = _USES_FOR_GATE.admits(words, text) and _USES_FOR.match(text)
    if m and _head(m.group("topic")):
        return SlotHit(_subject_key(m, name, speaker_key), f"tool:{_head(m.group('topic'))}")
    v = HAS_DIGIT in words and _VERSION.search(text)
    if v:
        tech = v.group("tech") or v.group("tech2")
        return SlotHit(speaker_key, f"version:{TECH.get(tech.lower(), tech).lower()}")
    changed = plan_change(text, words)
    if changed:
        how, m, head = changed
        subject = _subject_key(m, name, speaker_key) if m.groupdict().get("subj") else speaker_key
        if how == "cancelled":
            return SlotHit(subject, None, cancels=(head,))
        return SlotHit(subject, None, moves=(head,))
    gave_up = _GAVE_UP_GATE.admits(words, text) and _GAVE_UP.search(text)
    who = _SUBJECT_ONLY.match(text) if gave_up else None
    if gave_up and who:
        gone = _head(gave_up.group("b"))
        if gone:
            return SlotHit(_subject_key(who, name, speaker_key), None, (gone,))
    return None


_HOME_IN = re.compile(
    r"^(?P<subj>.+?) (?:have |has |had )?(?:just |recently |finally )?" + _HOME_TAKEN + r" "
    r"(?P<place>(?-i:[A-Z])[\w.'’-]*(?: (?-i:[A-Z])[\w.'’-]*)*)(?=.*\bmov(?:ed|ing|e)\b)",
    re.I,
)
_MOVED = re.compile(
    r"^(?P<subj>.+?) (?:has |had )?(?:just |recently |finally |now )?(?:moved|relocated)"
    r"(?: back| away)?(?: from (?P<from>.+?))? (?:to|into) "
    r"(?P<place>(?-i:[A-Z])[\w.'’-]*(?: (?-i:[A-Z])[\w.'’-]*)*)",
    re.I,
)
_JOINED = re.compile(
    r"^(?P<subj>.+?) (?:(?:left|quit) .+? and (?:has |had )?(?:just |recently |now )?"
    r"(?:joined|started (?:working )?at|got a (?:new )?job at|started a (?:new )?job at)"
    # a new job said without the old one; a bare "joined" only after "left ... and"
    r"|(?:has |had )?(?:just |recently |finally |now )?(?:started (?:working|work) at|"
    r"got a (?:new )?job at|started a (?:new )?job at|landed a (?:new )?job at|"
    r"(?:was|got) hired (?:at|by))) "
    r"(?P<org>(?-i:[A-Z])[\w&.'’-]*(?: (?-i:[A-Z])[\w&.'’-]*)*)"
    r"(?P<role> as (?:an? )?[\w -]+?)?(?=$|[,.;]| (?:on|in|at|since|last|this)\b)",
    re.I,
)


def restated(text: str, slot: str | None) -> str | None:
    """The state an explicit change leads to, or None: "Maya moved from Lisbon to Porto in
    February 2024" (or "moved to Porto last month") -> "Maya lives in Porto", "Maya left Acme and joined Initech" (or "started a
    new job at Initech") -> "Maya works at Initech", so that "where do I live?" meets the answer in its words and the new
    value stands alone in its slot (the old one is in the event, said as it was)."""
    if slot == "location":
        m = _MOVED.match(text) or _HOME_IN.match(text)
        if m:
            verb = "live" if m.group("subj").endswith(" others") else "lives"
            return f"{m.group('subj')} {verb} in {m.group('place')}"
    elif slot == "employer":
        m = _JOINED.match(text)
        if m:
            verb = "work" if m.group("subj").endswith(" others") else "works"
            return f"{m.group('subj')} {verb} at {m.group('org')}{m.group('role') or ''}"
    return None


def prefers_item(text: str, item: str) -> bool:
    """Whether a preference or tool memory says its subject prefers or uses ``item`` ("User
    prefers Go", "User uses Go for scripts"), not that it was given up ("... Rust over Go",
    "switched from Go")."""
    if not item:
        return False
    for m in re.finditer(r"(?<![\w+#.-])" + re.escape(item) + r"(?![\w+#-])", text, re.I):
        before = text[: m.start()].lower().split()[-3:]
        if not _DISPREFERRED.intersection(before):
            return True
    return False


_DISPREFERRED = frozenset(
    [
        "over",
        "than",
        "instead",
        "rather",
        "from",
        "not",
        "no",
        "longer",
        "stopped",
        "quit",
        "versus",
        "vs",
        "vs.",
    ]
)
_TECH_NAME = re.compile(r"(?<![\w.])(?:" + TECH_RE + r")(?![\w])", re.I)
_SUBJECT_ONLY = re.compile(_SUBJ, re.I)

# A plan called off: "Maya's marathon is cancelled", "The trip to Japan was called off",
# "Maya cancelled the wedding" (third person, as the extractor words claims).
_CALLED_OFF = r"(?:cancell?ed|called off|scrapped|off for good|postponed indefinitely)"
# a clause may come first: "I'm doing the half marathon instead, my marathon is cancelled"
_LEAD = r"^(?:[^,;]{1,80}[,;] (?:and |but |so |now |because )?)?"
# "Maya's marathon", "the trip to Japan": whose plan (when said) and what it is
_POSSESSED = (
    r"(?:(?P<subj>" + _NAME + r"?)(?P<group> and others)?'s|the|our|their)\s+"
    r"(?P<what>[\w'’ -]{1,60}?)"
)
# the same plan after a verb: "Maya cancelled the wedding", "postponed Ana's party"
_PLAN_OBJECT = (
    r"(?:the |our |their |(?:his|her|its) |(?-i:[A-Z])[\w.-]*'s )?(?P<what>[\w'’ -]{1,60}?)"
)
_BE = r"(?:is|was|has been|got|had been|is now|are|were|have been)"
_CANCELLED = (
    re.compile(
        _LEAD
        + _POSSESSED
        + r" "
        + _BE
        + r" (?:officially |now |just |all |sadly |been )?"
        + _CALLED_OFF
        + r"\b",
        re.I,
    ),
    re.compile(
        _LEAD + _SUBJ.removeprefix("^") + r"(?:has |have |had |just |finally |officially )*"
        r"(?:cancell?ed|called off|"
        r"scrapped) " + _PLAN_OBJECT + r"(?=$|[,.;]| (?:because|since|due|as|after|so)\b)",
        re.I,
    ),
)
_CANCELLED_GATE = gate("cancelled|canceled|called off|scrapped|off for good|postponed indefinitely")
# A plan moved to another time: "Maya's dentist appointment was moved to Friday", "Maya
# postponed the trip until June"; only to a time ("the couch was moved to the garage" is not)
_TO_A_TIME = (
    # ("to on 8 March": the date resolver writes a weekday out so)
    r"(?:to|until|till|back to|for) (?:on |in |the week of )?(?=(?:(?:monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|"
    r"september|october|november|december|next|later|tomorrow|tonight|this|early|late|mid|"
    r"the (?:end|start|beginning|middle|following|next|week|weekend|day))\b|\d))"
)
_RESCHEDULED = (
    re.compile(
        _LEAD
        + _POSSESSED
        + r" "
        + _BE
        + r" (?:now |just |all |been )?(?:moved|pushed back|pushed|postponed|rescheduled|"
        r"moved up|brought forward|delayed|shifted) " + _TO_A_TIME,
        re.I,
    ),
    re.compile(
        _LEAD + _SUBJ.removeprefix("^") + r"(?:has |have |had |just |finally )*"
        r"(?:postponed|rescheduled|pushed back|delayed|brought forward|moved|pushed) "
        + _PLAN_OBJECT
        + r" "
        + _TO_A_TIME,
        re.I,
    ),
)
_RESCHEDULED_GATE = gate(
    "moved|pushed|postponed|rescheduled|brought forward|delayed|shifted",
    also=gate("to|until|till|for"),
)
# where a plan's name runs on: "the trip to Japan" is a trip (to Japan)
_PLAN_TAIL = re.compile(r" (?:to|for|in|at|with|on|of|from|next|this|last|until|till|by)\b", re.I)
_PLAN_LEAD = wordset("a an the my our their his her its this that some")


def _plan_name(what: str) -> str:
    """The words a plan must be named by to be the one meant: what comes before its first
    preposition, and the names after it ("a call with Matthew from April 4" -> "call
    Matthew", "the dentist appointment" -> "dentist appointment"); the last core word is
    its head."""
    cut = _PLAN_TAIL.search(what)
    core, tail = (what[: cut.start()], what[cut.start() :]) if cut else (what, "")
    words = [w.lower() for w in core.split() if w.lower() not in _PLAN_LEAD and "'" not in w]
    names = [w for w in re.findall(r"\b(?-i:[A-Z])[\w-]+", tail) if not w.isupper()]
    head = _head(" ".join(words)) if words else ""
    if not head or head in _NOT_PLANS or any(c.isdigit() for c in head):
        return ""
    return " ".join([*words[: words.index(head)], head, *names] if head in words else [head])


def plan_change(text: str, words: frozenset[str]) -> tuple[str, re.Match[str], str] | None:
    """("cancelled" or "rescheduled", the match, the plan's name, ``_plan_name``) when the
    claim says a plan was called off or moved to another time."""
    for how, patterns, admits in (
        ("cancelled", _CANCELLED, _CANCELLED_GATE),
        ("rescheduled", _RESCHEDULED, _RESCHEDULED_GATE),
    ):
        if not admits.admits(words, text):
            continue
        for pattern in patterns:
            m = pattern.match(text)
            if m:
                name = _plan_name(m.group("what"))
                return (how, m, name) if name else None
    return None


# words that name no plan of their own ("it was cancelled", "everything got called off")
_NOT_PLANS = wordset("it this that everything all plan plans something anything one")
