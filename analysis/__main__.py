"""`python -m analysis`: query stored runs (sql, shell, schema), find minimum buffers (min-buffer),
reproduce the papers (reproduce) and compare simulators (compare). See docs/analysis.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

from analysis.db import DEFAULT_RESULTS, VIEWS, NoResults, column_docs, connect, sweeps_in
from sweeps.store import TABLES

RESULTS_HELP = "the results directory (a path or a pyarrow filesystem URI; default: results)"


def _connect(args: argparse.Namespace) -> duckdb.DuckDBPyConnection:
    try:
        return connect(args.results, sweep=getattr(args, "sweep", None), name=getattr(args, "name", None))
    except NoResults as e:
        print(f"error: --results: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def cmd_sql(args: argparse.Namespace) -> int:
    con = _connect(args)
    n = sweeps_in(con)
    if n > 1 and not (args.sweep or args.name) and _reads_runs(args.query) and "sweep_id" not in args.query:
        print(
            f"note: this query spans {n} stored sweeps; narrow it with --sweep latest, --sweep ID, --name NAME "
            "or WHERE sweep_id = ... (`SELECT sweep_id, name, count(*) FROM runs GROUP BY ALL` lists them)",
            file=sys.stderr,
        )
    try:
        rel = con.sql(args.query)
    except duckdb.Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if rel is None:  # a statement without a result (CREATE, SET, ...)
        return 0
    try:
        if args.format == "table":
            out = open(args.out, "w") if args.out else sys.stdout
            try:
                out.write(_render(rel))
            finally:
                if args.out:
                    out.close()
        else:
            if not args.out and args.format == "parquet":
                print("error: --format parquet needs --out FILE", file=sys.stderr)
                return 1
            table = rel.to_arrow_table()
            _write(table, args.format, args.out)
    except duckdb.Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _reads_runs(query: str) -> bool:
    """The query reads a table of runs (`runs`, `flows`, ...), which may mix stored sweeps; not
    `atlas` or `points` alone, nor a query that names its sweeps or presets."""
    try:  # parsed on a connection of its own (the views' parquet lists would be bound)
        tables = {t.lower() for t in duckdb.connect().get_table_names(query)}
    except duckdb.Error:
        return False  # the query itself says what is wrong
    return bool(tables & set(TABLES)) and "name" not in query


def _render(rel: duckdb.DuckDBPyRelation) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(show_lines=False)
    for name in rel.columns:
        table.add_column(name)
    rows = rel.fetchall()
    for row in rows:  # as Text: a value such as `precision.metrics=[utilization]` is not markup
        table.add_row(*(Text("NULL" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))) for v in row))
    console = Console(width=200, record=True, file=open("/dev/null", "w"))
    console.print(table)
    return console.export_text() + f"({len(rows)} rows)\n"


def _write(table, fmt: str, out: str | None) -> None:
    import io
    import json

    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if fmt == "parquet":
        pq.write_table(table, out)
        return
    if fmt == "csv":
        buf = io.BytesIO()
        pacsv.write_csv(table, buf)
        data = buf.getvalue().decode()
    else:
        data = json.dumps(table.to_pylist(), default=str, indent=1) + "\n"
    if out:
        with open(out, "w") as f:
            f.write(data)
    else:
        sys.stdout.write(data)


def cmd_shell(args: argparse.Namespace) -> int:
    from analysis.shell import Shell

    Shell(_connect(args)).cmdloop()
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    for name in [args.table] if args.table else VIEWS:
        table = Table(title=f"{name}", title_justify="left")
        for col in ("column", "type", "unit", "meaning"):
            table.add_column(col, overflow="fold")
        for row in column_docs(name):
            table.add_row(*row)
        Console(width=160).print(table)
    return 0


def reports_dir(results: str) -> str:
    """Where a reproduction's report goes by default: beside its runs, in the user's results
    folder (the tracked reports/ changes only when asked: `--reports reports`)."""
    return str(Path(results) / "reports") if "://" not in results else str(Path(DEFAULT_RESULTS) / "reports")


def cmd_reproduce(args: argparse.Namespace) -> int:
    import signal

    from analysis.reproduce import REPRODUCTIONS, listing, reproduce

    # SIGTERM unwinds like Ctrl-C, so that a running sweep is stopped with us (sweep_cli)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    if args.name == "list":
        print(listing())
        return 0
    if args.name != "all" and args.name not in REPRODUCTIONS:
        print(f"error: unknown reproduction {args.name!r}; allowed: all, {', '.join(REPRODUCTIONS)}", file=sys.stderr)
        return 2
    if args.stored and args.rerun:
        print("error: --stored runs nothing and --rerun reruns everything: give one", file=sys.stderr)
        return 2
    names = list(REPRODUCTIONS) if args.name == "all" else [args.name]
    from sweeps.backends import BACKENDS

    backends = tuple(b.strip() for b in (args.backends or "").split(",") if b.strip())
    for b in backends:
        if b not in BACKENDS:
            print(f"error: --backends: unknown backend {b!r}; allowed: {', '.join(BACKENDS)}", file=sys.stderr)
            return 2
    reports = args.reports or reports_dir(args.results)
    return max(
        reproduce(
            name,
            args.results,
            reports,
            rerun=args.rerun,
            backends=backends,
            mlflow=not args.no_mlflow,
            stored_only=args.stored,
        )
        for name in names
    )


def cmd_compare(args: argparse.Namespace) -> int:
    from analysis.compare import main

    return main(args, _connect(args))


def cmd_check(args: argparse.Namespace) -> int:
    from analysis.check import main as check

    return check(args.results, args.tracking_uri, args.repair)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m analysis", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    views = f"the views {', '.join(VIEWS)} (`schema` lists their columns)"
    q = sub.add_parser("sql", help=f"run a query over {views}", description=f"Runs DuckDB SQL over {views}.")
    q.add_argument("query", help='DuckDB SQL, e.g. "SELECT tcp, flows, utilization FROM runs"')
    q.add_argument("--results", default=DEFAULT_RESULTS, help=RESULTS_HELP)
    q.add_argument(
        "--format", choices=("table", "csv", "json", "parquet"), default="table", help="how to print (default table)"
    )
    q.add_argument("--out", help="write to this file instead of stdout (parquet needs one)")
    for parser in (q, s := sub.add_parser("shell", help="interactive DuckDB session with the same views")):
        parser.add_argument("--sweep", help="only this sweep_id, or 'latest'")
        parser.add_argument("--name", help="only the sweeps of this experiment preset")
    q.set_defaults(fn=cmd_sql)
    s.add_argument("--results", default=DEFAULT_RESULTS, help=RESULTS_HELP)
    s.set_defaults(fn=cmd_shell)
    d = sub.add_parser("schema", help="every column of the views, with its unit and meaning")
    d.add_argument("table", nargs="?", choices=VIEWS, help="one view (default: all)")
    d.set_defaults(fn=cmd_schema)
    from analysis.minbuffer import help_text

    mb = sub.add_parser(
        "min-buffer",
        help="the smallest buffer reaching a target utilization, per grid point "
        "(e.g. min-buffer target=0.95 flows=100,200,300 core_mbps=100)",
        description=help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mb.add_argument("overrides", nargs="*", metavar="key=value", help="see above")
    mb.set_defaults(fn=lambda a: __import__("analysis.minbuffer", fromlist=["main"]).main(a.overrides))
    from analysis.atlas.cli import add_parsers as add_atlas

    add_atlas(sub)
    from analysis.reproduce import listing

    r = sub.add_parser(
        "reproduce",
        help="reproduce a paper's figure or table (reproduce list: every one)",
        epilog=f"reproductions:\n{listing()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("name", help="a reproduction (below), all, or list")
    r.add_argument("--results", default=DEFAULT_RESULTS, help=RESULTS_HELP)
    r.add_argument(
        "--reports",
        help="where the report and figure go (default: RESULTS/reports); `--reports reports` "
        "updates the project's tracked reports, as `make reproduce` does",
    )
    r.add_argument("--rerun", action="store_true", help="rerun the sweeps even if stored (force=true)")
    r.add_argument(
        "--stored",
        action="store_true",
        help="run nothing: report the runs stored so far (a long ns-3 grid part done); "
        "not for reproductions that search as they run",
    )
    r.add_argument(
        "--no-mlflow",
        action="store_true",
        help="do not log the report and figure to the MLflow experiment `reproductions`",
    )
    r.add_argument(
        "--backends",
        help="also run the grid on these backends where the reproduction compares "
        "simulators (dick_table, abs_fig1: ns2; stanford_min_buffer: ns2), e.g. --backends ns2",
    )
    r.set_defaults(fn=cmd_reproduce)
    c = sub.add_parser(
        "compare",
        help="one metric of the same configs on several backends (engine, ns2, ns3), "
        "side by side, and where they disagree",
    )
    c.add_argument("--results", default=DEFAULT_RESULTS, help=RESULTS_HELP)
    c.add_argument("--sweep", help="only this sweep_id, or 'latest'")
    c.add_argument("--name", help="only the sweeps of this experiment preset")
    c.add_argument("--metric", default="utilization", help="a numeric column of runs (default utilization)")
    c.add_argument("--by", help="comma-separated columns to group by, averaging over the rest (e.g. tcp,flows)")
    c.add_argument("--threshold", type=float, default=0.015, help="flag differences above this (default 0.015)")
    c.add_argument("--plot", help="write a scatter of each backend against the first to this PNG")
    c.set_defaults(fn=cmd_compare)
    k = sub.add_parser("check", help="does MLflow hold every stored run exactly once? (--repair fixes it)")
    k.add_argument("--results", default=DEFAULT_RESULTS, help=RESULTS_HELP)
    k.add_argument("--tracking-uri", help="default: $MLFLOW_TRACKING_URI, else the project's mlflow.db")
    k.add_argument("--repair", action="store_true", help="delete incomplete and duplicated child runs, log missing")
    k.set_defaults(fn=cmd_check)
    args, extra = p.parse_known_args(argv)
    if extra and hasattr(args, "overrides") and all("=" in e and not e.startswith("-") for e in extra):
        args.overrides += extra  # key=value after an option (`atlas query ... --format json results_dir=r`)
    elif extra:
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
