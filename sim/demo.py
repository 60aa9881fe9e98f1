"""A first look at the engine: `python -m sim.demo` (used by `make demo` until the sweep lands)."""

from rich.console import Console
from rich.table import Table

import sim


def main() -> None:
    table = Table(title="Enachescu et al. Fig. 1 setting: 40 flows, 100 Mb/s, wmax 32")
    for col in ("tcp", "buffer_pkts", "utilization", "loss_rate", "timeouts"):
        table.add_column(col, justify="right")
    for tcp in ("reno", "paced"):
        for b in (10, 100):
            m = sim.run(tcp=tcp, flows=40, buffer_pkts=b, wmax_pkts=32, core_mbps=100, rtt_spread_ms=50,
                        duration_s=200, warmup_s=50, start_window_s=5).metrics()
            table.add_row(tcp, str(b), f"{m['utilization']:.3f}", f"{m['loss_rate']:.4f}", f"{m['timeouts']:.0f}")
    Console().print(table)


if __name__ == "__main__":
    main()
