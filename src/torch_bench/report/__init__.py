"""Reports for people: terminal tables now; Markdown and PR comments later."""
