"""Benchmarks that span the packages (`make bench`): the engine against its own history and htsim,
the orchestration, the backends and the cluster; see docs/performance.md."""
