"""A question that asks for a kind of thing is answered by an instance of it: "Which language
is Rosa learning?" by "a 200-day Duolingo streak in Spanish", "What instrument does Jules
play?" by "learned my first full song on guitar".

The memory names the instance, never the kind, so the question shared no word with it but
the name, and every short memory that said the name outranked it (tried as a new user
would, with several conversations in one namespace: rank 11 to 13 behind "Rosa is
terrible"). Recall searches once more with the kind replaced by its common instances,
keeping each memory's best match of the searches (``core.fusion.fuse_parts``), as it does
for a group's members (``core.group_words``).

The verb may say the kind: "what does Rosa drive now?" asks for a car, "what does he play?"
for an instrument or a sport, "where does Lena work?" for a place of work; a yes-or-no
question may ask for one ("does Lena have any pets?").

Only a kind the question asks for ("which X", "what kind of X", "what X does ...") is
replaced: "a language exchange" in a statement-like question asks for no instance.
Measured on the own set (``python -m bench.retrieval_eval --own --dev``; BEAM's questions
ask for no such kind): recall@5 0.686 -> 0.712, @10 0.824 -> 0.832 (multi-hop 0.790 ->
0.805: "What does Rosa drive now, and what did it replace?" found neither car); with its six
conversations in one namespace 0.716 -> 0.742 @10. The table was written after reading
those misses, so the own set flatters it. Lifting every memory
that names an instance as well (as a slot's holders are) gained nothing more and put
"Coconut milk, no cream" above the peanut sauce for "which ingredient is dangerous": not
done.

Pure: a pattern over the question and a fixed table of everyday kinds.
"""

from __future__ import annotations

import re
from typing import Final

_LANGUAGES: Final = (
    "English Spanish French German Italian Portuguese Japanese Chinese Mandarin Cantonese "
    "Korean Arabic Russian Hindi Dutch Swedish Norwegian Danish Greek Turkish Polish Hebrew "
    "Vietnamese Thai Swahili Tagalog Ukrainian Czech Finnish Irish Latin"
)
_INSTRUMENTS: Final = (
    "guitar piano violin viola cello drums ukulele flute clarinet saxophone sax trumpet "
    "trombone bass harp keyboard banjo mandolin harmonica accordion oboe"
)
_SPORTS: Final = (
    "soccer football basketball tennis baseball volleyball hockey golf swimming running "
    "cycling skiing snowboarding surfing climbing bouldering yoga boxing rugby cricket "
    "badminton pickleball squash rowing kayaking hiking skating karate judo fencing softball"
)
_VEHICLES: Final = (
    "Honda Toyota Subaru Ford Tesla BMW Audi Volkswagen VW Nissan Chevy Chevrolet Mazda "
    "Hyundai Kia Jeep Volvo Mercedes Prius Civic Corolla truck van SUV minivan motorcycle "
    "scooter sedan hatchback pickup"
)
_ANIMALS: Final = (
    "dog cat puppy kitten bird parrot rabbit bunny hamster guinea fish goldfish tortoise "
    "turtle horse pony snake lizard gecko chicken ferret eagle owl hawk hummingbird deer bear "
    "moose elk fox wolf whale dolphin seal otter squirrel raccoon"
)
_BREEDS: Final = (
    "beagle labrador lab retriever poodle terrier bulldog shepherd husky corgi dachshund "
    "chihuahua collie spaniel pug boxer greyhound doodle mix mutt siamese persian tabby "
    "ragdoll bengal"
)
_FOODS: Final = (
    "dairy milk cheese gluten wheat meat beef pork chicken fish seafood shellfish nuts "
    "peanuts eggs soy sugar"
)
_GENRES: Final = (
    "fantasy sci-fi science fiction mystery thriller romance horror memoir biography "
    "history poetry comedy drama documentary jazz rock pop hip-hop rap classical country "
    "folk indie metal blues punk techno"
)
_HOBBIES: Final = (
    "painting drawing pottery knitting crochet sewing hiking gardening photography cooking "
    "baking reading writing woodworking camping fishing birdwatching chess gaming dancing "
    "singing climbing running cycling yoga"
)
_SUBJECTS: Final = (
    "math maths mathematics chemistry physics biology history geography English literature "
    "art music economics psychology philosophy computer science engineering nursing law "
    "medicine"
)
_WORKPLACES: Final = (
    "hospital clinic school university college office company startup firm bank restaurant "
    "cafe bakery store shop hotel factory lab studio agency warehouse library gym salon"
)
#: jobs by name (core/extract/self_description.py reads them too)
JOBS: Final = (
    "teacher nurse doctor engineer developer programmer designer artist writer chef cook "
    "lawyer accountant manager student musician photographer scientist researcher therapist "
    "counselor pilot firefighter police officer mechanic electrician plumber carpenter farmer "
    "driver barista professor tutor coach"
)
_DRINKS: Final = "coffee tea espresso latte beer wine whiskey cocktail juice soda kombucha"
_MEDICATIONS: Final = (
    "metformin insulin ibuprofen aspirin Tylenol acetaminophen Advil antibiotics amoxicillin "
    "antidepressant antidepressants inhaler statin statins lisinopril levothyroxine sertraline "
    "Zoloft Prozac Lexapro Adderall Ritalin melatonin vitamin vitamins supplements "
    "antihistamine Zyrtec Claritin prednisone"
)
_CONDITIONS: Final = (
    "diabetes asthma allergy allergies allergic arthritis hypertension migraine migraines "
    "depression anxiety ADHD autism cancer eczema celiac IBS insomnia epilepsy "
    "diagnosed"
)
_PHONES: Final = "iPhone Pixel Samsung Galaxy Android OnePlus Motorola Nokia Xiaomi"
_EDITORS: Final = "VS Code VSCode Vim Neovim Emacs IntelliJ PyCharm Sublime Xcode Cursor Zed"
_BROWSERS: Final = "Chrome Firefox Safari Edge Brave Arc Opera Vivaldi"
_PASSWORD_MANAGERS: Final = "1Password LastPass Bitwarden Dashlane Keeper KeePass"
_TRACKERS: Final = "Fitbit Garmin Whoop Oura Apple Watch Galaxy Watch Pixel Watch smartwatch"
_PROGRAMMING_LANGUAGES: Final = (
    "Python JavaScript TypeScript Go Golang Rust Java Kotlin Swift Ruby PHP Scala Haskell "
    "Elixir Erlang Clojure Dart Julia Perl Lua OCaml Zig C++ C#"
)
_KINDS: Final[dict[str, str]] = {
    "language": _LANGUAGES,
    "languages": _LANGUAGES,
    "instrument": _INSTRUMENTS,
    "instruments": _INSTRUMENTS,
    "sport": _SPORTS,
    "sports": _SPORTS,
    "car": _VEHICLES,
    "cars": _VEHICLES,
    "vehicle": _VEHICLES,
    "breed": _BREEDS,
    "breeds": _BREEDS,
    "kind of dog": _BREEDS,
    "kind of cat": _BREEDS,
    "pet": f"{_ANIMALS} {_BREEDS}",
    "pets": f"{_ANIMALS} {_BREEDS}",
    "animal": _ANIMALS,
    "animals": _ANIMALS,
    "food group": _FOODS,
    "food groups": _FOODS,
    "ingredient": _FOODS,
    "ingredients": _FOODS,
    "genre": _GENRES,
    "genres": _GENRES,
    "job": JOBS,
    "profession": JOBS,
    "occupation": JOBS,
    "career": JOBS,
    "hobby": _HOBBIES,
    "hobbies": _HOBBIES,
    "subject": _SUBJECTS,
    "subjects": _SUBJECTS,
    "drink": _DRINKS,
    "drinks": _DRINKS,
    "beverage": _DRINKS,
    "medication": _MEDICATIONS,
    "medications": _MEDICATIONS,
    "medicine": _MEDICATIONS,
    "medicines": _MEDICATIONS,
    "meds": _MEDICATIONS,
    "pills": _MEDICATIONS,
    "condition": _CONDITIONS,
    "conditions": _CONDITIONS,
    "illness": _CONDITIONS,
    "illnesses": _CONDITIONS,
    "diagnosis": _CONDITIONS,
    "phone": _PHONES,
    "editor": _EDITORS,
    "code editor": _EDITORS,
    "ide": _EDITORS,
    "browser": _BROWSERS,
    "password manager": _PASSWORD_MANAGERS,
    "fitness tracker": _TRACKERS,
    "tracker": _TRACKERS,
    "smartwatch": _TRACKERS,
    "watch": _TRACKERS,
    "music": _GENRES,
    "kind of books": _GENRES,
    "kinds of books": _GENRES,
    "kind of movies": _GENRES,
    "kinds of movies": _GENRES,
}
#: kinds of which a person keeps one at a time, so naming another with a change ("upgraded
#: to a Pixel" after "I use an iPhone") replaces the one named before (core/same_kind.py)
ONE_AT_A_TIME: Final[dict[str, str]] = {
    "phone": _PHONES,
    "editor": _EDITORS,
    "browser": _BROWSERS,
    "password manager": _PASSWORD_MANAGERS,
    "car": _VEHICLES,
    "drink": _DRINKS,
    "programming language": _PROGRAMMING_LANGUAGES,
    "fitness tracker": _TRACKERS,
}
# any kind of the table, the longest first ("kind of dog" before "dog")
_KIND: Final = (
    r"(?P<kind>" + "|".join(sorted(map(re.escape, _KINDS), key=len, reverse=True)) + r")\b"
)
# what may follow the word asked for when it ends the ask ("what is the job market like?"
# asks for no job)
_ENDS_ASK: Final = (
    r"(?=\s*(?:[?.!,]|$|(?:at|for|in|to|now|before|after|then|these|nowadays|today|currently|"
    r"as|during|while|when|and|or)\b))"
)
# "which language", "what kind of sport", "what types of music genre", "what X does ...":
# the kind within two words of the question word
_ASKED: Final = re.compile(
    r"^\s*(?:so\s+|and\s+)?(?:which|what)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?"
    r"(?:(?!(?:is|are|was|were|does|did|do|has|have|had|will|would|can|the|a|an|my|his|her|"
    r"their|of)\b)\w+\s+){0,2}?" + _KIND,
    re.I,
)


# "what does Rosa drive?": the verb says the kind ("what does she play?": an instrument or
# a sport)
_BY_VERB: Final[dict[str, str]] = {
    "drive": _VEHICLES,
    "drives": _VEHICLES,
    "driving": _VEHICLES,
    "drove": _VEHICLES,
    "play": f"{_INSTRUMENTS} {_SPORTS}",
    "plays": f"{_INSTRUMENTS} {_SPORTS}",
    "playing": f"{_INSTRUMENTS} {_SPORTS}",
    "played": f"{_INSTRUMENTS} {_SPORTS}",
    "speak": _LANGUAGES,
    "speaks": _LANGUAGES,
    "speaking": _LANGUAGES,
    "spoke": _LANGUAGES,
    "drink": _DRINKS,
    "drinks": _DRINKS,
    "drinking": _DRINKS,
    "drank": _DRINKS,
}
_ASKED_BY_VERB: Final = re.compile(
    r"^\s*(?:so\s+|and\s+)?what\s+(?:does|did|do|is|was|are|were|will|would|can)\s+"
    r"(?:\w+(?:'s)?\s+){1,3}?(?P<verb>" + "|".join(_BY_VERB) + r")\b",
    re.I,
)


# "does Lena have any pets?", "does he play an instrument?": a yes-or-no question for a kind
_ASKED_ANY: Final = re.compile(
    r"^\s*(?:so\s+|and\s+)?(?:does|did|do|has|have)\s+(?:[\w'’]+\s+){1,4}?(?:any|a|an)\s+" + _KIND,
    re.I,
)
# "what is Priya's profession?", "what was Owen's job?": the kind after the person
_ASKED_OWNED: Final = re.compile(
    r"^\s*(?:so\s+|and\s+)?what(?:'s|’s|\s+is|\s+was|\s+are|\s+were)\s+(?:[\w'’]+\s+){1,3}?"
    + _KIND
    + _ENDS_ASK,
    re.I,
)
# "where does Lena work?": a place of work
_ASKED_WORKPLACE: Final = re.compile(
    r"^\s*(?:so\s+|and\s+)?where\s+(?P<verb>(?:does|did|do|will|would)\s+(?:[\w'’]+\s+){1,3}?"
    r"work|(?:is|was|are|were)\s+(?:[\w'’]+\s+){1,3}?working)\b" + _ENDS_ASK,
    re.I,
)


def instances_query(query: str) -> str | None:
    """``query`` with the kind it asks for followed by that kind's common instances, or None
    when it asks for no kind the table knows."""
    m = _ASKED.search(query) or _ASKED_ANY.search(query) or _ASKED_OWNED.search(query)
    if m is not None:
        kind = m.group("kind")
        return f"{query[: m.end('kind')]} {_KINDS[kind.casefold()]}{query[m.end('kind') :]}"
    w = _ASKED_WORKPLACE.search(query)
    if w is not None:
        return f"{query[: w.end('verb')]} {_WORKPLACES}{query[w.end('verb') :]}"
    v = _ASKED_BY_VERB.search(query)
    if v is None:
        return None
    return (
        f"{query[: v.end('verb')]} {_BY_VERB[v.group('verb').casefold()]}{query[v.end('verb') :]}"
    )
