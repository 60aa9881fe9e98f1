"""`python -m cluster up [--workers K] | down | status | submit [--address URL] -- OVERRIDES |
logs JOB_ID | stop JOB_ID | mlflow`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cluster.local import DEFAULT_STATE_DIR


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    overrides: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, overrides = argv[:cut], argv[cut + 1 :]
    p = argparse.ArgumentParser(prog="python -m cluster", description=__doc__)
    p.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR, help="where the started PIDs are recorded")
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="start a local multi-node cluster")
    u.add_argument("--workers", type=int, default=2)
    u.add_argument("--head-cpus", type=int, default=0)
    u.add_argument("--worker-cpus", type=int, default=1)
    u.add_argument("--memory-gb", type=float, default=2.0, help="per node")
    u.add_argument(
        "--port-offset", type=int, default=0, help="added to every fixed port: two clusters side by side (e.g. 100)"
    )
    u.add_argument("--no-dashboard", action="store_true", help="lighter head; sweeps attach, jobs cannot be submitted")
    sub.add_parser("down", help="stop the processes `up` started")
    sub.add_parser("status")
    s = sub.add_parser(
        "submit", help="submit `python -m sweeps -m OVERRIDES` as a Ray job: submit -- +experiment=smoke"
    )
    s.add_argument(
        "--address", help="dashboard URL, e.g. http://HOST:8265 (default: $RAY_ADDRESS or the local cluster)"
    )
    s.add_argument("--no-follow", action="store_true", help="print the job id and return")
    lg = sub.add_parser("logs")
    lg.add_argument("job_id")
    lg.add_argument("--address")
    st = sub.add_parser("stop")
    st.add_argument("job_id")
    st.add_argument("--address")
    m = sub.add_parser("mlflow", help="start an MLflow server on the head (127.0.0.1, one worker)")
    m.add_argument("--host", default="127.0.0.1", help="off loopback it needs credentials (basic auth)")
    m.add_argument("--port", type=int, default=5000)
    m.add_argument("--backend-store-uri", help="where runs are kept (default: the project's mlflow.db)")
    m.add_argument(
        "--generate-credentials",
        action="store_true",
        help="basic auth with a generated admin password (saved 0600 in the state folder), "
        "unless MLFLOW_TRACKING_USERNAME and _PASSWORD give them",
    )
    args = p.parse_args(argv)

    if args.cmd == "up":
        from cluster.local import up
        from sweeps.raycfg import TOKEN_FILE

        state = up(
            args.workers,
            args.state_dir,
            args.head_cpus,
            args.worker_cpus,
            args.memory_gb,
            dashboard=not args.no_dashboard,
            port_offset=args.port_offset,
        )
        print(f"cluster up: {len(state.nodes)} nodes at {state.address}, dashboard {state.dashboard}")
        print(f"  Ray token auth: the token is in {args.state_dir / TOKEN_FILE} (mode 0600, new at each `up`)")
        print(f"  attach a sweep: python -m sweeps -m ... ray.address={state.address}")
        print("  submit a sweep: python -m cluster submit -- +experiment=smoke")
        return 0
    if args.cmd == "down":
        from cluster.local import down

        stopped = down(args.state_dir)
        print(f"stopped {len(stopped)} process groups: {stopped}")
        return 0
    if args.cmd == "status":
        from cluster.local import status

        print(status(args.state_dir))
        return 0
    if args.cmd == "submit":
        from ray.job_submission import JobStatus

        from cluster.submit import submit

        _, status = submit(overrides, args.address, follow=not args.no_follow)
        return 0 if status in (JobStatus.SUCCEEDED, JobStatus.PENDING, JobStatus.RUNNING) else 1
    if args.cmd == "logs":
        from cluster.submit import logs

        print(logs(args.job_id, args.address), end="")
        return 0
    if args.cmd == "stop":
        from cluster.submit import stop

        print("stopped" if stop(args.job_id, args.address) else "not running")
        return 0
    if args.cmd == "mlflow":
        from cluster.auth import MLFLOW_CREDENTIALS
        from cluster.mlflow_server import start

        uri, creds = start(
            args.state_dir, args.host, args.port, args.backend_store_uri, generate_credentials=args.generate_credentials
        )
        print(f"MLflow server at {uri}  (mlflow.tracking_uri=... for sweeps; `down` stops it)")
        if creds:
            saved = args.state_dir / MLFLOW_CREDENTIALS
            where = f"saved in {saved}" if saved.exists() else "from MLFLOW_TRACKING_USERNAME and _PASSWORD"
            print(f"  basic auth: user {creds[0]}, password {where}; sweeps send MLFLOW_TRACKING_USERNAME/_PASSWORD")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
