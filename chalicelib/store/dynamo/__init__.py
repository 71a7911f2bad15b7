"""The DynamoDB driver: the item models, the connection settings, the direct transport
(``dynamo_http`` over ``http1``, ``dynamo_json``, ``fast_parse``), key ranges, conditions,
fences, retries and write tokens.

Private to the store: nothing above ``chalicelib.store`` imports this package (an import
contract in ``pyproject.toml`` checks it). The store's other modules turn its items into the
records the service works with.
"""
