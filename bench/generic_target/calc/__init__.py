"""A small generic target for benchmarks: plain, async and decorated functions with a suite."""
