"""Per-job cost minimisation of seed 000 under fixed prices: A_mincost2 (Alg. 5, PS q = 1),
A_mincost1 (Alg. 4, PS q = 0, paper-faithful and exact), A_RAmincost1 (Alg. 6, RA q = 1) and
A_RAmincost2 (Alg. 7, RA q = 0), i.e. problems (12)/(13) and (20)/(21).

All work on a :class:`PriceState`: residual capacities omega_h^r(t) and prices delta_h^r(t) over the
relative slots 1..tau of one A_maxweight call. A candidate (m', p', L, t^-) occupies the half-open
window [t^-, t^- + L) with t^- + L <= tau (7b). Costs are sum_t sum_h sum_r delta (usage / unit_r):
resources are normalised by their mean server capacity (digest Sec. 3.7, "normalized" units).

Enumeration order and tie-breaking follow the papers' pseudocode (digest Sec. 4.0): m' = 1..M,
p' = 1..P, L ascending (PS; the number of workers N = ceil(W/(L rho)) then descends) or Phi'
ascending (RA), t^- ascending, then servers; a candidate replaces the best only if strictly cheaper.
Only the minimal L of each N (PS) and the undominated Phi' (RA) are enumerated: every other
candidate has a dominating one earlier in the same order (same start, a subset of the slots, the
same or fewer workers), so it can never be strictly cheaper and the result is unchanged.
Candidates whose cost lower bound is not below the current best are skipped for the same reason;
the search stops at cost 0 (prices are >= 0). With the earliest-finish tie-break and a best of
cost 0 only the starts that finish earlier are computed (:meth:`Best.reach`), and a configuration
that fits no server of the idle cluster (q = 1) or that Alg. 4 cannot place even there (q = 0) is
not examined, since residuals never exceed C (issue 19 item 7; the same schedules, pinned by
tests/solvers/test_elastic_cluster_fast.py against the code before).

Capacities (issues 13, 22): an amount fits a residual omega when ``tolerance.fits(amount, omega)``
(vectorised in :func:`room`: float noise only, on ``Instance.cap`` = floor(C) for integer
demands, so with integer demands this is verify's exact capacity rule); PS counts are verify's (2i)
staircase (``Instance.ps_raw``), durations ``Instance.duration``, both exact.

Deadline: a :class:`PriceState` may carry the method's :class:`~optsched.deadline.Deadline`; the
subroutines then stop enumerating once it has expired (their result is incomplete, and the caller,
which checks the same deadline, drops it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from optsched import tolerance
from optsched.deadline import NEVER, Deadline
from optsched.problems.elastic_cluster import Instance, Plan, memo
from optsched.result import Outcome, SolveStatus


def room(limit: np.ndarray) -> np.ndarray:
    """Elementwise the largest amount ``tolerance.fits`` accepts against ``limit``:
    limit + NOISE max(1, |limit|) (float noise only; verify decides capacities exactly)."""
    return limit + tolerance.NOISE * np.maximum(1.0, np.abs(limit))


def _count_fit(room: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Elementwise the largest integer k >= 0 with k * unit <= room (unit > 0)."""
    k = np.floor(room / unit)
    k = np.where(k * unit > room, k - 1, k)
    k = np.where((k + 1) * unit <= room, k + 1, k)
    return k.clip(min=0)


def _ps_counts(inst: Instance, m: int, p: int, n_workers: int) -> np.ndarray:
    """raw[g] = the fewest PSs of type p meeting verify's (2i) for n_workers - g remote type-m
    workers (g = 0..n_workers); 0 when nothing is remote. Memoised per instance (read-only)."""
    cache = memo(inst, "ps_counts")
    if (m, p, n_workers) not in cache:
        by_remote = memo(inst, "ps_raw").setdefault((m, p), [])  # ps_raw(m, p, k) at index k
        by_remote.extend(inst.ps_raw(m, p, k) for k in range(len(by_remote), n_workers + 1))
        raw = np.array(by_remote[n_workers::-1], dtype=float)
        raw.flags.writeable = False
        cache[m, p, n_workers] = raw
    return cache[m, p, n_workers]


@dataclass(frozen=True)
class SubPlan(Plan):
    """A :class:`Plan` whose start is relative to a batch window (slot t^- is 1-based in the
    window): duration L, worker type m, PS type p (-1 for RA), q, workers and PSs per server."""

    def usage(self, inst: Instance) -> np.ndarray:
        """Per-slot usage f_{jh}^r(l), H x R."""
        use = np.outer(self.workers, inst.e[self.worker_type])
        if inst.is_ps:
            use = use + np.outer(self.ps, inst.z[self.ps_type])
        return use


@dataclass
class PriceState:
    """Residual capacity and prices over relative slots 1..tau (arrays H x R x tau).

    ``omega`` and ``delta`` must not be modified after the first query (window statistics are
    cached); build a new state after every admission. ``deadline``: the subroutines stop
    enumerating when it has expired.
    """

    inst: Instance
    omega: np.ndarray
    delta: np.ndarray
    deadline: Deadline = NEVER  # a value object: the pricing subroutines' callers pass theirs
    _sums: np.ndarray | None = None
    _table: list = field(default_factory=list)
    _cache: dict = field(default_factory=dict)
    _rooms: dict = field(default_factory=dict)
    _workers: dict = field(default_factory=dict)
    _worker_type: int = -1
    _capped: bool | None = None

    @property
    def tau(self) -> int:
        return int(self.omega.shape[2])

    def expired(self) -> bool:
        """True once the state's deadline has passed (the enumeration should stop)."""
        return self.deadline.expired()

    @property
    def below_capacity(self) -> bool:
        """omega <= C everywhere (true for every ledger's residual C - used, used >= 0): then a
        configuration that does not fit the idle cluster fits no window of this state
        (:func:`_colocated_fits_idle`, :func:`_faithful_fits_idle`)."""
        if self._capped is None:
            self._capped = bool((self.omega <= self.inst.cap[:, :, None]).all())
        return self._capped

    def windows(self, length: int) -> tuple[np.ndarray, np.ndarray]:
        """(WS, WM) for windows of ``length`` starting at relative slots 1..tau-length:
        WS[h,r,s] = sum of delta/unit_r over the window, WM[h,r,s] = min of omega over it."""
        if length not in self._cache:
            n = self.tau - length
            if self._sums is None:
                weighted = self.delta / self.inst.unit[None, :, None]
                self._sums = np.concatenate(
                    [np.zeros(weighted.shape[:2] + (1,)), np.cumsum(weighted, axis=2)], axis=2)
                self._table = [self.omega]
            ws = self._sums[:, :, length:length + n] - self._sums[:, :, :n]
            self._cache[length] = (ws, self._window_min(length, n))
        return self._cache[length]

    def room(self, length: int) -> np.ndarray:
        """``room(WM)`` for windows of ``length``, cached (every configuration of that length
        tests its demand against it)."""
        if length not in self._rooms:
            self._rooms[length] = room(self.windows(length)[1])
        return self._rooms[length]

    def worker_side(self, length: int, m: int,
                    reach: int | None = None) -> tuple[np.ndarray, np.ndarray, _Sorted]:
        """(Omega cost S x H, caps S x H, their per-row sort) for worker type m and windows of
        ``length``: shared by the configurations with that (L, m), which differ in p and N only.
        The enumeration comes grouped by m, so only the current m's entries are kept (memory).

        ``reach``: only the rows of the first ``reach`` starts are needed (:meth:`Best.reach`);
        the arrays returned may then hold just those rows (at least ``reach``; every row is
        computed by the same elementwise / per-row operations as in the full arrays)."""
        if m != self._worker_type:
            self._workers, self._worker_type = {}, m
        rows = self.tau - length if reach is None else reach
        if length not in self._workers or len(self._workers[length][0]) < rows:
            ws, wm = self.windows(length)
            e = self.inst.e[m]
            omega_cost = np.einsum("hrs,r->sh", ws[:, :, :rows], e)
            caps = _caps(wm[:, :, :rows], e)
            self._workers[length] = (omega_cost, caps, _Sorted(omega_cost, caps))
        return self._workers[length]

    def _window_min(self, length: int, n: int) -> np.ndarray:
        k = length.bit_length() - 1
        while len(self._table) <= k:  # sparse table: level i = min over [c, c + 2^i)
            prev, half = self._table[-1], 1 << (len(self._table) - 1)
            self._table.append(np.minimum(prev[:, :, :-half], prev[:, :, half:]))
        level = self._table[k]
        return np.minimum(level[:, :, :n], level[:, :, length - (1 << k):length - (1 << k) + n])


def empty_state(inst: Instance, tau: int) -> PriceState:
    """Idle cluster over relative slots 1..tau: omega = C, delta = 0."""
    omega = np.repeat(inst.cap[:, :, None], tau, axis=2)
    return PriceState(inst, omega, np.zeros_like(omega))


@dataclass
class Best:
    """Running strict minimum of the enumeration (the papers' "if cost < cost_min").

    ``eft=True`` (non-paper tie-break, digest Sec. 4.0): among equal costs the earlier finish
    t^- + L wins, so on idle windows (all costs 0) jobs take the configuration that ends first.
    """

    cost: float = math.inf
    plan: SubPlan | None = None
    eft: bool = False
    finish: float = math.inf

    def better(self, cost: float, finish: float) -> bool:
        if cost < self.cost:
            return True
        return self.eft and cost <= self.cost and finish < self.finish

    def better_each(self, cost: np.ndarray, finish: np.ndarray) -> np.ndarray:
        """:meth:`better` elementwise."""
        return (cost < self.cost) | (self.eft & (cost <= self.cost) & (finish < self.finish))

    def reach(self, length: int, n_starts: int) -> int:
        """How many leading starts (0-based s, finish s + 1 + ``length``) may still hold a
        candidate that replaces the best when costs are >= 0: with ``eft`` and a best of cost 0,
        only those finishing before it; otherwise all ``n_starts``."""
        if self.eft and self.cost <= 0 and math.isfinite(self.finish):
            return max(0, min(n_starts, int(math.ceil(self.finish - 1 - length))))
        return n_starts

    def takes_infinite(self) -> bool:
        """Whether an infeasible candidate (cost inf) would still replace the best: only with
        ``eft`` while the best costs inf too (an earlier finish wins the tie)."""
        return self.eft and self.cost == math.inf

    def hopeless(self, length: int) -> bool:
        """No candidate of duration ``length`` (finish >= 1 + length) can replace the best."""
        return self.cost <= 0 and (not self.eft or 1 + length >= self.finish)

    def offer(self, cost: float, plan_fn, finish: float = math.inf) -> None:
        if self.better(cost, finish):
            self.cost, self.plan, self.finish = cost, plan_fn(), finish


def _configs(inst: Instance, j: int, q: int, max_len: int) -> list:
    """Configurations (m, p, N, L) of job j with colocation q and L <= max_len, in the paper's
    enumeration order (m, p, then L ascending for PS / Phi ascending for RA)."""
    rows = [(m, p, n, d) for m, p, qq, n, d in inst.configurations(j) if qq == q and d <= max_len]
    if inst.is_ps:
        return sorted(rows, key=lambda c: (c[0], c[1], c[3]))
    return sorted(rows, key=lambda c: (c[0], c[2]))


def _per_unit(inst: Instance, m: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    ps = inst.z[p] if inst.is_ps and p >= 0 else np.zeros(inst.n_res)
    return inst.e[m], ps


# ------------------------------------------------------------------------------------ q = 1


def mincost_colocated(state: PriceState, j: int, best: Best | None = None) -> Best:
    """A_mincost2 (Alg. 5; PS) / A_RAmincost1 (Alg. 6; RA): all N workers (and one PS) on one
    server h, for every (m', p', L, t^-, h); exact for (13)/(21) with q = 1 (Theorems 1, 6)."""
    inst, best = state.inst, best or Best()
    for m, p, n, length in _configs(inst, j, 1, state.tau - 1):
        if state.expired():
            break
        if best.hopeless(length):
            continue
        reach = best.reach(length, state.tau - length)  # later starts cannot win (costs >= 0)
        if reach == 0:
            continue
        if (not _colocated_fits_idle(inst, m, p, n) and state.below_capacity
                and not best.takes_infinite()):
            continue  # every cost is inf: the offer below would not replace the best
        e, z = _per_unit(inst, m, p)
        need = n * e + z
        cost = np.einsum("hrs,r->sh", state.windows(length)[0][:, :, :reach], need)
        ok = (need[None, :, None] <= state.room(length)[:, :, :reach]).all(axis=1).T
        cost = np.where(ok, cost, math.inf)
        flat = int(np.argmin(cost))
        s, h = divmod(flat, inst.n_servers)
        best.offer(float(cost[s, h]), lambda: _colocated_plan(inst, s + 1, length, m, p, n, h),
                   s + 1 + length)
    return best


def _colocated_plan(inst: Instance, start: int, length: int, m: int, p: int, n: int,
                    h: int) -> SubPlan:
    workers = tuple(n if k == h else 0 for k in range(inst.n_servers))
    ps = tuple(1 if (k == h and inst.is_ps) else 0 for k in range(inst.n_servers))
    return SubPlan(start, length, m, p, 1, workers, ps)


def _colocated_fits_idle(inst: Instance, m: int, p: int, n: int) -> bool:
    """Whether N = n workers of type m and one PS of type p (Alg. 5/6, q = 1) fit one server of
    the idle cluster (memoised). ``room`` is monotone, so on residuals omega <= C the test
    n e + z <= room(omega) of :func:`mincost_colocated` fails wherever this one does."""
    table = memo(inst, "colocated_fits_idle")
    if (m, p, n) not in table:
        e, z = _per_unit(inst, m, p)
        table[m, p, n] = bool(((n * e + z)[None, :] <= room(inst.cap)).all(axis=1).any())
    return table[m, p, n]


def _faithful_fits_idle(inst: Instance, m: int, p: int, n: int, literal: bool) -> bool:
    """A necessary condition for Alg. 4 lines 6-22 (:func:`_faithful_feasible`) to place
    (m, p, N = n) at some start of a state with omega <= C (memoised): some server h and
    g <= min(N, cap_h) workers on it with s_hat_h(g) >= the PS count and s >= 1, all evaluated
    on the idle capacities. s_hat (:func:`_max_ps`) and cap_h (:func:`_caps`) only shrink when
    omega does, and the PS count depends on g alone, so a placement on any window implies one
    here."""
    table = memo(inst, "faithful_fits_idle")
    if (m, p, n, literal) not in table:
        e, z = _per_unit(inst, m, p)
        raw = _ps_counts(inst, m, p, n)
        g = np.arange(n + 1, dtype=float)
        s_hat = _max_ps(inst.cap, z, g, e)
        count, ok = _ps_need(raw, s_hat, literal)
        ok &= (g[None, :] <= _caps(inst.cap, e)[:, None]) & (count >= 1)
        table[m, p, n, literal] = bool(ok.any())
    return table[m, p, n, literal]


# ------------------------------------------------------------------------------------ q = 0


def _caps(wm: np.ndarray, e: np.ndarray) -> np.ndarray:
    """cap_h = min_r floor(omega_h^r / e^r) over resources with e^r > 0: shape H for a (H, R)
    argument, (S, H) for a (H, R, S) one."""
    pos = e > 0
    if wm.ndim == 2:
        return _count_fit(room(wm[:, pos]), e[pos]).min(axis=1)
    return _count_fit(room(wm[:, pos, :]), e[pos][None, :, None]).min(axis=1).T


class _Sorted:
    """Rows of (Omega cost, caps) sorted by cost (stable): what :func:`_greedy_costs` needs for
    every worker count, computed once per window length and worker type."""

    def __init__(self, omega_cost: np.ndarray, caps: np.ndarray):
        self.order = np.argsort(omega_cost, axis=1, kind="stable")
        self.c = np.take_along_axis(caps, self.order, axis=1)
        self.before = np.cumsum(self.c, axis=1) - self.c
        self.omega = np.take_along_axis(omega_cost, self.order, axis=1)
        self.total = caps.sum(axis=1)

    def costs(self, amount: int, rows: int | None = None) -> np.ndarray:
        """Per row s (the first ``rows`` rows, all by default): cheapest cost of ``amount``
        workers with caps (inf where they do not fit)."""
        k = len(self.c) if rows is None else rows
        y = np.clip(amount - self.before[:k], 0, self.c[:k])
        cost = (y * self.omega[:k]).sum(axis=1)
        return np.where(self.total[:k] >= amount, cost, math.inf)


def _greedy_costs(omega_cost: np.ndarray, caps: np.ndarray, amount: int) -> np.ndarray:
    """Per row s: cheapest cost of ``amount`` workers with caps (inf where they do not fit)."""
    return _Sorted(omega_cost, caps).costs(amount)


def _greedy_fill(order: np.ndarray, caps: np.ndarray, amount: int) -> np.ndarray:
    """Fill ``amount`` workers on servers in ``order``, each up to its cap (zeros if impossible)."""
    c = caps[order]
    before = np.concatenate([[0.0], np.cumsum(c)[:-1]])
    y_sorted = np.clip(amount - before, 0, c)
    y = np.zeros_like(caps)
    y[order] = y_sorted
    return y


def mincost_distributed_ra(state: PriceState, j: int, best: Best | None = None) -> Best:
    """A_RAmincost2 (Alg. 7, with the digest's errata #15-16: N_hat = Phi', reset per t^-,
    half-open window): Phi' workers greedily on the servers of least per-worker cost Omega_h;
    exact for (21) with q = 0 (a transportation problem)."""
    inst, best = state.inst, best or Best()
    for m, _, n, length in _configs(inst, j, 0, state.tau - 1):
        if state.expired():
            break
        if best.hopeless(length):
            continue
        reach = best.reach(length, state.tau - length)  # later starts cannot win (costs >= 0)
        if reach == 0:
            continue
        omega_cost, caps, ranked = state.worker_side(length, m, reach)
        costs = ranked.costs(n, reach)
        s = int(np.argmin(costs))
        if best.better(float(costs[s]), s + 1 + length):
            y = _greedy_fill(np.argsort(omega_cost[s], kind="stable"), caps[s], n)
            best.offer(float(costs[s]),
                       lambda: SubPlan(s + 1, length, m, -1, 0, tuple(int(v) for v in y),
                                       (0,) * inst.n_servers), s + 1 + length)
    return best


def mincost_distributed_ps(state: PriceState, j: int, best: Best | None = None,
                           exact: bool = False, literal: bool = False) -> Best:
    """A_mincost1 (Alg. 4, PS q = 0).

    ``exact=False``: the paper's greedy with the digest's fixes (#10 reset N_hat per n; #11
    s = max(1, ceil((N-g) b/B))); ``literal=True`` drops fix #11 (s = min(s_hat, ceil(...)), which is
    0 when g = N). It is NOT always optimal (Theorem 1 fails; digest Sec. 4.5 counterexample).
    ``exact=True``: for every PS server n and workers g on it, the minimal PS count and the
    remaining N - g workers greedily on the other servers by Omega (a transportation problem), which
    is optimal for (13) with q = 0 by dominance fact 3 (one PS server, minimal PS count).
    """
    inst, best = state.inst, best or Best()
    for m, p, n, length in _configs(inst, j, 0, state.tau - 1):
        if state.expired():
            break
        if best.hopeless(length):
            continue
        reach = best.reach(length, state.tau - length)  # later starts cannot win (costs >= 0)
        if reach == 0:
            continue
        if not exact and state.below_capacity and not _faithful_fits_idle(inst, m, p, n, literal):
            continue  # Alg. 4 places this configuration at no start (no call either way)
        e, z = _per_unit(inst, m, p)
        raw = _ps_counts(inst, m, p, n)
        ws, wm = state.windows(length)
        omega_cost, caps, ranked = state.worker_side(length, m, reach)
        psi_cost = np.einsum("hrs,r->sh", ws[:, :, :reach], z)
        ps_fits = (z[None, :, None] <= state.room(length)[:, :, :reach]).all(axis=1).T
        lower = ranked.costs(n, reach) + np.where(ps_fits, psi_cost, math.inf).min(axis=1)
        solve = _exact_ps_server if exact else _faithful_ps_server
        finish = np.arange(1, len(lower) + 1) + length
        starts = [int(s) for s in np.flatnonzero(best.better_each(lower, finish))]
        if not exact and starts:  # drop the starts where Alg. 4 finds no placement (no call)
            fits = _faithful_feasible(wm, ranked, np.array(starts), e, z, n, raw, literal)
            starts = [s for s, ok in zip(starts, fits) if ok]
        for s in starts:
            if state.expired():
                break
            if not best.better(float(lower[s]), float(finish[s])):
                continue
            found = solve(wm[:, :, s], omega_cost[s], psi_cost[s], caps[s], e, z, n, raw, literal)
            if found is not None:
                cost, y, sv = found
                best.offer(cost, lambda: SubPlan(int(s) + 1, length, m, p, 0,
                                                 tuple(int(v) for v in y),
                                                 tuple(int(v) for v in sv)), float(finish[s]))
                if best.hopeless(length):
                    break
    return best


def _max_ps(wm: np.ndarray, z: np.ndarray, g: np.ndarray, e: np.ndarray) -> np.ndarray:
    """s_hat[n, g] = the most PSs with g e^r + s z^r fits omega_n^r for every r with z^r > 0
    (shape H x G; -1 where even the g workers do not fit)."""
    pos = z > 0
    if not pos.any():
        return np.full((wm.shape[0], len(g)), 10.0 ** 9)
    left = room(wm[:, None, pos]) - g[None, :, None] * e[None, None, pos]
    return np.where(left < 0, -1.0, _count_fit(left, z[pos])).min(axis=2)


class _Fill:
    """The greedy fill of workers over servers sorted by Omega: F(R) is the cheapest cost of R
    workers (piecewise linear with breakpoints at the cumulative caps)."""

    def __init__(self, omega_cost: np.ndarray, caps: np.ndarray):
        self.order = np.argsort(omega_cost, kind="stable")
        self.c = caps[self.order]
        self.cum = np.concatenate([[0.0], np.cumsum(self.c)])
        self.val = np.concatenate([[0.0], np.cumsum(self.c * omega_cost[self.order])])
        self.pos = np.empty_like(self.order)
        self.pos[self.order] = np.arange(len(self.order))

    def cost(self, amount) -> np.ndarray:
        return np.interp(amount, self.cum, self.val)


def _ps_need(raw: np.ndarray, s_hat: np.ndarray, literal: bool):
    """(PS count, feasible) for g workers on the PS server, with raw[g] the fewest PSs meeting
    (2i) (:func:`_ps_counts`): fix #11 s = max(1, raw) feasible iff s_hat >= s; ``literal``:
    feasible iff s_hat meets (2i), s = min(s_hat, raw)."""
    if literal:
        return np.minimum(s_hat, raw[None, :]), s_hat >= raw[None, :]
    need = np.maximum(1.0, raw)[None, :].repeat(s_hat.shape[0], axis=0)
    return need, s_hat >= need


def _faithful_ps_server(wm, omega_cost, psi_cost, caps, e, z, n_workers, raw, literal):
    """Alg. 4 lines 6-22 for one (m', p', L, t^-), vectorised over the PS-server position: servers
    before n (in Omega order) filled to capacity, on n the largest feasible g, the rest greedily
    after n. Returns (cost, y, s) of the first strictly cheapest n, or None."""
    fill = _Fill(omega_cost, caps)
    H, order = len(caps), fill.order
    before = fill.cum[:-1]                                  # capacity of positions < pos
    remaining = np.maximum(0.0, n_workers - before)
    y_hat = np.minimum(fill.c, remaining)
    g = np.arange(n_workers + 1, dtype=float)
    # s_hat[k, g] is only read where g <= y_hat[k]: column 0 everywhere, whole rows only where
    # workers remain (a few leading positions); the rest is masked out below either way
    s_hat = np.full((H, len(g)), -1.0)
    s_hat[:, :1] = _max_ps(wm[order], z, g[:1], e)
    rows = np.flatnonzero(y_hat > 0)
    if len(rows):
        s_hat[rows] = _max_ps(wm[order[rows]], z, g, e)
    need, ok = _ps_need(raw, s_hat, literal)
    ok &= g[None, :] <= y_hat[:, None]
    has = ok.any(axis=1)
    g_star = np.where(has, n_workers - np.argmax(ok[:, ::-1], axis=1), 0).astype(int)
    s_star = need[np.arange(H), g_star]
    rest = remaining - g_star
    after = fill.cum[-1] - fill.cum[1:]                    # capacity of positions > pos
    feasible = has & (s_star >= 1) & (after >= rest)
    through = fill.cum[1:]
    cost = (fill.cost(np.minimum(n_workers, before)) + g_star * omega_cost[order]
            + s_star * psi_cost[order] + fill.cost(through + rest) - fill.cost(through))
    cost = np.where(feasible, cost, math.inf)
    k = int(np.argmin(cost))
    if not np.isfinite(cost[k]):
        return None
    y = np.zeros(H)
    y[order[:k]] = _greedy_fill(np.arange(k), fill.c, n_workers)[:k] if k else 0
    y[order[k]] = g_star[k]
    if rest[k] > 0:
        tail = np.arange(k + 1, H)
        y[order[tail]] = _greedy_fill(np.arange(len(tail)), fill.c[tail], int(rest[k]))
    sv = np.zeros(H)
    sv[order[k]] = s_star[k]
    return float(cost[k]), y, sv


def _faithful_feasible(wm: np.ndarray, ranked: _Sorted, starts: np.ndarray, e: np.ndarray,
                       z: np.ndarray, n_workers: int, raw: np.ndarray,
                       literal: bool) -> np.ndarray:
    """Per start s in ``starts``: False exactly where :func:`_faithful_ps_server` returns None
    (no PS-server position is ``feasible``), so the caller skips those calls and its result is
    unchanged. The same elementwise steps on counts, vectorised over the starts (``ranked`` is
    that function's Omega order and caps, row s); whole rows of s_hat only where workers remain."""
    g = np.arange(n_workers + 1, dtype=float)
    order, c, before = ranked.order[starts], ranked.c[starts], ranked.before[starts]  # B x H
    remaining = np.maximum(0.0, n_workers - before)
    y_hat = np.minimum(c, remaining)
    w = np.take_along_axis(wm[:, :, starts].transpose(2, 0, 1), order[:, :, None], axis=1)
    s_hat0 = _max_ps(w.reshape(-1, w.shape[2]), z, g[:1], e).reshape(order.shape)
    need0, ok0 = _ps_need(raw[:1], s_hat0, literal)
    has, g_star = ok0.copy(), np.zeros(order.shape, dtype=int)
    s_star = np.broadcast_to(need0, order.shape).astype(float)
    bi, ki = np.nonzero(y_hat > 0)
    if len(bi):
        s_hat = _max_ps(w[bi, ki], z, g, e)                                # rows x G
        need, ok = _ps_need(raw, s_hat, literal)
        ok &= g[None, :] <= y_hat[bi, ki][:, None]
        row_has = ok.any(axis=1)
        row_g = np.where(row_has, n_workers - np.argmax(ok[:, ::-1], axis=1), 0).astype(int)
        has[bi, ki] = row_has
        g_star[bi, ki] = row_g
        s_star[bi, ki] = need[np.arange(len(bi)), row_g]
    after = (before + c)[:, -1:] - (before + c)
    return (has & (s_star >= 1) & (after >= remaining - g_star)).any(axis=1)


def _exact_ps_server(wm, omega_cost, psi_cost, caps, e, z, n_workers, raw, literal):
    """Exact variant (digest Sec. 4.5): every PS server n and workers g on it, minimal PS count,
    the other N - g workers greedily by Omega on the servers != n (transportation problem):
    F_{-n}(R) = F(R) if R <= (caps before n) else F(R + c_n) - c_n Omega_n."""
    fill = _Fill(omega_cost, caps)
    H = len(caps)
    g = np.arange(n_workers + 1, dtype=float)
    s_hat = _max_ps(wm, z, g, e)
    need, ok = _ps_need(raw, s_hat, False)
    ok &= g[None, :] <= caps[:, None]
    amount = n_workers - g[None, :]                       # H x G
    c_n = caps[:, None]
    start = fill.cum[fill.pos][:, None]                   # caps before n in the sorted order
    rest = np.where(amount <= start, fill.cost(amount),
                    fill.cost(amount + c_n) - c_n * omega_cost[:, None])
    ok &= fill.cum[-1] - c_n >= amount
    cost = np.where(ok, rest + g[None, :] * omega_cost[:, None] + need * psi_cost[:, None],
                    math.inf)
    flat = int(np.argmin(cost))
    n, gg = divmod(flat, n_workers + 1)
    if not np.isfinite(cost[n, gg]):
        return None
    others = caps.copy()
    others[n] = 0
    y = _greedy_fill(fill.order, others, n_workers - gg)
    y[n] = gg
    sv = np.zeros(H)
    sv[n] = need[n, gg]
    return float(cost[n, gg]), y, sv


# ---------------------------------------------------------------------------------- per job


def job_best(state: PriceState, j: int, pricing: str = "paper",
             tie_break: str = "paper") -> Best:
    """Cheapest schedule of job j (A_maxweight lines 3-6): the q = 1 subroutine first, replaced by
    the q = 0 one only if strictly cheaper. ``pricing``: ``paper`` (faithful A_mincost1),
    ``literal`` (A_mincost1 without fix #11) or ``exact`` (exact A_mincost1). ``tie_break``:
    ``paper`` (first in enumeration order) or ``earliest_finish`` (non-paper)."""
    best = mincost_colocated(state, j, Best(eft=tie_break == "earliest_finish"))
    if state.inst.is_ps:
        return mincost_distributed_ps(state, j, best, exact=pricing == "exact",
                                      literal=pricing == "literal")
    return mincost_distributed_ra(state, j, best)


def fastest_alone(inst: Instance, j: int, deadline: Deadline) -> SubPlan | None:
    """The shortest schedule of job j on the idle cluster (start 1), or None if none fits (or
    the ``deadline`` expired before one was found: the caller checks it).

    Configurations are tried by increasing duration; a q = 1 one fits if one server holds N
    workers (+ 1 PS); a q = 0 one is placed by the exact placement with zero prices (on the
    idle cluster every window's residual is C and its price 0)."""
    for m, p, q, n, d in sorted(inst.configurations(j), key=lambda c: (c[4], -c[2])):
        if deadline.expired():
            return None
        plan = _place_alone(inst, m, p, q, n, d)
        if plan is not None:
            return plan
    return None


def _place_alone(inst: Instance, m: int, p: int, q: int, n: int, d: int) -> SubPlan | None:
    """Configuration (m, p, q, n, d) placed on the idle cluster from slot 1, or None."""
    H = inst.n_servers
    best = Best()
    if q == 1:
        _try_colocated(inst, m, p, n, d, best)
    elif inst.is_ps:
        e, z = _per_unit(inst, m, p)
        zero = np.zeros(H)
        found = _exact_ps_server(inst.cap, zero, zero, _caps(inst.cap, e), e, z, n,
                                 _ps_counts(inst, m, p, n), False)
        if found is not None:
            best.offer(0.0, lambda: SubPlan(1, d, m, p, 0, tuple(int(v) for v in found[1]),
                                            tuple(int(v) for v in found[2])))
    else:
        caps = _caps(inst.cap, inst.e[m])
        y = _greedy_fill(np.arange(H), caps, n)
        if y.sum() >= n:
            best.offer(0.0, lambda: SubPlan(1, d, m, -1, 0, tuple(int(v) for v in y),
                                            (0,) * H))
    return best.plan


def unplaceable(inst: Instance) -> list[int]:
    """The jobs that fit in no configuration even alone on the idle cluster (memoised). Fitting is
    monotone in the worker count (fewer workers need fewer resources and, for PS, no more PSs),
    so only the one-worker configurations are tried; where they fit does not depend on the job
    (every job may use every type pair and both q), so either every job fits or none does and the
    check costs M x P x 2 placements, not the configuration scan. Such a job makes the instance
    infeasible: no schedule exists (issue 15: zero capacity, a worker larger than every server)."""
    table = memo(inst, "unplaceable")
    if "jobs" not in table:
        pairs = [(m, p) for m in range(len(inst.worker_types))
                 for p in (range(len(inst.ps_types)) if inst.is_ps else (-1,))]
        fits = any(_place_alone(inst, m, p, q, 1, 1) is not None
                   for m, p in pairs for q in (1, 0))
        table["jobs"] = [] if fits else list(range(len(inst.jobs)))
    return table["jobs"]


def infeasible_outcome(inst: Instance) -> Outcome | None:
    """Status ``infeasible`` (no schedule) when some job fits nowhere (:func:`unplaceable`), else
    None. Every method of the family calls it first, so no method meets such an instance."""
    jobs = unplaceable(inst)
    if not jobs:
        return None
    return Outcome(None, SolveStatus.INFEASIBLE, info={
        "infeasible": f"job {jobs[0]} fits in no configuration even alone on the idle cluster "
                      f"({len(jobs)} such jobs): no schedule exists"})


def _try_colocated(inst: Instance, m: int, p: int, n: int, d: int, best: Best) -> None:
    e, z = _per_unit(inst, m, p)
    fits = np.flatnonzero(((n * e + z)[None, :] <= room(inst.cap)).all(axis=1))
    if len(fits):
        best.offer(0.0, lambda: _colocated_plan(inst, 1, d, m, p, n, int(fits[0])))
