"""``python -m bench learning``: feedback from a simulated agent, against the same pipeline
with learning off in the same run (bench/learning.py says how). Figure names start with
``learning:``."""

from __future__ import annotations

from bench.figures import Figure
from bench.learning import ROUNDS, evaluate_learning
from bench.retrieval_eval import load_set

OFF = "the same pipeline with learning off"


def run() -> list[Figure]:
    loaded = load_set("own")
    assert loaded is not None
    r = evaluate_learning(loaded)
    held, train = r["recall@10"]["held_out"], r["recall@10"]["train"]
    notes = (
        f"own set, {r['questions']['train']} training and {r['questions']['held_out']} held-out "
        f"questions, {ROUNDS} rounds of feedback ({r['q_updates']} Q updates): positive for "
        "results citing an evidence turn, negative for the others; defaults"
    )
    neg = r["three_negatives"]
    return [
        Figure("learning: recall@10 held-out with feedback", held["on"], "recall", held["off"],
               OFF, notes=notes),
        Figure("learning: recall@10 lift from feedback", held["on"] - held["off"], "recall",
               notes="held-out questions: on minus off (the goal is +0.10); " + notes),
        Figure("learning: recall@10 trained questions with feedback", train["on"], "recall",
               train["off"], OFF, notes=notes),
        Figure("learning: distractors leaving the top 5 after three negatives",
               neg["left_top5"] / neg["distractors"] if neg["distractors"] else 0.0, "share",
               notes=f"{neg['left_top5']} of {neg['distractors']} top-5 distractors (goal: all)"),
    ]  # fmt: skip
