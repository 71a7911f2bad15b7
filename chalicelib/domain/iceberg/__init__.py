"""Iceberg table metadata as Glue's OpenTableFormatInput creates and UpdateOpenTableFormatInput
changes it: types and schemas (``types``), table metadata files (``metadata``). Pure code: the
service decides, the store writes the files."""
