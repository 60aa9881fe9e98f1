"""buffersweep's sweeps: Hydra multiruns over the experiment grid, fanned out on Ray, results
streamed to Parquet and tracked in MLflow. Entry point: `python -m sweeps [-m] [overrides]`."""
