"""optsched.models: Pyomo formulations, one module per family (``build_<name>(instance) -> ConcreteModel``)."""
