"""What retrieval reads from the service's settings, as a typed protocol.

``api.settings.Settings`` satisfies :class:`ModelSettings`; retrieval does not import it, since
imports point one way (``api -> assembly -> retrieval -> ingest``). Tests and scripts may pass any
object with these attributes.
"""

from __future__ import annotations

from typing import Protocol


class ModelSettings(Protocol):
    """The optional models (CLIP, ColPali, an OpenAI-compatible LLM) and what the LLM is used for."""

    @property
    def clip_model(self) -> str | None: ...

    @property
    def clip_pretrained(self) -> str | None: ...

    @property
    def colpali_model(self) -> str | None: ...

    @property
    def colpali_pool_factor(self) -> int: ...

    @property
    def llm_base_url(self) -> str | None: ...

    @property
    def llm_model(self) -> str | None: ...

    @property
    def llm_api_key(self) -> str | None: ...

    @property
    def llm_summaries(self) -> bool: ...
