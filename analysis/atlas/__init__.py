"""The buffer atlas (issue 59): every cell's minimum buffer for each utilization target, stored as
one table, queried, judged against the classic rules and drawn (docs/atlas.md)."""
