"""Entities of a claim: capitalised names, known tech names and the speakers."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from memstream.core.calendar_words import MONTH_NAMES, WEEKDAYS
from memstream.core.extract.gates import WORD, wordset

# --- entities -----------------------------------------------------------------------------

TECH = {
    "python": "Python",
    "rust": "Rust",
    "golang": "Go",
    "javascript": "JavaScript",
    "typescript": "TypeScript",
    "react": "React",
    "django": "Django",
    "flask": "Flask",
    "fastapi": "FastAPI",
    "postgres": "Postgres",
    "postgresql": "PostgreSQL",
    "mysql": "MySQL",
    "sqlite": "SQLite",
    "redis": "Redis",
    "kafka": "Kafka",
    "docker": "Docker",
    "kubernetes": "Kubernetes",
    "k8s": "Kubernetes",
    "aws": "AWS",
    "gcp": "GCP",
    "azure": "Azure",
    "linux": "Linux",
    "macos": "macOS",
    "vim": "Vim",
    "neovim": "Neovim",
    "emacs": "Emacs",
    "vscode": "VS Code",
    "git": "Git",
    "github": "GitHub",
    "gitlab": "GitLab",
    "terraform": "Terraform",
    "node.js": "Node.js",
    "nodejs": "Node.js",
    "java": "Java",
    "kotlin": "Kotlin",
    "c++": "C++",
    "c#": "C#",
    "php": "PHP",
    "duckdb": "DuckDB",
    "qdrant": "Qdrant",
    "numpy": "NumPy",
    "pytorch": "PyTorch",
    "tensorflow": "TensorFlow",
    "openai": "OpenAI",
    "chatgpt": "ChatGPT",
    "mongodb": "MongoDB",
    "elasticsearch": "Elasticsearch",
    "graphql": "GraphQL",
    "next.js": "Next.js",
    "vue": "Vue",
    "svelte": "Svelte",
    "angular": "Angular",
    "bigquery": "BigQuery",
    "haskell": "Haskell",
    "scala": "Scala",
    "elixir": "Elixir",
    "jupyter": "Jupyter",
    "pytest": "pytest",
    "mypy": "mypy",
    "ubuntu": "Ubuntu",
    "debian": "Debian",
    "ios": "iOS",
    "android": "Android",
    "faust": "Faust",
    "airflow": "Airflow",
    "pandas": "pandas",
}
TECH_RE = "|".join(sorted((re.escape(k) for k in TECH), key=len, reverse=True))
_AMBIGUOUS_TECH = wordset(
    "rust react java vue angular faust scala elixir airflow pandas git node swift go android"
)
_NOT_ENTITY = (
    wordset("""the a an my our your his her their its this that these those it he she they we you i i'm i've i'll
    i'd user assistant and but or so if then when while after before because since also just yes no ok
    okay hi hello hey thanks thank well oh wow today yesterday tomorrow tonight last next this every
    what why how where who which there here some any all both each many much more most few other such
    mr mrs ms dr english""")
    | {w.lower() for w in MONTH_NAMES}
    | set(WEEKDAYS)
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w+#&.'-]*[\w+#]|[A-Za-z0-9]")
# A token is a tech name only if, lowercased, it is one of these (with or without "'s").
_TECH_FORMS = frozenset(TECH) | {f"{name}'s" for name in TECH}
_TECH_ENDS = frozenset(WORD.findall(name)[-1] for name in TECH)
_TOKEN_SPLIT = re.compile(f"({_TOKEN.pattern})")
_CONNECTORS = frozenset({"of", "de", "du", "van", "von", "da", "del", "la", "le", "y", "&"})


def _unpossessed(word: str) -> str:
    return word[:-2] if word.endswith("'s") else word


def _tech(word: str) -> str | None:
    canonical = TECH.get(word.lower())
    # "rust", "react" and friends are ordinary words unless capitalised
    if canonical is None or (word.lower() in _AMBIGUOUS_TECH and not word[:1].isupper()):
        return None
    return canonical


def find_entities(text: str, known: Sequence[str] = ()) -> tuple[str, ...]:
    """Capitalised names (multi-word runs like "New York"), known tech names and
    ``known`` names (speakers) in order of appearance, deduplicated case-insensitively."""
    return find_entities_worded(text, known, None)


@functools.lru_cache(maxsize=64)
def _known_fold(known: tuple[str, ...]) -> dict[str, str]:
    return {k.casefold(): k for k in known if k}


def find_entities_worded(
    text: str, known: Sequence[str], text_words: frozenset[str] | None
) -> tuple[str, ...]:
    """find_entities, told the words of ``text`` (words_of) if they are known already."""
    # tokens and what lies between them: parts[2 * k] is the text before token k
    parts = _TOKEN_SPLIT.split(text)
    toks = parts[1::2]
    techs: list[str | None] = [None] * len(toks)
    # A token naming a tech ends in the last word of that name, a whole word when the text
    # is ASCII without "_" (the only word characters that can come right before a token).
    if (
        text_words is None
        or not text.isascii()
        or "_" in text
        or not _TECH_ENDS.isdisjoint(text_words)
    ):
        lows = [tok.lower() for tok in toks]
        if not _TECH_FORMS.isdisjoint(lows):
            techs = [
                _tech(_unpossessed(tok)) if low in _TECH_FORMS else None
                for tok, low in zip(toks, lows, strict=True)
            ]
    known_fold = _known_fold(known) if isinstance(known, tuple) else _known_fold(tuple(known))
    found: list[str] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        name = _unpossessed(name.strip(" .'-"))
        if not name or name.casefold() in _NOT_ENTITY:
            return
        canonical = _tech(name) or known_fold.get(name.casefold(), name)
        if canonical.casefold() not in seen:
            seen.add(canonical.casefold())
            found.append(canonical)

    i = 0
    # only a tech name or a capitalised token can start an entity
    for start in [k for k, tok in enumerate(toks) if tok[0].isupper() or techs[k]]:
        if start < i:
            continue  # taken into the run before
        i = start
        tok = toks[i]
        if techs[i]:
            add(tok)
            i += 1
            continue
        run = [i]
        j = i + 1
        while j < len(toks) and not toks[run[-1]].endswith("'s"):
            word = toks[j]
            if parts[2 * j] != " " or techs[j]:
                break
            if word[0].isupper():
                run.append(j)
                j += 1
            elif (
                word in _CONNECTORS
                and j + 1 < len(toks)
                and toks[j + 1][0].isupper()
                and parts[2 * j + 2] == " "
            ):
                run.extend((j, j + 1))
                j += 2
            else:
                break
        words = [toks[k] for k in run]
        while words and _unpossessed(words[0]).lower() in _NOT_ENTITY:
            words.pop(0)
        while words and _unpossessed(words[-1]).lower() in _NOT_ENTITY:
            words.pop()
        if words:
            phrase = _unpossessed(" ".join(words))
            # a lone capitalised first word is usually just a sentence start ("Painting is ...")
            lone = (
                len(words) == 1
                and words[0] == tok
                and not any(c.isupper() for c in phrase[1:])
                and phrase.casefold() not in known_fold
            )
            if lone:
                # at the start of a sentence? (text before a token ends in one of [\w+#])
                gap = parts[2 * i].rstrip()
                lone = gap.endswith((".", "!", "?")) if gap else i == 0
            if not lone:
                add(phrase)
        i = j
    return tuple(found)
