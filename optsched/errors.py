"""The three user-facing error types of optsched (all ``ValueError`` subclasses)."""


class OptschedError(ValueError):
    """Base class: a user error whose message names the thing at fault."""


class InvalidInstance(OptschedError):
    """Instance (or schedule) data that fails validation; the message names field and index.

    Examples
    --------
    >>> import json
    >>> from optsched import dumps, generate
    >>> from optsched.io import instance_from_dict
    >>> data = json.loads(dumps(generate("ring_contention", "tiny", 0)))
    >>> data["jobs"][0]["gpus"] = -1
    >>> try:
    ...     instance_from_dict(data)
    ... except ValueError as exc:            # every optsched error is a ValueError
    ...     print(type(exc).__name__, exc)
    InvalidInstance instance.jobs[0].gpus: must be >= 1, got -1
    """


class InfeasibleSchedule(OptschedError):
    """A schedule that violates a constraint; the message names the paper's equation.

    :func:`optsched.verify` raises it; every schedule a method returns passes verify first.
    """


class UnknownMethod(OptschedError):
    """A family or method name the registry does not know.

    Examples
    --------
    >>> from optsched import generate, solve
    >>> try:
    ...     solve(generate("edge_cloud", "tiny", 0), "nosuch")
    ... except ValueError as exc:
    ...     print(type(exc).__name__, str(exc)[:40])
    UnknownMethod method: edge_cloud has no method 'nosuch
    """
