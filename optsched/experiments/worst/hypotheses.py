"""The hypotheses of the claims under test (``optsched worst ... --hypothesis NAME``,
``run_worst(hypothesis=)``): a candidate instance outside a claim's statement is discarded, never
evaluated, so a "violation" found is one of the claim as stated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from optsched.errors import OptschedError


def alpha_defined(doc: dict) -> bool:
    """Theorem 4 of Hare (hetero_gpu): alpha is a ratio of task times across GPUs, and a sync
    row mixing 0 and positive entries has no finite ratio (``Instance.alpha`` is inf there and
    the theorem claims nothing). Sync rows are all zero or all positive."""
    return all(min(j["sync_time"]) > 0 or max(j["sync_time"]) == 0 for j in doc["jobs"])


def released_at_zero(doc: dict) -> bool:
    """Theorem 2 of Grouper (cojob_network) is stated for cojobs all released at t = 0."""
    return all(c["arrival"] == 0 for c in doc["cojobs"])


def intra_not_slower(doc: dict) -> bool:
    """SJF-BCO (ring_contention) is analysed with b^i >> b^e (NVLink within a server, the network
    between servers; digest Table 1): with b^i < b^e a ring spread over servers is faster than
    one kept on a server, the constants' Phi = max rho^max / rho^min falls below 1 (the paper's
    Phi, a max over all pairs of placements, is >= 1) and Lemma 4's allowed side
    Phi (u/l) theta* shrinks below theta*. The instance keeps b^i >= b^e."""
    return doc["bw_intra"] >= doc["bw_inter"]


@dataclass(frozen=True)
class Hypothesis:
    """A claim's hypothesis: its name, the family it is about and the predicate on an instance
    document (True: the instance is within the claim's statement)."""

    name: str
    family: str
    text: str
    check: Callable[[dict], bool]


#: Every hypothesis by name (the choices of ``--hypothesis``).
HYPOTHESES = {h.name: h for h in (
    Hypothesis("alpha_defined", "hetero_gpu",
               "Hare Theorem 4: every sync row all zero or all positive (alpha finite)",
               alpha_defined),
    Hypothesis("released_at_zero", "cojob_network",
               "Grouper Theorem 2: every cojob released at t = 0", released_at_zero),
    Hypothesis("intra_not_slower", "ring_contention",
               "SJF-BCO Lemmas 3-4: intra-server bandwidth b^i >= inter-server b^e",
               intra_not_slower),
)}


def hypothesis_of(name: str, family: str) -> Callable[[dict], bool]:
    """The predicate of hypothesis ``name`` for ``family``.

    Raises
    ------
    OptschedError
        For an unknown name or a hypothesis about another family (one line, exit 2).
    """
    h = HYPOTHESES.get(name)
    if h is None:
        raise OptschedError(f"--hypothesis: unknown {name!r} (known: {', '.join(HYPOTHESES)})")
    if h.family != family:
        raise OptschedError(f"--hypothesis {name}: is about {h.family}, not {family}")
    return h.check
