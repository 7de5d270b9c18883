"""The one document type every retriever returns and every node consumes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from langchain_core.documents import Document as LCDocument


@dataclass
class Document:
    id: str
    title: str
    text: str
    source: str = ""
    score: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Document:
        return cls(
            id=str(data["id"]),
            title=str(data.get("title", "")),
            text=str(data.get("text", "")),
            source=str(data.get("source", "")),
            score=data.get("score"),
            metadata=dict(data.get("metadata") or {}),
        )

    def to_langchain(self) -> LCDocument:
        return LCDocument(
            page_content=self.text,
            id=self.id,
            metadata={"title": self.title, "source": self.source, "score": self.score, **self.metadata},
        )

    def as_passage(self) -> str:
        """`Title - text`, the layout the papers' prompts use for documents."""
        return f"{self.title} - {self.text}" if self.title else self.text
