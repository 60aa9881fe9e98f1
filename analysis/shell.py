"""A small interactive SQL shell over the DuckDB views. (DuckDB's own shell is a separate
binary that the Python package does not ship, and it would not have our views.)"""

from __future__ import annotations

import cmd

import duckdb


class Shell(cmd.Cmd):
    intro = "buffersweep SQL shell: views runs, timeseries, flows, links. End statements with ';'. .quit to leave."
    prompt = "sql> "

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        super().__init__()
        self.con = con
        self.buffer: list[str] = []

    def default(self, line: str) -> bool:
        if line.strip() in (".quit", ".exit", "EOF"):
            return True
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
