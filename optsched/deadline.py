"""One time budget for a whole method call (DESIGN.md, "Deadline").

``solve(instance, method, time_limit=S)`` makes one :class:`Deadline` and passes it to the method;
every inner solve, cut loop and simulation of that method takes its own limit from it
(:meth:`Deadline.limit`) and stops when it has :meth:`expired`, so ``time_limit`` bounds the call,
not each step. A method stopped by its deadline returns what it has with status ``time_limit``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

#: The shortest time limit handed to an inner solver (HiGHS needs a moment to return its incumbent).
MIN_SLICE = 0.01


@dataclass(frozen=True)
class Deadline:
    """A point in time (``time.perf_counter`` clock) by which a method must return; None = never.

    >>> Deadline.after(None).remaining() is None
    True
    >>> d = Deadline.after(60.0)
    >>> 59.0 < d.remaining() <= 60.0 and not d.expired()
    True
    """

    end: float | None = None

    @classmethod
    def after(cls, seconds: float | None) -> "Deadline":
        """The deadline ``seconds`` from now (None: no limit)."""
        if seconds is None:
            return cls(None)
        if not seconds > 0 or math.isnan(seconds):
            raise ValueError(f"time_limit: must be > 0, got {seconds}")
        return cls(time.perf_counter() + float(seconds))

    def remaining(self) -> float | None:
        """Seconds left (>= 0), or None without a limit."""
        if self.end is None:
            return None
        return max(0.0, self.end - time.perf_counter())

    def expired(self) -> bool:
        """True once the deadline has passed."""
        return self.end is not None and time.perf_counter() >= self.end

    def limit(self, share: float = 1.0) -> float | None:
        """A time limit for one inner step: ``share`` of what is left (at least :data:`MIN_SLICE`),
        or None without a limit."""
        left = self.remaining()
        return None if left is None else max(MIN_SLICE, share * left)

    def within(self, seconds: float | None) -> "Deadline":
        """The earlier of this deadline and ``seconds`` from now (a sub-budget for one step)."""
        if seconds is None:
            return self
        other = time.perf_counter() + seconds
        return Deadline(other if self.end is None else min(self.end, other))


#: No limit.
NEVER = Deadline(None)

__all__ = ["Deadline", "MIN_SLICE", "NEVER"]
