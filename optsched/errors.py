"""The three user-facing error types of optsched (all ``ValueError`` subclasses)."""


class OptschedError(ValueError):
    """Base class: a user error whose message names the thing at fault."""


class InvalidInstance(OptschedError):
    """Instance (or schedule) data that fails validation; the message names field and index."""


class InfeasibleSchedule(OptschedError):
    """A schedule that violates a constraint; the message names the paper's equation."""


class UnknownMethod(OptschedError):
    """A family or method name the registry does not know."""
