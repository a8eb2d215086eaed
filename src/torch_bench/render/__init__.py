"""The static dashboard: pure functions turn a History into page contexts and per-benchmark
data files (`model`, `pages`, `data`), and a thin writer puts them on disk (`writer`)."""
