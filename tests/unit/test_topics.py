from hypothesis import given
from hypothesis import strategies as st

from memstream.core.topics import topic_key


def test_paraphrases_share_a_topic() -> None:
    keys = {
        topic_key(q)
        for q in ["how do we rotate kafka keys", "kafka key rotation?", "Rotating keys in Kafka"]
    }
    assert keys == {"kafka key"}
    assert topic_key("where is the office") != topic_key("kafka key rotation")
    assert topic_key("what?") == "(none)"


@given(st.text(max_size=80))
def test_word_order_does_not_matter(query: str) -> None:
    assert topic_key(query) == topic_key(" ".join(reversed(query.split())))


_queries = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(["where", "what", "kafka", "keys", "rotate", "?", "the", "x"])).map(
        " ".join
    ),
)


@given(
    st.lists(st.tuples(st.sampled_from(["seed", "assign"]), _queries), max_size=30),
)
def test_clusters_never_raise_on_any_sequence_of_searches(
    steps: list[tuple[str, str]],
) -> None:
    # the poison query: a stopword-only search seeded after a restart used to make every
    # later search of the namespace divide by zero, stalling the projection
    from memstream.core.topics import TopicClusters

    clusters = TopicClusters()
    for action, query in steps:
        if action == "seed":
            clusters.seed("ns", topic_key(query), query)
        else:
            label = clusters.assign("ns", query)
            assert isinstance(label, str) and label


def test_a_stopword_query_seeded_after_restart_is_harmless() -> None:
    from memstream.core.topics import TopicClusters

    clusters = TopicClusters()
    clusters.seed("ns", "(none)", "where")
    assert clusters.assign("ns", "kafka key rotation") == "kafka key"
