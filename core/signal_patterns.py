"""Pattern tables for the signal scanner and the one regex they compile into.

Why this shape: ~30 separate ``re.search`` calls cost ~150 µs per turn on the target machine,
because each call walks the whole text. Here every literal phrase (signal cues, emotion words
with their negated/intensified forms, calendar words, tech/organisation names, injection
triggers) is expanded into its accepted spellings and put into one character trie, rendered as
one regex that starts with a literal space. ``re`` jumps from space to space with its
literal-prefix fast path and walks the trie only there. Names, all-caps words and numbers
(including dates, times, durations) are extra branches of the same regex.

Each spelling maps to a prebuilt, immutable :class:`Hit`, so the scanner classifies a match
with one dict lookup and folds the hits in C. Building the table and compiling the regex take
~0.5-1 s at import; matching then costs a few µs per turn.

All tables are plain data; the scanner in :mod:`core.signals` owns the logic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, NamedTuple

from core.calendar_words import MONTH_NAMES, WEEKDAYS
from core.emotion import INTENSIFIERS, NEGATORS, Effect, effect
from core.emotion import LEXICON as EMOTION_LEXICON

# --- signal cue phrases: kind -> pattern name -> phrases (lower case, single spaces) ---------

CORRECTION_PHRASES: Final[Mapping[str, tuple[str, ...]]] = {
    "actually": ("actually", "it's actually", "it is actually"),
    "should_be": ("should be", "should have been", "supposed to be", "ought to be"),
    "was_wrong": (
        "was wrong",
        "were wrong",
        "was incorrect",
        "you're wrong",
        "you are wrong",
        "that's wrong",
        "that is wrong",
        "that's incorrect",
        "that is incorrect",
        "that's not right",
        "that is not right",
        "that's not correct",
        "that is not correct",
        "not correct",
        "i was mistaken",
        "you're mistaken",
        "you are mistaken",
    ),
    "no_its": (
        "no, it's",
        "no it's",
        "no, it is",
        "no, that's",
        "no, that is",
        "no, the",
        "nope, it's",
    ),
    "i_meant": ("i meant", "what i meant", "i actually meant", "i mean to say"),
    "explicit": (
        "correction:",
        "correction -",
        "to clarify",
        "let me clarify",
        "let me correct",
        "i misspoke",
        "scratch that",
        "my mistake",
        "my bad",
        "typo:",
        "i stand corrected",
        "not quite",
        "wrong, it",
        "update:",
    ),
}

PREFERENCE_PHRASES: Final[Mapping[str, tuple[str, ...]]] = {
    "prefer": (
        "i prefer",
        "i'd prefer",
        "i would prefer",
        "i really prefer",
        "i much prefer",
        "i prefer not to",
        "i'd prefer not to",
        "my preference is",
        "my preference",
    ),
    "rather": ("i'd rather", "i would rather", "i'd much rather", "i would much rather"),
    "love": ("i love", "i really love", "i absolutely love", "i just love", "i adore"),
    "hate": (
        "i hate",
        "i really hate",
        "i absolutely hate",
        "i just hate",
        "i detest",
        "i can't stand",
        "i cannot stand",
        "i loathe",
    ),
    "dislike": (
        "i dislike",
        "i don't like",
        "i do not like",
        "i really don't like",
        "i'm not a fan of",
        "i am not a fan of",
        "i don't want",
        "i do not want",
        "i'm not into",
        "i avoid",
    ),
    "favorite": ("my favorite", "my favourite", "my fave", "my go-to", "my go to"),
    "always_never": (
        "i always use",
        "i never use",
        "i always",
        "i never",
        "please always",
        "please never",
        "always use",
        "never use",
        "don't ever",
        "do not ever",
        "please don't",
        "please do not",
    ),
    "fan_of": ("i'm a fan of", "i am a fan of", "i'm a big fan of", "i am a big fan of"),
    "like": (
        "i like",
        "i really like",
        "i quite like",
        "i kind of like",
        "i enjoy",
        "i really enjoy",
    ),
    "want": ("i want", "i'd like", "i would like", "i'm into", "i am into"),
    "habit": ("i usually", "i tend to", "i normally", "i typically"),
}

# Longer phrases that contain a cue but are not one (mostly questions). They are claimed first
# and yield nothing; the trie's longest match then hides the cue inside them.
NEUTRAL_PHRASES: Final[tuple[str, ...]] = (
    "what should be",
    "where should be",
    "which should be",
    "what was wrong",
    "what's wrong",
    "whats wrong",
    "what is wrong",
    "something was wrong",
    "can you call me",
    "could you call me",
    "will you call me",
    "would you call me",
    "call me back",
    "call me when",
    "call me if",
    "call me at",
    "call me tomorrow",
    "what i will",
    "if i will",
    "do i need to",
    "do i have to",
    "should i",
)

# Preference patterns that alone make a turn HIGH; the rest are weak ("I like", "I want").
STRONG_PREFERENCES: Final[frozenset[str]] = frozenset(
    {"prefer", "rather", "love", "hate", "dislike", "favorite", "always_never", "fan_of"}
)

DECISION_PHRASES: Final[Mapping[str, tuple[str, ...]]] = {
    "decided": (
        "we decided",
        "i decided",
        "we've decided",
        "i've decided",
        "we have decided",
        "i have decided",
        "decided to",
        "decided on",
        "we've agreed",
        "we agreed",
        "we agreed on",
        "it's settled",
        "it is settled",
        "settled on",
        "final decision",
        "decision:",
        "the decision is",
        "we made the call",
    ),
    "go_with": (
        "let's go with",
        "let us go with",
        "we'll go with",
        "we will go with",
        "i'll go with",
        "i will go with",
        "we're going with",
        "we are going with",
        "i'm going with",
        "i am going with",
        "let's use",
        "let's stick with",
        "let's stick to",
        "let's do",
        "let's switch to",
        "we'll use",
        "we will use",
        "we're switching to",
        "we are switching to",
        "we switched to",
        "i switched to",
        "we're moving to",
        "we are moving to",
    ),
    "chose": (
        "i chose",
        "we chose",
        "i've chosen",
        "we've chosen",
        "i have chosen",
        "we have chosen",
        "i choose",
        "we choose",
        "i picked",
        "we picked",
        "i opted",
        "we opted",
        "we selected",
        "i selected",
    ),
    "from_now_on": ("from now on", "going forward", "from here on"),
}

COMMITMENT_PHRASES: Final[Mapping[str, tuple[str, ...]]] = {
    "i_will": (
        "i will",
        "i'll",
        "i shall",
        "we will",
        "we'll",
        "we shall",
        "i promise",
        "we promise",
        "i'll make sure",
        "i will make sure",
    ),
    "going_to": (
        "i'm going to",
        "i am going to",
        "i'm gonna",
        "i am gonna",
        "we're going to",
        "we are going to",
        "we're gonna",
    ),
    "plan": (
        "i plan to",
        "i'm planning to",
        "i am planning to",
        "we plan to",
        "we're planning to",
        "we are planning to",
        "i intend to",
        "we intend to",
        "my plan is",
        "our plan is",
        "the plan is",
    ),
    "obligation": (
        "i need to",
        "i have to",
        "i must",
        "i've got to",
        "we need to",
        "we have to",
        "we must",
    ),
    "remind": (
        "remind me",
        "please remind me",
        "don't let me forget",
        "do not let me forget",
        "set a reminder",
        "reminder:",
    ),
    "deadline": (
        "deadline",
        "deadlines",
        "due date",
        "is due",
        "are due",
        "due on",
        "due by",
        "due tomorrow",
        "todo:",
        "to-do",
        "action item",
        "action items",
        "appointment",
        "meeting with",
    ),
}

FACT_PHRASES: Final[Mapping[str, tuple[str, ...]]] = {
    "name": ("my name is", "my name's", "i'm called", "i am called", "call me", "people call me"),
    "location": (
        "i live in",
        "i live at",
        "i'm from",
        "i am from",
        "i come from",
        "i moved to",
        "i'm based in",
        "i am based in",
        "my address is",
        "my timezone is",
        "my time zone is",
    ),
    "work": (
        "i work at",
        "i work for",
        "i work as",
        "i work on",
        "i'm working at",
        "i am working at",
        "my job is",
        "my role is",
        "my title is",
        "my company",
        "our company",
        "my team",
        "our team",
        "my boss",
        "my manager",
    ),
    "personal": (
        "my email is",
        "my email address is",
        "my phone number is",
        "my number is",
        "my birthday is",
        "i was born",
        "i'm allergic to",
        "i am allergic to",
        "i'm vegetarian",
        "i am vegetarian",
        "i'm vegan",
        "i am vegan",
        "my wife",
        "my husband",
        "my partner",
        "my son",
        "my daughter",
        "my kids",
        "my children",
        "my dog",
        "my cat",
        "my native language",
        "i speak",
        "i own a",
        "i'm married",
        "i am married",
        "years old",
    ),
    "version": (
        "version is",
        "the version is",
        "we're on version",
        "we are on version",
        "is on version",
    ),
    "stack": (
        "we use",
        "we're using",
        "we are using",
        "we run",
        "we're running",
        "we are running",
        "our stack",
        "our stack is",
        "runs on",
        "is running on",
        "is written in",
        "is built with",
        "is built on",
        "is deployed on",
        "is deployed to",
        "is hosted on",
        "depends on",
    ),
    "located": (
        "is located",
        "is located in",
        "is located at",
        "is based in",
        "is headquartered in",
        "the capital of",
        "was founded",
        "was released",
    ),
}

ATTENTION_PHRASES: Final[Mapping[str, tuple[str, ...]]] = {
    "remember": (
        "remember",
        "remember that",
        "please remember",
        "don't forget",
        "do not forget",
        "for the record",
        "for future reference",
        "keep in mind",
        "take note",
        "make a note",
        "note that",
        "note:",
        "please note",
        "make sure",
        "pay attention",
    ),
    "salience": (
        "important",
        "importantly",
        "very important",
        "crucial",
        "critical",
        "urgent",
        "asap",
        "fyi",
        "heads up",
        "always",
        "never",
        "must",
    ),
}

# Triggers only: a hit runs the precise (and slower) injection regex below.
INJECTION_TRIGGERS: Final[tuple[str, ...]] = (
    "ignore",
    "disregard",
    "forget",
    "override",
    "bypass",
    "jailbreak",
    "jailbroken",
    "jailbreaking",
    "system prompt",
    "system message",
    "you are now",
    "you're now",
    "pretend",
    "act as",
    "reveal",
    "print your",
    "repeat your",
    "show me your",
    "output your",
    "developer mode",
    "dan mode",
    "do anything now",
    "new instructions",
    "unfiltered",
    "uncensored",
    "no restrictions",
)

# --- temporal words ------------------------------------------------------------------------

# "may" and "march" are also verbs and abbreviations are too short to trust alone: these only
# appear in the table followed by a day number ("May 5", "mar 3rd").
AMBIGUOUS_MONTHS: Final[tuple[str, ...]] = (
    "may",
    "march",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
)
_WEEKDAYS = WEEKDAYS
_MONTHS = tuple(m.lower() for m in MONTH_NAMES if m.lower() not in AMBIGUOUS_MONTHS)
_NUMBER_WORDS = (
    "a",
    "an",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "a few",
    "a couple of",
    "a couple",
    "several",
    "twenty",
    "thirty",
)
_UNITS = (
    "minute",
    "minutes",
    "hour",
    "hours",
    "day",
    "days",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
)
_PERIODS = (
    "week",
    "month",
    "year",
    "weekend",
    "quarter",
    "sprint",
    "night",
    "morning",
    "evening",
    "season",
    "semester",
    *_WEEKDAYS,
)


def _temporal() -> dict[str, tuple[str, ...]]:
    relative = tuple(
        f"{p} {u}" for p in ("next", "last", "this", "coming", "past") for u in _PERIODS
    )
    ahead = tuple(f"in {n} {u}" for n in _NUMBER_WORDS for u in _UNITS)
    ago = tuple(f"{n} {u} ago" for n in _NUMBER_WORDS if n not in ("a", "an") for u in _UNITS)
    return {
        "relative_day": (
            "yesterday",
            "today",
            "tonight",
            "tomorrow",
            "this morning",
            "this afternoon",
            "this evening",
            "last night",
            "the day after tomorrow",
            "the day before yesterday",
            "later today",
            "earlier today",
            "tomorrow morning",
            "tomorrow night",
            "yesterday morning",
        ),
        "relative_period": (
            *relative,
            "end of day",
            "end of the day",
            "end of the week",
            "end of the month",
            "end of the year",
            "end of the quarter",
            "eod",
            "eow",
            "the other day",
            "recently",
            "soon",
            "a week ago",
            "a month ago",
            "a year ago",
            "a day ago",
            "an hour ago",
        ),
        "in_n_units": ahead,
        "ago": ago,
        "weekday": _WEEKDAYS,
        "month": _MONTHS,
        "recurring": (
            *(
                f"every {u}"
                for u in ("day", "week", "month", "year", "morning", "night", *_WEEKDAYS)
            ),
            "daily",
            "weekly",
            "monthly",
            "yearly",
            "annually",
        ),
    }


TEMPORAL_PHRASES: Final[Mapping[str, tuple[str, ...]]] = _temporal()

# "by Friday", "before the end of the week": a temporal marker that is also a deadline.
DEADLINE_PREFIXES: Final[tuple[str, ...]] = ("by", "before", "until", "due", "no later than")
DEADLINE_TARGETS: Final[Mapping[str, str]] = {
    **{d: "weekday" for d in _WEEKDAYS},
    **{
        t: "relative_day"
        for t in (
            "today",
            "tonight",
            "tomorrow",
            "tomorrow morning",
            "tomorrow night",
            "end of day",
            "end of the day",
            "the end of the day",
            "noon",
            "midnight",
        )
    },
    **{f"{p} {u}": "relative_period" for p in ("next", "this") for u in _PERIODS},
    **{
        t: "relative_period"
        for t in (
            "the end of the week",
            "end of the week",
            "the end of the month",
            "end of the month",
            "the end of the year",
            "end of the year",
            "the end of the quarter",
            "end of the quarter",
            "eod",
            "eow",
        )
    },
}

# --- entities ------------------------------------------------------------------------------

# lower-case spelling -> canonical name. A curated list; unknown names come from the
# capitalised-token heuristic in signals.py.
TECH: Final[Mapping[str, str]] = {
    **{
        n.lower(): n
        for n in (
            "Python",
            "Java",
            "JavaScript",
            "TypeScript",
            "Golang",
            "Rust",
            "C++",
            "C#",
            "Ruby",
            "PHP",
            "Kotlin",
            "Swift",
            "Scala",
            "Haskell",
            "Elixir",
            "Erlang",
            "Clojure",
            "Perl",
            "Lua",
            "Julia",
            "MATLAB",
            "SQL",
            "Kafka",
            "PostgreSQL",
            "MySQL",
            "SQLite",
            "MongoDB",
            "Redis",
            "Elasticsearch",
            "OpenSearch",
            "Cassandra",
            "DuckDB",
            "Qdrant",
            "ClickHouse",
            "Snowflake",
            "BigQuery",
            "DynamoDB",
            "Neo4j",
            "React",
            "Vue",
            "Angular",
            "Svelte",
            "Next.js",
            "Node.js",
            "Deno",
            "Django",
            "Flask",
            "FastAPI",
            "Spring",
            "Rails",
            "Express",
            "Docker",
            "Kubernetes",
            "Helm",
            "Terraform",
            "Ansible",
            "AWS",
            "Azure",
            "GCP",
            "Linux",
            "Ubuntu",
            "Debian",
            "Windows",
            "macOS",
            "iOS",
            "Android",
            "Git",
            "GitHub",
            "GitLab",
            "Bitbucket",
            "Jenkins",
            "NumPy",
            "pandas",
            "PyTorch",
            "TensorFlow",
            "JAX",
            "scikit-learn",
            "Spark",
            "Hadoop",
            "Airflow",
            "dbt",
            "Flink",
            "Faust",
            "RabbitMQ",
            "NATS",
            "gRPC",
            "GraphQL",
            "Nginx",
            "Apache",
            "Vim",
            "Emacs",
            "VS Code",
            "VSCode",
            "IntelliJ",
            "PyCharm",
            "Jupyter",
            "Slack",
            "Jira",
            "Confluence",
            "Notion",
            "Figma",
            "ChatGPT",
            "GPT-4",
            "Llama",
            "LangChain",
            "Hugging Face",
            "Pydantic",
            "SQLAlchemy",
            "Celery",
            "Tailwind",
            "Webpack",
            "Vite",
            "npm",
            "Poetry",
            "Conda",
            "Cargo",
            "Prometheus",
            "Grafana",
            "Datadog",
            "Sentry",
            "Firebase",
            "Supabase",
            "Vercel",
            "Netlify",
            "Heroku",
            "Cloudflare",
            "Postgres",
            "Excel",
            "Tableau",
            "Zoom",
            "Teams",
            "Linear",
            "Trello",
            "Asana",
            "Bash",
            "Zsh",
            "PowerShell",
            "Rust",
            "WebAssembly",
            "Wasm",
            "Pulsar",
            "Kinesis",
            "Lambda",
            "S3",
            "EC2",
            "OpenTelemetry",
        )
    },
    "postgres": "PostgreSQL",
    "nodejs": "Node.js",
    "k8s": "Kubernetes",
    "golang": "Go",
    "huggingface": "Hugging Face",
    "sklearn": "scikit-learn",
    "vs code": "VS Code",
}
ORGS: Final[Mapping[str, str]] = {
    n.lower(): n
    for n in (
        "Google",
        "Microsoft",
        "Amazon",
        "Apple",
        "Meta",
        "Netflix",
        "OpenAI",
        "Anthropic",
        "IBM",
        "Intel",
        "NVIDIA",
        "AMD",
        "Oracle",
        "Salesforce",
        "Uber",
        "Airbnb",
        "Spotify",
        "Twitter",
        "Facebook",
        "LinkedIn",
        "Tesla",
        "Samsung",
        "Sony",
        "NASA",
        "Mozilla",
        "Red Hat",
        "Stack Overflow",
        "Wikipedia",
        "YouTube",
        "Reddit",
        "Adobe",
        "Shopify",
        "PayPal",
        "Stripe",
        "Twilio",
        "Confluent",
        "Databricks",
        "Atlassian",
        "Harvard",
        "Stanford",
        "MIT",
        "Oxford",
        "Cambridge",
        "DeepMind",
        "Mistral",
        "Cohere",
        "Alibaba",
        "Tencent",
        "Baidu",
        "Siemens",
        "Bosch",
        "SAP",
        "Accenture",
        "Deloitte",
        "McKinsey",
        "Goldman Sachs",
        "JPMorgan",
    )
}
# Everyday words that are also product/company names: only an entity when capitalised in the
# original text ("React" yes, "react" no).
CASED_ENTITIES: Final[frozenset[str]] = frozenset(
    {
        "rust",
        "swift",
        "react",
        "spark",
        "flask",
        "express",
        "spring",
        "apple",
        "amazon",
        "meta",
        "oracle",
        "snowflake",
        "windows",
        "notion",
        "slack",
        "poetry",
        "cargo",
        "apache",
        "julia",
        "linear",
        "teams",
        "zoom",
        "lambda",
        "excel",
        "helm",
        "rails",
        "mistral",
        "cohere",
        "pulsar",
        "llama",
        "celery",
        "sentry",
        "stripe",
        "angular",
        "tableau",
        "faust",
    }
)

# All-caps tokens that are just words written loudly, as opposed to acronyms (entities).
SHOUT_WORDS: Final[frozenset[str]] = frozenset(
    {
        "asap",
        "stop",
        "now",
        "never",
        "always",
        "please",
        "help",
        "why",
        "what",
        "how",
        "wrong",
        "not",
        "no",
        "yes",
        "very",
        "really",
        "so",
        "all",
        "every",
        "must",
        "need",
        "urgent",
        "important",
        "the",
        "this",
        "that",
        "is",
        "are",
        "was",
        "and",
        "but",
        "you",
        "your",
        "it",
        "hate",
        "love",
        "again",
        "omg",
        "wtf",
        "lol",
        "done",
        "fix",
        "broken",
        "work",
        "works",
        "doesn't",
        "don't",
        "can't",
        "won't",
        "still",
        "just",
        "ever",
        "more",
        "less",
        "fine",
        "great",
        "awesome",
        "amazing",
        "terrible",
        "awful",
        "thanks",
        "thank",
        "sorry",
        "finally",
        "yay",
        "wow",
        "ugh",
        "argh",
        "seriously",
        "totally",
        "completely",
        "single",
        "time",
        "dont",
        "cant",
        "wont",
        "will",
        "one",
        "only",
        "best",
        "worst",
        "ok",
    }
)

# Capitalised words that are not names: calendar words (reported as temporal markers) and
# common sentence words that often get a capital in chat.
NOT_NAMES: Final[frozenset[str]] = frozenset(
    {
        *_WEEKDAYS,
        *_MONTHS,
        "may",
        "march",
        "i",
        "i'm",
        "i'd",
        "i'll",
        "i've",
        "ok",
        "okay",
        "the",
        "a",
        "an",
        "and",
        "but",
        "or",
        "so",
        "yes",
        "no",
        "hi",
        "hello",
        "hey",
        "thanks",
        "please",
        "today",
        "tomorrow",
        "yesterday",
        "tonight",
        "also",
        "then",
        "when",
        "if",
        "what",
        "why",
        "how",
        "where",
        "who",
        "which",
        "this",
        "that",
        "these",
        "those",
        "my",
        "our",
        "your",
        "we",
        "you",
        "he",
        "she",
        "they",
        "it",
        "its",
        "there",
        "here",
        "just",
        "maybe",
        "actually",
        "english",
        "mr",
        "mrs",
        "ms",
        "dr",
        "sir",
        "dear",
        "let's",
        "lets",
        "note",
        "update",
        "correction",
        "btw",
        "fyi",
        "edit",
        "p.s",
        "ps",
        "re",
        "fwd",
        "anyway",
        "well",
        "oh",
        "sure",
    }
)

# --- the phrase table: exact spelling -> prebuilt hit ------------------------------------


class Evidence(NamedTuple):
    """One matched cue. NamedTuple (immutable) so hits can be prebuilt and shared."""

    kind: str  # correction | preference | decision | commitment | fact | attention | temporal
    #            | emotion | injection | system
    pattern: str  # which pattern matched: "should_be", "weekday", "negated.joy", ...
    text: str  # the matched span, verbatim from the input

    def to_dict(self) -> dict[str, str]:
        return {"pattern": self.pattern, "text": self.text}


class Entity(NamedTuple):
    name: str  # canonical ("PostgreSQL" for "postgres")
    label: str  # tech | org | name | acronym
    text: str  # verbatim from the input

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "label": self.label, "text": self.text}


# Bits of Hit.mask: which kinds a hit carries, OR-ed over a turn in one C-level reduce.
CORRECTION: Final = 1
DECISION: Final = 2
COMMITMENT: Final = 4
FACT: Final = 8
STRONG_PREFERENCE: Final = 16
WEAK_PREFERENCE: Final = 32
ATTENTION_CUE: Final = 64
TEMPORAL: Final = 128
EMOTION: Final = 256
ENTITY: Final = 512
INJECTION_TRIGGER: Final = 1024

_KIND_BIT: Final[Mapping[str, int]] = {
    "correction": CORRECTION,
    "decision": DECISION,
    "commitment": COMMITMENT,
    "fact": FACT,
    "attention": ATTENTION_CUE,
    "temporal": TEMPORAL,
    "emotion": EMOTION,
}


class Hit(NamedTuple):
    """Everything one matched phrase contributes, precomputed per exact spelling."""

    evidence: tuple[Evidence, ...] = ()
    entities: tuple[Entity, ...] = ()
    mask: int = 0
    emotion: tuple[Effect, ...] = ()  # zero or one effect (a tuple so hits chain)


NO_HIT: Final[Hit] = Hit()
Recipe = Callable[[str], Hit]  # the hit for one spelling of a phrase (its text is the spelling)

# Contractions people type without the apostrophe. Only unambiguous ones ("ill", "were" and
# "its" are real words).
_NO_APOSTROPHE: Final[tuple[tuple[str, str], ...]] = (
    ("i'm", "im"),
    ("let's", "lets"),
    ("don't", "dont"),
    ("can't", "cant"),
    ("i've", "ive"),
    ("that's", "thats"),
    ("i'd", "id"),
)
# Words written with a capital inside a phrase: calendar words and the pronoun "I".
_PROPER_WORDS: Final[frozenset[str]] = frozenset(
    {*_WEEKDAYS, *_MONTHS, *AMBIGUOUS_MONTHS, "i", "i'm", "i'd", "i'll", "i've"} - {"may", "march"}
)


def _spellings(phrase: str) -> set[str]:
    """The spellings matched verbatim: as listed, with calendar words and "I" capitalised, and
    each of those with a capital first letter (sentence start)."""
    bases = {phrase}
    for with_apostrophe, without in _NO_APOSTROPHE:
        if (
            phrase == with_apostrophe
            or phrase.startswith(with_apostrophe + " ")
            or f" {with_apostrophe} " in phrase
        ):
            bases.add(re.sub(rf"(?<![\w']){re.escape(with_apostrophe)}(?![\w'])", without, phrase))
    out: set[str] = set()
    for base in bases:
        proper = " ".join(w.capitalize() if w in _PROPER_WORDS else w for w in base.split(" "))
        for v in (base, proper):
            out.add(v)
            out.add(v[:1].upper() + v[1:])
    return out


def _tail(text: str, words: int) -> str:
    """The last ``words`` words of ``text``, verbatim."""
    return text.split(None, len(text.split()) - words)[-1]


def _signal(kind: str, name: str, phrase: str) -> Recipe:
    bit = _KIND_BIT.get(kind, 0)
    if kind == "preference":
        bit = STRONG_PREFERENCE if name in STRONG_PREFERENCES else WEAK_PREFERENCE
        words = phrase.split()
        if words[-1] in EMOTION_LEXICON:  # "I love", "I really hate": also an emotion
            word = words[-1]
            eff = effect(word, intensified=len(words) > 2 and words[-2] in INTENSIFIERS)
            cat = EMOTION_LEXICON[word][2]
            return lambda t: Hit(
                (Evidence(kind, name, t), Evidence("emotion", cat, _tail(t, 1))),
                (),
                bit | EMOTION,
                (eff,),
            )
    return lambda t: Hit((Evidence(kind, name, t),), (), bit)


def _emotion(word: str, prefix: str, negated: bool) -> Recipe:
    eff = effect(word, negated=negated, intensified=bool(prefix) and not negated)
    cat = EMOTION_LEXICON[word][2]
    pattern = ("negated." if negated else "intensified." if prefix else "") + cat
    return lambda t: Hit((Evidence("emotion", pattern, t),), (), EMOTION, (eff,))


def _deadline(prefix: str, name: str, target: str) -> Recipe:
    n = len(target.split())
    return lambda t: Hit(
        (Evidence("commitment", "deadline", t), Evidence("temporal", name, _tail(t, n))),
        (),
        COMMITMENT | TEMPORAL,
    )


def _entity(canonical: str, label: str, cased: bool) -> Recipe:
    # Cased entities ("React") are only names when capitalised; the lower-case spelling is in
    # the table too (so the case-folded slow path sees it) but yields nothing.
    def recipe(t: str) -> Hit:
        if cased and not t[:1].isupper():
            return NO_HIT
        return Hit((), (Entity(canonical, label, t),), ENTITY)

    return recipe


def _build_recipes() -> dict[str, tuple[Recipe, bool]]:
    """lower-case phrase -> (recipe, also match it capitalised). First claim wins, in priority
    order: signal cues before the emotion and entity tables."""
    out: dict[str, tuple[Recipe, bool]] = {}

    def claim(phrase: str, recipe: Recipe, capitalised: bool = True) -> None:
        out.setdefault(phrase, (recipe, capitalised))

    for phrase in NEUTRAL_PHRASES:
        claim(phrase, lambda t: NO_HIT)
    for kind, table in (
        ("correction", CORRECTION_PHRASES),
        ("decision", DECISION_PHRASES),
        ("preference", PREFERENCE_PHRASES),
        ("commitment", COMMITMENT_PHRASES),
        ("fact", FACT_PHRASES),
        ("temporal", TEMPORAL_PHRASES),
        ("attention", ATTENTION_PHRASES),
    ):
        for name, phrases in table.items():
            for p in phrases:
                claim(p, _signal(kind, name, p))
    for target, name in DEADLINE_TARGETS.items():
        for prefix in DEADLINE_PREFIXES:
            claim(f"{prefix} {target}", _deadline(prefix, name, target))
    for month in (*_MONTHS, *AMBIGUOUS_MONTHS):
        for day in range(1, 32):
            suffix = (
                "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
            )
            for spelling in (f"{month} {day}", f"{month} {day}{suffix}"):
                claim(spelling, _signal("temporal", "month_day", spelling))
    for trigger in INJECTION_TRIGGERS:
        claim(trigger, lambda t: Hit(mask=INJECTION_TRIGGER))
    for word in EMOTION_LEXICON:
        if not word.isascii():
            continue  # emoji: matched on non-ASCII text only, see EMOJI_RE
        claim(word, _emotion(word, "", False))
        # Combos are most of the trie; only sentence-opening negators get a capitalised
        # spelling (an unmatched "Really happy" still counts as plain "happy").
        for neg in NEGATORS:
            claim(f"{neg} {word}", _emotion(word, neg, True), neg in ("not", "never", "no"))
        for inten in INTENSIFIERS:
            claim(f"{inten} {word}", _emotion(word, inten, False), False)
    for names, label in ((TECH, "tech"), (ORGS, "org")):
        for spelling, canonical in names.items():
            claim(spelling, _entity(canonical, label, spelling in CASED_ENTITIES))
    return out


def _build_hits() -> tuple[dict[str, Hit], dict[str, Recipe]]:
    """(exact spelling -> prebuilt hit, lower-case spelling -> recipe for the slow path)."""
    hits: dict[str, Hit] = {}
    recipes: dict[str, Recipe] = {}
    for phrase, (recipe, capitalised) in _build_recipes().items():
        for spelling in _spellings(phrase) if capitalised else (phrase,):
            hits.setdefault(spelling, recipe(spelling))
            recipes.setdefault(spelling.lower(), recipe)
    # canonical spellings of entities ("PostgreSQL", "GitHub", "macOS")
    for table in (TECH, ORGS):
        for spelling, canonical in table.items():
            hits.setdefault(canonical, recipes[spelling](canonical))
    return hits, recipes


_HITS, _RECIPES = _build_hits()
HITS: Final[Mapping[str, Hit]] = _HITS
SPELLING_RECIPES: Final[Mapping[str, Recipe]] = _RECIPES
# Emoji that carry an emotion (non-ASCII text only).
EMOJI_HITS: Final[Mapping[str, Hit]] = {
    w: _emotion(w, "", False)(w) for w in EMOTION_LEXICON if not w.isascii()
}


def _trie_regex(phrases: Iterable[str], *, upper_extra: str = "") -> str:
    """One regex alternation shaped like a character trie, longest match first.

    A plain ``a|b|c`` alternation makes ``re`` try every branch at every position; the trie
    shares prefixes, so a position costs one first-character check per top-level branch (``re``
    checks a branch's leading literal inline) plus the walk down the matching branch. Branches
    for a non-lower-case first character sit behind one ``(?=[^a-z])`` guard: most words start
    lower-case and skip those ~30 checks for the price of one assertion (~17% faster here).
    ``upper_extra`` joins that guarded group.
    """
    root: dict[str, Any] = {}
    for phrase in phrases:
        node = root
        for ch in phrase:
            node = node.setdefault(ch, {})
        node[""] = {}
    escaped: dict[str, str] = {}

    def render(node: dict[str, Any], last: str) -> str:
        alts = []
        for ch in sorted(k for k in node if k):
            esc = escaped.get(ch)
            if esc is None:
                esc = escaped[ch] = re.escape(ch)
            alts.append(esc + render(node[ch], ch))
        if "" in node:
            # a phrase ending in a word character must end at a word boundary
            alts.append(r"(?![\w'])" if (last.isalnum() or last == "_") else "")
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    def branches(first: Iterable[str]) -> list[str]:
        return [escaped.setdefault(ch, re.escape(ch)) + render(root[ch], ch) for ch in first]

    lower = branches(k for k in sorted(root) if k and k.islower())
    other = branches(k for k in sorted(root) if k and not k.islower())
    if upper_extra:
        other.append(upper_extra)
    return "|".join(lower) + "|(?=[^a-z])(?:" + "|".join(other) + ")"


# Phrases start after a space: the scanner prepends one and puts one after each newline, tab,
# double quote and opening parenthesis. A literal first character lets ``re`` jump between
# candidate positions with its memchr-like prefix search, ~20% faster than a separator class;
# and since phrases only contain single plain spaces, no match can span a separator.
LEX_SEPARATORS: Final[tuple[str, ...]] = ("\n", '"', "(", "\t")
# After the trie, in the same pass (a word the trie did not claim): a capitalised word after a
# lower-case word or comma, so not a sentence start, possibly several ("Ada Lovelace"); or an
# all-caps word of 3+ characters (acronym or shouting, told apart with str.isupper). Their
# leading [A-Z] is checked inline by ``re`` like the trie's leading letters.
_NAME = r"[A-Z](?<=[a-z0-9,;:] [A-Z])[a-z][A-Za-z0-9]*(?:-[A-Za-z]+)?(?: [A-Z][a-z][A-Za-z0-9]*)*"
_CAPS = r"[A-Z][A-Z0-9]{2,}(?:'[A-Z]+)?(?![\w'])"
# ... or a number: read whole when it is a date, time or duration (inline (?i:) for the words),
# otherwise only its leading digit run (then str.isdigit says "plain number").
_MONTH_ALT = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![a-z])"
)
TIME_UNITS: Final[frozenset[str]] = frozenset(
    {
        "second",
        "seconds",
        "sec",
        "secs",
        "minute",
        "minutes",
        "min",
        "mins",
        "hour",
        "hours",
        "hr",
        "hrs",
        "day",
        "days",
        "week",
        "weeks",
        "wk",
        "wks",
        "month",
        "months",
        "year",
        "years",
        "yr",
        "yrs",
    }
)
_DIGITS = (
    r"[0-9](?:"
    r"[0-9]{3}-[0-9]{2}-[0-9]{2}(?:[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2})?)?"  # 2024-06-12
    r"|[0-9]?/[0-9]{1,2}/(?:[0-9]{4}|[0-9]{2})(?![0-9])"  # 6/12/2024
    r"|[0-9]?(?::[0-9]{2})? ?(?i:[ap]\.?m\.?)(?![A-Za-z])"  # 5pm, 10:30 am
    r"|[0-9]?:[0-9]{2}(?![0-9])"  # 10:30
    # (possessive *+: a long digit run is not re-read digit by digit when no unit follows)
    r"|[0-9]*+ ?(?i:" + "|".join(sorted(TIME_UNITS, key=len, reverse=True)) + r")(?![A-Za-z])"
    r"(?: (?i:ago)(?![A-Za-z]))?"  # 3 days, 2 weeks ago
    r"|[0-9]?(?i:st|nd|rd|th)?(?: (?i:of))? (?i:" + _MONTH_ALT + ")"  # 5 May, 5th of may
    r"|[0-9]*+)"  # anything else: the leading digit run
)
LEX_RE: Final[re.Pattern[str]] = re.compile(
    " (" + _trie_regex(HITS, upper_extra=_NAME + "|" + _CAPS + "|" + _DIGITS) + ")"
)

NOT_NAMES_CAPITALISED: Final[frozenset[str]] = frozenset(w.capitalize() for w in NOT_NAMES)

# Run only after a trigger word: the precise prompt-injection phrasings. Deliberately narrow
# objects ("instructions", "rules", ...): "ignore my previous message" is a correction, not an attack.
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
MARKDOWN_LINE_RE: Final[re.Pattern[str]] = re.compile(
    r"^[ \t]*(?:#{1,6} |[-*+] |[0-9]{1,3}[.)] |> |\|.*\||```|---+$|\*\*)", re.MULTILINE
)

# --- word classes for density and novelty --------------------------------------------------


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
