"""The Apache Iceberg REST catalog in AWS Glue's shape (``<endpoint>/iceberg/v1/...``): namespaces
are Glue databases, tables Glue tables with ``table_type=ICEBERG`` and ``metadata_location``
(``service.iceberg_namespaces``, ``service.iceberg_catalog``)."""
