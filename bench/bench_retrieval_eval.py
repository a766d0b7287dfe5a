"""Evidence recall@k of memstream's recall vs plain BM25 and dense search over raw turns."""

from __future__ import annotations

from bench.figures import Figure
from bench.retrieval_eval import KS, evaluate


def run() -> list[Figure]:
    result = evaluate()
    notes = (
        f"{result['questions']} questions over {result['turns']} turns, {result['memories']} memories; "
        "rule extractor + offline hashing embedder, no LLM"
    )
    figures = []
    for k in KS:
        ours = result["recall"]["memstream"][f"@{k}"]
        figures.append(
            Figure(
                f"evidence recall@{k} vs BM25 over turns",
                ours,
                "recall",
                result["recall"]["bm25_turns"][f"@{k}"],
                "plain BM25 over raw turns",
                notes=notes,
            )
        )
    figures.append(
        Figure(
            "evidence recall@10 vs dense over turns",
            result["recall"]["memstream"]["@10"],
            "recall",
            result["recall"]["dense_turns"]["@10"],
            "dense-only over raw turns (hashing embedder)",
        )
    )
    for kind, by_k in result["by_kind"]["memstream"].items():
        figures.append(
            Figure(
                f"evidence recall@10 {kind}",
                by_k["@10"],
                "recall",
                result["by_kind"]["bm25_turns"][kind]["@10"],
                "plain BM25 over raw turns",
            )
        )
    return figures
