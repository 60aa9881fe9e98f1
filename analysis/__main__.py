"""`python -m analysis sql "SELECT ..."`, `python -m analysis shell`, `python -m analysis reproduce NAME`,
`python -m analysis crosscheck NAME` (needs ns-2)."""

from __future__ import annotations

import argparse
import sys

import duckdb

from analysis.db import DEFAULT_RESULTS, connect


def cmd_sql(args: argparse.Namespace) -> int:
    con = connect(args.results)
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


def _render(rel: duckdb.DuckDBPyRelation) -> str:
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=False)
    for name in rel.columns:
        table.add_column(name)
    rows = rel.fetchall()
    for row in rows:
        table.add_row(*("NULL" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v)) for v in row))
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

    Shell(connect(args.results)).cmdloop()
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from analysis.reproduce import REPRODUCTIONS, reproduce

    if args.name not in REPRODUCTIONS:
        print(f"error: unknown reproduction {args.name!r}; allowed: {', '.join(REPRODUCTIONS)}", file=sys.stderr)
        return 2
    return reproduce(args.name, args.results, args.reports, rerun=args.rerun)


def cmd_crosscheck(args: argparse.Namespace) -> int:
    from analysis import ns2
    from analysis.crosscheck import CROSSCHECKS, crosscheck

    if args.name not in CROSSCHECKS:
        print(f"error: unknown cross-check {args.name!r}; allowed: {', '.join(CROSSCHECKS)}", file=sys.stderr)
        return 2
    if not ns2.available():
        print("error: ns-2 not found: `ns` must be on PATH (Debian: apt-get install ns2)", file=sys.stderr)
        return 2
    return crosscheck(args.name)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m analysis", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("sql", help="run a query over the views runs, timeseries, flows, links")
    q.add_argument("query")
    q.add_argument("--results", default=DEFAULT_RESULTS)
    q.add_argument("--format", choices=("table", "csv", "json", "parquet"), default="table")
    q.add_argument("--out")
    q.set_defaults(fn=cmd_sql)
    s = sub.add_parser("shell", help="interactive DuckDB session with the same views")
    s.add_argument("--results", default=DEFAULT_RESULTS)
    s.set_defaults(fn=cmd_shell)
    r = sub.add_parser("reproduce", help="reproduce a paper's figure or table")
    r.add_argument("name")
    r.add_argument("--results", default=DEFAULT_RESULTS)
    r.add_argument("--reports", default="reports")
    r.add_argument("--rerun", action="store_true", help="rerun the sweeps even if stored (force=true)")
    r.set_defaults(fn=cmd_reproduce)
    c = sub.add_parser("crosscheck", help="run a reproduction's set-up in ns-2 2.35 and store the numbers")
    c.add_argument("name")
    c.set_defaults(fn=cmd_crosscheck)
    args = p.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
