"""Reproductions of the papers' figures and tables: `python -m analysis reproduce NAME`.

Each runs (or reuses stored) sweeps, reads them back through the DuckDB views, and writes
reports/NAME.png and reports/NAME.md with the paper's numbers beside ours, the engine version,
the command that reproduces it, and a short reading. One module per paper in
`analysis/reproductions/`; a new reproduction is a function there plus one line below."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis.reproductions.abs import abs_fig1  # noqa: E402
from analysis.reproductions.abs_fig2_3 import abs_fig2_3  # noqa: E402
from analysis.reproductions.abs_tables import abs_table2, abs_table3  # noqa: E402
from analysis.reproductions.abs_timelines import abs_fig4, abs_fig5, abs_fig6, abs_fig7, abs_fig8, abs_fig9  # noqa: E402
from analysis.reproductions.common import OTHER_BACKENDS, Report  # noqa: E402
from analysis.reproductions.dick import dick_table  # noqa: E402
from analysis.reproductions.enachescu import (  # noqa: E402
    enachescu_fig1,
    enachescu_fig2a,
    enachescu_fig2b,
    enachescu_fig3b,
)
from analysis.reproductions.stanford import appenzeller_fig13, stanford_min_buffer  # noqa: E402

REPRODUCTIONS: dict[str, Callable[[str, bool], tuple[Report, Callable[[], None]]]] = {
    "enachescu_fig1": enachescu_fig1,
    "enachescu_fig2a": enachescu_fig2a,
    "enachescu_fig2b": enachescu_fig2b,
    "enachescu_fig3b": enachescu_fig3b,
    "dick_table": dick_table,
    "stanford_min_buffer": stanford_min_buffer,
    "appenzeller_fig13": appenzeller_fig13,
    "abs_fig1": abs_fig1,
    "abs_fig2_3": abs_fig2_3,
    "abs_table2": abs_table2,
    "abs_table3": abs_table3,
    "abs_fig4": abs_fig4,
    "abs_fig5": abs_fig5,
    "abs_fig6": abs_fig6,
    "abs_fig7": abs_fig7,
    "abs_fig8": abs_fig8,
    "abs_fig9": abs_fig9,
}


def reproduce(name: str, results: str, reports: str, rerun: bool = False, backends: tuple[str, ...] = ()) -> int:
    """Runs a reproduction's sweeps (on the engine, and on `backends` too where the reproduction
    compares simulators) and writes its report and figure."""
    token = OTHER_BACKENDS.set(tuple(b for b in backends if b != "engine"))
    try:
        report, plot = REPRODUCTIONS[name](results, rerun)
    finally:
        OTHER_BACKENDS.reset(token)
    write_report(name, report, plot, reports)
    return 0


def write_report(name: str, report: Report, plot: Callable[[], None], reports: str) -> None:
    """Draws the figure and writes `reports`/NAME.png and NAME.md, each atomically."""
    out = Path(reports)
    out.mkdir(parents=True, exist_ok=True)
    plot()
    png = out / f"{name}.png"
    tmp = png.with_suffix(".png.tmp")
    plt.savefig(tmp, dpi=110, format="png")
    plt.close("all")
    tmp.replace(png)
    md = out / f"{name}.md"
    tmp_md = md.with_suffix(".md.tmp")
    tmp_md.write_text(report.markdown())
    tmp_md.replace(md)
    print(f"wrote {png} and {md}")
