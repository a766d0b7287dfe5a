from hypothesis import given
from hypothesis import strategies as st

from core.topics import topic_key


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
