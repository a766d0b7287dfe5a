"""Lexicon-based emotion estimate: valence in [-1, 1], arousal in [0, 1], one Ekman category.

Negation and intensifiers are resolved where the phrase is recognised: the scanner's phrase table
holds "not happy", "really happy", ... as entries whose :func:`effect` is precomputed here, so a
turn's emotion is a small fold over the effects of its hits (:func:`score_emotion`), plus the
turn's loudness (exclamation marks, shouted all-caps words). Pure and table-driven.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, NamedTuple

Category = Literal["joy", "sadness", "anger", "fear", "surprise", "disgust", "neutral"]
CATEGORIES: Final[tuple[Category, ...]] = (
    "joy",
    "sadness",
    "anger",
    "fear",
    "surprise",
    "disgust",
    "neutral",
)
# (valence, arousal, category voted for or None when negated)
Effect = tuple[float, float, Category | None]

# word -> (valence, arousal, category). Hand-curated, inflected forms listed explicitly so the
# lookup stays one dict access.
LEXICON: Final[Mapping[str, tuple[float, float, Category]]] = {
    # joy
    **dict.fromkeys(("happy", "happier", "happiest", "happily"), (0.8, 0.6, "joy")),
    **dict.fromkeys(("glad", "pleased", "cheerful"), (0.6, 0.4, "joy")),
    **dict.fromkeys(("delighted", "overjoyed", "ecstatic", "elated"), (0.9, 0.8, "joy")),
    **dict.fromkeys(("thrilled", "stoked", "pumped"), (0.9, 0.9, "joy")),
    **dict.fromkeys(("excited", "exciting", "excitement"), (0.7, 0.9, "joy")),
    **dict.fromkeys(
        ("love", "loved", "loves", "loving", "lovely", "adore", "adored"), (0.8, 0.7, "joy")
    ),
    **dict.fromkeys(
        ("awesome", "amazing", "incredible", "fantastic", "wonderful", "brilliant"),
        (0.8, 0.7, "joy"),
    ),
    **dict.fromkeys(("great", "excellent", "superb", "perfect", "beautiful"), (0.7, 0.5, "joy")),
    **dict.fromkeys(("good", "nice", "fine", "cool", "neat"), (0.4, 0.25, "joy")),
    **dict.fromkeys(("enjoy", "enjoyed", "enjoying", "fun", "funny"), (0.6, 0.5, "joy")),
    **dict.fromkeys(
        ("grateful", "thankful", "appreciate", "appreciated", "relieved"), (0.6, 0.3, "joy")
    ),
    **dict.fromkeys(("proud", "joy", "joyful", "yay", "hooray", "woohoo"), (0.8, 0.7, "joy")),
    **dict.fromkeys(("satisfied", "calm", "peaceful", "hopeful", "optimistic"), (0.5, 0.2, "joy")),
    **dict.fromkeys(
        ("😀", "😃", "😄", "😁", "😊", "🙂", "😍", "🥰", "🎉", "❤", "❤️", "👍"), (0.7, 0.6, "joy")
    ),
    **dict.fromkeys(("😂", "🤣"), (0.6, 0.8, "joy")),
    # sadness
    **dict.fromkeys(("sad", "sadly", "sadness", "unhappy"), (-0.7, 0.3, "sadness")),
    **dict.fromkeys(
        ("depressed", "depressing", "hopeless", "miserable", "heartbroken", "devastated"),
        (-0.9, 0.4, "sadness"),
    ),
    **dict.fromkeys(("lonely", "gloomy", "grief", "grieving", "mourning"), (-0.7, 0.3, "sadness")),
    **dict.fromkeys(
        ("disappointed", "disappointing", "disappointment", "let down"), (-0.6, 0.4, "sadness")
    ),
    **dict.fromkeys(
        ("sorry", "regret", "regrets", "unfortunately", "sigh"), (-0.3, 0.2, "sadness")
    ),
    **dict.fromkeys(
        ("tired", "exhausted", "drained", "burned out", "burnt out"), (-0.5, 0.2, "sadness")
    ),
    **dict.fromkeys(("cry", "cried", "crying", "tears", "upset"), (-0.7, 0.6, "sadness")),
    **dict.fromkeys(("bad", "worse", "worst", "poor"), (-0.5, 0.35, "sadness")),
    **dict.fromkeys(("😢", "😭", "😞", "😔", "☹", "🙁", "💔"), (-0.7, 0.5, "sadness")),
    # anger
    **dict.fromkeys(
        ("angry", "angrier", "mad", "pissed", "livid", "furious", "enraged"), (-0.8, 0.9, "anger")
    ),
    **dict.fromkeys(
        ("annoyed", "annoying", "irritated", "irritating", "grumpy"), (-0.5, 0.6, "anger")
    ),
    **dict.fromkeys(("frustrated", "frustrating", "frustration", "fed up"), (-0.6, 0.7, "anger")),
    **dict.fromkeys(("hate", "hated", "hates", "hating", "loathe", "detest"), (-0.8, 0.8, "anger")),
    **dict.fromkeys(
        ("outraged", "outrageous", "infuriating", "infuriated", "rage"), (-0.9, 1.0, "anger")
    ),
    **dict.fromkeys(
        ("ridiculous", "unacceptable", "stupid", "useless", "damn", "wtf", "ugh", "argh"),
        (-0.6, 0.7, "anger"),
    ),
    **dict.fromkeys(("😠", "😡", "🤬", "💢"), (-0.8, 0.9, "anger")),
    # fear
    **dict.fromkeys(
        ("afraid", "scared", "fear", "fearful", "frightened", "terrified"), (-0.7, 0.8, "fear")
    ),
    **dict.fromkeys(
        ("worried", "worry", "worrying", "anxious", "anxiety", "nervous"), (-0.5, 0.6, "fear")
    ),
    **dict.fromkeys(
        ("panic", "panicking", "panicked", "dread", "dreading", "alarmed"), (-0.8, 0.9, "fear")
    ),
    **dict.fromkeys(
        ("concerned", "uneasy", "stressed", "stressful", "overwhelmed", "insecure"),
        (-0.4, 0.5, "fear"),
    ),
    **dict.fromkeys(("😨", "😰", "😱", "😟"), (-0.7, 0.8, "fear")),
    # surprise
    **dict.fromkeys(
        ("surprised", "surprising", "surprise", "unexpected", "unexpectedly"),
        (0.2, 0.7, "surprise"),
    ),
    **dict.fromkeys(
        ("amazed", "astonished", "astonishing", "wow", "whoa", "omg"), (0.5, 0.8, "surprise")
    ),
    **dict.fromkeys(("shocked", "shocking", "stunned", "speechless"), (-0.2, 0.9, "surprise")),
    **dict.fromkeys(("😮", "😲", "😯", "🤯"), (0.2, 0.8, "surprise")),
    # disgust
    **dict.fromkeys(
        ("disgusting", "disgusted", "gross", "nasty", "revolting", "repulsive", "yuck", "eww"),
        (-0.8, 0.6, "disgust"),
    ),
    **dict.fromkeys(
        ("awful", "terrible", "horrible", "horrendous", "atrocious", "vile"), (-0.8, 0.6, "disgust")
    ),
    **dict.fromkeys(("sick of", "tired of", "hideous", "ugly"), (-0.6, 0.5, "disgust")),
    **dict.fromkeys(("🤢", "🤮"), (-0.8, 0.6, "disgust")),
}

# Words directly before a lexicon word that flip it ("not happy") or amplify it ("so happy").
# Multi-word negators cover the common "not very/so/really/too X".
NEGATORS: Final[tuple[str, ...]] = (
    "not",
    "never",
    "no",
    "isn't",
    "wasn't",
    "aren't",
    "don't",
    "doesn't",
    "didn't",
    "not very",
    "not so",
    "not really",
    "not too",
    "isnt",
    "wasnt",
    "dont",
    "doesnt",
    "didnt",
)
INTENSIFIERS: Final[tuple[str, ...]] = (
    "very",
    "really",
    "so",
    "extremely",
    "super",
    "incredibly",
    "totally",
    "absolutely",
    "truly",
    "deeply",
    "completely",
    "utterly",
    "too",
    "seriously",
)


class Emotion(NamedTuple):
    """One turn's emotion. A NamedTuple (immutable, like a frozen dataclass) because one is
    built per scan and a tuple is several times cheaper to construct."""

    valence: float = 0.0  # -1 (negative) .. 1 (positive)
    arousal: float = 0.0  # 0 (calm) .. 1 (agitated)
    category: Category = "neutral"

    def to_dict(self) -> dict[str, Any]:
        return {"valence": self.valence, "arousal": self.arousal, "category": self.category}


NEUTRAL: Final[Emotion] = Emotion()


def _clamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def effect(word: str, *, negated: bool = False, intensified: bool = False) -> Effect:
    """The contribution of one lexicon word in context.

    - intensifier: valence x1.3, arousal +0.15 ("really happy" is more than "happy").
    - negation: valence flipped and halved, arousal x0.7, and no category vote ("not happy" is
      negative but not evidence of a specific emotion; "not bad" is mildly positive).
    """
    valence, arousal, category = LEXICON[word]
    if intensified:
        valence, arousal = valence * 1.3, arousal + 0.15
    if negated:
        return (_clamp(-0.5 * valence, -1.0, 1.0), _clamp(arousal * 0.7, 0.0, 1.0), None)
    return (_clamp(valence, -1.0, 1.0), _clamp(arousal, 0.0, 1.0), category)


def score_emotion(effects: Iterable[Effect], *, exclamations: int = 0, shouts: int = 0) -> Emotion:
    """Fold hit effects and loudness into one Emotion.

    Valence is the mean; arousal is peak-weighted (0.6 max + 0.4 mean: one strong word should
    not be averaged away by mild ones) plus loudness: each "!" adds 0.1 (max 0.3), each shouted
    all-caps word 0.12 (max 0.3). The category is the Ekman category with the largest summed
    |valence| + arousal; "neutral" without a vote.
    """
    valence_sum = arousal_sum = arousal_max = 0.0
    n = 0
    votes: dict[Category, float] = {}
    for valence, arousal, category in effects:
        valence_sum += valence
        arousal_sum += arousal
        if arousal > arousal_max:
            arousal_max = arousal
        if category is not None:
            votes[category] = votes.get(category, 0.0) + abs(valence) + arousal
        n += 1
    loudness = min(0.3, 0.1 * exclamations) + min(0.3, 0.12 * shouts)
    if n == 0:
        return Emotion(0.0, _clamp(loudness, 0.0, 1.0), "neutral")
    # ties: the category voted for first wins (deterministic for a given text)
    best: Category = max(votes, key=votes.__getitem__) if votes else "neutral"
    return Emotion(
        _clamp(valence_sum / n, -1.0, 1.0),
        _clamp(0.6 * arousal_max + 0.4 * (arousal_sum / n) + loudness, 0.0, 1.0),
        best,
    )
