"""``python -m bench learning``: feedback from a simulated agent, against the same pipeline
with learning off in the same run (bench/learning.py says how). Figure names start with
``learning:``."""

from __future__ import annotations

from bench.figures import Figure
from bench.learning import ROUNDS, evaluate_forgetting, evaluate_learning
from bench.retrieval_eval import load_set

OFF = "the same pipeline with learning off"


def run() -> list[Figure]:
    loaded = load_set("own")
    assert loaded is not None
    r = evaluate_learning(loaded)
    held, train = r["recall@10"]["held_out"], r["recall@10"]["train"]
    same = r["recall@10"]["same_facts"]
    notes = (
        f"own set, {r['questions']['train']} training and {r['questions']['held_out']} held-out "
        f"questions, {ROUNDS} rounds of feedback ({r['q_updates']} Q updates): positive for "
        "results citing an evidence turn, negative for the others; defaults"
    )
    neg = r["three_negatives"]
    f = evaluate_forgetting(loaded)
    year = (
        f"own set, {f['memories']} memories built by the write path (rule extractor), then a "
        f"year of event time with nobody recalling them: {f['cycles']} dream cycles (one a "
        "week) of the pure lifecycle rules, each followed by the tier rules, as the worker "
        "runs them, with the default settings; trivial: importance (replies not counted) "
        f"< 0.3 at creation ({f['trivial']}), important: >= 0.7 ({f['important']}); "
        f"retired (archived, superseded or dormant) by rule: {f['rules']}"
    )
    kept = f["important_retired_by"]
    return [
        Figure("learning: recall@10 held-out with feedback", held["on"], "recall", held["off"],
               OFF, notes=notes),
        Figure("learning: recall@10 lift from feedback", held["on"] - held["off"], "recall",
               notes="held-out questions: on minus off (the goal is +0.10); " + notes),
        Figure("learning: recall@10 lift on held-out questions about the same facts",
               same["on"] - same["off"], "recall",
               notes=f"the {r['questions']['same_facts']} held-out questions that share an "
               f"evidence turn with a trained one: {same['off']} -> {same['on']} (the goal's "
               "+0.10 is worded for these); " + notes),
        Figure("learning: recall@10 trained questions with feedback", train["on"], "recall",
               train["off"], OFF, notes=notes),
        Figure("learning: distractors leaving the top 5 after three negatives",
               neg["left_top5"] / neg["distractors"] if neg["distractors"] else 0.0, "share",
               notes=f"{neg['left_top5']} of {neg['distractors']} top-5 distractors (goal: all)"),
        Figure("forgetting: share of trivial memories archived after a year",
               f["trivial_archived"] / f["trivial"] if f["trivial"] else 0.0, "share",
               notes=f"of the others, {f['trivial_consolidated']} were consolidated "
               "(captured by a strong memory said after them in the session, or said again: "
               f"not trivia), {f['trivial_dormant']} faded to dormant; " + year),
        Figure("forgetting: share of important memories still active after a year",
               f["important_active"] / f["important"] if f["important"] else 0.0, "share",
               notes=f"the others retired by {kept} (a task 90 days past due is stale); " + year),
        Figure("learning: active share of created after a year", f["active"] / f["memories"],
               "share", better="lower", notes="the goal is <= 0.60; " + year),
        Figure("forgetting: recall@10 after a year", f["recall@10"]["on"], "recall",
               f["recall@10"]["off"], "the same memories with forgetting off",
               notes="all answerable questions, asked a year after the last turn, the store "
               "given the year's memory-log events (archived memories out, dormant ones in at "
               "tier 0); " + year),
    ]  # fmt: skip
