"""Ranking the channels' lists: reciprocal-rank fusion and quotas (``fusion``), and the rerankers (``rerank``)."""
