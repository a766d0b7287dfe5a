"""Labelled retrieval-evaluation set: multi-session conversations and questions about them.

Modelled on public conversational-memory benchmarks (long multi-session chats between two
speakers; single-hop, multi-hop, temporal and open-domain questions with evidence turns),
but every line is written here; nothing is downloaded.

``python -m bench.eval_data`` regenerates ``data/eval/conversations.jsonl`` (the ``memstream
ingest`` line format) and ``data/eval/questions.jsonl`` byte for byte: the scripts below are
fixed and the only randomness (filler wording, minutes between turns) comes from a seeded
``random.Random`` per conversation. ``--check`` compares instead of writing.

Scripts: one line per turn, ``A: text`` or ``B@key: text``. A key names a turn that
questions cite as evidence; ``{hi}``, ``{ack}`` and similar placeholders are filler drawn
from small pools. Questions: one line each, ``kind | query | answer | key key ...`` plus
``| YYYY-MM-DD`` for a point-in-time question, asked at the end of that day (UTC).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, cast

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data" / "eval"
CONVERSATIONS_FILE = "conversations.jsonl"
QUESTIONS_FILE = "questions.jsonl"
SEED = 20240917
KINDS = ("single_hop", "multi_hop", "temporal", "open_domain")
Kind = Literal["single_hop", "multi_hop", "temporal", "open_domain"]
MIN_GAP_S, MAX_GAP_S = 50, 200  # seconds between consecutive turns of a session


# --- public types and loaders -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EvalTurn:
    """One conversation turn, exactly one line of conversations.jsonl (the ingest format)."""

    namespace: str
    session_id: str
    turn_id: str
    role: str
    speaker: str
    text: str
    occurred_at: str  # ISO 8601, UTC, "Z" suffix
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def at(self) -> datetime:
        return _parse_iso(self.occurred_at)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "namespace": self.namespace,
            "session_id": self.session_id,
            "turn_id": self.turn_id,
            "role": self.role,
            "speaker": self.speaker,
            "text": self.text,
            "occurred_at": self.occurred_at,
        }
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> EvalTurn:
        return cls(
            namespace=str(obj["namespace"]),
            session_id=str(obj["session_id"]),
            turn_id=str(obj["turn_id"]),
            role=str(obj["role"]),
            speaker=str(obj["speaker"]),
            text=str(obj["text"]),
            occurred_at=str(obj["occurred_at"]),
            metadata=dict(obj.get("metadata") or {}),
        )


@dataclass(frozen=True, slots=True)
class EvalQuestion:
    """One labelled question: the turns that hold its answer, and the time it is asked at."""

    id: str
    namespace: str
    query: str
    kind: Kind
    answer: str
    evidence_turn_ids: tuple[str, ...]
    as_of: str | None  # ISO 8601 UTC for point-in-time questions; None: after all sessions

    @property
    def as_of_at(self) -> datetime | None:
        return None if self.as_of is None else _parse_iso(self.as_of)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "namespace": self.namespace,
            "query": self.query,
            "kind": self.kind,
            "answer": self.answer,
            "evidence_turn_ids": list(self.evidence_turn_ids),
            "as_of": self.as_of,
        }

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> EvalQuestion:
        kind = str(obj["kind"])
        if kind not in KINDS:
            raise ValueError(f"unknown question kind {kind!r}")
        as_of = obj.get("as_of")
        return cls(
            id=str(obj["id"]),
            namespace=str(obj["namespace"]),
            query=str(obj["query"]),
            kind=cast(Kind, kind),
            answer=str(obj["answer"]),
            evidence_turn_ids=tuple(str(t) for t in obj["evidence_turn_ids"]),
            as_of=None if as_of is None else str(as_of),
        )


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_conversations(data_dir: Path = DATA_DIR) -> list[dict[str, Any]]:
    """Every turn of the shipped set, as ingest-format dicts, in file order."""
    return _read_jsonl(data_dir / CONVERSATIONS_FILE)


def load_questions(data_dir: Path = DATA_DIR) -> list[dict[str, Any]]:
    """Every labelled question of the shipped set, in file order."""
    return _read_jsonl(data_dir / QUESTIONS_FILE)


def load_turns(data_dir: Path = DATA_DIR) -> list[EvalTurn]:
    return [EvalTurn.from_dict(o) for o in load_conversations(data_dir)]


def load_eval_questions(data_dir: Path = DATA_DIR) -> list[EvalQuestion]:
    return [EvalQuestion.from_dict(o) for o in load_questions(data_dir)]


def _parse_iso(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- authoring types --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Session:
    start: str  # "YYYY-MM-DD HH:MM", UTC
    script: str


@dataclass(frozen=True, slots=True)
class _Conversation:
    key: str  # "c1": namespace eval-c1, session ids c1-s01, turn ids c1-s01-t01
    speakers: Mapping[str, tuple[str, str]]  # script slot -> (speaker, role)
    sessions: Sequence[_Session]
    questions: str  # one per line: kind | query | answer | evidence keys [| as_of date]


FILLER: Mapping[str, Sequence[str]] = {
    "hi": ("Hey!", "Hi!", "Heyy!", "Hey you!", "Hi hi!", "Hello!", "Hey hey!"),
    "lol": ("haha", "lol", "hahaha", "ha"),
    "ack": ("haha", "lol", "ok", "nice", "ha!", "love that", "oh nice", "hahaha"),
    "bye": ("Talk soon!", "Ok gotta run, bye!", "Later!", "Night!", "Catch you later", "Bye!"),
    "thanks": ("Thanks!", "Thank you!", "Great, thanks.", "Perfect, thank you.", "Thanks a lot."),
    "welcome": ("You're welcome!", "Happy to help!", "Anytime!", "Glad I could help."),
}

_LINE = re.compile(r"^(?P<slot>[A-Z])(?:@(?P<key>\w+))?: (?P<text>.+)$")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


# --- conversation 1: two friends, one moves cities and changes job ------------------------

C1 = _Conversation(
    key="c1",
    speakers={"A": ("Lena", "user"), "B": ("Tomas", "user")},
    sessions=(
        _Session(
            "2024-01-09 19:05",
            """
A: {hi} Happy new year! How were your holidays?
B: Quiet, which was exactly what I needed. My grandmother hosted everyone in Eugene, eleven people in one tiny house.
A: {lol} that sounds like chaos
B: Good chaos. How about you, did you get any time off?
A@job1: Barely. I'm still doing night shifts as a nurse on the pediatric cardiac ward at the children's hospital here in Portland.
B: Nights over Christmas, that's rough.
A: The kids made it worth it honestly. One of them drew me as a superhero.
B: That's adorable
A@pottery: Also I signed up for a wheel-throwing class at a studio on Alberta Street, Thursday evenings for ten weeks.
B: Ooh! You'll be making lopsided bowls by February.
A: That's the dream. What's new with you?
B@teach: Same old, teaching chemistry to sophomores at Franklin High. Second semester starts next week.
B@band: And the band finally has a name: we're calling ourselves The Low Tides. I'm still on bass.
A: Love it. Tell me when you play somewhere!
B: {bye}
""",
        ),
        _Session(
            "2024-02-03 10:20",
            """
B: {hi} How's the wheel going?
A: Slowly! I made a bowl that looks like an ashtray. The teacher said it has character.
B: {ack}
A@dog: Bigger news though: I finally adopted a beagle puppy, we named him Biscuit.
B: No way!! Pictures please
A: Sending. He chewed through a phone charger on day two.
B: Classic.
A@dog_age: He's eleven weeks old and howls at the vacuum cleaner.
B@cat: Pepper is going to be so offended. She's been the only pet in our friend group for years, a very spoiled cat.
A@allergy: Ha, well, Pepper is the reason I never stay long at your place. My eyes swell up around cats.
B: I know, I know. I vacuum before you come over.
A: You're a saint.
B@canoe: I started a new project too: I'm building a cedar-strip canoe in my garage. Found plans online.
A: How long does that take?
B@canoe_hours: The guy in the video said 200 hours. So, realistically, 600 hours.
A: {ack}
""",
        ),
        _Session(
            "2024-03-05 20:10",
            """
A: {hi}
B: Hey! How was the race??
A@half1: I did it! Ran the Riverfront Half last Sunday in 1:58, my first time under two hours.
B: That's huge, congrats!
A: My calves are still yelling at me.
B: Did you celebrate?
A@veg: We went for tacos, although I had to pick the cilantro off everything. I've been vegetarian for four years and I still can't stand cilantro.
B: Cilantro haters unite.
A@jonah: Jonah came to the finish line with a sign that said "Run like Biscuit stole your sandwich".
B: hahaha your boyfriend is the best
B@gig: Speaking of, The Low Tides got our first real gig! Saturday May 18 at the Driftwood Room.
A: We'll be there! I'll bring Jonah.
B: {ack}
A: Ok I need to ice my legs. {bye}
""",
        ),
        _Session(
            "2024-03-27 18:45",
            """
B: {hi} Quick question, do you still have that pasta machine?
A: I do, want to borrow it?
B@grandma: Yes please. My grandmother turns 90 on Sunday and I promised to make her fresh ravioli, it's her favorite.
A: Ninety! Tell her happy birthday from me.
B: Will do. She wants bingo at the party, so that's the plan.
A@mugs: Oh and I finished my first real project in the class: a set of four blue mugs for my mom's birthday.
B: Blue mugs, classy.
A: They're a little wonky but she cried, so I'm counting it as a win.
B: {ack}
A@interview: Also, don't tell anyone yet, but I've got an interview for a clinical nurse educator position at a hospital in Seattle.
B: Whoa. Would you move?
A: If I get it, yes. Day shifts, teaching new nurses, better pay. And Jonah can work remotely.
B: Fingers crossed then!
B: I can come by for the machine Friday?
A: Friday works.
""",
        ),
        _Session(
            "2024-04-12 21:00",
            """
A: {hi} I got it!!!
B: The Seattle job?!
A@accepted: Yes! I accepted the clinical nurse educator job at Cascade General in Seattle. I start on May 13.
B: Congratulations! That's amazing.
A@move_plan: We're driving up with the moving truck on May 4. Biscuit gets the front seat.
B: Of course he does.
B: I'm going to miss having you twenty minutes away though.
A: It's only three hours. You'll visit, and I'll come down for the gig.
A@wedding1: And my sister Ines finally set her wedding date: June 14, in Lisbon. So many trips!
B: Busy summer. Canoe update: the hull is stripped and glassed. I need to sand it for about a hundred years now.
A: {ack}
A: How's school?
B@olympiad: My students took first place at the regional science olympiad last weekend. I might have cried a little.
A: Aww, proud teacher moment.
B: {bye}
""",
        ),
        _Session(
            "2024-05-09 19:30",
            """
B: {hi} How's the new city? Did the move go ok?
A@moved: We made it! Moved into a two-bedroom in Ballard, Seattle, last Saturday. Boxes everywhere.
B: And the little guy?
A@gulls: Biscuit is obsessed with the seagulls. Barks at every single one.
B: {ack}
A: I start at the hospital on Monday. Nervous.
B: You'll crush it.
A@pottery2: I already found a pottery studio near us, so Thursday evenings are saved.
B: Priorities.
B: Are you still coming down for the gig on the 18th?
A: Wouldn't miss it. Jonah and I will drive down that morning.
B: {ack}
A: Ok, a neighbor's dog is barking and Biscuit is answering. {bye}
""",
        ),
        _Session(
            "2024-05-29 20:15",
            """
A: {hi} Still thinking about your gig, you were all so good.
B: Thanks! The crowd was bigger than we expected. Someone even asked for an encore.
A: Jonah keeps humming your second song.
B: {lol} that one's our drummer's.
A@wedding2: Family drama: the venue in Lisbon flooded, so Ines pushed the wedding from June 14 to September 7.
B: Oh no. At least you have more time to find a dress?
A: True, I was panicking about that.
A@newjob: Work is good though. Teaching new grads is so much more my thing than night shifts were.
B: Day shifts suit you.
B@trip_idea: Meanwhile I'm plotting fall break. I want to go to Japan in October, Kyoto for sure.
A: Oh you have to! Eat everything.
B: That's the plan.
A: {bye}
""",
        ),
        _Session(
            "2024-06-20 18:00",
            """
B@tickets: {hi} I did it, booked flights to Osaka for October 11, back on the 26th.
A: Yay! Who's going?
B@brother: Me and my brother Luis. First trip together since we were kids.
A: Brothers trip!
A@half2: I signed up for another half, the Seattle one in late November. Trying to beat 1:58.
B: Of course you did.
A: Biscuit ate one of my running socks yesterday, so training is off to a great start.
B: {ack}
B@canoe_done: The canoe is done! Took it out on the Willamette last weekend and it didn't sink.
A: Proof or it didn't happen.
B: Sending a video now.
A: Ok that's beautiful. You should sell those.
B: Maybe after I retire.
A@planters: Speaking of selling, my studio is doing a holiday sale in December and they asked me to make some planters.
B: {ack}
""",
        ),
        _Session(
            "2024-07-15 20:40",
            """
A: {hi} How's summer break?
B@head: Busy, actually! They asked me to be head of the science department starting in August. I said yes.
A: Mr. Department Head! Congrats.
B: It mostly means more meetings. But I get to redo the chemistry curriculum.
A@hike: We spent the weekend hiking around Mount Rainier. Biscuit did eight miles and then slept for a day.
B: {ack}
A@jonah_job: Jonah got a job at a bike shop in Fremont, so no more remote work for him.
B: Does he like it?
A: Loves it. He comes home covered in grease.
B@cat_bed: Pepper has decided the canoe is her new bed, by the way.
A: Of course she did.
A: {bye}
""",
        ),
        _Session(
            "2024-09-16 19:10",
            """
B: {hi} How was the wedding?!
A@wedding3: Perfect. Lisbon in September was gorgeous, and Ines cried through her whole vows.
B: Aww
A@dance: Jonah and I took two swing dance lessons before we went so we wouldn't embarrass ourselves. It sort of worked.
B: {ack}
A: How's the department head life?
B: Meetings. So many meetings. But the new lab curriculum launched last week.
B@japan2: Also, change of plans for Japan: my brother couldn't get the time off in October, so we moved the trip to December 14 through the 29th.
A: Japan at Christmas sounds kind of magical actually.
B: That's what I'm telling myself.
A@engaged: Oh, and... Jonah proposed in Lisbon. We're engaged!
B: WHAT. Congratulations!!!
A: I said yes before he finished the question.
B: {bye}
""",
        ),
    ),
    questions="""
single_hop | What kind of dog did Lena get? | a beagle named Biscuit | dog
single_hop | Which instrument does Tomas play in his band? | bass | band
single_hop | What subject does Tomas teach? | chemistry | teach
single_hop | Which herb does Lena dislike? | cilantro | veg
single_hop | What did Lena make for her mother's birthday? | a set of four blue mugs | mugs
single_hop | What is Tomas building at home? | a cedar-strip canoe | canoe
single_hop | What is the name of Tomas's band? | The Low Tides | band
single_hop | Why does Lena keep her visits to Tomas's place short? | her eyes swell up around cats, and Pepper is the reason | allergy
single_hop | What diet does Lena follow? | vegetarian | veg
single_hop | In which city is Lena's sister getting married? | Lisbon | wedding1
multi_hop | What pets do Lena and Tomas each have? | Lena: a beagle named Biscuit; Tomas: Pepper, a cat | dog cat
multi_hop | What finishing time is Lena trying to beat, and in which race? | 1:58, in the Seattle half in late November | half1 half2
multi_hop | How did Lena's job change between January and May? | from night shifts as a pediatric cardiac nurse in Portland to clinical nurse educator at Cascade General in Seattle | job1 accepted
multi_hop | What did Tomas's students and his band each achieve this spring? | the students took first place at the regional science olympiad; The Low Tides got their first real gig at the Driftwood Room | olympiad gig
multi_hop | What does Tomas's cat sleep in, and how long did he expect building it to take? | the canoe, her new bed; about 600 hours | canoe_hours cat_bed
multi_hop | Which hobby did Lena keep up after her move, and on which evening? | pottery (wheel-throwing), Thursday evenings | pottery pottery2
multi_hop | Where abroad are Lena and Tomas each travelling in 2024? | Lena: Lisbon for her sister's wedding; Tomas: Japan, Osaka and Kyoto | wedding1 tickets trip_idea
temporal | Which city did Lena live in during March 2024? | Portland | job1 | 2024-03-31
temporal | Where does Lena live now? | Ballard, Seattle | moved
temporal | When did Lena move to Seattle? | Saturday, May 4, 2024 | moved
temporal | When did Lena run her first half marathon under two hours? | Sunday, March 3, 2024 | half1
temporal | What date was Lena's sister's wedding set for? | June 14 | wedding1 | 2024-05-15
temporal | What date is Lena's sister's wedding? | September 7 | wedding2 | 2024-06-30
temporal | What is Tomas's role at his school now? | head of the science department | head
temporal | When is Tomas flying to Japan? | October 11, back on the 26th | tickets | 2024-07-31
temporal | When is Tomas's Japan trip? | December 14 through the 29th | japan2
temporal | When did Tomas's grandmother turn 90? | Sunday, March 31, 2024 | grandma
temporal | What did Lena and her dog do the weekend before mid-July? | hiking around Mount Rainier, eight miles | hike
open_domain | Would Lena likely order a carne asada burrito? | no, she is vegetarian | veg
open_domain | Is Tomas handy with woodworking? | yes: building a cedar-strip canoe, and it is done | canoe canoe_done
open_domain | Would a house-sitting job with three cats suit Lena? | no: her eyes swell up around cats | allergy
open_domain | Would Lena be a good person to ask about training new nurses? | yes: she is a clinical nurse educator, teaching new grads | accepted newjob
open_domain | Could Tomas help a student balance a chemical equation? | yes, he is teaching chemistry | teach
open_domain | Is Biscuit a calm, quiet dog? | no: he howls at the vacuum cleaner and barks at seagulls | dog_age gulls
open_domain | Does Lena enjoy endurance sports? | yes: she ran a half in 1:58 and signed up for another | half1 half2
""",
)


# --- conversation 2: a user and an assistant; job, car, renovation budget and dates change --

C2 = _Conversation(
    key="c2",
    speakers={"A": ("Rosa", "user"), "B": ("assistant", "assistant")},
    sessions=(
        _Session(
            "2024-02-06 09:15",
            """
A@lactose: Hi! Can you help me plan dinners for the week? Nothing with dairy please, I'm lactose intolerant.
B: Of course. How many people are you cooking for?
A@family: Three: me, my husband Marcus, and our son Eli, who just turned two.
B: Great. Any cuisines you especially like?
A@thai: Thai food is my favorite by far. Marcus will eat anything.
B@curry_plan: Then let's do a green curry with coconut milk on Monday, pad see ew on Wednesday, and a larb bowl on Friday. Want a shopping list?
A: Yes please, and something toddler-friendly for Eli.
B: I'll add plain jasmine rice and mild chicken skewers for him.
A@marcus_job: Perfect. Marcus works night shifts in the ER as a doctor, so dinner needs to be ready by five.
B: Noted: dinners on the table by 5 pm. I'll keep prep under forty minutes.
A: {thanks}
B: {welcome} Enjoy the curry.
""",
        ),
        _Session(
            "2024-02-27 13:40",
            """
A: I need help writing a polite reminder to a client who's 45 days late paying an invoice.
B: Sure. Who's the client and what was the project?
A@freelance: It's a bakery in Austin. I'm a freelance graphic designer and I did their new logo and menu boards.
B: Here's a draft: "Hi Dana, I hope the new menu boards are working well! A quick reminder that invoice #0214 for $1,850 is now 45 days past due..."
A: That's great, maybe slightly warmer.
B: Added a line thanking them for the chance to work together and offering to set up a payment plan.
A@rate: {thanks} I also want to raise my hourly rate from $65 to $80 next month. Is that too much of a jump?
B: About 23%. That's reasonable if you give existing clients notice and keep current projects at the old rate.
A: Ok, I'll email everyone on Friday.
B: Good plan. Want a template for that too?
A: Later, Eli is waking up from his nap.
B: {welcome}
""",
        ),
        _Session(
            "2024-03-19 20:30",
            """
A@budget1: We're finally redoing our kitchen! Our budget is $18,000. Can you help me prioritize?
B: Absolutely. What's most important to you?
A@stove: Storage and a gas stove. The current electric one takes forever to boil water.
B: Then I'd put cabinets and the range first, then counters, then lighting. Quartz counters might stretch the budget.
A@contractor1: Our contractor can start on May 6, and says it takes about five weeks.
B: So roughly done by June 10. Do you have a plan for cooking during the renovation?
A: Microwave and a grill on the patio I guess.
B: That works. A hot plate could help too.
A@tortoise: And I need to keep Gus, our tortoise, out of the dust. He's 30 years old and hates change.
B: Maybe set up his enclosure in a bedroom during the work.
A: Good idea. {thanks}
""",
        ),
        _Session(
            "2024-04-09 08:50",
            """
A@car_old: My 2012 Honda Civic finally died on the highway. I'm looking at a used Subaru Outback. What should I check?
B: Check for head gasket issues on older models, transmission fluid service records, and rust underneath. And get a pre-purchase inspection.
A: Good to know. The one I like is a 2019 with 60,000 miles for $21,500.
B: That's within the normal range. Ask for the service history.
A: Will do.
A@spanish: Separately: I'm at a 200-day Duolingo streak in Spanish! Any tips to practice speaking?
B: Congrats! Try a language exchange meetup, Spanish podcasts, or narrating your day aloud.
A: I'll try narrating while I cook, Eli will think I'm weird.
B: He'll pick up some Spanish too.
A: {lol} true
""",
        ),
        _Session(
            "2024-04-23 19:00",
            """
A@car_new: Update: we bought the Subaru! The inspection came back clean.
B: Congratulations! Did you negotiate?
A@haggle: Got them down to $20,700.
B: Nice work.
A@contractor2: Bad news on the kitchen though, the contractor pushed the start to May 20 because of a permit delay.
B: That moves completion to around late June. Do you want to adjust any plans?
A@mom: Yeah, my mom was going to visit from El Paso in June, so I'll have to move her trip to July.
B: Want help drafting a message to her?
A: No, she'll understand. She hates my cooking anyway lol
B: {ack}
""",
        ),
        _Session(
            "2024-05-28 21:10",
            """
A@offer: I got a full-time offer from Brightwell Studio, a design agency downtown. Should I take it or stay freelance?
B: What are the main tradeoffs for you?
A: Stable salary and health insurance versus flexibility with Eli.
B: Could you negotiate hybrid days or a later start time?
A@office: They offered three days a week in the office.
B: That might give you both. How does the salary compare to your freelance income?
A: About the same, but without chasing invoices.
B: That removes a lot of stress. It sounds like a good fit.
A@daycare: Eli would start daycare three days a week at Little Acorns.
B: That could be good for him socially too.
A: Yeah. I think I'm going to say yes.
""",
        ),
        _Session(
            "2024-06-18 12:30",
            """
A@started: First week at Brightwell Studio done! I'm designing packaging for a kombucha brand.
B: Congrats on surviving week one! How's it going?
A: Fun, but I'm exhausted. Eli cried at daycare drop-off every day.
B: That's really common in the first weeks. It usually gets better within a month.
A@budget2: Also the kitchen budget went up to $25,000 because we found water damage behind the sink.
B: Ouch. Is the timeline affected?
A: Two more weeks, so now mid-July.
B: Hang in there.
A@tennis: I've started tennis lessons on Saturday mornings to keep my sanity.
B: Great stress relief. How are you liking it?
A: I'm terrible but I love it.
""",
        ),
        _Session(
            "2024-07-24 19:45",
            """
A@kitchen_done: The kitchen is finished!!! The gas range is everything I dreamed of.
B: Congratulations! What's the first thing you cooked?
A@first_meal: Green curry, obviously. Coconut milk, no cream.
B: Perfect for you.
A@mom2: My mom is here this week and she approved of the cabinets, which is high praise.
B: That's high praise indeed!
A@mom_age: Can you suggest a day trip from Austin for a toddler and my 64-year-old mom?
B: Fredericksburg is about 80 minutes away: peach stands, a toy store and short flat walks.
A: Love that. {thanks}
""",
        ),
        _Session(
            "2024-08-20 07:30",
            """
A@spanish2: Buenos días! My Duolingo streak hit 300 days.
B: ¡Felicidades! That's impressive consistency.
A@eli_talk: Eli now says "agua" instead of water, so it's rubbing off.
B: That's adorable.
A@marcus_bday: Can you help me write a birthday message for Marcus? He turns 38 on Friday.
B: Here's one: "Happy 38th to the man who keeps the ER running at 3 am and still makes Eli laugh at breakfast."
A: Aww that's good. Add something about our trip.
A@bigbend: We're going camping at Big Bend in October for our anniversary.
B: Added: "...and here's to stars over Big Bend this October."
""",
        ),
        _Session(
            "2024-09-24 20:00",
            """
A@tennis2: I switched my tennis lessons to Sunday mornings, Saturdays are Eli's swim class now.
B: Sounds like a busy weekend lineup.
A@gus2: Also Gus escaped into the new pantry last night. That tortoise is faster than he looks.
B: Ha! Glad you found him.
A: Can you give me a packing list for camping with a toddler?
B: Tent, sleeping bags rated for 40°F, headlamps, a travel cot, sunscreen, hats, snacks, extra clothes, a first aid kit, and a favorite toy.
A@campdates: Great. We leave October 11 and come back on the 15th.
B: Desert nights in October can be cold, so pack layers.
A: {thanks}
A@bigclient: Oh and Brightwell gave me my first big client, a coffee chain rebrand.
B: Congratulations, that's a big vote of confidence.
""",
        ),
    ),
    questions="""
single_hop | Which food group does Rosa avoid? | dairy, she is lactose intolerant | lactose
single_hop | What cuisine does Rosa like best? | Thai | thai
single_hop | What kind of pet does Rosa's family keep? | Gus, a tortoise | tortoise
single_hop | How old is the family's pet? | 30 years old | tortoise
single_hop | What does Rosa's husband do for a living? | a doctor, night shifts in the ER | marcus_job
single_hop | What hourly rate did Rosa plan to charge? | $80, up from $65 | rate
single_hop | What was Rosa's first project at her new employer? | packaging for a kombucha brand | started
single_hop | Which car broke down on Rosa? | her 2012 Honda Civic | car_old
single_hop | Which language is Rosa learning? | Spanish | spanish
multi_hop | What does Rosa drive now, and what did it replace? | a used Subaru Outback; before it, a 2012 Honda Civic | car_old car_new
multi_hop | How much did the renovation budget grow? | from $18,000 to $25,000 | budget1 budget2
multi_hop | How did Rosa's language-app streak progress from April to August? | from 200 days to 300 days | spanish spanish2
multi_hop | How many days a week would Rosa be in the office and Eli in daycare? | three days a week each | office daycare
multi_hop | Who lives in Rosa's household? | her husband Marcus, their son Eli, and Gus the tortoise | family tortoise
multi_hop | What did Rosa cook first in her new kitchen, and had the assistant suggested it before? | green curry with coconut milk, yes | curry_plan first_meal
multi_hop | Why was Rosa's mother's visit moved from June to July? | the contractor pushed the kitchen start to May 20 because of a permit delay | contractor2 mom
temporal | When was the kitchen work supposed to start? | May 6 | contractor1 | 2024-04-15
temporal | When was the kitchen work going to start after the permit problem? | May 20 | contractor2 | 2024-05-01
temporal | How was Rosa employed in March 2024? | freelance graphic designer | freelance | 2024-03-31
temporal | Where was Rosa working in July 2024? | Brightwell Studio | started | 2024-07-01
temporal | When did Rosa buy her current car? | April 2024 | car_new
temporal | When does Rosa's husband turn 38? | Friday, August 23, 2024 | marcus_bday
temporal | On which day did Rosa take tennis lessons over the summer? | Saturday mornings | tennis | 2024-08-31
temporal | When does Rosa have tennis lessons now? | Sunday mornings | tennis2
temporal | What was the renovation budget in April? | $18,000 | budget1 | 2024-04-30
temporal | When is the family's camping trip? | October 11 to the 15th | campdates
temporal | When was the kitchen finished? | July 2024 | kitchen_done
open_domain | Would a cheese fondue night be a good dinner idea for Rosa? | no: she is lactose intolerant | lactose
open_domain | Would Rosa's husband usually be free for a 9 pm weeknight dinner party? | unlikely: Marcus works night shifts in the ER | marcus_job
open_domain | Would Rosa appreciate a Spanish-language picture book for her son? | probably yes: a Spanish streak on Duolingo, and Eli says agua | spanish eli_talk
open_domain | Is Rosa likely to enjoy cooking more after the renovation? | yes: the gas range is everything she dreamed of, the electric one takes forever | stove kitchen_done
open_domain | Does Rosa's family like being outdoors? | yes: camping at Big Bend and tennis lessons | bigbend tennis
open_domain | Is Rosa comfortable negotiating prices? | yes: got the Subaru down to $20,700, and raise her hourly rate from $65 to $80 | car_new haggle rate
open_domain | Is the family pet as slow as people assume? | no: Gus escaped into the new pantry, faster than he looks | gus2
""",
)


# --- conversation 3: two friends; a thesis date and a truck opening slip, both move -------

C3 = _Conversation(
    key="c3",
    speakers={"A": ("Amara", "user"), "B": ("Jules", "user")},
    sessions=(
        _Session(
            "2024-03-04 21:00",
            """
A: {hi} How's the truck coming along?
B@truck: Almost there! It's a Korean-Mexican menu and the truck is called Gochu Loco. Bulgogi tacos are the star.
A: I'm drooling.
B@open1: We're aiming to open on April 1 outside the brewery on Telegraph, five minutes from our apartment in Oakland.
A: April Fools' Day opening, bold.
B: {lol} I didn't even think of that
A@phd: I'm buried in chapter three of my dissertation. Kelp forests and the sea urchins that eat them.
B: Do the urchins win?
A: Currently, yes. It's grim down there.
A@defense1: My defense is scheduled for June 20, so I have to write like 30 pages a week.
B: You'll make it.
B@wrist: Also I'm typing with one hand because I broke my wrist falling off my bike last Thursday.
A: Jules! Are you ok?
B: Fine, just annoying. Cast for six weeks.
A: {bye}
""",
        ),
        _Session(
            "2024-03-26 19:20",
            """
B: {hi}
A: Hey! How's the wrist?
B: Itchy. The cast comes off mid-April.
B@open2: Ugh, and the health permit got delayed, so the truck opening moved to April 20.
A: That's annoying, but it gives your wrist time to heal before you're flipping tortillas.
B: Exactly what Sam said.
A@noor: Speaking of partners, Noor and I just celebrated two years together. She took me to a jazz bar.
B: Two years! Happy anniversary.
A@noor_job: She's on spring break from teaching music at the high school, so we have a whole week.
B: Going anywhere?
A@dive: We're going free diving in La Jolla Cove, ten minutes from our place in San Diego. I can hold my breath for three minutes now.
B: That's terrifying and impressive.
A: {lol} mostly terrifying
""",
        ),
        _Session(
            "2024-04-22 22:10",
            """
A: {hi} HOW WAS OPENING DAY?
B@opening_day: Insane. We sold out of bulgogi tacos in two hours on Saturday.
A: I knew it!!
B: The line went around the block. Sam was handing out water.
A: What's next on the menu?
B@menu: Kimchi quesadillas. Testing them on my neighbors this week.
A@peanut: Please tell me there's no peanut sauce in them, you know I'd end up in the ER.
B: No peanuts, I promise. I remember the Thanksgiving incident.
A: Never again.
A: I'd love to come up and try the truck this summer.
B: You'd better.
""",
        ),
        _Session(
            "2024-05-14 20:00",
            """
B@dog: {hi} Meet the newest member of the crew: we adopted a retired racing greyhound named Comet.
A: Omg the legs on him
B@dog_sleep: He sleeps 20 hours a day. Laziest athlete alive.
A: {ack}
A@defense2: Bad news from my side: one of my committee members is on sabbatical, so my defense moved to September 12.
B: Is that a relief or a nightmare?
A: Honestly a relief. Chapter four is a mess.
A@bread: I've been stress-baking sourdough every weekend. My starter is named Kevin.
B: Kevin! Iconic.
B@guitar: I started guitar lessons, now that my wrist's healed. Three chords so far.
A: Which three?
B: G, C and D. Enough for about a thousand songs apparently.
""",
        ),
        _Session(
            "2024-06-10 18:30",
            """
A: {hi}
B: Hey! How's chapter four?
A: Getting there. My advisor finally stopped writing "unclear" in the margins.
A@postdoc_int: I also had an interview for a postdoc position at a marine lab in Halifax.
B: Halifax, like Canada Halifax?
A: Yep. Cold water, lots of kelp.
B: Would Noor move with you?
A@noor_move: She said she'd apply for teaching jobs up there if I get it.
B@festival: That's love. We're doing the Oakland street food festival in August, first big event for the truck.
A: You'll win something.
B: Ha, I hope so.
""",
        ),
        _Session(
            "2024-07-08 20:45",
            """
A@postdoc: I GOT THE POSTDOC! Halifax, starting November 1.
B: Congratulations!!
A: I'm in shock. Defense first though.
B: Of course. And then you'll be a doctor.
A@visit: Noor and I are coming to Oakland on July 27 for a weekend, can we finally eat at the truck?
B: Yes! I'll make you a peanut-free feast.
B@move: Also Sam and I signed a lease on a bigger apartment in Berkeley. We move August 1. Comet needs a yard.
A: A yard for the lazy greyhound, love it.
B: He'll sleep in it, but still.
A: {bye}
""",
        ),
        _Session(
            "2024-07-30 21:15",
            """
A: {hi} Thank you for an amazing weekend!
B: You two are welcome anytime.
A@fav: The kimchi quesadilla was the best thing I ate all year. Noor is still talking about it.
B: I'll tell the team.
B: Moving boxes are taking over the apartment, two days to go.
A@knit: I've started knitting a sweater for Halifax winters. One sleeve down.
B: You're going to need like four sweaters.
A: Don't remind me.
B@guitar2: I learned my first full song on guitar, House of the Rising Sun.
A: Oh no. You're that person at parties now.
B: I'm that person.
""",
        ),
        _Session(
            "2024-08-26 19:00",
            """
B@award: {hi} We won Best New Truck at the street food festival on Saturday!!
A: I KNEW IT! Congratulations!
B@judges: The judges loved the bulgogi tacos.
A: Of course they did.
A: How's the new place?
B@berkeley: Love it. Comet has claimed the whole backyard, and the commute to the truck is only fifteen minutes.
A: And Sam?
B: Sam has already planted tomatoes.
A@defense_prep: Two weeks to my defense. I've practiced the talk eleven times.
B: You're going to be amazing.
""",
        ),
        _Session(
            "2024-09-16 20:30",
            """
A@defended: I passed!!! Defended on Thursday, officially a doctor of marine biology.
B: I'm so proud of you.
A: My committee asked about urchins for forty minutes.
B: {lol} of course
A@move_halifax: We're driving to Halifax on October 20. Noor got a job teaching music at a school there.
B: Noor too? That's perfect.
B@restaurant: Big news from me too: we're looking at spaces for a sit-down restaurant, maybe opening next spring.
A: A Gochu Loco restaurant? I'll fly back for opening night.
B: You'd better.
""",
        ),
        _Session(
            "2024-11-18 19:45",
            """
B: {hi} How's the new life up north?
A@halifax: Cold! Started at the lab two weeks ago, we're surveying kelp off Nova Scotia.
B: Are the urchins winning there too?
A@lobsters: Less so. Lobsters eat them here.
A@knit2: Finished the sweater, by the way. It's lumpy but warm.
B: Proud of you.
B@lease: We signed the lease on the restaurant space on Shattuck Avenue in Berkeley!
A: AHH. When's opening?
B@rest_open: Aiming for March 15. Comet will be the official greeter.
A: I'll be there.
A: {bye}
""",
        ),
    ),
    questions="""
single_hop | What style of food does Jules's truck serve? | Korean-Mexican | truck
single_hop | What is Amara's research about? | kelp forests and sea urchins | phd
single_hop | Which ingredient is dangerous for Amara? | peanut | peanut
single_hop | What kind of dog did Jules adopt? | a retired racing greyhound named Comet | dog
single_hop | Which instrument is Jules learning? | guitar | guitar
single_hop | What does Amara's partner do for work? | teaching music at a high school | noor_job
single_hop | What is Amara making with yarn? | a sweater for Halifax winters | knit
single_hop | What prize did the truck win? | Best New Truck at the street food festival | award
single_hop | What did Amara name her bread starter? | Kevin | bread
multi_hop | What sold out on the truck's first day, and did it impress the festival judges too? | bulgogi tacos; yes, the judges loved the bulgogi tacos | opening_day judges
multi_hop | Which dish did Amara love most on her visit, and when had Jules first tested it? | the kimchi quesadilla, testing them on neighbors in April | menu fav
multi_hop | What happened to Jules's wrist, and what did Jules start once it healed? | broke it falling off a bike; started guitar lessons | wrist guitar
multi_hop | Where will Amara and Noor both work after their move? | Halifax: Amara a postdoc at a marine lab, Noor teaching music at a school | postdoc_int postdoc move_halifax
multi_hop | How much does Jules's dog sleep, and where does he spend his time at the new place? | 20 hours a day; he claimed the backyard | dog_sleep berkeley
multi_hop | Where did each friend move to in 2024? | Jules and Sam to Berkeley; Amara and Noor to Halifax | move move_halifax
multi_hop | What warm clothing did Amara start for her new city, and did she finish it? | a sweater; yes, finished, lumpy but warm | knit knit2
temporal | When was the truck going to open? | April 1 | open1 | 2024-03-10
temporal | When did the food truck actually open? | Saturday, April 20, 2024 | open2 opening_day
temporal | When was Amara's defense scheduled? | June 20 | defense1 | 2024-04-30
temporal | When did Amara defend her dissertation? | Thursday, September 12, 2024 | defense2 defended
temporal | When did Jules get hurt in the bike accident? | Thursday, February 29, 2024 | wrist
temporal | Which city did Jules live in during June 2024? | Oakland | open1 | 2024-06-30
temporal | Where does Jules live now? | Berkeley | move berkeley
temporal | When did Jules move house? | August 1 | move
temporal | Which city did Amara live in during spring 2024? | San Diego | dive | 2024-05-31
temporal | Where is Amara living now? | Halifax, Nova Scotia | move_halifax halifax
temporal | When is the restaurant supposed to open? | March 15 | rest_open
open_domain | Would a satay restaurant be a safe dinner choice for Amara? | no: peanut sauce would end up with her in the ER | peanut
open_domain | Does Jules's dog need long daily runs? | probably not: he sleeps 20 hours a day, laziest athlete alive | dog_sleep
open_domain | Would Amara be comfortable in deep water? | yes: free diving, she can hold her breath for three minutes | dive
open_domain | Is Jules's business doing well? | yes: sold out in two hours, won Best New Truck, and looking at spaces for a restaurant | opening_day award restaurant
open_domain | Could Amara explain what eats sea urchins? | yes: lobsters eat them, and her dissertation is on kelp and sea urchins | phd lobsters
open_domain | Will Amara need warm clothes in her new city? | yes: Halifax is cold, and she finished a warm sweater | move_halifax halifax knit2
open_domain | Does Jules know how to cook with Korean ingredients? | likely yes: bulgogi tacos and kimchi quesadillas on the menu | truck menu
""",
)


# --- conversation 4: siblings; a baby, two house moves, a party date changes ---------------

C4 = _Conversation(
    key="c4",
    speakers={"A": ("Nadia", "user"), "B": ("Felix", "user")},
    sessions=(
        _Session(
            "2024-02-12 20:00",
            """
A: {hi} Did Mom call you about the anniversary?
B@forty: She did. Forty years, can you believe it.
A@party1: I'm thinking we throw Mom and Dad a party in Milwaukee on October 5. I'll book the restaurant.
B@slideshow: I'm in. I'll handle the slideshow.
A@pregnant: Also... I have news. I'm pregnant! Due August 10.
B: NADIA!!! I'm going to be an uncle!
A: You are! Omar is already building a crib playlist. Don't ask.
B: {ack}
B@firehouse: I'll have to swap some shifts at the firehouse in Denver to come see the baby.
A: Just bring snacks.
B@tri: Also I signed up for my first Olympic-distance triathlon in Boulder, June 16.
A@swim_hate: Swimming too?? You hate swimming.
B@lessons: I hate it less now. I take lessons at the rec center on Tuesdays.
A: {bye}
""",
        ),
        _Session(
            "2024-03-08 18:40",
            """
B: {hi} How are you feeling?
A@sick: Much better, the morning sickness finally stopped last week.
B: Good. Eating anything weird?
A@pickles: Pickles with peanut butter. Omar is horrified.
B: Omar should be horrified.
A@work: Work is crazy, we're designing a public library for a suburb north of the city and I'm the lead architect on it.
B: That's so cool. Send me the drawings.
B@chess1: I've been playing chess online every night after shifts. My rating just hit 1500.
A: Dad would be proud. He still brags about beating you when you were nine.
B: He cheated.
A: He did not.
""",
        ),
        _Session(
            "2024-04-02 21:00",
            """
A@condo: We're house hunting. The condo in Logan Square is too small for three.
B: Where are you looking?
A@garden: Evanston, near the lake. Omar wants a yard for a vegetable garden.
B@tess: Nice. So... I'm seeing someone. Her name is Tess, she's a veterinarian.
A: FELIX. How did you meet?
B@tess_meet: She treated a dog we rescued from a house fire last month.
A: That's a movie plot.
B: I know, it's ridiculous.
A: I need to meet her.
B: Maybe at the party in October.
""",
        ),
        _Session(
            "2024-04-29 19:30",
            """
A@house: Our offer was accepted! A three-bedroom house in Evanston with a big yard. We move in June.
B: Congrats!! Is there a room for the baby?
A: Yes, yellow walls already.
B@party2: Mom called me: the restaurant in Milwaukee can't do October 5, so I moved the party to October 12. Hope that's ok.
A: Oh, I thought I was booking it. Fine, the 12th works.
B: You're pregnant and moving, let me do something.
A: fair
B@swim: Swimming is going better, I did a mile in the pool without stopping.
A: Proud of you.
A: {bye}
""",
        ),
        _Session(
            "2024-05-28 20:15",
            """
B: {hi}
A: Hey! Three weeks to the big race?
B: Yep, tapering starts next week.
A@girl: We found out it's a girl!
B: A niece!! Names?
A@names: We're thinking Iris or June. Omar likes June.
B@favor: Iris. Definitely Iris.
A@leave: I'm starting maternity leave on July 15.
B@moab: Tess and I went to Moab last weekend, she's an amazing rock climber.
A: And you?
B: I'm an amazing belayer.
""",
        ),
        _Session(
            "2024-06-19 21:20",
            """
A: {hi} HOW DID IT GO?
B@tri_done: I finished! 2 hours 41 minutes in Boulder on Sunday. The swim was the worst part, as promised.
A: You're an Olympic triathlete!
B: An Olympic-distance triathlete. Very different.
A@moved_ev: We moved into the Evanston house on Saturday. Everything is in boxes.
B: Already? How are you lifting boxes?
A: I'm not. Omar and his brothers did everything while I pointed.
B: Good.
B@littleton: I'm actually closing on a house too, a small place in Littleton. Moving in July.
A: Both of us homeowners, Mom will be insufferable.
B: {ack}
""",
        ),
        _Session(
            "2024-07-24 19:00",
            """
B: {hi} How's the nesting?
A@nursery: Nursery is done. Omar painted clouds on the ceiling.
B: Of course he did.
A: How's the new house?
B@littleton2: Moved in last week. The commute to the station in Denver is 25 minutes, but I have a garage for my bike now.
A: And Tess?
B: She helped me paint. Mostly she supervised.
B@chess2: Chess rating is up to 1650 by the way.
A: Nerd.
B@codes: Says the architect who reads building codes for fun.
A: {ack}
""",
        ),
        _Session(
            "2024-08-06 10:30",
            """
A@born: She's here!!! Iris was born on Saturday, 6 pounds 9 ounces. A week early!
B: NADIA!!! Congratulations!!! How are you?
A: Tired, sore, happy.
B: How's Omar?
A: Crying at everything. He's already taken a thousand photos.
B@flight: I'm flying out on August 16 to meet her. Tess is coming too.
A: Perfect, you can finally see Omar's vegetable garden.
B: {ack}
""",
        ),
        _Session(
            "2024-10-14 20:00",
            """
A@party_done: The party was perfect, Mom cried during the slideshow.
B: Dad pretended he didn't.
A: Iris slept through the whole thing.
A@parttime: I'm going back to work in November, but part-time, three days a week.
B: That sounds right.
B@lieutenant: I passed the lieutenant exam, by the way. Promotion starts next month.
A: Lieutenant Felix! Amazing.
B: Means more paperwork.
A: {bye}
""",
        ),
        _Session(
            "2024-11-25 21:00",
            """
B@engaged: {hi} So... I proposed to Tess this weekend. She said yes!
A: FELIX!!!! Congratulations!
B@trail: On a trail near Boulder, at sunset. I was so nervous I almost dropped the ring.
A: Date?
B@wedding: Probably next September, in the mountains.
A: Iris will be the world's smallest flower girl.
A@library: First week back at work was rough, but the library broke ground.
B: That's your library!
A: My library.
B: {bye}
""",
        ),
    ),
    questions="""
single_hop | What is Nadia's role at work? | lead architect | work
single_hop | Where does Felix work? | shifts at the firehouse in Denver | firehouse
single_hop | What is Tess's profession? | veterinarian | tess
single_hop | What odd food pairing did Nadia crave while pregnant? | pickles with peanut butter | pickles
single_hop | What building is Nadia designing? | a public library for a suburb north of the city | work
single_hop | Which game does Felix play online? | chess | chess1
single_hop | What did Omar paint on the nursery ceiling? | clouds | nursery
single_hop | Which baby name did Felix prefer? | Iris | favor
single_hop | What test did Felix pass in the fall? | the lieutenant exam | lieutenant
multi_hop | How did Felix meet the woman he proposed to, and what is her job? | Tess, a veterinarian, treated a dog they rescued from a house fire | tess tess_meet engaged
multi_hop | How much did Felix's chess rating rise between March and July? | from 1500 to 1650 | chess1 chess2
multi_hop | Which name did Omar like, and what did they name the baby? | Omar likes June; Iris was born | names born
multi_hop | What race did Felix finish, in what time, and which part was hardest? | an Olympic-distance triathlon in 2 hours 41 minutes; the swim was the worst part | tri tri_done
multi_hop | Where did each sibling buy a house? | Nadia in Evanston, Felix in Littleton | house littleton
multi_hop | Was the baby born before or after the due date? | a week early: due August 10, born August 3 | pregnant born
multi_hop | Whose milestone is the October party for, and who made the slideshow? | Mom and Dad (forty years); Felix would handle the slideshow | party1 forty slideshow
temporal | What date was the anniversary party planned for? | October 5 | party1 | 2024-03-31
temporal | On what date did the anniversary party take place? | October 12 | party2 party_done
temporal | When was Iris born? | Saturday, August 3, 2024 | born
temporal | Where did Nadia live in April 2024? | a condo in Logan Square | condo | 2024-04-30
temporal | Where does Nadia live now? | Evanston | moved_ev
temporal | When did Nadia move into her house? | Saturday, June 15, 2024 | moved_ev
temporal | When did Felix race in Boulder? | Sunday, June 16, 2024 | tri_done
temporal | When did Nadia's maternity leave start? | July 15 | leave
temporal | What was Felix's chess rating in the spring? | 1500 | chess1 | 2024-05-31
temporal | Who was Tess to Felix in September 2024? | the veterinarian Felix was seeing | tess | 2024-09-30
temporal | What is the status of Felix's relationship with Tess now? | Felix proposed to Tess and she said yes | engaged
temporal | Where did Felix go with Tess over Memorial Day weekend? | Moab | moab
open_domain | Would Felix be a good person to ask about fire safety at home? | yes: shifts at the firehouse, and he passed the lieutenant exam | firehouse lieutenant
open_domain | Could Tess help if Nadia's family got a sick puppy? | yes, she is a veterinarian | tess
open_domain | Is Felix a natural swimmer? | no: lessons on Tuesdays, and the swim was the worst part | lessons tri_done
open_domain | Will Nadia's family likely need childcare in November? | probably yes: back to work in November, part-time three days a week | parttime
open_domain | Does Omar enjoy gardening? | likely yes: Omar wants a yard for a vegetable garden | garden
open_domain | Is Felix an outdoorsy person? | yes: finished in Boulder, went to Moab with Tess, and a trail near Boulder at sunset | tri_done moab trail
open_domain | Would Nadia enjoy a tour of a famous building? | likely yes: she is an architect who reads building codes for fun | codes
""",
)


# --- conversation 5: a retiree and an assistant; surgery and travel dates move -------------

C5 = _Conversation(
    key="c5",
    speakers={"A": ("Owen", "user"), "B": ("assistant", "assistant")},
    sessions=(
        _Session(
            "2023-09-12 15:00",
            """
A@intro: Good morning. My daughter set this up for me. I'm Owen, a retired mail carrier from Duluth.
B: Good morning, Owen! How can I help?
A@tomato: I need to know how to keep my tomatoes from splitting. I grow eight kinds in the back yard.
B: Splitting usually comes from uneven watering. Water deeply and consistently, and mulch to hold moisture.
A: We had heavy rain last week after a dry spell, that explains it.
B: Exactly. You can also pick them slightly early before a big rain.
A@fair: My Cherokee Purples took second place at the county fair in August.
B: Congratulations! That's a tricky variety to grow well.
A@diabetes: Any recipe for the extras that isn't sweet? I have type 2 diabetes so I stay away from sugar.
B: A roasted tomato soup or a fresh salsa would be great, no sugar needed.
A: Soup it is. Ruth will be pleased.
""",
        ),
        _Session(
            "2023-10-03 19:20",
            """
A@woodpecker: I saw a pileated woodpecker at the feeder this morning! First one this year.
B: What a great sighting! They're the largest woodpeckers in North America.
A@birdlist: I keep a list of every bird I've seen since I retired. I'm at 142 species.
B: That's a serious life list. Any target birds this winter?
A@owl_target: A snowy owl. They come down to the harbor some winters.
B: Duluth is a great spot for them. Check around the grain elevators near the harbor in December and January.
A: Good tip.
A@knee1: I also have a question: my knee surgery is November 14. What should I prepare at home?
B: For a knee replacement? Remove loose rugs, set up a bedroom on the first floor, get a shower chair and a raised toilet seat, and prepare frozen meals.
A@route: It is a replacement, yes. Left knee. 40 years of walking a mail route.
B: That's a lot of miles. Recovery usually takes about six weeks for everyday activities.
""",
        ),
        _Session(
            "2023-10-27 14:40",
            """
A@leo: My grandson Leo made the travel hockey team. He's eight.
B: That's wonderful! What position does he play?
A@goalie: Goalie, like his mother did.
B: A family of goalies!
A@ereader: My daughter gave me an e-reader. How do I make the letters bigger?
B: On most e-readers you tap the top of the screen, open the "Aa" settings, then slide the font size up.
A: That worked. Now I can read in bed without my glasses.
A@mystery: I mostly read mystery novels, the older the better. Old British detective stories are my favorite.
B: Then you might enjoy the classic golden-age detective series. Want a list?
A: Please.
B: I'll suggest a few series from the 1920s and 30s with village settings and a clever amateur detective.
""",
        ),
        _Session(
            "2023-11-08 21:00",
            """
A@knee2: The surgeon had to move my surgery to January 9. She had a family emergency.
B: I'm sorry about the delay. Does that change your winter plans?
A@tucson1: Yes. We were going to drive to Tucson on December 1 for the winter, now it'll be later.
B: Your surgeon will tell you when you can travel. It's often around six weeks after a knee replacement.
A@tucson2: Then we'll aim for February 20. Ruth's sister has a place there.
B: That gives you time to heal. Would you like a checklist for the drive?
A: After Christmas.
A@volunteer: Also I've started volunteering at the public library on Thursdays, helping other seniors with their computers.
B: That's a wonderful way to help. What do people ask about most?
A: Passwords. Always passwords.
""",
        ),
        _Session(
            "2023-12-12 16:15",
            """
A@owl_seen: I saw the snowy owl! On a light pole by the harbor, just like you said.
B: That's fantastic! Species 143?
A@owl143: 143 exactly.
B: Congratulations.
A@pierogi: I want to make pierogi from my late mother's recipe for Christmas Eve. It says "flour until it feels right." How much is that?
B: For a typical batch, start with about 3 cups of flour per cup of sour cream and one egg, and add more a tablespoon at a time until the dough stops sticking.
A: That sounds about right. She never measured anything.
A@maple: Maple, our golden retriever, will be happy. She always gets a plain one.
B: Plain potato, no onion, is the safest filling for dogs.
A: Noted.
""",
        ),
        _Session(
            "2024-01-03 14:30",
            """
A: Happy New Year.
B: Happy New Year, Owen! How were the holidays?
A@pierogi2: The pierogi were a hit. Leo ate eleven.
B: Eleven! High praise.
A@surgery_next: Surgery is next Tuesday. I'm nervous.
B: That's understandable. Is your home set up?
A@prep: Ruth moved our bed to the den on the first floor and my son-in-law installed grab bars.
B: That's a great setup. Keep the ice packs handy and do your exercises.
A: Will do.
""",
        ),
        _Session(
            "2024-01-23 19:00",
            """
A@recovery: Two weeks since surgery. I'm walking with a walker around the house.
B: That's good progress. How's the pain?
A: Manageable. The physical therapist is tough.
B: That's how it should be.
A@pt: I have physical therapy three times a week at a clinic on Superior Street.
B: Consistency matters most. Are you doing the home exercises too?
A: Twice a day. Ruth makes sure.
A@audiobook: I've been listening to audiobooks while I ice my knee. Finished four mysteries.
B: That's a great way to pass the time.
A: {thanks}
""",
        ),
        _Session(
            "2024-02-13 21:30",
            """
A@cane: I'm down to a cane now. The surgeon cleared me to travel.
B: Wonderful news!
A@route_trip: We leave for Tucson on February 20 as planned. Can you help with a route that avoids snow?
B: I'd head south through Iowa to Kansas City, then southwest through Oklahoma and New Mexico on I-40 and I-10. Stop every two hours to stretch your knee.
A: Ruth will do most of the driving.
B: Good idea. How long are you staying?
A@stay: Until the end of April.
B: Enough time for some Arizona birding.
A@maple2: Maple is coming too. She loves the car.
B: {welcome}
""",
        ),
        _Session(
            "2024-03-05 23:00",
            """
A@arrived: We made it to Tucson. 75 degrees. Ruth's sister met us with lemonade.
B: Sounds like a perfect welcome. How was the drive?
A: Long. Four days. Maple slept the whole way.
A@hummingbird: I saw a Costa's hummingbird in the yard this morning. Species 151.
B: A beautiful bird! You've been busy since the owl.
A: The Arizona birds are all new to me.
A@walk: I walked a mile on the river path yesterday, with the cane.
B: That's excellent progress. Keep building slowly.
A: My physical therapist would be proud.
""",
        ),
        _Session(
            "2024-03-26 16:30",
            """
A@fair_plan: Planning ahead: I want to enter the county fair again in August, this time with San Marzano tomatoes.
B: Great choice for sauce. When will you be home to start seeds?
A: We'll be home in May.
B: Then it's best to have them started for you around early April, or buy transplants when you get back.
A@neighbor: My neighbor Beth already starts seedlings for me every year.
B: Perfect, ask her to start them in early April.
A@leo2: Leo's team won their tournament in Minneapolis. He had a shutout in the final.
B: A shutout in the final! He must be thrilled.
A: Called me right after. Best phone call of the year.
""",
        ),
    ),
    questions="""
single_hop | What was Owen's job before retiring? | mail carrier | intro
single_hop | Which health condition shapes Owen's diet? | type 2 diabetes | diabetes
single_hop | How many tomato varieties does Owen grow? | eight kinds | tomato
single_hop | What operation did Owen need? | a replacement of his left knee | route
single_hop | What position does Owen's grandson play? | goalie | goalie
single_hop | What kind of books does Owen like to read? | mystery novels, old British detective stories | mystery
single_hop | What kind of dog does Owen have? | Maple, a golden retriever | maple
single_hop | Where does Owen volunteer? | at the public library, helping other seniors with their computers | volunteer
single_hop | How many pierogi did Leo eat on Christmas Eve? | eleven | pierogi2
multi_hop | How did Owen's bird list grow between October and March? | from 142 to 151 species | birdlist hummingbird
multi_hop | Which target bird did Owen eventually see, and where? | a snowy owl, on a light pole by the harbor | owl_target owl_seen
multi_hop | Why did Owen's winter trip get pushed back? | the surgeon had to move the surgery to January 9 after a family emergency, the drive to Tucson was December 1, now February 20 | knee2 tucson1 tucson2
multi_hop | Which tomato varieties has Owen entered or planned to enter at the county fair? | Cherokee Purples (second place) and San Marzano | fair fair_plan
multi_hop | What did Owen use to get around two weeks and five weeks after surgery? | a walker, then a cane | recovery cane
multi_hop | Whose recipe did Owen cook for Christmas Eve, and who ate the most? | his late mother's pierogi recipe; Leo ate eleven | pierogi pierogi2
multi_hop | Who has helped Owen with his home and his garden? | Ruth moved the bed to the den, his son-in-law installed grab bars, and his neighbor Beth starts seedlings | prep neighbor
temporal | When was Owen's knee surgery scheduled? | November 14 | knee1 | 2023-10-31
temporal | On what day did Owen have his knee surgery? | Tuesday, January 9, 2024 | knee2 surgery_next
temporal | When did Owen and Ruth originally plan to drive south for the winter? | December 1 | tucson1
temporal | When did Owen leave for Arizona? | February 20 | tucson2 route_trip
temporal | Where was Owen staying in March 2024? | Tucson, at Ruth's sister's place | tucson2 arrived | 2024-03-31
temporal | Where was Owen living in December 2023? | Duluth | intro | 2023-12-31
temporal | When did Owen see the snowy owl? | December 2023 | owl_seen
temporal | How was Owen getting around in late January 2024? | with a walker | recovery | 2024-01-31
temporal | How long are Owen and Ruth staying in Tucson? | until the end of April | stay
temporal | When did Owen's tomatoes win second place? | August 2023 | fair
temporal | How many bird species were on Owen's list at the end of 2023? | 143 | owl_seen owl143 | 2023-12-31
open_domain | Would a pecan pie be a good gift for Owen? | no: type 2 diabetes, he stays away from sugar | diabetes
open_domain | Would Owen enjoy a trip to a wildlife refuge? | yes: he keeps a list of every bird, 151 species | birdlist hummingbird
open_domain | Is Owen comfortable with technology? | somewhat: how do I make the letters bigger on the e-reader, yet helping other seniors with their computers | ereader volunteer
open_domain | Could Owen hike a steep ten-mile trail in March 2024? | unlikely: he walked a mile with the cane | cane walk
open_domain | Would a classic whodunit make a good present for Owen? | yes: mystery novels, old British detective stories are his favorite | mystery
open_domain | Would Owen's grandson enjoy watching professional hockey goalies? | likely yes: goalie on the travel hockey team | leo goalie
open_domain | Did Owen and Ruth need a dog-friendly place in Arizona? | yes: Maple is coming too | maple2
""",
)

CONVERSATIONS: tuple[_Conversation, ...] = (C1, C2, C3, C4, C5)


# --- generation -----------------------------------------------------------------------


def _as_of(day: str | None) -> str | None:
    if day is None:
        return None
    return _iso(datetime.fromisoformat(day).replace(tzinfo=UTC) + timedelta(days=1, seconds=-1))


def _build_one(conv: _Conversation) -> tuple[list[EvalTurn], list[EvalQuestion]]:
    rng = random.Random(f"{SEED}:{conv.key}")
    namespace = f"eval-{conv.key}"
    turns: list[EvalTurn] = []
    by_key: dict[str, EvalTurn] = {}
    last: datetime | None = None
    for s_no, session in enumerate(conv.sessions, start=1):
        session_id = f"{conv.key}-s{s_no:02d}"
        at = datetime.strptime(session.start, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
        if last is not None and at <= last:
            raise ValueError(f"{session_id} starts before the previous session ends")
        lines = [ln.strip() for ln in session.script.strip().splitlines() if ln.strip()]
        for t_no, line in enumerate(lines, start=1):
            m = _LINE.match(line)
            if m is None or m["slot"] not in conv.speakers:
                raise ValueError(f"{session_id}: cannot parse script line {line!r}")
            if t_no > 1:
                at += timedelta(seconds=rng.randint(MIN_GAP_S, MAX_GAP_S))
            text = _PLACEHOLDER.sub(lambda p: rng.choice(FILLER[p[1]]), m["text"])
            speaker, role = conv.speakers[m["slot"]]
            turn = EvalTurn(
                namespace=namespace,
                session_id=session_id,
                turn_id=f"{session_id}-t{t_no:02d}",
                role=role,
                speaker=speaker,
                text=text,
                occurred_at=_iso(at),
            )
            turns.append(turn)
            if m["key"]:
                if m["key"] in by_key:
                    raise ValueError(f"{conv.key}: evidence key {m['key']!r} used twice")
                by_key[m["key"]] = turn
        last = at
    questions: list[EvalQuestion] = []
    rows = [ln.strip() for ln in conv.questions.strip().splitlines() if ln.strip()]
    for q_no, row in enumerate(rows, start=1):
        qid = f"{conv.key}-q{q_no:02d}"
        parts = [p.strip() for p in row.split("|")]
        if len(parts) not in (4, 5) or not all(parts):
            raise ValueError(f"{qid}: cannot parse question line {row!r}")
        kind, query, answer, keys = parts[:4]
        as_of_day = parts[4] if len(parts) == 5 else None
        if kind not in KINDS:
            raise ValueError(f"{qid}: unknown kind {kind!r}")
        missing = [k for k in keys.split() if k not in by_key]
        if missing:
            raise ValueError(f"{qid}: unknown evidence keys {missing}")
        evidence = [by_key[k] for k in keys.split()]
        if kind == "multi_hop" and len(evidence) < 2:
            raise ValueError(f"{qid}: a multi_hop question needs two or more evidence turns")
        as_of = _as_of(as_of_day)
        if as_of is not None and any(t.occurred_at > as_of for t in evidence):
            raise ValueError(f"{qid}: evidence after as_of {as_of}")
        questions.append(
            EvalQuestion(
                id=qid,
                namespace=namespace,
                query=query,
                kind=cast(Kind, kind),
                answer=answer,
                evidence_turn_ids=tuple(t.turn_id for t in evidence),
                as_of=as_of,
            )
        )
    return turns, questions


def build() -> tuple[list[EvalTurn], list[EvalQuestion]]:
    """The whole set, deterministically: same scripts and seed, same output."""
    turns: list[EvalTurn] = []
    questions: list[EvalQuestion] = []
    for conv in CONVERSATIONS:
        t, q = _build_one(conv)
        turns.extend(t)
        questions.extend(q)
    return turns, questions


def _jsonl(rows: Sequence[Mapping[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def render() -> dict[str, bytes]:
    """File name -> exact bytes of each generated file."""
    turns, questions = build()
    return {
        CONVERSATIONS_FILE: _jsonl([t.to_dict() for t in turns]),
        QUESTIONS_FILE: _jsonl([q.to_dict() for q in questions]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.eval_data", description=__doc__)
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="output directory")
    parser.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    args = parser.parse_args(argv)
    out: Path = args.out
    files = render()
    if args.check:
        stale = [
            n for n, b in files.items() if not (out / n).is_file() or (out / n).read_bytes() != b
        ]
        for name in stale:
            print(f"differs: {out / name}", file=sys.stderr)
        return 1 if stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (out / name).write_bytes(data)
    turns, questions = build()
    counts = {k: sum(q.kind == k for q in questions) for k in KINDS}
    sessions = len({t.session_id for t in turns})
    print(f"{len(turns)} turns, {sessions} sessions, {len(questions)} questions {counts} -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
