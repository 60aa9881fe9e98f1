"""A small interactive SQL shell over the DuckDB views. (DuckDB's own shell is a separate
binary that the Python package does not ship, and it would not have our views.)"""

from __future__ import annotations

import cmd

import duckdb


class Shell(cmd.Cmd):
    intro = (
        "buffersweep SQL shell: views runs, timeseries, flows, links. End statements with ';'. "
        ".tables lists the views, .schema VIEW their columns, .quit leaves."
    )
    prompt = "sql> "

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        super().__init__()
        self.con = con
        self.buffer: list[str] = []

    def default(self, line: str) -> bool:
        if line.strip() in (".quit", ".exit", "EOF"):
            return True
        if line.strip() == ".tables":
            self.con.sql(
                "SELECT view_name AS view FROM duckdb_views() WHERE NOT internal "
                "AND NOT starts_with(view_name, '_') ORDER BY 1"
            ).show()
            return False
        if line.strip().startswith(".schema"):
            view = line.split()[1] if len(line.split()) > 1 else "runs"
            self.con.sql(
                "SELECT column_name, data_type, comment FROM duckdb_columns() WHERE table_name = ?", params=[view]
            ).show(max_rows=500, max_width=200)
            return False
        self.buffer.append(line)
        if not line.rstrip().endswith(";"):
            self.prompt = "...> "
            return False
        query = "\n".join(self.buffer)
        self.buffer, self.prompt = [], "sql> "
        try:
            rel = self.con.sql(query)
            if rel is not None:
                rel.show(max_width=200)
        except duckdb.Error as e:
            print(f"error: {e}")
        return False

    def do_EOF(self, _: str) -> bool:  # noqa: N802 - cmd's name for end of input
        print()
        return True

    def emptyline(self) -> bool:
        return False
