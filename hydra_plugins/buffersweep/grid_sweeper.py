"""`hydra/sweeper=buffersweep_grid`: expands the grid lazily and hands it to the launcher."""

# No `from __future__ import annotations`: Hydra's plugin scan runs this module before it is in
# sys.modules, where dataclasses look string annotations up (hydra-core 1.3).

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from hydra.core.config_store import ConfigStore
from hydra.core.plugins import Plugins
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


@dataclass
class GridSweeperConf:
    _target_: str = "hydra_plugins.buffersweep.grid_sweeper.GridSweeper"
    params: Optional[Dict[str, str]] = None


ConfigStore.instance().store(
    group="hydra/sweeper", name="buffersweep_grid", node=GridSweeperConf, provider="buffersweep"
)


class GridSweeper(Sweeper):
    def __init__(self, params: Optional[Dict[str, str]] = None) -> None:
        self.params = dict(params or {})
        self.config: Optional[DictConfig] = None
        self.hydra_context: Optional[HydraContext] = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.config = config
        self.hydra_context = hydra_context
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )

    def sweep(self, arguments: List[str]) -> Any:
        from sweeps.grid import build_grid

        assert self.config is not None and self.hydra_context is not None
        grid = build_grid(
            [f"{k}={v}" for k, v in self.params.items()] + list(arguments),
            self.hydra_context.config_loader,
            self.config,
        )
        return self.launcher.launch(grid, initial_job_idx=0)
