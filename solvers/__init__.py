"""optsched.solvers: the papers' algorithms, baselines, exact() and lower_bound() per family."""
