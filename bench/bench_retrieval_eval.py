"""Evidence recall@k of memstream's recall vs plain BM25 (and dense search) over raw turns,
on the project's own set and on BEAM 100K (dev and test split; report test), and on each
BEAM split as one haystack (every conversation of the split in one namespace: a long
history, the other conversations distractors).

Figure names other tools look for: ``evidence recall@<k> BEAM test`` (turn-budgeted, the
headline), ``evidence recall@<k> BEAM test <ability>``, ``... BEAM dev ...``, ``... own
...``, ``... plain`` (memory-level, a many-turn memory counts whole), ``BEAM test abstention
questions answered nothing relevant``, ``off-topic questions answered nothing relevant`` (each
answerable question asked of the next conversation of its set), ``answerable questions
answered nothing relevant`` and ``memories starting with an unresolved pronoun``
(a share in [0, 1]). The ``evidence recall@<k> vs BM25 over turns`` figures are the own
set's plain recall, as the project reported it before the external set.
"""

from __future__ import annotations

from typing import Any

from bench.figures import Figure
from bench.retrieval_eval import HAYSTACK, KS, evaluate

BM25 = "plain BM25 over raw turns"
NOTES = "rule extractor, configured embedders (MEMSTREAM_EMBEDDER, MEMSTREAM_GATE_EMBEDDER), no LLM, defaults"


def _set_figures(name: str, r: dict[str, Any], *, all_kinds_at: tuple[int, ...]) -> list[Figure]:
    notes = (
        f"{r['with_evidence']} questions with evidence over {r['turns']} turns, "
        f"{r['memories']} memories; turn-budgeted (first k distinct source turns); {NOTES}"
    )
    ours, plain, bm25 = (r["recall"][n] for n in ("memstream", "memstream_plain", "bm25_turns"))
    out = [
        Figure(
            f"evidence recall@{k} {name}", ours[f"@{k}"], "recall", bm25[f"@{k}"], BM25, notes=notes
        )
        for k in KS
    ]
    out += [
        Figure(f"evidence recall@{k} {name} plain", plain[f"@{k}"], "recall", bm25[f"@{k}"], BM25,
               notes="memory-level: the source turns of the top k memories")
        for k in KS
    ]  # fmt: skip
    for kind, by_k in r["by_kind"]["memstream"].items():
        base = r["by_kind"]["bm25_turns"][kind]
        out += [
            Figure(f"evidence recall@{k} {name} {kind}", by_k[f"@{k}"], "recall", base[f"@{k}"], BM25)
            for k in all_kinds_at
        ]  # fmt: skip
    return out


#: set -> its multi-hop kind (the own set's "multi_hop", BEAM's multi-session reasoning)
MULTI_HOP = {"own": "multi_hop", "BEAM test": "multi_session_reasoning"}


def _graph_figures(sets: dict[str, Any]) -> list[Figure]:
    """Recall with the relation graph against the same recall ignoring it, in the same run
    (``memstream_no_graph``: re-asked only where the walk reached a memory)."""
    out = []
    for name, kind in MULTI_HOP.items():
        r = sets.get(name)
        if r is None or kind not in r["by_kind"]["memstream"]:
            continue
        walked = r["graph"]
        suffix = "" if name == "own" else f" {name}"
        notes = (
            f"{name} {kind}; the walk ran for {walked['questions']} questions (causal intent) and "
            f"reached a memory for {walked['reached']}"
        )
        out.append(
            Figure(
                f"multi-hop recall@10 with the graph{suffix}",
                r["by_kind"]["memstream"][kind]["@10"],
                "recall",
                r["by_kind"]["memstream_no_graph"][kind]["@10"],
                "the same recall without the graph",
                notes=notes,
            )
        )
        out.append(
            Figure(
                f"evidence recall@10 with the graph {name}",
                r["recall"]["memstream"]["@10"],
                "recall",
                r["recall"]["memstream_no_graph"]["@10"],
                "the same recall without the graph",
                notes=notes,
            )
        )
    return out


def _haystack_figures(sets: dict[str, Any]) -> list[Figure]:
    """A long history: recall with every conversation of the split in one namespace against
    the same questions asked of their own conversation alone, in the same run."""
    out = []
    for name, r in sets.items():
        alone = sets.get(name.removesuffix(HAYSTACK))
        if not name.endswith(HAYSTACK) or alone is None:
            continue
        bm25, bm25_alone = r["recall"]["bm25_turns"]["@10"], alone["recall"]["bm25_turns"]["@10"]
        out.append(
            Figure(
                f"evidence recall@10 {name} vs alone",
                r["recall"]["memstream"]["@10"],
                "recall",
                alone["recall"]["memstream"]["@10"],
                "the same questions, each conversation in its own namespace",
                notes=(
                    f"{r['turns']} turns and {r['memories']} memories in one namespace; BM25 "
                    f"over its raw turns {bm25:.3f} ({bm25_alone:.3f} alone)"
                ),
            )
        )
    return out


def run() -> list[Figure]:
    result = evaluate()
    sets = result["sets"]
    figures: list[Figure] = []
    own = sets.get("own")
    if own is not None:
        # The figures the project reported before the external set: plain, memory-level.
        plain, bm25 = own["recall"]["memstream_plain"], own["recall"]["bm25_turns"]
        notes = f"{own['questions']} questions over {own['turns']} turns, {own['memories']} memories; {NOTES}"
        figures += [
            Figure(f"evidence recall@{k} vs BM25 over turns", plain[f"@{k}"], "recall", bm25[f"@{k}"], BM25, notes=notes)
            for k in KS
        ]  # fmt: skip
        figures.append(
            Figure(
                "evidence recall@10 vs dense over turns",
                plain["@10"],
                "recall",
                own["recall"]["dense_turns"]["@10"],
                "dense-only over raw turns (hashing embedder)",
            )
        )
        for kind, by_k in own["by_kind"]["memstream_plain"].items():
            base = own["by_kind"]["bm25_turns"][kind]["@10"]
            figures.append(Figure(f"evidence recall@10 {kind}", by_k["@10"], "recall", base, BM25))
    for name, r in sets.items():
        full = name in ("own", "BEAM test")
        figures += _set_figures(name, r, all_kinds_at=KS if full else (10,))
    figures += _graph_figures(sets)
    figures += _haystack_figures(sets)
    test = sets.get("BEAM test")
    if test is not None:
        a = test["abstention"]
        figures.append(
            Figure(
                "BEAM test abstention questions answered nothing relevant",
                a["skipped"] / a["questions"] if a["questions"] else 0.0,
                "share",
                notes=f"{a['skipped']} of {a['questions']}: the confidence gate said 'skipped'",
            )
        )
    # the haystacks hold the same conversations' memories: counted once, in their own sets
    sets = {name: r for name, r in sets.items() if not name.endswith(HAYSTACK)}
    gates = [r["gate"] for r in sets.values() if "gate" in r]
    probes = sum(g["probes"] for g in gates)
    if probes:
        answerable = sum(g["answerable"] for g in gates)
        missed = sum(g["nothing_relevant"] for g in gates)
        refused = sum(g["probes_nothing_relevant"] for g in gates)
        figures.append(
            Figure(
                "off-topic questions answered nothing relevant",
                refused / probes,
                "share",
                notes=(
                    f"{refused} of {probes}: each answerable question asked of the next "
                    f"conversation of its set instead ({', '.join(sets)})"
                ),
            )
        )
        figures.append(
            Figure(
                "answerable questions answered nothing relevant",
                missed / answerable if answerable else 0.0,
                "share",
                better="lower",
                notes=f"{missed} of {answerable} ({', '.join(sets)}): their answers withheld",
            )
        )
    memories = sum(r["memories"] for r in sets.values())
    if memories:
        pronouns = sum(r["pronoun_memories"] for r in sets.values())
        figures.append(
            Figure(
                "memories starting with an unresolved pronoun",
                pronouns / memories,
                "share",
                better="lower",
                notes=f"{pronouns} of {memories} memories ({', '.join(sets)})",
            )
        )
    if result["missing"]:
        figures.append(
            Figure(
                "evidence recall sets not found",
                len(result["missing"]),
                "sets",
                better="lower",
                notes=f"{', '.join(result['missing'])}: BEAM not on this machine (bench/beam_data.py)",
            )
        )
    return figures
