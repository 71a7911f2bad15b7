"""The Apache Paimon REST catalog protocol (pypaimon 2.1.0's RESTCatalog is the contract).

The shape of every protocol package (chalicelib/protocol/__init__.py): wire.py decodes, encodes and
maps errors (Paimon's ErrorResponse); routes.py is the route table (method and path template ->
handler); one module per resource family holds the handlers (``handler(request: PaimonRequest) ->
PaimonResponse``), with paging.py, table_args.py and object_args.py for what they share.
"""
