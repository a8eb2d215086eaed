"""The canonical run document: model, statistics, validation, migration, load and save."""
