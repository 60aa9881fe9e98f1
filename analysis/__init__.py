"""Analysis of buffersweep results: DuckDB views over the Parquet results, buffer-sizing rules
and queueing theory, and reproductions of the papers."""
