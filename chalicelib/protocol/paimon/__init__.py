"""The Apache Paimon REST catalog protocol (pypaimon 2.1.0's RESTCatalog is the contract).

wire.py decodes and encodes and maps errors; routes.py is the route table; one module per
resource family holds the handlers (``handler(request: PaimonRequest) -> PaimonResponse``).
"""
