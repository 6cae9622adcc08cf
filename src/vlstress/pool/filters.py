"""Which candidates of the pool to keep: by kind, family, size, resolution and pretraining data.
A filter not given keeps everything; a candidate whose attribute is unknown (None) is dropped by
a filter on that attribute."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vlstress.pool.entries import Candidate


@dataclass(frozen=True)
class Filters:
    kinds: tuple[str, ...] = ()
    families: tuple[str, ...] = ()  # case-insensitive, whole names
    max_params_m: float | None = None  # image + text tower, millions
    resolutions: tuple[int, ...] = ()
    data: tuple[str, ...] = ()  # case-insensitive, a part of the pretraining data's name

    def keeps(self, candidate: Candidate) -> bool:
        found = candidate.attributes
        if self.kinds and candidate.kind not in self.kinds:
            return False
        family = str(found.get("family") or "").lower()
        if self.families and family not in {name.lower() for name in self.families}:
            return False
        if self.max_params_m is not None:
            towers = [found.get("params_image_m"), found.get("params_text_m")]
            if towers[0] is None or sum(t or 0 for t in towers) > self.max_params_m:
                return False
        if self.resolutions and found.get("resolution") not in self.resolutions:
            return False
        data = str(found.get("pretrain_data") or "").lower()
        return not self.data or (bool(data) and any(part.lower() in data for part in self.data))


def apply(filters: Filters, candidates: Iterable[Candidate]) -> list[Candidate]:
    return [candidate for candidate in candidates if filters.keeps(candidate)]
