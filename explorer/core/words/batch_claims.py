"""Claims about batches: the exact batch at which a step (or op) turns compute-bound, the
largest batch that fits, and where throughput levels off. Each checks itself by running
the analysis again at the batches it names (see ``claims``)."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.analysis.memory import max_batch_that_fits
from explorer.core.model.parameters import MAX_BATCH
from explorer.core.words.claims import Claim, State, is_compute_bound


@dataclass(frozen=True)
class Crossing(Claim):
    """The first batch (that fits) at which the step or an op is compute-bound; None: none."""

    state: State
    batch: int | None
    op: str | None = None
    kind = "crossing"

    @property
    def phrase(self) -> str:
        return f"{self.batch:,}" if self.batch else "memory-bound"

    def check(self) -> str | None:
        what = self.op or "the step"
        if self.batch is None:
            top = MaxBatch.largest(self.state)
            if top >= 1 and is_compute_bound(self.state.at(batch=top), self.op):
                return f"{what} is compute-bound at batch {top:,}, the largest that fits"
            return None
        if not is_compute_bound(self.state.at(batch=self.batch), self.op):
            return f"{what} is still memory-bound at batch {self.batch:,}"
        if self.batch > 1 and is_compute_bound(self.state.at(batch=self.batch - 1), self.op):
            return f"{what} is already compute-bound at batch {self.batch - 1:,}"
        if not self.state.at(batch=self.batch).analysis().totals.fits_in_memory:
            return f"batch {self.batch:,} does not fit in memory"
        return None

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"crossing_batch": self.batch, "op": self.op}


@dataclass(frozen=True)
class MaxBatch(Claim):
    """The largest batch whose weights, KV cache and activations fit (0: none)."""

    state: State
    batch: int
    kind = "max_batch"

    @staticmethod
    def largest(state: State) -> int:
        return max_batch_that_fits(state.model, state.params, state.hardware)

    @property
    def phrase(self) -> str:
        return f"{self.batch:,}" if self.batch else "do not fit"

    def check(self) -> str | None:
        def fits(batch: int) -> bool:
            return self.state.at(batch=batch).analysis().totals.fits_in_memory

        if self.batch == 0:
            return "batch 1 fits" if fits(1) else None
        if not fits(self.batch):
            return f"batch {self.batch:,} does not fit"
        if self.batch < MAX_BATCH and fits(self.batch + 1):
            return f"batch {self.batch + 1:,} fits too"
        return None

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"max_batch": self.batch}


@dataclass(frozen=True)
class LevelsOff(Claim):
    """Throughput levels off: ``batch`` is the smallest batch that reaches ``share`` of the
    throughput at batch ``top``."""

    state: State
    batch: int
    top: int
    share: float = 0.95
    kind = "levels_off"

    @property
    def phrase(self) -> str:
        return f"{self.batch:,}"

    def check(self) -> str | None:
        def rate(batch: int) -> float:
            return self.state.at(batch=batch).analysis().totals.tokens_per_s

        target = self.share * rate(self.top)
        if rate(self.batch) < target:
            return (f"batch {self.batch:,} reaches less than {self.share:.0%} of the throughput "
                    f"at {self.top:,}")
        if self.batch > 1 and rate(self.batch - 1) >= target:
            return f"batch {self.batch - 1:,} already reaches {self.share:.0%} of it"
        return None

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"levels_off_batch": self.batch, "share": self.share}
