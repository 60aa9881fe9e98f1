"""buffersweep's Hydra plugins: a lazy grid sweeper and a streaming Ray launcher.

Why not Hydra's BasicSweeper and the stock hydra-ray-launcher (1.2.2)? BasicSweeper composes
every job's config to validate it (about 65 ms per job: two hours for a 100,000-point grid)
and writes multirun.yaml before validating; the Ray launcher submits every job at once, gathers
results in order, and has no progress, retries of dead workers, resume or streaming. These
plugins compose once per config-group choice and apply each job's scalar overrides to that
resolved base, then stream bounded batches through Ray (see sweeps/launch.py).
"""
