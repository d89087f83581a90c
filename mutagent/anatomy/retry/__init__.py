"""The retry family's recognisers: retry loops and paths (``loops``), what waits (``waits``),
which wait is a backoff (``backoff``) and how failures are classified (``classification``)."""
