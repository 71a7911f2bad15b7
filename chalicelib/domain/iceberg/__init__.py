"""Iceberg table metadata as Glue's OpenTableFormatInput creates and UpdateOpenTableFormatInput
changes it: types and schemas (``types``), table metadata files (``metadata``); and as the Iceberg
REST catalog protocol creates and commits it (``table_commits``). Pure code: the service decides,
the store writes the files."""
