"""The protocol adapters: one package per protocol, each the same shape.

    protocol/<protocol>/wire.py     the protocol's own shape: decode a request, find its handler in
                                    the route table, encode the answer, map every error once
    protocol/<protocol>/routes.py   the route table, as data: what a request names -> handler
    protocol/<protocol>/<family>.py thin handlers, one module per API family: read the request,
                                    call the service core (chalicelib.service), shape the answer

glue/ (AWS JSON 1.1), lakeformation/ (REST-JSON), paimon/ (Paimon REST). Glue and Lake Formation
share the AWS JSON machinery in aws_json/ (botocore models, validation, decoding, serving); every
protocol shares sigv4.py (SigV4 and Paimon bearer tokens), response.py (what a wire answers) and
routing.py (handlers that load on first call); framework.py reshapes Chalice's own errors. A new
protocol (Iceberg REST) is one more package of the same three parts and its routes in app.py;
what it is wired to (the page-token key) is chalicelib.composition's.
"""
