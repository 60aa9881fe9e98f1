"""Running buffersweep on a multi-node Ray cluster: a local multi-node cluster on one machine
(`python -m cluster up|down|status`), job submission (`submit|logs|stop`), an MLflow server on
the head (`mlflow`), and configs for real clusters (ray-cluster*.yaml, kuberay/)."""
