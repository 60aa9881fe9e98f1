"""`hydra/launcher=buffersweep_ray`: runs the jobs on Ray (local or an existing cluster),
streaming results to Parquet and MLflow. Works with the grid sweeper (fast path) or, more
slowly, with any sweeper that passes plain override lists."""

# No `from __future__ import annotations`: Hydra's plugin scan runs this module before it is in
# sys.modules, where dataclasses look string annotations up (hydra-core 1.3).

from dataclasses import dataclass
from typing import Optional, Sequence

from hydra.core.config_store import ConfigStore
from hydra.core.utils import JobReturn
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


@dataclass
class RayLauncherConf:
    _target_: str = "hydra_plugins.buffersweep.ray_launcher.RayLauncher"


ConfigStore.instance().store(
    group="hydra/launcher", name="buffersweep_ray", node=RayLauncherConf, provider="buffersweep"
)


class RayLauncher(Launcher):
    def __init__(self) -> None:
        self.config: Optional[DictConfig] = None
        self.hydra_context: Optional[HydraContext] = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.config = config
        self.hydra_context = hydra_context

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        from sweeps.grid import Grid, build_grid
        from sweeps.launch import run_sweep

        assert self.config is not None and self.hydra_context is not None
        grid = (
            job_overrides
            if isinstance(job_overrides, Grid)
            else build_grid.from_job_lists(job_overrides, self.hydra_context.config_loader, self.config)
        )
        return run_sweep(grid, self.config)
