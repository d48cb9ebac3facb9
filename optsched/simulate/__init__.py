"""Shared event-driven engines and timelines.

- :mod:`optsched.simulate.flows`: the flow-level (fluid) big-switch simulator (cojob_network).
- :mod:`optsched.simulate.capacity`: capacity timelines shared by the list-scheduling baselines:
  a slotted :class:`~optsched.simulate.capacity.CapacityProfile` and an event-driven
  :class:`~optsched.simulate.capacity.ReleasePool` (its docstring says which private copies map
  onto them and which differ).
"""
