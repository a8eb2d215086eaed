"""What one archive may hold to be read at all, shared by the JSON and Parquet readers and by
compaction (which writes none larger), without importing either format's decoder."""

# Rows (results, or one for a run without any): a million decode into about 1.5 GB of Python
# objects, and a few hundred KB of repeated rows can claim far more.
MAX_ARCHIVE_ROWS = 1_000_000
MAX_ARCHIVE_DATA_BYTES = 1 << 30  # a Parquet archive's columns once uncompressed
