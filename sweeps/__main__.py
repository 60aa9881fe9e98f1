"""`python -m sweeps [-m] [overrides]`: one simulation per job (a Hydra multirun with -m)."""

from __future__ import annotations

import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from sweeps.precheck import CONF_DIR, precheck
from sweeps.schema import register

register()


# An absolute directory: a relative one is resolved against the calling module, which differs
# between `python -m sweeps` and the `buffersweep` console script.
@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    """Single run (no -m): the composed config is one job, run in this process."""
    from sweeps.launch import OneJob, run_sweep

    job = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(job, dict)
    job.pop("hydra", None)
    run_sweep(OneJob(job, list(HydraConfig.get().overrides.task)), cfg, inline=True)


def cli() -> None:
    """The `buffersweep` console script (= `python -m sweeps`)."""
    sys.argv[1:] = precheck(sys.argv[1:])
    main()  # `buffersweep -sc install=bash` registers Hydra's completion for `buffersweep` itself
    _print_estimate(sys.argv[1:])


def _print_estimate(argv: list[str]) -> None:
    """After `--cfg job`, the job's cost as the engine estimates it (`sim.estimate`), as a YAML
    comment: what the limits check and the large-grid confirmation sum."""
    from hydra._internal.utils import get_args_parser

    args = get_args_parser().parse_args(argv)
    if args.cfg != "job":
        return
    import sim
    from sweeps.api import JobList, compose_config

    try:
        spec = JobList(compose_config(args.overrides), [{}]).specs()[0]
    except ValueError:  # the job is invalid: the sweep itself will say so in one line
        return
    if spec.params["backend"] != "engine":
        return
    est = sim.estimate(spec.sim)
    top = est.packet_drivers[0][1] if est.packet_drivers else 0.0
    keys = ", ".join(k for k, v in est.packet_drivers if v >= top / 10)
    print(f"# cost (sim.estimate): {est}; packets driven by {keys}")


if __name__ == "__main__":
    cli()
