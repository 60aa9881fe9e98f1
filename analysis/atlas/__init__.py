"""The buffer atlas (docs/atlas.md): `query(...)` answers a point from a built or shipped atlas."""

from analysis.atlas.lookup import query

__all__ = ["query"]
