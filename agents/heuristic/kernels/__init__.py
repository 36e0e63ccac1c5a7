"""The heuristics compiled with numba, one module per game, over batches of observations.

Each module's ``act_batch(obs, mask, num_players, ...)`` returns, for every row
of the float32 observations ``obs [N, obs_size]`` and int8 masks ``mask [N, A]``
(the arrays of `envs.vector_env`), the move of the readable heuristic in
``agents/heuristic/<game>.py`` (-1 where a mask is all zeros). The readable file
stays the definition: the kernels follow it line by line, with the same
floating-point operations in the same order, so that even near-ties break the
same way (tests/test_batched_agents.py compares every move of thousands of
games). Observation offsets come from the engines'
``OBS_*`` constants.

``cache=True`` keeps the compiled code on disk, keyed by every file a kernel
compiles in (`envs.kernel_cache`): an edit to an engine's offsets, a
heuristic's weights or `common` compiles the kernels that read them again.

``python -m agents.heuristic.kernels`` measures moves per second of each kernel
against its readable heuristic, in one process.
"""
