"""Reading and writing files: the one reader of user files (regular files only, bounded), the
one writer (atomic, keeps the user's file), the strict YAML/JSON readers with errors that
name file, entry and field, the user's own folders, and whether a process still runs."""
