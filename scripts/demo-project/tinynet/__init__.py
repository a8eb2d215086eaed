"""tinynet: a tiny project with four small torch models, to show torch-bench at work."""
