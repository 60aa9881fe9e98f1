"""Reproductions of the papers' figures and tables: `python -m analysis reproduce NAME`.

Each runs (or reuses stored) sweeps, reads them back through the DuckDB views, and writes
reports/NAME.png and reports/NAME.md with the paper's numbers beside ours, the engine version,
the command that reproduces it, and a short reading. One module per paper in
`analysis/reproductions/`; a new reproduction is a function there plus one line in
`REPRODUCTIONS` below (docs/reproductions.md)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import matplotlib

import sim

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis.db import NoResults  # noqa: E402
from analysis.reproductions.abs import abs_fig1  # noqa: E402
from analysis.reproductions.abs_fig2_3 import abs_fig2_3  # noqa: E402
from analysis.reproductions.abs_tables import abs_table2, abs_table3  # noqa: E402
from analysis.reproductions.abs_timelines import abs_fig4, abs_fig5, abs_fig6, abs_fig7, abs_fig8, abs_fig9  # noqa: E402
from analysis.reproductions.aqm import aqm_buffer_independence, fq_codel_isolation, red_tuning  # noqa: E402
from analysis.reproductions.aqm_backends import aqm_backends  # noqa: E402
from analysis.reproductions.atlas import atlas  # noqa: E402
from analysis.reproductions.atlas_slices import atlas_slices  # noqa: E402
from analysis.reproductions.bbr_loss import bbr_shallow_loss  # noqa: E402
from analysis.reproductions.common import MLFLOW, OTHER_BACKENDS, STORED_ONLY, NeedsRuns, Report  # noqa: E402
from analysis.reproductions.dctcp import dctcp_threshold  # noqa: E402
from analysis.reproductions.dick import dick_table  # noqa: E402
from analysis.reproductions.dick_ns3 import dick_ns3  # noqa: E402
from analysis.reproductions.enachescu import (  # noqa: E402
    enachescu_fig1,
    enachescu_fig2a,
    enachescu_fig2b,
    enachescu_fig3b,
)
from analysis.reproductions.kernel_grid import kernel_grid  # noqa: E402
from analysis.reproductions.kernel_vs_engine import kernel_vs_engine  # noqa: E402
from analysis.reproductions.modern import bbr_vs_cubic_buffer, cubic_single_flow_buffer  # noqa: E402
from analysis.reproductions.modern_backends import modern_backends  # noqa: E402
from analysis.reproductions.phase_effects import phase_effects  # noqa: E402
from analysis.reproductions.phase_kernel import phase_kernel  # noqa: E402
from analysis.reproductions.stanford import appenzeller_fig13, stanford_min_buffer  # noqa: E402


@dataclass(frozen=True)
class Reproduction:
    """A registered reproduction: what runs it, and the paper and figure it reproduces."""

    run: Callable[[str, bool], tuple[Report, Callable[[], None]]]
    paper: str
    what: str

    def __call__(self, results: str, rerun: bool) -> tuple[Report, Callable[[], None]]:
        return self.run(results, rerun)


REPRODUCTIONS: dict[str, Reproduction] = {
    "enachescu_fig1": Reproduction(
        enachescu_fig1, "Enachescu et al. 2006", "Fig. 1: utilization vs buffer, Reno vs paced TCP"
    ),
    "enachescu_fig2a": Reproduction(
        enachescu_fig2a, "Enachescu et al. 2006", "Fig. 2(a): constant 80% peak load, 1 to 1,000 flows"
    ),
    "enachescu_fig2b": Reproduction(
        enachescu_fig2b, "Enachescu et al. 2006", "Fig. 2(b): paced TCP through a congested core"
    ),
    "enachescu_fig3b": Reproduction(
        enachescu_fig3b, "Enachescu et al. 2006", "Fig. 3(b): constant vs logarithmic buffers"
    ),
    "dick_table": Reproduction(
        dick_table, "Dick 2005", "Reno vs NewReno buffer requirements at 45 Mb/s (with ns-2 beside)"
    ),
    "dick_table_precision": Reproduction(
        partial(dick_table, preset="dick_table_precision"), "Dick 2005", "dick_table at +-0.005 (95%) across seeds"
    ),
    "stanford_min_buffer": Reproduction(
        stanford_min_buffer, "Appenzeller et al. 2004", "minimum buffer for 95% utilization vs flows"
    ),
    "appenzeller_fig13": Reproduction(
        appenzeller_fig13, "Appenzeller et al. 2004", "Fig. 13: short-flow completion times vs buffer size"
    ),
    "abs_fig1": Reproduction(
        abs_fig1, "Zhang and Loguinov 2010", "ABS Fig. 1: loss and utilization vs buffer per TCP variant"
    ),
    "abs_fig2_3": Reproduction(
        abs_fig2_3, "Zhang and Loguinov 2010", "ABS Figs. 2 and 3: ABS without and with gain training"
    ),
    "abs_table2": Reproduction(
        abs_table2, "Zhang and Loguinov 2010", "ABS Table 2: buffer policies vs the number of flows"
    ),
    "abs_table3": Reproduction(abs_table3, "Zhang and Loguinov 2010", "ABS Table 3: buffer policies vs link capacity"),
    "abs_fig4": Reproduction(abs_fig4, "Zhang and Loguinov 2010", "ABS Fig. 4: ABS under load changes"),
    "abs_fig5": Reproduction(abs_fig5, "Zhang and Loguinov 2010", "ABS Fig. 5: ABS with 20 FTP flows and web traffic"),
    "abs_fig6": Reproduction(abs_fig6, "Zhang and Loguinov 2010", "ABS Fig. 6: ABS under a memory bound"),
    "abs_fig7": Reproduction(abs_fig7, "Zhang and Loguinov 2010", "ABS Fig. 7: ABS with FTP, HTTP and UDP flows"),
    "abs_fig8": Reproduction(abs_fig8, "Zhang and Loguinov 2010", "ABS Fig. 8: ABS with five TCP variants at 100 Mb/s"),
    "abs_fig9": Reproduction(abs_fig9, "Zhang and Loguinov 2010", "ABS Fig. 9: an ABS on each link of a parking lot"),
    "aqm_buffer_independence": Reproduction(
        aqm_buffer_independence, "RFC 8289, 8033, 8290", "utilization and sojourn vs buffer, per discipline"
    ),
    "aqm_buffer_independence_precision": Reproduction(
        partial(aqm_buffer_independence, name="aqm_buffer_independence_precision"),
        "RFC 8289, 8033, 8290",
        "aqm_buffer_independence at +-5% (95%) across seeds",
    ),
    "fq_codel_isolation": Reproduction(
        fq_codel_isolation, "RFC 8290", "a sparse flow's delay beside 8 bulk flows: fq_codel vs codel vs drop-tail"
    ),
    "red_tuning": Reproduction(
        red_tuning, "Floyd and Jacobson 1993; Floyd 1997", "RED's utilization and queue vs min_th and max_p"
    ),
    "aqm_backends": Reproduction(
        aqm_backends, "RFC 8289, 8033, 8290; Floyd, Jacobson 1993", "queue disciplines vs ns-3 3.44 queue discs"
    ),
    "bbr_vs_cubic_buffer": Reproduction(
        bbr_vs_cubic_buffer,
        "Hock et al. 2017; Scholz et al. 2018; Ware et al. 2019",
        "BBR's share against CUBIC by buffer",
    ),
    "cubic_single_flow_buffer": Reproduction(
        cubic_single_flow_buffer, "RFC 9438; the BDP rule", "one flow's minimum buffer by its decrease factor beta"
    ),
    "bbr_shallow_loss": Reproduction(
        bbr_shallow_loss, "Hock, Bless and Zitterbart 2017", "several BBR flows' loss and queue by buffer, beside CUBIC"
    ),
    "bbr_shallow_loss_precision": Reproduction(
        partial(bbr_shallow_loss, preset="bbr_shallow_loss_precision"),
        "Hock, Bless and Zitterbart 2017",
        "bbr_shallow_loss at +-0.01 utilization, +-0.005 loss (95%) across seeds",
    ),
    "dctcp_threshold": Reproduction(
        dctcp_threshold, "Alizadeh et al. 2010", "DCTCP's utilization and queue vs its marking threshold K"
    ),
    "modern_backends": Reproduction(
        modern_backends, "RFC 9438, 6937, 8257; Cardwell et al. 2016", "modern senders vs ns-3 3.44 (BBR, DCTCP, ...)"
    ),
    "phase_effects": Reproduction(
        phase_effects, "Floyd and Jacobson 1992", "phase effects: fairness and loss vs the senders' send jitter"
    ),
    "dick_ns3": Reproduction(dick_ns3, "Dick 2005; ns-3 3.44", "Dick's 0.5x rows with ns-3's TCP rules vs ns-3"),
    "kernel_vs_engine": Reproduction(
        kernel_vs_engine, "Linux's own TCP (issue 71)", "the engine's cubic, reno_linux and bbr vs this host's kernel"
    ),
    "kernel_grid": Reproduction(
        kernel_grid, "Linux's own TCP; ns-3 3.44 (issue 72)", "BBR, CUBIC and Reno on 10/100 Mb/s: engine, kernel, ns-3"
    ),
    "phase_kernel": Reproduction(
        phase_kernel, "Floyd and Jacobson 1992; Linux", "the kernel's drop-tail fairness vs the engine's send jitter"
    ),
    "atlas": Reproduction(atlas, "Appenzeller 2004; Enachescu 2006; Dick 2005; Spang 2021", "the buffer atlas, small"),
    "atlas_slices": Reproduction(
        atlas_slices, "Dick 2005; Appenzeller 2004", "the atlas's Dick and Appenzeller slices vs their reproductions"
    ),
}
"""Every reproduction, one line each (`reproduce list` prints them; docs/reproductions.md)."""


def listing() -> str:
    """One line per reproduction: name, paper, what."""
    width = max(map(len, REPRODUCTIONS))
    return "\n".join(f"  {n:<{width}}  {r.paper}: {r.what}" for n, r in REPRODUCTIONS.items())


def reproduce(
    name: str,
    results: str,
    reports: str,
    rerun: bool = False,
    backends: tuple[str, ...] = (),
    mlflow: bool = True,
    stored_only: bool = False,
) -> int:
    """Runs a reproduction's sweeps (on the engine, and on `backends` too where the reproduction
    compares simulators), writes its report and figure and, with `mlflow`, logs both as a run of
    the MLflow experiment `reproductions` (at $MLFLOW_TRACKING_URI, else the project's mlflow.db);
    without it, neither the report nor the reproduction's own jobs (the atlas build) log there.
    `stored_only` runs nothing and reports what is stored; 2 if the reproduction cannot."""
    tokens = (
        OTHER_BACKENDS.set(tuple(b for b in backends if b != "engine")),
        STORED_ONLY.set(stored_only),
        MLFLOW.set(mlflow),
    )
    try:
        report, plot = REPRODUCTIONS[name](results, rerun)
    except (NeedsRuns, NoResults) as e:  # NeedsRuns comes only under --stored
        if not stored_only:
            raise
        print(f"error: --stored: {name}: {e}", file=sys.stderr)
        return 2
    finally:
        OTHER_BACKENDS.reset(tokens[0])
        STORED_ONLY.reset(tokens[1])
        MLFLOW.reset(tokens[2])
    write_report(name, report, plot, reports)
    if mlflow:
        log_to_mlflow(name, reports)
    return 0


def log_to_mlflow(name: str, reports: str) -> None:
    """The written report and figure as a run of the experiment `reproductions`; a tracking
    server that fails is a warning: the report is written."""
    from sweeps.tracking import REPRODUCTIONS_EXPERIMENT, log_report, tracking_uri

    uri = tracking_uri(None)
    files = [Path(reports) / f"{name}.md", Path(reports) / f"{name}.png"]
    try:
        run = log_report(uri, name, files, {"engine_version": sim.ENGINE_VERSION, "command": " ".join(sys.argv)})
    except Exception as e:  # noqa: BLE001 - the report is written; MLflow is a copy of it
        print(f"warning: mlflow ({uri}): report not logged: {type(e).__name__}: {e}", file=sys.stderr)
        return
    print(f"logged to MLflow ({uri}): experiment {REPRODUCTIONS_EXPERIMENT}, run {run}")


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
